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
constexpr OptionSpec kOptions[] = {kPauseOption, kStepmulOption, kBarrierOption};
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
  return o;
}

std::span<const OptionSpec> incremental_option_table() { return kOptions; }

Variant incremental_variant(const HeapOptions& heap) {
  IncrementalOptions o = incremental_options(heap);
  // Dijkstra et al.'s collector runs beside the program; its marking, in
  // steps on the program's thread, is what this collector implements.
  Variant v{"Dijkstra et al. 1978's tri-colour marking in incremental steps, paced as Lua 5.4's", {}};
  if (o.barrier == IncrementalBarrier::kYuasa)
    v.departures.push_back("Yuasa's deletion barrier (the paper: shade the new target)");
  if (o.barrier == IncrementalBarrier::kBackward)
    v.departures.push_back("Steele's backward barrier (the paper: shade the new target)");
  if (o.barrier == IncrementalBarrier::kNone)
    v.departures.push_back("no barrier, which loses objects (the paper: shade the new target)");
  return v;
}

OptionValues incremental_paper_configuration(const HeapOptions&) { return {}; }

}  // namespace gc
