#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "gc/observe/json.h"
#include "gc/observe/outputs.h"

namespace gc::observe {

namespace {

constexpr int kPid = 1;
constexpr int kMutatorTid = 1;
int worker_tid(uint32_t worker) { return 2 + static_cast<int>(worker); }
double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }
double mib(uint64_t b) { return static_cast<double>(b) / (1 << 20); }

void metadata(JsonWriter& j, const char* name, int tid, const char* key, const std::string& value) {
  j.begin_object().field("ph", "M").field("name", name).field("pid", kPid).field("tid", tid);
  j.key("args").begin_object().field(key, value).end_object().end_object();
}

void sort_index(JsonWriter& j, int tid, int index) {
  j.begin_object().field("ph", "M").field("name", "thread_sort_index").field("pid", kPid).field("tid", tid);
  j.key("args").begin_object().field("sort_index", index).end_object().end_object();
}

void heap_counter(JsonWriter& j, int64_t ns, uint64_t used, uint64_t size) {
  j.begin_object().field("ph", "C").field("name", "heap (MiB)").field("pid", kPid).field("tid", kMutatorTid);
  j.field("ts", us(ns), 3);
  j.key("args").begin_object().field("used", mib(used), 4).field("size", mib(size), 4).end_object();
  j.end_object();
}

}  // namespace

std::string trace_json(Collector& heap) {
  const Recorder& r = heap.events;
  std::string out;
  JsonWriter j(out);
  j.begin_object();
  j.field("displayTimeUnit", "ms");
  j.key("otherData").begin_object().field("collector", heap.name()).field("tool", "gclab").end_object();
  j.key("traceEvents").begin_array();

  metadata(j, "process_name", kMutatorTid, "name", std::string("gclab (") + heap.name() + ")");
  metadata(j, "thread_name", kMutatorTid, "name", "mutator");
  sort_index(j, kMutatorTid, 0);
  std::vector<bool> seen(r.workers(), false);
  for (const PhaseRecord& p : r.phases())
    if (p.worker < seen.size()) seen[p.worker] = true;
  for (uint32_t w = 0; w < seen.size(); ++w) {
    if (!seen[w]) continue;
    metadata(j, "thread_name", worker_tid(w), "name", "GC worker " + std::to_string(w));
    sort_index(j, worker_tid(w), 1 + static_cast<int>(w));
  }

  // The mutator runs from the end of one pause to the start of the next,
  // and after the last one until now (the end of the run).
  auto mutator_slice = [&](int64_t from, int64_t to) {
    if (to <= from) return;
    j.begin_object().field("ph", "X").field("name", "mutator").field("cat", "mutator");
    j.field("pid", kPid).field("tid", kMutatorTid).field("ts", us(from), 3);
    j.field("dur", us(to - from), 3).end_object();
  };
  int64_t mutator_from = 0;
  const auto& records = r.records();
  for (size_t i = 0; i < records.size(); ++i) {
    const CollectionRecord& c = records[i];
    std::string gc_name = "GC(" + std::to_string(c.id) + ")";
    mutator_slice(mutator_from, c.start_ns);
    mutator_from = c.end_ns;
    std::string pause = gc_name + " Pause " + kind_name(c.kind) + " (" + cause_name(c.cause) + ")";
    j.begin_object().field("ph", "X").field("name", pause).field("cat", "gc");
    j.field("pid", kPid)
        .field("tid", kMutatorTid)
        .field("ts", us(c.start_ns), 3)
        .field("dur", us(c.end_ns - c.start_ns), 3);
    j.key("args").begin_object();
    j.field("collection", c.id).field("kind", kind_name(c.kind)).field("cause", cause_name(c.cause));
    j.field("used_before_bytes", c.used_before).field("used_after_bytes", c.used_after);
    j.field("size_after_bytes", c.size_after).field("live_after_bytes", c.live_after);
    for (const CounterRecord& k : r.counters_of(i))
      j.field(r.counter_names()[k.counter] + " (worker " + std::to_string(k.worker) + ")", k.value);
    j.end_object().end_object();

    heap_counter(j, c.start_ns, c.used_before, c.size_before);
    heap_counter(j, c.end_ns, c.used_after, c.size_after);
    j.begin_object()
        .field("ph", "C")
        .field("name", "live after GC (MiB)")
        .field("pid", kPid)
        .field("tid", kMutatorTid);
    j.field("ts", us(c.end_ns), 3)
        .key("args")
        .begin_object()
        .field("live", mib(c.live_after), 4)
        .end_object()
        .end_object();

    // Sorted by start, a parent before its children (Recorder::merge_phases):
    // a viewer nests the slices of one track as they come.
    auto phases = r.phases_of(i);
    for (const PhaseRecord& p : phases) {
      j.begin_object().field("ph", "X").field("name", r.phase_names()[p.phase]).field("cat", "gc.phase");
      j.field("pid", kPid).field("tid", worker_tid(p.worker)).field("ts", us(p.start_ns), 3);
      j.field("dur", us(p.end_ns - p.start_ns), 3);
      j.key("args").begin_object().field("collection", c.id).field("worker", p.worker);
      if (p.parent != PhaseRecord::kNoParent) {
        const PhaseRecord& parent = r.phases()[p.parent];
        j.field("part of", r.phase_names()[parent.phase] + " (worker " + std::to_string(parent.worker) + ")");
      }
      j.end_object().end_object();
    }
    // The collection as a flow: from its pause slice through each phase.
    if (phases.begin() != phases.end()) {
      j.begin_object().field("ph", "s").field("name", gc_name).field("cat", "gc.flow").field("id", c.id);
      j.field("pid", kPid).field("tid", kMutatorTid).field("ts", us(c.start_ns), 3).end_object();
      const PhaseRecord* last = phases.end() - 1;
      for (const PhaseRecord* p = phases.begin(); p != phases.end(); ++p) {
        j.begin_object().field("ph", p == last ? "f" : "t").field("name", gc_name).field("cat", "gc.flow");
        j.field("id", c.id)
            .field("pid", kPid)
            .field("tid", worker_tid(p->worker))
            .field("ts", us(p->start_ns), 3);
        if (p == last) j.field("bp", "e");
        j.end_object();
      }
    }
  }
  mutator_slice(mutator_from, r.now_ns());
  j.end_array();
  j.end_object();
  out += '\n';
  return out;
}

