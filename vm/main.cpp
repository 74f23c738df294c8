// The `vm` command: options, then a script, standard input or the REPL.
//
// The options are tables (gc/options.h): the VM's own below, and each
// collector's from its registry entry, so parsing and --help know a
// collector's options without naming them here.
//
// CLI11 was weighed and not used: its parser takes `--heap 64M` and
// `--gc-log FILE` with the value as the next argument, so `vm --gc-log
// prog.src` would write the log to prog.src instead of running it; and
// every one of its error messages would have to be mapped back onto the
// one-line messages the tests and docs/language.md fix. The loop below is
// shorter than that mapping.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gc/exit_status.h"
#include "gc/observe/log.h"
#include "gc/observe/outputs.h"
#include "gc/observe/recording.h"
#include "gc/options.h"
#include "gc/snapshot/snapshot.h"
#include "vm/compare.h"
#include "vm/manpage.h"
#include "vm/min_heap.h"
#include "vm/progress.h"
#include "vm/repl.h"
#include "vm/replay.h"
#include "vm/run_files.h"
#include "vm/vm.h"

namespace {

using gc::kExitNoInput;
using gc::kExitSoftware;
using gc::kExitUsage;

const char* const kVersion = "gclab 0.1.0";

// Below this, some collector cannot hold the VM's start-up objects (the
// main fiber's stack, the one-byte strings, the builtins): refused at once
// rather than failing with out of memory.
constexpr uint64_t kMinHeapBytes = 256 << 10;

// Each run of a minimum-heap search ends within this, so that a program
// that hangs at some size cannot hang the search; a minute is far above
// the samples' and tests' runs, and --min-heap-time-limit changes it.
constexpr uint64_t kDefaultTimeLimitSeconds = 60;

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "vm: " << message << "\nTry 'vm --help' for more information.\n";
  std::exit(kExitUsage);
}

void parse_log_option(const std::string& v, vm::ObserveOptions& o) {
  o.log = true;
  if (v == "debug")
    o.log_debug = true;
  else if (v.rfind("debug:", 0) == 0)
    o.log_debug = true, o.log_file = v.substr(6);
  else
    o.log_file = v;
}

// Values already checked by check_stats_option.
void parse_stats_option(const std::string& v, vm::ObserveOptions& o) {
  o.stats = true;
  size_t colon = v.find(':');
  o.stats_json = v.substr(0, colon) == "json";
  o.stats_file = colon == std::string::npos ? "" : v.substr(colon + 1);
}

std::string check_stats_option(const std::string& v) {
  size_t colon = v.find(':');
  std::string form = v.substr(0, colon);
  if (form != "table" && form != "json")
    return "bad --gc-stats form '" + form + "' (table or json, then optionally :FILE)";
  if (colon != std::string::npos && colon + 1 == v.size())
    return "--gc-stats=" + form + ": needs a FILE after the colon";
  return "";
}

std::string check_collector(const std::string& v) {
  return gc::find_collector(v) ? "" : "unknown collector '" + v + "' (see --list-gcs)";
}

std::vector<std::string> split_commas(const std::string& v) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t comma = v.find(',', start);
    parts.push_back(v.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

std::string check_compare_list(const std::string& v) {
  std::vector<std::string> names = split_commas(v);
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k].empty()) return "bad --compare list '" + v + "' (collector names separated by commas)";
    if (std::string error = check_collector(names[k]); !error.empty()) return error;
    for (size_t i = 0; i < k; ++i)
      if (names[i] == names[k]) return "--compare names " + names[k] + " twice";
  }
  return "";
}

// N is what follows the last '@' when that is a count, so a FILE may hold
// '@' too.
vm::SnapshotTarget parse_snapshot_target(const std::string& v) {
  size_t at = v.rfind('@');
  if (at != std::string::npos && at + 1 < v.size() &&
      v.find_first_not_of("0123456789", at + 1) == std::string::npos)
    if (std::optional<uint64_t> n = gc::parse_count(v.substr(at + 1))) return {v.substr(0, at), n};
  return {v, std::nullopt};
}

// Digits after the last '@' that are no count would quietly become part of
// the file's name.
std::string check_collection_number(const std::string& option, const std::string& v) {
  size_t at = v.rfind('@');
  if (at == std::string::npos || at + 1 == v.size() ||
      v.find_first_not_of("0123456789", at + 1) != std::string::npos || gc::parse_count(v.substr(at + 1)))
    return "";
  return option + ": collection number " + v.substr(at + 1) + " is too large (a count has at most 12 digits)";
}

std::string check_snapshot_target(const std::string& v) {
  if (std::string error = check_collection_number("--heap-snapshot", v); !error.empty()) return error;
  vm::SnapshotTarget t = parse_snapshot_target(v);
  if (t.path.empty() || t.path == "-" || t.path == "stderr")
    return "--heap-snapshot needs a FILE to write (a snapshot is binary), optionally @N";
  return "";
}

vm::AnimateTarget parse_animate_target(const std::string& v) {
  size_t at = v.rfind('@');
  if (at != std::string::npos && v.compare(at + 1, std::string::npos, "full") == 0)
    return {v.substr(0, at), {.collection = std::nullopt, .first_full = true}};
  vm::SnapshotTarget t = parse_snapshot_target(v);
  return {t.path, {.collection = t.collection, .first_full = false}};
}

std::string check_animate_target(const std::string& v) {
  if (std::string error = check_collection_number("--gc-animate", v); !error.empty()) return error;
  vm::AnimateTarget t = parse_animate_target(v);
  if (t.path.empty()) return "--gc-animate needs a FILE to write the page to, optionally @N or @full";
  return "";
}

