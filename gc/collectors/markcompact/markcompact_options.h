// markcompact's options (docs/collectors/markcompact.md), read from the
// command line's values through its registry entry's table.
#pragma once

#include <cstdint>
#include <span>

#include "gc/collector.h"
#include "gc/options.h"

namespace gc {

// The young generation, both semispaces: the paper's runs used 16 MB
// (GCOld and SpecJBB, "16m:600m", L232). At most 1/8 of the heap, so small
// heaps keep most of their room for old and large objects (a --heap=8M
// program may hold a 6 MB array).
inline constexpr uint64_t kDefaultYoungBytes = 16ull << 20;
inline constexpr uint64_t kYoungHeapFraction = 8;

// Units per GC thread: "The value of m is typically 4n" (L198).
inline constexpr unsigned kMarkCompactUnitsPerThread = 4;
// A leading unit joins the dense prefix when at least this percentage of
// it is live: its dead words stay unusable until the next full collection,
// so the prefix wastes at most 5% of the space it spans (the dead ratio
// HotSpot's serial mark-compact tolerates, MarkSweepDeadRatio).
inline constexpr unsigned kDensePrefixMinLivePercent = 95;

// The collector's options, the plan's and its full collections' (which
// ParallelMarkCompact and SerialMarkCompact take). markcompact_options
// sets every member, as given or the option's default; the full
// collections' members start at those defaults for a test that builds an
// engine itself.
struct MarkCompactOptions {
  uint64_t gc_lab_bytes = 0;                               // --gc-lab
  uint64_t young_bytes = 0;                                // --young, both semispaces; 0: worked out
  uint32_t tenure_age = 0;                                 // --tenure
  unsigned card_tasks = 0;                                 // --card-strides
  bool card_blocks = false;                                // --card-partition=blocks
  double pause_goal_ms = 0;                                // --pause-goal; 0: none (young_sizing.h)
  unsigned units_per_thread = kMarkCompactUnitsPerThread;  // --mc-units
  bool dense_prefix = true;                                // --dense-prefix=off: false
  double dense_prefix_min_live = kDensePrefixMinLivePercent / 100.0;  // --dense-prefix=PERCENT
  // Capacity of each thread's marking deque (a power of two); 0: 2^15.
  uint64_t deque_tasks = 0;
  // Stress and verify modes: free areas are poisoned after their filler
  // headers (the space stays walkable).
  bool poison_free_areas = false;
};

// From the command line's options (free areas poisoned under --gc-verify
// and --gc-stress).
MarkCompactOptions markcompact_options(const HeapOptions& heap);
std::span<const OptionSpec> markcompact_option_table();
// The variant the options select, and the options of the paper's (Flood
// et al. 2001) configuration: a young generation of fixed size, and no
// dense prefix in the parallel old-generation collector (L259).
Variant markcompact_variant(const HeapOptions& heap);
OptionValues markcompact_paper_configuration(const HeapOptions& heap);

}  // namespace gc
