// The `vm` command: options, then a script, standard input or the REPL.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "gc/collectors/gpu/opencl.h"
#include "gc/observe/log.h"
#include "gc/observe/outputs.h"
#include "gc/observe/stats.h"
#include "vm/repl.h"
#include "vm/vm.h"

namespace {

constexpr int kExitUsage = 64;
constexpr int kExitNoInput = 66;
constexpr int kExitSoftware = 70;

const char* const kVersion = "gclab 0.1.0";

void print_help() {
  std::cout <<
      R"(usage: vm [options] [script.src [args...]]

Runs a gclab program. With no script: the REPL on a terminal, otherwise the
program read from standard input (also with `-`).

options:
  --gc=NAME          collector to use (see --list-gcs; default semispace)
  --heap=SIZE        maximum heap, with K, M or G suffix (default: a quarter
                     of physical memory)
  --gc-threads=N     GC worker threads (default: hardware threads); 0 runs
                     semispace's serial Cheney collector, the baseline
  --gc-lab=SIZE      each GC thread's to-space allocation buffer for
                     parallel copying (default 32K)
  --gc-deque=N       each GC thread's work-stealing deque capacity in tasks
                     (rounded up to a power of two; default 32768)
  --young=SIZE       markcompact: the young generation, both semispaces
                     (default 16M, at most 1/8 of the heap)
  --tenure=N         markcompact: young collections an object survives
                     before it is promoted (0 to 15; default 2)
  --card-strides=N   markcompact: card-table scan tasks (default 256)
  --card-partition=strides|blocks
                     markcompact: task i scans cards i, i+N, i+2N, ...
                     (strides, the default) or the i-th contiguous block
  --gc-stress=N      collect every N allocations (1: every allocation)
  --gc-stress-full   under stress, make every collection a full one
                     (generational collectors otherwise alternate)
  --gc-verify        verify the heap before and after every collection;
                     a failure exits with status 71
  --mc-units=N       markcompact: old-space units per GC thread in full
                     collections (default 4, the paper's m = 4n)
  --dense-prefix=off|PERCENT
                     markcompact: leave old-space units at least PERCENT
                     live in place (default 95), or never: the leading
                     ones, and those at the end each region slides towards
  --gc-log[=debug|FILE|debug:FILE]
                     one line per collection, JDK unified-log style, on
                     stderr or in FILE; debug adds per-phase and per-worker
                     lines
  --gc-stats[=table|json][:FILE]
                     an end-of-run GC summary on stderr (or in FILE), as a
                     table (default) or JSON (docs/gc-stats.schema.json)
  --gc-trace=FILE    Chrome trace-event JSON for Perfetto / chrome://tracing
  --gc-report=FILE   a self-contained HTML page of GC plots
  --step-limit=N     stop with an error after N loop iterations and calls

gpu collector (docs/collectors/gpu.md; defaults are the paper's):
  --cl-list          list the OpenCL devices and stop
  --cl-device=N|NAME the device to mark on: its --cl-list number or part of
                     its name (default: the first GPU, else the first device)
  --gpu-heap=direct|graph
                     offload the heap blocks themselves (default; zero-copy
                     where the device shares host memory) or the condensed
                     reference graph, rebuilt before each collection
  --gpu-offsets=histogram|prefix
                     output-queue offsets by histogram (default) or prefix sum
  --gpu-vector=on|off
                     128-bit loads of header and references (default on)
  --gpu-split=N      objects with more than N references are copied by the
                     whole work-group (default 16; 0: off)
  --gpu-tail=W[,I]   back to the CPU when the queue is narrower than W after
                     at least I iterations (default 20,5; 0: never)
  --gpu-cus=N        work-groups (compute units), the roots split among them
                     (default 0: the device's compute units)
  --gpu-wg=N         work-items per work-group, a power of two (default 256)
  --gpu-fallback=cpu mark on the CPU when there is no OpenCL device (default:
                     --gc=gpu stops with a message)
  --disasm           print the bytecode and stop
  -e CODE            run CODE instead of a file
  --list-gcs         list the collectors
  --version          print the version
  -h, --help         this help

exit status: 0 success, 64 bad command line, 65 compile error, 66 unreadable
file, 70 runtime error (including out of memory and stack overflow),
71 heap verification failure, or the status given to exit().
)";
}

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "vm: " << message << "\nTry 'vm --help' for more information.\n";
  std::exit(kExitUsage);
}

std::optional<uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t end = 0;
  double n;
  try {
    n = std::stod(text, &end);
  } catch (...) {
    return std::nullopt;
  }
  std::string suffix = text.substr(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  double scale = 1;
  if (suffix == "K" || suffix == "k")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "m")
    scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    return std::nullopt;
  if (!(n > 0) || n * scale > 1e15) return std::nullopt;
  return static_cast<uint64_t>(n * scale);
}

std::optional<uint64_t> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoull(text);
}