std::string check_replay_file(const std::string& v) {
  return v.empty() ? "--replay needs the FILE of a heap snapshot" : "";
}

// --heap=SIZE, or --heap=Nx: a multiple of the reference collector's
// minimum heap (--heap-reference).
std::string check_heap(const std::string& v) {
  if (!v.empty() && v.back() == 'x') {
    if (gc::parse_heap_multiple(v)) return "";
    return "bad heap multiple '" + v +
           "' (a number from 1 to 100 followed by x, such as 2.5x: that many times the reference collector's "
           "minimum heap)";
  }
  std::optional<uint64_t> n = gc::parse_size(v);
  if (n && *n >= kMinHeapBytes) return "";
  return "bad heap size '" + v +
         "' (at least 256K, the smallest heap every collector starts the VM in; examples: 64M, 2G; or a "
         "multiple of the minimum heap, such as 2.5x)";
}

std::string check_heaps(const std::string& v) {
  std::vector<std::string> parts = split_commas(v);
  if (parts.size() > 32) return "--heaps names more than 32 sizes";
  for (const std::string& p : parts)
    if (!gc::parse_heap_multiple(p))
      return "bad --heaps list '" + v +
             "' (multiples of the minimum heap separated by commas, each a number from 1 to 100 followed by "
             "x, such as 1.5x,2x,3x)";
  return "";
}

std::string check_resolution(const std::string& v) {
  if (vm::parse_resolution(v)) return "";
  return "bad --min-heap-resolution '" + v +
         "' (a size from 1K, such as 64K, or a percentage from 0.1% to 50%)";
}

// What --paper-config sets for `c`, for --list-gcs: under the default
// --heap and --gc-threads, which markcompact's depends on.
std::string paper_config_text(const gc::CollectorInfo& c) {
  if (!c.paper_configuration) return "no paper configuration";
  gc::HeapOptions defaults;
  defaults.max_heap_bytes = gc::default_heap_bytes(c);
  defaults.gc_threads = std::max(1u, std::thread::hardware_concurrency());
  return "paper configuration: " + gc::options_text(c.paper_configuration(defaults));
}

void list_collectors() {
  for (const gc::CollectorInfo& c : gc::registered_collectors()) {
    std::string why = c.unavailable ? c.unavailable() : "";
    std::cout << c.name << "  " << c.description << gc::gc_threads_note(c)
              << (c.collects ? "" : " (never collects)") << " (" << paper_config_text(c) << ")"
              << (c.default_heap_reason ? " (default heap " + vm::heap_size_text(c.default_heap_bytes) +
                                              ": " + c.default_heap_reason + ")"
                                        : "")
              << (why.empty() ? "" : " (cannot run: " + why + ")") << "\n";
  }
}

void print_version() { std::cout << kVersion << "\n"; }

void print_manual_page();  // after kVmOptions, whose specs it prints

// What the command line asks for.
struct CommandLine {
  vm::VMOptions options;
  vm::ObserveOptions observe;
  bool disasm = false;
  bool gc_given = false;
  bool paper_config = false;           // --paper-config
  std::optional<std::string> compare;  // --compare's list; empty: every collector that can run
  std::vector<vm::VMOptions> compare_runs;
  std::optional<std::string> code;
  std::optional<std::string> script;
  std::optional<vm::SnapshotTarget> heap_snapshot;
  std::optional<vm::AnimateTarget> animate;  // --gc-animate
  uint64_t animate_limit = gc::observe::Recording::kDefaultLimit;
  std::optional<std::string> replay;       // a snapshot to rebuild, instead of a program
  std::vector<std::string> outputs_given;  // the VmOption::once options seen so far
  bool heap_given = false;
  std::optional<double> heap_multiple;  // --heap=Nx
  std::vector<double> heaps;            // --heaps
  std::string heap_reference = "marksweep";
  bool heap_reference_given = false;
  bool min_heap = false;
  vm::HeapResolution resolution{.fraction = vm::kDefaultResolutionFraction};
  double time_limit_s = kDefaultTimeLimitSeconds;
  bool progress = false;
};

// One of the VM's own options: its description, and what it sets.
struct VmOption {
  gc::OptionSpec spec;
  void (*apply)(CommandLine& line, const std::string& value);
  // An output that names one destination: given twice is a usage error,
  // since keeping either would silently drop the other.
  bool once = false;
};

uint64_t count_of(const std::string& v) { return gc::parse_count(v).value_or(0); }

