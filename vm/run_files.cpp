#include "vm/run_files.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "gc/exit_status.h"
#include "gc/observe/outputs.h"
#include "gc/observe/stats.h"

namespace vm {

// A device such as /dev/zero would never end, so only a regular file is read.
std::optional<std::string> read_file(const std::string& path, std::string* out) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec) return ec.message();
  if (!std::filesystem::is_regular_file(status)) return std::string("not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string(std::strerror(errno));
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return std::string("read error");
  return std::nullopt;
}

void cannot_write(const std::string& what, const std::string& path, const std::string& why) {
  std::cerr << "vm: cannot write the " << what << " to '" << path << "': " << why << "\n";
  std::exit(gc::kExitCantCreate);
}

std::unique_ptr<gc::observe::Log> open_log(const ObserveOptions& observe, const VMOptions& options) {
  std::FILE* f = stderr;
  if (!observe.log_file.empty()) {
    f = std::fopen(observe.log_file.c_str(), "w");
    if (!f) cannot_write("GC log", observe.log_file, std::strerror(errno));
  }
  auto log = std::make_unique<gc::observe::Log>(f, observe.log_debug, f != stderr);
  log->using_collector(options.collector, gc::variant_line(gc::variant_of(
                                              *gc::find_collector(options.collector), options.heap)));
  return log;
}

bool write_observe_outputs(gc::Collector& heap, const ObserveOptions& o) {
  bool ok = true;
  if (o.stats) {
    gc::observe::Summary s = gc::observe::summarize(heap);
    s.heap_limit = o.heap_limit;
    std::string text = o.stats_json ? gc::observe::stats_json(s) : gc::observe::stats_table(s);
    ok &= gc::observe::write_output(o.stats_file.empty() ? "-" : o.stats_file, text, "GC statistics");
  }
  if (!o.trace_file.empty())
    ok &= gc::observe::write_output(o.trace_file, gc::observe::trace_json(heap), "GC trace");
  if (!o.report_file.empty())
    ok &= gc::observe::write_output(o.report_file, gc::observe::report_html(heap), "GC report");
  return ok;
}

bool write_heap_snapshot(const gc::snapshot::Request& snapshot, const std::string& path,
                         gc::Collector& heap) {
  if (!snapshot.captured()) {
    uint64_t ran = heap.events.summary().collections;
    std::cerr << "vm: --heap-snapshot: no snapshot written: ";
    if (snapshot.wanted())
      std::cerr << "the run ended before GC(" << *snapshot.wanted() << ") (it ran " << ran
                << " collections)\n";
    else
      std::cerr << "the run ended without a collection (--gc-stress or a smaller --heap makes some)\n";
    return false;
  }
  if (!gc::observe::write_output(path, snapshot.capture().bytes, "heap snapshot")) return false;
  std::cerr << "vm: wrote the heap at GC(" << snapshot.collection() << ") to " << path << ": "
            << snapshot.capture().objects << " objects, " << snapshot.capture().object_bytes
            << " bytes; the collection left " << snapshot.live_after() << " bytes live (" << heap.name()
            << "'s count)\n";
  return true;
}

bool write_animation(const gc::observe::Recording& recording, const std::string& path, gc::Collector& heap) {
  if (!recording.done()) {
    std::cerr << "vm: --gc-animate: no page written: the run ended before the collection to record (it ran "
              << heap.events.summary().collections
              << " collections; --gc-stress or a smaller --heap makes some)\n";
    return false;
  }
  if (!recording.refused().empty()) {
    std::cerr << "vm: --gc-animate: no page written: " << recording.refused() << "\n";
    return false;
  }
  if (!gc::observe::write_output(path, recording.html(), "GC animation")) return false;
  std::cerr << "vm: wrote the animation of GC(" << recording.collection() << ") to " << path << "\n";
  return true;
}

}  // namespace vm