namespace {

// Writes all of text to path; on failure returns why.
std::optional<std::string> write_whole_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return std::string(std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  int write_errno = errno;
  if (std::fclose(f) != 0 && ok) return std::string(std::strerror(errno));
  if (!ok) return std::string(std::strerror(write_errno));
  return std::nullopt;
}

// A new file for text that could not go where it was asked to: beside
// that path if its folder takes it, else in the system's temporary folder.
std::optional<std::string> rescue(const std::string& path, const std::string& text) {
  std::filesystem::path asked(path);
  std::error_code ec;
  std::vector<std::filesystem::path> folders = {asked.parent_path().empty() ? "." : asked.parent_path()};
  if (std::filesystem::path temp = std::filesystem::temp_directory_path(ec); !ec) folders.push_back(temp);
  for (const std::filesystem::path& folder : folders) {
    std::string name = (folder / ("." + asked.filename().string() + ".XXXXXX")).string();
    int fd = mkstemp(name.data());
    if (fd < 0) continue;
    close(fd);
    if (!write_whole_file(name, text)) return name;
    std::remove(name.c_str());
  }
  return std::nullopt;
}

}  // namespace

bool write_output(const std::string& path, const std::string& text, const char* what) {
  if (path == "-" || path == "stderr") {
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
    return true;
  }
  std::optional<std::string> why = write_whole_file(path, text);
  if (!why) return true;
  std::fprintf(stderr, "vm: cannot write the %s to '%s': %s", what, path.c_str(), why->c_str());
  if (std::optional<std::string> kept = rescue(path, text))
    std::fprintf(stderr, "; it is in '%s' instead\n", kept->c_str());
  else
    std::fprintf(stderr, "; nowhere else would take it either\n");
  return false;
}

}  // namespace gc::observe