// The VM's options in --help's order. Values reach `apply` already
// validated by the spec.
const VmOption kVmOptions[] = {
    {{.name = "gc",
      .kind = gc::OptionKind::kText,
      .value_name = "NAME",
      .default_text = "semispace",
      .help = "collector to use (see --list-gcs; none never collects, the baseline)",
      .check = check_collector},
     [](CommandLine& l, const std::string& v) {
       l.options.collector = v;
       l.gc_given = true;
     }},
    {{.name = "heap",
      .kind = gc::OptionKind::kText,
      .value_name = "SIZE|Nx",
      .default_text = "a quarter of physical memory, or the collector's own as --list-gcs says",
      .help = "maximum heap, with K, M or G suffix (at least 256K); or Nx, N times (1 to 100) the reference "
              "collector's minimum heap, found first as --min-heap finds it and named on stderr and in "
              "--gc-stats, so that every collector gets the same heap",
      .check = check_heap},
     [](CommandLine& l, const std::string& v) {
       l.heap_given = true;
       l.heap_multiple = gc::parse_heap_multiple(v);
       if (!l.heap_multiple) l.options.heap.max_heap_bytes = *gc::parse_size(v);
     }},
    {{.name = "heap-reference",
      .kind = gc::OptionKind::kText,
      .value_name = "NAME",
      .default_text = "marksweep",
      .help = "the collector whose minimum heap --heap=Nx and --heaps multiply (run in its default "
              "configuration)",
      .check = check_collector},
     [](CommandLine& l, const std::string& v) {
       l.heap_reference = v;
       l.heap_reference_given = true;
     }},
    {{.name = "min-heap",
      .kind = gc::OptionKind::kFlag,
      .help = "instead of running the program once: find the smallest --heap at which it completes under "
              "--gc's collector, by runs in child processes (output discarded), doubling from 256K and then "
              "bisecting; prints the minimum, the resolution and the runs (JSON with --gc-stats=json, "
              "docs/gc-min-heap.schema.json); exit 70 where there is none"},
     [](CommandLine& l, const std::string&) { l.min_heap = true; }},
    {{.name = "min-heap-resolution",
      .kind = gc::OptionKind::kText,
      .value_name = "SIZE|P%",
      .default_text = "1%",
      .help = "how close the minimum-heap search comes: the largest size that fails and the smallest that "
              "completes differ by at most this",
      .check = check_resolution},
     [](CommandLine& l, const std::string& v) { l.resolution = *vm::parse_resolution(v); }},
    {{.name = "min-heap-time-limit",
      .kind = gc::OptionKind::kCount,
      .value_name = "SECONDS",
      .default_text = "60",
      .help = "each run of a minimum-heap search is stopped after this; a stopped run counts as too small "
              "once a run has completed, and ends the search before",
      .what = "time limit",
      .hint = "1 to 86400 seconds",
      .min = 1,
      .max = 86400},
     [](CommandLine& l, const std::string& v) { l.time_limit_s = static_cast<double>(count_of(v)); }},
    {{.name = "progress",
      .kind = gc::OptionKind::kFlag,
      .help = "show which run a --compare sweep or a minimum-heap search is on, and how many remain, on "
              "stderr even when it is not a terminal (on a terminal it always shows)"},
     [](CommandLine& l, const std::string&) { l.progress = true; }},
    {{.name = "gc-threads",
      .kind = gc::OptionKind::kCount,
      .value_name = "N",
      .default_text = "hardware threads",
      .help = "GC worker threads; 0 runs a collector's serial form where it has one (semispace: Cheney's "
              "collector, the baseline; markcompact: serial mark-compact for full collections)",
      .what = "thread count",
      .max = 1024},
     [](CommandLine& l, const std::string& v) {
       l.options.heap.gc_threads = static_cast<unsigned>(count_of(v));
     }},
    {{.name = "gc-deque",
      .kind = gc::OptionKind::kCount,
      .value_name = "N",
      .default_text = "32768",
      .help = "each GC thread's work-stealing deque capacity in tasks (rounded up to a power of two)",
      .what = "deque capacity",
      .hint = "4 to 67108864 tasks",
      .min = 4,
      .max = 1ull << 26},
     [](CommandLine& l, const std::string& v) { l.options.heap.gc_deque_tasks = count_of(v); }},
    {{.name = "paper-config",
      .kind = gc::OptionKind::kFlag,
      .help = "run the collector in its paper's configuration (--list-gcs names the options it sets; "
              "refused for a collector that has none, and with an option given away from it); --gc-stats, "
              "--gc-log and --gc-report name the variant in use and each departure from the paper"},
     [](CommandLine& l, const std::string&) { l.paper_config = true; }},
    {{.name = "gc-stress",
      .kind = gc::OptionKind::kCount,
      .value_name = "N",
      .help = "collect every N allocations (1: every allocation)",
      .what = "stress interval",
      .hint = "a positive count of allocations",
      .min = 1},
     [](CommandLine& l, const std::string& v) { l.options.heap.stress_interval = count_of(v); }},
    {{.name = "gc-stress-full",
      .kind = gc::OptionKind::kFlag,
      .help = "under stress, make every collection a full one (generational collectors otherwise alternate)"},
     [](CommandLine& l, const std::string&) { l.options.heap.stress_full = true; }},
    {{.name = "gc-overhead-limit",
      .kind = gc::OptionKind::kChoice,
      .value_name = "on|off",
      .default_text = "on",
      .help =
          "out of memory once 5 full collections in a row each took over 98% of the time and left under 2% "
          "of the heap free (HotSpot's UseGCOverheadLimit), rather than crawling on",
      .what = "GC overhead limit",
      .hint = "on or off",
      .choices = "on|off"},
     [](CommandLine& l, const std::string& v) { l.options.heap.gc_overhead_limit = v == "on"; }},
    {{.name = "gc-verify",
      .kind = gc::OptionKind::kFlag,
      .help = "verify the heap before and after every collection; a failure exits with status 71"},
     [](CommandLine& l, const std::string&) { l.options.heap.verify = true; }},
    {{.name = "gc-log",
      .kind = gc::OptionKind::kText,
      .value_name = "debug|FILE|debug:FILE",
      .help = "one line per collection (and one per step of a cycle that spans many), JDK unified-log style, "
              "on stderr or in FILE; debug adds per-phase and per-worker lines",
      .value_optional = true},
     [](CommandLine& l, const std::string& v) { parse_log_option(v, l.observe); },
     true},
    {{.name = "gc-stats",
      .kind = gc::OptionKind::kText,
      .value_name = "table|json[:FILE]",
      .help = "an end-of-run GC summary on stderr (or in FILE), as a table (default) or JSON "
              "(docs/gc-stats.schema.json)",
      .check = check_stats_option,
      .value_optional = true},
     [](CommandLine& l, const std::string& v) { parse_stats_option(v, l.observe); },
     true},
    {{.name = "gc-trace",
      .kind = gc::OptionKind::kText,
      .value_name = "FILE",
      .help = "Chrome trace-event JSON for Perfetto / chrome://tracing"},
     [](CommandLine& l, const std::string& v) { l.observe.trace_file = v; },
     true},
    {{.name = "gc-report",
      .kind = gc::OptionKind::kText,
      .value_name = "FILE",
      .help = "a self-contained HTML page of GC plots"},
     [](CommandLine& l, const std::string& v) { l.observe.report_file = v; },
     true},
    {{.name = "step-limit",
      .kind = gc::OptionKind::kCount,
      .value_name = "N",
      .help = "stop with an error after N loop iterations and calls",
      .what = "step limit",
      .hint = "a positive count",
      .min = 1},
     [](CommandLine& l, const std::string& v) { l.options.step_limit = count_of(v); }},
    {{.name = "compare",
      .kind = gc::OptionKind::kText,
      .value_name = "A,B,...",
      .default_text = "every collector that can run",
      .help = "run the program under each collector in turn (same input, arguments and heap limit), check "
              "that all print the same and exit the same way (else exit 70, naming the one that does not), "
              "and print a table of their statistics, or with --gc-stats=json one JSON document",
      .check = check_compare_list,
      .value_optional = true},
     [](CommandLine& l, const std::string& v) { l.compare = v; }},
    {{.name = "heaps",
      .kind = gc::OptionKind::kText,
      .value_name = "Nx,...",
      .help = "with --compare: run every collector at each of these multiples of the reference collector's "
              "minimum heap (found once), and give total and GC time per size: the time-space curves; a run "
              "out of memory is marked, and is no disagreement",
      .check = check_heaps},
     [](CommandLine& l, const std::string& v) {
       l.heaps.clear();
       for (const std::string& p : split_commas(v)) l.heaps.push_back(*gc::parse_heap_multiple(p));
     }},
    {{.name = "heap-snapshot",
      .kind = gc::OptionKind::kText,
      .value_name = "FILE[@N]",
      .default_text = "N: the last collection",
      .help = "write the heap reachable at the start of collection N (GC(N) in --gc-log) to FILE "
              "(docs/snapshot.md)",
      .check = check_snapshot_target},
     [](CommandLine& l, const std::string& v) { l.heap_snapshot = parse_snapshot_target(v); },
     true},
    {{.name = "gc-animate",
      .kind = gc::OptionKind::kText,
      .value_name = "FILE[@N|@full]",
      .default_text = "the first collection",
      .help = "record collection N (GC(N) in --gc-log), or the first full one, object by object, and write "
              "FILE: a page that plays it back (docs/observability.md, \"Watching a collection\")",
      .check = check_animate_target},
     [](CommandLine& l, const std::string& v) { l.animate = parse_animate_target(v); },
     true},
    {gc::count_option(
         "gc-animate-limit", gc::observe::Recording::kDefaultLimit,
         "--gc-animate records a heap of at most N objects and a collection of at most 8N steps, "
         "and refuses a larger one",
         "animation limit", "1 to 1000000 objects", 1, 1000000),
     [](CommandLine& l, const std::string& v) { l.animate_limit = count_of(v); }},
    {{.name = "replay",
      .kind = gc::OptionKind::kText,
      .value_name = "FILE",
      .help = "instead of a program: rebuild the heap of the snapshot FILE under --gc's collector, run one "
              "full collection and report it (with --gc-stats and the other outputs as usual)",
      .check = check_replay_file},
     [](CommandLine& l, const std::string& v) { l.replay = v; }},
    {{.name = "disasm", .kind = gc::OptionKind::kFlag, .help = "print the bytecode and stop"},
     [](CommandLine& l, const std::string&) { l.disasm = true; }},
    {{.name = "list-gcs",
      .kind = gc::OptionKind::kAction,
      .help = "list the collectors",
      .action = list_collectors},
     nullptr},
    {{.name = "version",
      .kind = gc::OptionKind::kAction,
      .help = "print the version",
      .action = print_version},
     nullptr},
    {{.name = "man",
      .kind = gc::OptionKind::kAction,
      .help = "print the manual page, vm(1), in roff (what man vm shows)",
      .action = print_manual_page},
     nullptr},
};

