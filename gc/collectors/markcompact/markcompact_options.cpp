#include "gc/collectors/markcompact/markcompact_options.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "gc/collectors/markcompact/card_scan.h"
#include "gc/plan/gc_lab.h"

namespace gc {

namespace {

std::string check_dense_prefix(const std::string& value) {
  if (value == "off") return "";
  auto n = parse_count(value);
  if (!n || *n < 50 || *n > 100) return "bad dense prefix '" + value + "' (off, or 50 to 100 percent live)";
  return "";
}

// --pause-goal=MS: milliseconds, a positive decimal of at most 10 s.
std::optional<double> parse_pause_goal(const std::string& value) {
  if (value.empty() || !(std::isdigit(static_cast<unsigned char>(value[0])) || value[0] == '.'))
    return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double ms = std::strtod(value.c_str(), &end);
  if (errno || *end || !std::isfinite(ms) || ms <= 0 || ms > 10000) return std::nullopt;
  return ms;
}

std::string check_pause_goal(const std::string& value) {
  return parse_pause_goal(value)
             ? ""
             : "bad --pause-goal '" + value + "' (milliseconds, more than 0 and at most 10000)";
}

constexpr OptionSpec kYoungOption =
    size_option("young", WorkedOutDefault{"16M, at most 1/8 of the heap"},
                "the young generation, both semispaces; given, its size is fixed, else it starts at 2M "
                "and grows to it from the first collections' survival",
                "young generation size", "at least 64K", 64u << 10, UINT64_MAX);
// Young collections an object survives in the young generation before the
// next one promotes it (the paper leaves the tenuring policy open). 1
// promotes objects that were merely young at the collection; above 2 the
// survivors copied back and forth cost more than the promotions they save
// (docs/collectors/markcompact.md).
constexpr OptionSpec kTenureOption =
    count_option("tenure", 2, "young collections an object survives before it is promoted (0 to 15)",
                 "tenuring threshold", "0 to 15", 0, 15);
constexpr OptionSpec kCardStridesOption =
    count_option("card-strides", kDefaultCardTasks, "card-table scan tasks", "card stride count",
                 "1 to 1048576", 1, 1u << 20);
constexpr OptionSpec kCardPartitionOption =
    choice_option("card-partition", "strides|blocks", "strides",
                  "task i scans cards i, i+N, i+2N, ... (strides) or the i-th contiguous block",
                  "card partition", "strides or blocks");
constexpr OptionSpec kMcUnitsOption =
    count_option("mc-units", kMarkCompactUnitsPerThread,
                 "old-space units per GC thread in full collections (the paper's m = 4n)", "unit count",
                 "1 to 64 units per GC thread", 1, 64);
constexpr OptionSpec kDensePrefixOption = checked(
    count_option("dense-prefix", kDensePrefixMinLivePercent,
                 "leave old-space units at least PERCENT live in place, or never: off leaves the leading "
                 "ones, and those at the end each region slides towards (--gc-threads=0: the leading "
                 "objects while the dead words among them are at most 100 - PERCENT% of the old space)",
                 nullptr, nullptr, 50, 100),
    "off|PERCENT", check_dense_prefix);
constexpr OptionSpec kPauseGoalOption =
    text_option("pause-goal", "MS", "none: the young generation grown to --young's size, see --young",
                "size the young generation after each young collection so that young pauses take at most "
                "MS milliseconds, within --young (as HotSpot's MaxGCPauseMillis); it does not shrink "
                "while young collections take over a tenth of the time",
                check_pause_goal);
constexpr OptionSpec kOptions[] = {kGcLabOption,       kYoungOption,         kTenureOption,
                                   kCardStridesOption, kCardPartitionOption, kMcUnitsOption,
                                   kDensePrefixOption, kPauseGoalOption};

}  // namespace

MarkCompactOptions markcompact_options(const HeapOptions& heap) {
  const OptionValues& v = heap.collector_options;
  MarkCompactOptions o;
  o.gc_lab_bytes = option_size(v, kGcLabOption);
  o.young_bytes = given_size(v, kYoungOption).value_or(0);
  o.tenure_age = static_cast<uint32_t>(option_count(v, kTenureOption));
  o.card_tasks = static_cast<unsigned>(option_count(v, kCardStridesOption));
  o.card_blocks = option_choice(v, kCardPartitionOption) == "blocks";
  if (const std::string* goal = given_text(v, kPauseGoalOption))
    o.pause_goal_ms = parse_pause_goal(*goal).value_or(0);
  o.units_per_thread = static_cast<unsigned>(option_count(v, kMcUnitsOption));
  const std::string* prefix = given_text(v, kDensePrefixOption);
  o.dense_prefix = !prefix || *prefix != "off";
  if (o.dense_prefix)
    o.dense_prefix_min_live = static_cast<double>(option_count(v, kDensePrefixOption)) / 100.0;
  o.deque_tasks = heap.gc_deque_tasks;
  o.poison_free_areas = heap.poison_freed_memory();
  return o;
}

std::span<const OptionSpec> markcompact_option_table() { return kOptions; }

Variant markcompact_variant(const HeapOptions& heap) {
  MarkCompactOptions o = markcompact_options(heap);
  // The paper's sequential collector kept a dense prefix and its parallel
  // one did not (L259), so what departs depends on --gc-threads.
  bool serial = heap.gc_threads == 0;
  Variant v{serial ? "Cheney with promotion and the sequential mark-compact (the paper's seq)"
                   : "pSemispaces young generation, pMarkcompact old generation",
            {}};
  if (o.pause_goal_ms > 0) {
    char goal[96];
    std::snprintf(goal, sizeof goal, "young generation sized for a %g ms pause goal (the paper: fixed)",
                  o.pause_goal_ms);
    v.departures.push_back(goal);
  } else if (o.young_bytes == 0) {
    v.departures.push_back("young generation grown from survival (the paper: fixed)");
  }
  unsigned percent = static_cast<unsigned>(o.dense_prefix_min_live * 100 + 0.5);
  if (!serial && o.dense_prefix)
    v.departures.push_back("dense prefix and ends at " + std::to_string(percent) +
                           "% live (the paper's parallel collector: none)");
  if (serial && !o.dense_prefix)
    v.departures.push_back("no dense prefix (the paper's sequential collector: one)");
  if (o.card_blocks) v.departures.push_back("cards scanned in contiguous blocks (the paper: strides)");
  return v;
}

OptionValues markcompact_paper_configuration(const HeapOptions& heap) {
  // The paper fixed the young generation in every run (L230-232); fixed at
  // the size the default grows it to, small heaps keep the same room.
  uint64_t young_k =
      std::max<uint64_t>(std::min(kDefaultYoungBytes, heap.max_heap_bytes / kYoungHeapFraction) >> 10, 64);
  OptionValues o{{kYoungOption.name,
                  young_k % 1024 ? std::to_string(young_k) + "K" : std::to_string(young_k >> 10) + "M"}};
  if (heap.gc_threads != 0) o[kDensePrefixOption.name] = "off";
  return o;
}

}  // namespace gc