// Reads a whole regular file (a device such as /dev/zero would never end);
// on failure returns why.
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

// --gc-log, --gc-stats, --gc-trace, --gc-report (docs/observability.md).
struct ObserveOptions {
  bool log = false;
  bool log_debug = false;
  std::string log_file;  // empty: stderr
  bool stats = false;
  bool stats_json = false;
  std::string stats_file;  // empty: stderr
  std::string trace_file;
  std::string report_file;
  bool needs_history() const { return stats || !trace_file.empty() || !report_file.empty(); }
};

void parse_log_option(const std::string& v, ObserveOptions& o) {
  o.log = true;
  if (v == "debug")
    o.log_debug = true;
  else if (v.rfind("debug:", 0) == 0)
    o.log_debug = true, o.log_file = v.substr(6);
  else
    o.log_file = v;
}

void parse_stats_option(const std::string& v, ObserveOptions& o) {
  o.stats = true;
  std::string form = v, file;
  size_t colon = v.find(':');
  if (colon != std::string::npos) form = v.substr(0, colon), file = v.substr(colon + 1);
  if (form == "json")
    o.stats_json = true;
  else if (form != "table")
    usage_error("bad --gc-stats form '" + form + "' (table or json, then optionally :FILE)");
  if (colon != std::string::npos && file.empty())
    usage_error("--gc-stats=" + form + ": needs a FILE after the colon");
  o.stats_file = file;
}