void print_manual_page() {
  std::vector<gc::OptionSpec> vm_specs;
  for (const VmOption& o : kVmOptions) vm_specs.push_back(o.spec);
  std::cout << vm::manual_page(vm_specs, gc::registered_collectors(), kVersion);
}

// --help: the VM's options, then each collector's (or only `only`'s).
void print_help(const gc::CollectorInfo* only) {
  std::vector<gc::OptionSpec> vm_specs;
  for (const VmOption& o : kVmOptions) vm_specs.push_back(o.spec);
  std::cout << R"(usage: vm [options] [script.src [args...]]

Runs a gclab program. With no script: the REPL on a terminal, otherwise the
program read from standard input (also with `-`). Options may come in any
order before the script; everything after it goes to the program. Each
output option (--gc-log, --gc-stats, --gc-trace, --gc-report, --heap-snapshot)
is given at most once.

options:
)" << gc::describe_options(vm_specs)
            << R"(  -e CODE            run CODE instead of a file
  -h, --help         this help; with --gc=NAME, that collector's options only
)";
  for (const gc::CollectorInfo& c : gc::registered_collectors()) {
    if (only && only != &c) continue;
    std::span<const gc::OptionSpec> table = c.options ? c.options() : std::span<const gc::OptionSpec>();
    if (table.empty()) {
      if (only) std::cout << "\n--gc=" << c.name << " has no options of its own.\n";
      continue;
    }
    std::cout << "\n--gc=" << c.name << " (docs/collectors/" << c.name << ".md):\n"
              << gc::describe_options(table);
  }
  std::cout << R"(
