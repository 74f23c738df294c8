#include "gc/collectors/incremental/incremental_options.h"

#include <string>

namespace gc {

namespace {
constexpr OptionSpec kPauseOption =
    count_option("inc-pause", 200,
                 "start a cycle when the heap in use has grown to N percent of what was in use when the "
                 "last one ended (Lua's pause)",
                 "incremental pause", "a percentage from 100 to 1000", 100, 1000);
constexpr OptionSpec kStepmulOption =
    count_option("inc-stepmul", 200,
                 "the work each step does per 100 words allocated since the last one: slots scanned and "
                 "objects marked, or cells swept (Lua's stepmul)",
                 "incremental step multiplier", "a percentage from 10 to 100000", 10, 100000);
constexpr OptionSpec kBarrierOption = choice_option(
    "barrier", "dijkstra|yuasa|backward|none", "dijkstra",
    "the write barrier while a cycle marks: Dijkstra's insertion barrier, Yuasa's deletion (snapshot) "
    "barrier, Steele's backward barrier, or none (objects are lost; --gc-verify names them)",
    "barrier", "dijkstra, yuasa, backward or none");
constexpr OptionSpec kModeOption = choice_option(
    "inc-mode", "incremental|concurrent", "incremental",
    "where a cycle marks: in steps on the program's thread, or on the --gc-threads GC threads while the "
    "program runs (with Yuasa's snapshot barrier, the default there)",
    "incremental mode", "incremental or concurrent");
constexpr OptionSpec kAssistOption = choice_option(
    "inc-assist", "on|off", "on",
    "concurrent mode: once the program has allocated, while a cycle marks, as much as it did between the "
    "last cycle's end and this one's start, each 1K words it allocates pays for --inc-stepmul percent as "
    "many units of marking on its own thread, taken from the GC threads' work (Go's mark assist)",
    "mark assist", "on or off");
constexpr OptionSpec kOptions[] = {kPauseOption, kStepmulOption, kBarrierOption, kModeOption, kAssistOption};
}  // namespace

const char* barrier_name(IncrementalBarrier barrier) {
  switch (barrier) {
    case IncrementalBarrier::kDijkstra:
      return "dijkstra";
    case IncrementalBarrier::kYuasa:
      return "yuasa";
    case IncrementalBarrier::kBackward:
      return "backward";
    case IncrementalBarrier::kNone:
      return "none";
  }
  return "?";
}

IncrementalOptions incremental_options(const HeapOptions& heap) {
  IncrementalOptions o;
  const OptionValues& v = heap.collector_options;
  o.pause_percent = option_count(v, kPauseOption);
  o.stepmul_percent = option_count(v, kStepmulOption);
  if (option_is(v, kBarrierOption, "yuasa")) o.barrier = IncrementalBarrier::kYuasa;
  if (option_is(v, kBarrierOption, "backward")) o.barrier = IncrementalBarrier::kBackward;
  if (option_is(v, kBarrierOption, "none")) o.barrier = IncrementalBarrier::kNone;
  o.assist = option_is(v, kAssistOption, "on");
  if (option_is(v, kModeOption, "concurrent")) {
    o.mode = IncrementalMode::kConcurrent;
    // GC threads mark while the program stores: only a snapshot keeps what
    // they have not reached yet without rescanning the stacks at the end.
    if (!given_text(v, kBarrierOption)) o.barrier = IncrementalBarrier::kYuasa;
  }
  return o;
}

std::string incremental_check_configuration(const HeapOptions& heap) {
  IncrementalOptions o = incremental_options(heap);
  if (o.mode != IncrementalMode::kConcurrent) {
    if (given_text(heap.collector_options, kAssistOption))
      return "--inc-assist is the concurrent mode's (--inc-mode=concurrent): in steps, the program does all "
             "the marking already";
    return "";
  }
  if (heap.gc_threads == 0)
    return "--inc-mode=concurrent marks on GC threads beside the program, and --gc-threads=0 gives it none "
           "(give 1 or more)";
  if (o.barrier == IncrementalBarrier::kDijkstra || o.barrier == IncrementalBarrier::kBackward)
    return std::string("--inc-mode=concurrent marks under Yuasa's snapshot barrier: --barrier=") +
           barrier_name(o.barrier) +
           " would need the stacks rescanned at the end, a pause as long as marking "
           "them (give --barrier=yuasa, or none for teaching)";
  return "";
}

std::span<const OptionSpec> incremental_option_table() { return kOptions; }

Variant incremental_variant(const HeapOptions& heap) {
  IncrementalOptions o = incremental_options(heap);
  // Dijkstra et al.'s collector runs beside the program; its marking, in
  // steps on the program's thread, is what this collector implements.
  Variant v{o.mode == IncrementalMode::kConcurrent
                ? "Dijkstra et al. 1978's tri-colour marking on GC threads beside the program"
                : "Dijkstra et al. 1978's tri-colour marking in incremental steps, paced as Lua 5.4's",
            {}};
  if (o.barrier == IncrementalBarrier::kYuasa)
    v.departures.push_back("Yuasa's deletion barrier (the paper: shade the new target)");
  if (o.barrier == IncrementalBarrier::kBackward)
    v.departures.push_back("Steele's backward barrier (the paper: shade the new target)");
  if (o.barrier == IncrementalBarrier::kNone)
    v.departures.push_back("no barrier, which loses objects (the paper: shade the new target)");
  if (o.mode == IncrementalMode::kConcurrent && o.assist)
    v.departures.push_back("the program marks too when it outruns the GC threads (Go's mark assist)");
  return v;
}

OptionValues incremental_paper_configuration(const HeapOptions&) { return {}; }

}  // namespace gc