// The end-of-run outputs; false if one could not be written.
bool write_observe_outputs(gc::Collector& heap, const ObserveOptions& o) {
  bool ok = true;
  if (o.stats) {
    gc::observe::Summary s = gc::observe::summarize(heap);
    std::string text = o.stats_json ? gc::observe::stats_json(s) : gc::observe::stats_table(s);
    ok &= gc::observe::write_output(o.stats_file.empty() ? "-" : o.stats_file, text, "GC statistics");
  }
  if (!o.trace_file.empty())
    ok &= gc::observe::write_output(o.trace_file, gc::observe::trace_json(heap), "GC trace");
  if (!o.report_file.empty())
    ok &= gc::observe::write_output(o.report_file, gc::observe::report_html(heap), "GC report");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  vm::VMOptions options;
  options.heap.gc_threads = std::max(1u, std::thread::hardware_concurrency());
  bool disasm = false;
  ObserveOptions observe;
  std::optional<std::string> code;
  std::optional<std::string> script;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto value_of = [&](const char* flag) -> std::optional<std::string> {
      size_t n = std::strlen(flag);
      if (a.compare(0, n, flag) == 0 && a.size() > n && a[n] == '=') return a.substr(n + 1);
      return std::nullopt;
    };
    if (a == "-h" || a == "--help") {
      print_help();
      return 0;
    } else if (a == "--version") {
      std::cout << kVersion << "\n";
      return 0;
    } else if (a == "--list-gcs") {
      for (const gc::CollectorInfo& c : gc::registered_collectors()) {
        std::string why = c.unavailable ? c.unavailable() : "";
        std::cout << c.name << "  " << c.description << (why.empty() ? "" : " (cannot run: " + why + ")")
                  << "\n";
      }
      return 0;
    } else if (a == "--cl-list") {
      std::cout << gc::gpu::describe_devices();
      return 0;
    } else if (auto v = value_of("--cl-device")) {
      if (v->empty()) usage_error("--cl-device needs a device number or name (see --cl-list)");
      options.heap.gpu.device = *v;
    } else if (auto v = value_of("--gpu-heap")) {
      if (*v != "direct" && *v != "graph") usage_error("bad --gpu-heap '" + *v + "' (direct or graph)");
      options.heap.gpu.graph = *v == "graph";
    } else if (auto v = value_of("--gpu-offsets")) {
      if (*v != "histogram" && *v != "prefix")
        usage_error("bad --gpu-offsets '" + *v + "' (histogram or prefix)");
      options.heap.gpu.prefix_sum = *v == "prefix";
    } else if (auto v = value_of("--gpu-vector")) {
      if (*v != "on" && *v != "off") usage_error("bad --gpu-vector '" + *v + "' (on or off)");
      options.heap.gpu.vector_loads = *v == "on";
    } else if (auto v = value_of("--gpu-split")) {
      auto n = parse_count(*v);
      if (!n || *n > 65536) usage_error("bad --gpu-split '" + *v + "' (0 to 65536 references)");
      options.heap.gpu.split_refs = static_cast<unsigned>(*n);
    } else if (auto v = value_of("--gpu-tail")) {
      size_t comma = v->find(',');
      auto w = parse_count(v->substr(0, comma));
      auto it = comma == std::string::npos ? std::optional<uint64_t>(5) : parse_count(v->substr(comma + 1));
      if (!w || !it || *w > (1u << 30) || *it > (1u << 30))
        usage_error("bad --gpu-tail '" + *v + "' (WIDTH[,ITERATIONS], e.g. 20,5; 0: never)");
      options.heap.gpu.tail_width = static_cast<unsigned>(*w);
      options.heap.gpu.tail_min_iterations = static_cast<unsigned>(*it);
    } else if (auto v = value_of("--gpu-cus")) {
      auto n = parse_count(*v);
      if (!n || *n > 4096)
        usage_error("bad --gpu-cus '" + *v + "' (0: the device's compute units, or 1 to 4096)");
      options.heap.gpu.compute_units = static_cast<unsigned>(*n);
    } else if (auto v = value_of("--gpu-wg")) {
      auto n = parse_count(*v);
      if (!n || *n == 0 || *n > 4096 || (*n & (*n - 1)))
        usage_error("bad --gpu-wg '" + *v + "' (a power of two up to 4096)");
      options.heap.gpu.work_group_size = static_cast<unsigned>(*n);
    } else if (auto v = value_of("--gpu-fallback")) {
      if (*v != "cpu" && *v != "none") usage_error("bad --gpu-fallback '" + *v + "' (cpu or none)");
      options.heap.gpu.cpu_when_no_device = *v == "cpu";
    } else if (auto v = value_of("--gc")) {
      if (!gc::find_collector(*v)) usage_error("unknown collector '" + *v + "' (see --list-gcs)");
      options.collector = *v;
    } else if (auto v = value_of("--heap")) {
      auto size = parse_size(*v);
      if (!size) usage_error("bad heap size '" + *v + "' (examples: 64M, 2G)");
      options.heap.max_heap_bytes = *size;
    } else if (auto v = value_of("--gc-threads")) {
      auto n = parse_count(*v);
      if (!n || *n > 1024) usage_error("bad thread count '" + *v + "'");
      options.heap.gc_threads = static_cast<unsigned>(*n);
    } else if (auto v = value_of("--gc-lab")) {
      auto size = parse_size(*v);
      if (!size || *size < 64 || *size > (1ull << 30))
        usage_error("bad LAB size '" + *v + "' (64 to 1G, e.g. 32K)");
      options.heap.gc_lab_bytes = *size;
    } else if (auto v = value_of("--gc-deque")) {
      auto n = parse_count(*v);
      if (!n || *n < 4 || *n > (1ull << 26))
        usage_error("bad deque capacity '" + *v + "' (4 to 67108864 tasks)");
      options.heap.gc_deque_tasks = *n;
    } else if (auto v = value_of("--young")) {
      auto size = parse_size(*v);
      if (!size || *size < (64u << 10)) usage_error("bad young generation size '" + *v + "' (at least 64K)");
      options.heap.young_bytes = *size;
    } else if (auto v = value_of("--tenure")) {
      auto n = parse_count(*v);
      if (!n || *n > 15) usage_error("bad tenuring threshold '" + *v + "' (0 to 15)");
      options.heap.tenure_age = static_cast<int>(*n);
    } else if (auto v = value_of("--card-strides")) {
      auto n = parse_count(*v);
      if (!n || *n == 0 || *n > (1u << 20)) usage_error("bad card stride count '" + *v + "' (1 to 1048576)");
      options.heap.card_tasks = static_cast<unsigned>(*n);
    } else if (auto v = value_of("--card-partition")) {
      if (*v != "strides" && *v != "blocks")
        usage_error("bad card partition '" + *v + "' (strides or blocks)");
      options.heap.card_blocks = *v == "blocks";
    } else if (auto v = value_of("--gc-stress")) {
      auto n = parse_count(*v);
      if (!n || *n == 0) usage_error("bad stress interval '" + *v + "' (a positive count of allocations)");
      options.heap.stress_interval = *n;
    } else if (auto v = value_of("--step-limit")) {
      auto n = parse_count(*v);
      if (!n || *n == 0) usage_error("bad step limit '" + *v + "' (a positive count)");
      options.step_limit = *n;
    } else if (a == "--gc-log") {
      observe.log = true;
    } else if (auto v = value_of("--gc-log")) {
      parse_log_option(*v, observe);
    } else if (a == "--gc-stats") {
      observe.stats = true;
    } else if (auto v = value_of("--gc-stats")) {
      parse_stats_option(*v, observe);
    } else if (auto v = value_of("--gc-trace")) {
      observe.trace_file = *v;
    } else if (auto v = value_of("--gc-report")) {
      observe.report_file = *v;
    } else if (a == "--gc-stress-full") {
      options.heap.stress_full = true;
    } else if (a == "--gc-verify") {
      options.heap.verify = true;
    } else if (auto v = value_of("--mc-units")) {
      auto n = parse_count(*v);
      if (!n || *n == 0 || *n > 64) usage_error("bad unit count '" + *v + "' (1 to 64 units per GC thread)");
      options.heap.mc_units_per_thread = static_cast<unsigned>(*n);
    } else if (auto v = value_of("--dense-prefix")) {
      if (*v == "off") {
        options.heap.dense_prefix = false;
      } else {
        auto n = parse_count(*v);
        if (!n || *n < 50 || *n > 100)
          usage_error("bad dense prefix '" + *v + "' (off, or 50 to 100 percent live)");
        options.heap.dense_prefix_percent = static_cast<unsigned>(*n);
      }
    } else if (a == "--disasm") {
      disasm = true;
    } else if (a == "-e") {
      if (i + 1 >= argc) usage_error("-e needs CODE");
      code = argv[++i];
    } else if (a == "-") {
      script = "-";
      ++i;
      break;
    } else if (a.size() > 1 && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else {
      script = a;
      ++i;
      break;
    }
  }
  for (; i < argc; ++i) options.script_args.push_back(argv[i]);
  if (options.heap.max_heap_bytes == 0) options.heap.max_heap_bytes = gc::physical_memory_bytes() / 4;

  std::string source;
  std::string name;
  bool repl = false;
  if (code) {
    source = *code;
    name = "<-e>";
  } else if (script && *script != "-") {
    name = *script;
    if (auto why = read_file(name, &source)) {
      std::cerr << "vm: cannot read '" << name << "': " << *why
                << "\nTry 'vm --help' for more information.\n";
      return kExitNoInput;
    }
  } else if (!script && isatty(STDIN_FILENO)) {
    repl = true;
  } else {
    name = "<stdin>";
    source.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }

  // Observability: the log sink exists before the VM so that every
  // collection, even one during start-up, is recorded.
  std::unique_ptr<gc::observe::Log> log;
  if (observe.log) {
    std::FILE* f = stderr;
    if (!observe.log_file.empty()) {
      f = std::fopen(observe.log_file.c_str(), "w");
      if (!f) usage_error("cannot write the GC log to '" + observe.log_file + "': " + std::strerror(errno));
    }
    log = std::make_unique<gc::observe::Log>(f, observe.log_debug, f != stderr);
    log->using_collector(options.collector.c_str());
  }
  options.heap.log = log.get();
  options.heap.record_events = observe.log || observe.needs_history() || repl;
  options.heap.keep_event_history = observe.needs_history() || repl;

  try {
    vm::VM machine(options);
    if (disasm) return machine.disassemble_source(name, source, std::cout);
    int status = repl ? vm::run_repl(machine) : machine.run_source(name, source);
    std::cout.flush();
    if (!write_observe_outputs(machine.heap(), observe) && status == 0) status = kExitSoftware;
    return status;
  } catch (vm::RuntimeError& e) {
    std::cerr << "error: " << e.message << "\n";
    return kExitSoftware;
  }
}