exit status: 0 success, 64 bad command line, 65 compile error or damaged heap
snapshot, 66 unreadable file, 69 the collector cannot run on this machine, 70
runtime error (including out of memory and stack overflow), 71 heap
verification failure, 73 an output file that cannot be written, or the status
given to exit().
)";
}

// The collector --help describes alone: the last valid --gc= among the
// options, wherever --help stands.
const gc::CollectorInfo* collector_for_help(int argc, char** argv) {
  const gc::CollectorInfo* found = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-e") {
      ++i;
      continue;
    }
    if (a.size() < 2 || a[0] != '-') break;
    if (a.rfind("--gc=", 0) == 0)
      if (const gc::CollectorInfo* c = gc::find_collector(a.substr(5))) found = c;
  }
  return found;
}

// A collector option as given, checked against the selected collector
// once the whole command line is read (--gc= may come after it).
struct GivenCollectorOption {
  std::string name;
  std::string value;
};

// The collectors whose tables hold `name`, and its spec there.
std::vector<const gc::CollectorInfo*> owners_of(const std::string& name, const gc::OptionSpec** spec) {
  std::vector<const gc::CollectorInfo*> owners;
  for (const gc::CollectorInfo& c : gc::registered_collectors()) {
    if (!c.options) continue;
    for (const gc::OptionSpec& s : c.options())
      if (name == s.name) {
        owners.push_back(&c);
        *spec = &s;
      }
  }
  return owners;
}

// One "--NAME" or "--NAME=VALUE" argument: checks its value and applies it
// (VM options), records it (collector options) or runs it (actions). Today's
// spellings only: a value always follows "=", and a flag takes none.
void apply_option(CommandLine& line, const std::string& arg, std::vector<GivenCollectorOption>& given) {
  if (arg.rfind("--", 0) != 0) usage_error("unknown option '" + arg + "'");
  size_t eq = arg.find('=');
  std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  bool has_value = eq != std::string::npos;
  std::string value = has_value ? arg.substr(eq + 1) : "";
  auto accepts = [&](const gc::OptionSpec& s) {
    bool takes_value = s.kind != gc::OptionKind::kFlag && s.kind != gc::OptionKind::kAction;
    return has_value ? takes_value : !takes_value || s.value_optional;
  };
  auto check = [&](const gc::OptionSpec& s) {
    if (!has_value) return;
    std::string error = gc::validate_option(s, value);
    if (!error.empty()) usage_error(error);
  };
  for (const VmOption& o : kVmOptions) {
    if (name != o.spec.name) continue;
    if (!accepts(o.spec)) break;
    check(o.spec);
    if (o.once) {
      std::vector<std::string>& seen = line.outputs_given;
      if (std::find(seen.begin(), seen.end(), name) != seen.end())
        usage_error("--" + name + " is given twice: it writes one output, so give it once");
      seen.push_back(name);
    }
    if (o.spec.action) {
      o.spec.action();
      std::exit(0);
    }
    o.apply(line, value);
    return;
  }
  const gc::OptionSpec* spec = nullptr;
  if (!owners_of(name, &spec).empty() && accepts(*spec)) {
    check(*spec);
    if (spec->action) {
      spec->action();
      std::exit(0);
    }
    given.push_back({name, value});
    return;
  }
  usage_error("unknown option '" + arg + "'");
}

// --paper-config for collector `c`: its paper's options joined to those
// given, or a usage error where it has none or one given departs from it.
void add_paper_configuration(const gc::CollectorInfo& c, const gc::HeapOptions& heap,
                             std::vector<GivenCollectorOption>& given) {
  if (!c.paper_configuration)
    usage_error("--paper-config: " + std::string(c.name) +
                " implements no paper, so it has no paper configuration");
  for (const auto& [name, value] : c.paper_configuration(heap)) {
    auto same = [&](const GivenCollectorOption& g) { return g.name == name; };
    auto it = std::find_if(given.begin(), given.end(), same);
    // A size agrees however it is written (16M and 16384K).
    auto agrees = [&](const std::string& v) {
      std::optional<uint64_t> a = gc::parse_size(v), b = gc::parse_size(value);
      return v == value || (a && b && *a == *b);
    };
    if (it == given.end())
      given.push_back({name, value});
    else if (!agrees(it->value))
      usage_error("--paper-config sets --" + name + "=" + value + " for " + c.name + ", and --" + name + "=" +
                  it->value + " departs from it: give one or the other");
  }
}

// The options one run of collector `c` gets: `own` (the collector options
// given for it, which it must own) and, with --paper-config, its paper's,
// checked together. Both a single run and each run of --compare come
// here, so a configuration is checked once per run; an error is prefixed
// with `prefix` (a comparison names the collector).
void configure_collector(const CommandLine& line, const gc::CollectorInfo& c,
                         std::vector<GivenCollectorOption> own, gc::HeapOptions& heap,
                         const std::string& prefix) {
  if (line.paper_config) add_paper_configuration(c, heap, own);
  for (const GivenCollectorOption& g : own) {
    const gc::OptionSpec* spec = nullptr;
    std::vector<const gc::CollectorInfo*> owners = owners_of(g.name, &spec);
    if (std::find(owners.begin(), owners.end(), &c) == owners.end()) {
      std::string names, adds;
      for (size_t k = 0; k < owners.size(); ++k) {
        const char* sep = k == 0 ? "" : k + 1 == owners.size() ? " and " : ", ";
        names += sep + std::string(owners[k]->name);
        adds += (k == 0 ? "" : " or ") + std::string("--gc=") + owners[k]->name;
      }
      usage_error("--" + g.name + " is an option of " + names + "; add " + adds);
    }
    heap.collector_options[g.name] = g.value;
  }
  if (!c.check_configuration) return;
  std::string error = c.check_configuration(heap);
  if (!error.empty()) usage_error(prefix + error);
}

// --compare: each collector named (or every one that can run) gets the
// common options and the collector options it owns. An option that no
// compared collector owns is an error, as is what a comparison cannot do.
void plan_comparison(CommandLine& line, const std::vector<GivenCollectorOption>& given) {
  if (line.gc_given)
    usage_error("--compare runs several collectors and --gc chooses one: give one or the other");
  if (line.disasm) usage_error("--compare runs the program; --disasm only prints its bytecode");
  if (line.observe.log || !line.observe.trace_file.empty())
    usage_error("--compare does not take --gc-log or --gc-trace; run one collector with them");
  if (line.heap_snapshot) usage_error("--compare does not take --heap-snapshot; run one collector with it");
  if (line.animate) usage_error("--compare does not take --gc-animate; animate one collector at a time");
  if (line.replay) usage_error("--compare does not take --replay; replay under one collector at a time");
  std::string error;
  std::vector<const gc::CollectorInfo*> chosen = vm::compared_collectors(
      line.compare->empty() ? std::vector<std::string>() : split_commas(*line.compare), line.paper_config,
      line.options.heap.stress_interval != 0, &error);
  if (!error.empty()) usage_error(error);
  std::vector<std::vector<const gc::CollectorInfo*>> owners(given.size());
  for (size_t k = 0; k < given.size(); ++k) {
    const gc::OptionSpec* spec = nullptr;
    owners[k] = owners_of(given[k].name, &spec);
    bool compared = false;
    for (const gc::CollectorInfo* c : owners[k])
      compared |= std::find(chosen.begin(), chosen.end(), c) != chosen.end();
    if (!compared)
      usage_error("--" + given[k].name + " is an option of " + owners[k].front()->name +
                  ", which --compare does not run");
  }
  for (const gc::CollectorInfo* c : chosen) {
    vm::VMOptions o = line.options;
    o.collector = c->name;
    std::vector<GivenCollectorOption> own;
    for (size_t k = 0; k < given.size(); ++k)
      if (std::find(owners[k].begin(), owners[k].end(), c) != owners[k].end()) own.push_back(given[k]);
    configure_collector(line, *c, own, o.heap, std::string(c->name) + ": ");
    o.heap.record_events = true;
    o.heap.keep_event_history = true;
    line.compare_runs.push_back(o);
  }
}

// What --min-heap, --heap=Nx, --heaps and --heap-reference need of each
// other and of the rest of the command line.
void check_heap_options(const CommandLine& line) {
  if (!line.heaps.empty() && !line.compare)
    usage_error("--heaps sweeps the heap sizes of a comparison: add --compare");
  if (!line.heaps.empty() && line.heap_given) usage_error("--heaps gives the heap sizes: drop --heap");
  if (line.heap_reference_given && !line.heap_multiple && line.heaps.empty())
    usage_error(
        "--heap-reference names the collector whose minimum heap --heap=Nx or --heaps multiplies: "
        "give one of them");
  if (!line.min_heap) return;
  if (line.compare) usage_error("--min-heap searches under one collector (--gc); --compare runs several");
  if (line.heap_given) usage_error("--min-heap finds the heap: drop --heap");
  if (line.disasm) usage_error("--min-heap runs the program; --disasm only prints its bytecode");
  if (line.replay) usage_error("--min-heap runs a program; --replay runs none");
  if (line.heap_snapshot || line.animate || line.observe.log || !line.observe.trace_file.empty() ||
      !line.observe.report_file.empty())
    usage_error(
        "--min-heap discards its runs' output: it takes --gc-stats (its result's form and FILE) and "
        "no other output option");
}

// Step 1: the command line, up to the script; what follows it is the
// program's, untouched.
CommandLine parse_command_line(int argc, char** argv) {
  CommandLine line;
  line.options.heap.gc_threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<GivenCollectorOption> given;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      print_help(collector_for_help(argc, argv));
      std::exit(0);
    } else if (a == "-e") {
      if (i + 1 >= argc) usage_error("-e needs CODE");
      line.code = argv[++i];
    } else if (a == "-" || a.empty() || a[0] != '-') {
      line.script = a;
      ++i;
      break;
    } else {
      apply_option(line, a, given);
    }
  }
  for (; i < argc; ++i) line.options.script_args.push_back(argv[i]);
  // --compare gives every run the same limit, the usual quarter of memory;
  // one run gets its collector's own default.
  const gc::CollectorInfo* selected = gc::find_collector(line.options.collector);
  if (line.options.heap.max_heap_bytes == 0 && !line.heap_given) {
    line.options.heap.max_heap_bytes =
        line.compare ? gc::usual_max_heap_bytes() : gc::default_heap_bytes(*selected);
    if (!line.compare && selected->default_heap_reason)
      line.options.heap_limit_reason = std::string(selected->name) + "'s default heap, " +
                                       selected->default_heap_reason + "; --heap=SIZE sets it";
  }
  check_heap_options(line);
  if (line.compare) {
    plan_comparison(line, given);
    return line;
  }
  if (line.replay) {
    if (line.script || line.code)
      usage_error("--replay rebuilds a heap snapshot and runs no program: drop the script");
    if (line.disasm) usage_error("--replay runs no program; --disasm only prints a program's bytecode");
  }
  configure_collector(line, *selected, given, line.options.heap, "");
  // What needs a collection, refused for every collector that makes none.
  if (!selected->collects) {
    std::string never = std::string("--gc=") + selected->name + " never collects";
    if (line.options.heap.stress_interval)
      usage_error("--gc-stress: " + never +
                  ", so there is no collection to force (--gc-verify checks the heap at each gc() instead)");
    if (line.heap_snapshot) usage_error("--heap-snapshot is written at a collection, and " + never);
    if (line.animate) usage_error("--gc-animate records a collection, and " + never);
    if (line.replay) usage_error("--replay collects the rebuilt heap once, and " + never);
  }
  return line;
}

// The program to run: -e's code, a file, standard input, or the REPL.
struct Program {
  std::string name;
  std::string source;
  bool repl = false;
};

// Step 2: reads the program; exits 66 if the file cannot be read.
Program read_program(const CommandLine& line) {
  Program p;
  if (line.code) {
    p.source = *line.code;
    p.name = "<-e>";
  } else if (line.script && *line.script != "-") {
    p.name = *line.script;
    if (auto why = vm::read_file(p.name, &p.source)) {
      std::cerr << "vm: cannot read '" << p.name << "': " << *why
                << "\nTry 'vm --help' for more information.\n";
      std::exit(kExitNoInput);
    }
  } else if (!line.script && isatty(STDIN_FILENO)) {
    p.repl = true;
  } else {
    p.name = "<stdin>";
    p.source.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  return p;
}

// Why an output file could not be written, checked before anything runs:
// its folder must exist and take new files, and the path must not be a
// folder or a file that cannot be written.
std::optional<std::string> unwritable(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  if (fs::is_directory(p, ec)) return std::string("it is a folder");
  fs::path folder = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  fs::file_status status = fs::status(folder, ec);
  if (!fs::exists(status)) return "no folder '" + folder.string() + "'";
  if (!fs::is_directory(status)) return "'" + folder.string() + "' is not a folder";
  if (fs::exists(p, ec) ? access(path.c_str(), W_OK) != 0 : access(folder.c_str(), W_OK | X_OK) != 0)
    return std::string(std::strerror(errno));
  return std::nullopt;
}

// Every output the command line names, checked before the program runs,
// so that a long run's results are not lost at its end (exit 73).
void check_outputs(const CommandLine& line) {
  const vm::ObserveOptions& o = line.observe;
  auto check = [](const char* what, const std::string& path) {
    if (path.empty() || path == "-" || path == "stderr") return;
    if (std::optional<std::string> why = unwritable(path)) vm::cannot_write(what, path, *why);
  };
  if (o.log) check("GC log", o.log_file);
  if (o.stats) check("GC statistics", o.stats_file);
  check("GC trace", o.trace_file);
  check("GC report", o.report_file);
  if (line.heap_snapshot) check("heap snapshot", line.heap_snapshot->path);
  if (line.animate) check("GC animation", line.animate->path);
}

// Step 3: observability. The log sink exists before the VM so that every
// collection, even one during start-up, is recorded.
std::unique_ptr<gc::observe::Log> set_up_observability(CommandLine& line, const Program& program) {
  const vm::ObserveOptions& observe = line.observe;
  std::unique_ptr<gc::observe::Log> log;
  if (observe.log) log = vm::open_log(observe, line.options);
  line.options.heap.log = log.get();
  // The recording takes its phases from the Recorder.
  line.options.heap.record_events = observe.log || observe.needs_history() || program.repl || line.animate;
  line.options.heap.keep_event_history = observe.needs_history() || program.repl;
  return log;
}

// Step 4 and 5: runs the program (or disassembles it), then writes the
// end-of-run outputs.
int run(const CommandLine& line, const Program& program) {
  vm::VMOptions options = line.options;
  std::optional<gc::snapshot::Request> snapshot;
  if (line.heap_snapshot) {
    snapshot.emplace(line.heap_snapshot->collection, nullptr,
                     gc::snapshot::Origin{.program = program.repl ? "<repl>" : program.name,
                                          .collector = options.collector});
    options.heap.heap_snapshot = &*snapshot;
  }
  std::optional<gc::observe::Recording> recording;
  if (line.animate) {
    recording.emplace(line.animate->collection, line.animate_limit);
    options.heap.recording = &*recording;
  }
  try {
    vm::VM machine(options);
    if (line.disasm) return machine.disassemble_source(program.name, program.source, std::cout);
    int status = program.repl ? vm::run_repl(machine) : machine.run_source(program.name, program.source);
    std::cout.flush();
    if (!std::cout && status == 0) {
      std::cerr << "error: cannot write to standard output: " << std::strerror(errno) << "\n";
      status = kExitSoftware;
    }
    if (!vm::write_observe_outputs(machine.heap(), line.observe) && status == 0) status = kExitSoftware;
    if (snapshot && !vm::write_heap_snapshot(*snapshot, line.heap_snapshot->path, machine.heap()) &&
        status == 0)
      status = kExitSoftware;
    if (recording && !vm::write_animation(*recording, line.animate->path, machine.heap()) && status == 0)
      status = kExitSoftware;
    return status;
  } catch (vm::RuntimeError& e) {
    std::cerr << "error: " << e.message << "\n";
    return kExitSoftware;
  }
}

// The program as a child run executes it.
vm::ChildProgram child_program(const CommandLine& line, const Program& program) {
  vm::ChildProgram child;
  child.executable = "/proc/self/exe";  // in the child, the VM's own executable
  if (line.code)
    child.code = *line.code;
  else if (line.script && *line.script != "-")
    child.script = *line.script;
  else
    child.stdin_source = program.source;
  child.args = line.options.script_args;
  child.time_limit_s = line.time_limit_s;
  return child;
}

vm::SearchBounds search_bounds(const CommandLine& line) {
  return {.floor = kMinHeapBytes,
          .ceiling = std::min<uint64_t>(gc::physical_memory_bytes(), 1'000'000'000'000'000ull),
          .resolution = line.resolution};
}

// The search under `options`' collector, with its progress line.
vm::MinHeap search(const CommandLine& line, const Program& program, const vm::VMOptions& options,
                   const std::string& what) {
  vm::ChildProgram child = child_program(line, program);
  vm::Progress progress(what, line.progress);
  return vm::find_min_heap(
      search_bounds(line), [&](uint64_t heap, size_t index, const std::string& remaining) {
        progress.run(index, remaining, options.collector + " at " + vm::heap_size_text(heap));
        return vm::run_child_at(child, options, heap);
      });
}

// vm --min-heap: the search, then its result on standard output (or
// --gc-stats's FILE), in words or JSON.
int min_heap(const CommandLine& line, const Program& program) {
  if (program.repl) usage_error("--min-heap needs a program: a script, -e CODE or standard input");
  vm::MinHeap m = search(line, program, line.options, "--min-heap");
  vm::SearchBounds bounds = search_bounds(line);
  std::string text = line.observe.stats_json
                         ? vm::min_heap_json(m, program.name, line.options.collector, bounds)
                         : vm::min_heap_text(m, line.options.collector, bounds);
  if (line.observe.stats_file.empty()) {
    std::cout << text << std::flush;
  } else if (!gc::observe::write_output(line.observe.stats_file, text, "minimum heap")) {
    return kExitSoftware;
  }
  return m.answer == vm::MinHeap::Answer::kFound ? 0 : kExitSoftware;
}

// The reference collector's minimum heap, which --heap=Nx and --heaps
// multiply; exits 70 with the reason where there is none.
vm::ReferenceMinimum reference_minimum(const CommandLine& line, const Program& program, const char* option) {
  if (program.repl)
    usage_error(std::string(option) + " needs a program to measure: a script, -e CODE or standard input");
  vm::VMOptions reference = line.options;
  reference.collector = line.heap_reference;
  reference.heap.collector_options.clear();
  vm::MinHeap m = search(line, program, reference, std::string(option) + ": the minimum heap");
  vm::SearchBounds bounds = search_bounds(line);
  if (m.answer != vm::MinHeap::Answer::kFound) {
    std::cerr << "vm: " << option
              << ": no minimum heap to multiply: " << vm::no_minimum_reason(m, reference.collector, bounds)
              << "\n";
    std::exit(kExitSoftware);
  }
  return {.collector = reference.collector,
          .min_heap = m.min_heap,
          .fails_at = m.fails_at,
          .resolution = bounds.resolution,
          .runs = m.runs.size()};
}

// N times the reference minimum, in bytes; exits 70 where that is more
// than the machine has.
uint64_t heap_at(const vm::ReferenceMinimum& r, double multiple) {
  double bytes = std::ceil(multiple * static_cast<double>(r.min_heap));
  uint64_t memory = gc::physical_memory_bytes();
  if (bytes > static_cast<double>(memory)) {
    std::cerr << "vm: --heap: " << vm::multiple_text(multiple) << " x " << r.collector << "'s minimum "
              << vm::heap_size_text(r.min_heap) << " is more than this machine's memory, "
              << vm::heap_size_text(memory) << "\n";
    std::exit(kExitSoftware);
  }
  return static_cast<uint64_t>(bytes);
}

// --compare's steps 4 and 5: every run, then the agreement and the table.
int compare(const CommandLine& line, const Program& program) {
  if (program.repl) usage_error("--compare needs a program: a script, -e CODE or standard input");
  vm::CompareOptions c;
  c.progress = line.progress;
  if (!line.heaps.empty()) {
    c.reference = reference_minimum(line, program, "--heaps");
    for (double m : line.heaps) c.heaps.push_back({m, heap_at(*c.reference, m)});
  }
  c.runs = line.compare_runs;
  c.program_name = program.name;
  c.source = program.source;
  c.json = line.observe.stats_json;
  c.stats_file = line.observe.stats_file;
  c.report_file = line.observe.report_file;
  return vm::run_compare(c);
}

// --heap=Nx: the heap limit for the run (or every compared run), named on
// standard error.
void apply_heap_multiple(CommandLine& line, const Program& program) {
  vm::ReferenceMinimum r = reference_minimum(line, program, "--heap");
  uint64_t bytes = heap_at(r, *line.heap_multiple);
  line.options.heap.max_heap_bytes = bytes;
  for (vm::VMOptions& o : line.compare_runs) o.heap.max_heap_bytes = bytes;
  line.observe.heap_limit = {.bytes = bytes,
                             .multiple = *line.heap_multiple,
                             .reference = r.collector,
                             .reference_min_bytes = r.min_heap};
  std::cerr << "vm: " << vm::heap_limit_text(r, *line.heap_multiple, bytes) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  // No C++ exception leaves the VM as an abort: the language's errors are
  // caught where they arise, and what is left is the VM's own memory or a
  // system resource (a thread, a mapping) running out.
  try {
    CommandLine line = parse_command_line(argc, argv);
    check_outputs(line);
    if (line.replay)
      return vm::replay(*line.replay, line.options, line.observe, line.heap_snapshot, line.animate,
                        line.animate_limit);
    Program program = read_program(line);
    if (line.min_heap) return min_heap(line, program);
    if (line.heap_multiple) apply_heap_multiple(line, program);
    if (line.compare) return compare(line, program);
    std::unique_ptr<gc::observe::Log> log = set_up_observability(line, program);
    return run(line, program);
  } catch (const gc::CreationError& e) {
    std::cout.flush();
    std::cerr << "vm: " << e.what() << "\n";
    return e.status();
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "error: out of memory: the VM's own memory, outside the heap, ran out\n";
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "error: the system refused a resource: " << e.what() << "\n";
  }
  return kExitSoftware;
}
