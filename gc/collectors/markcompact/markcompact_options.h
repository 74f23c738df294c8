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

struct MarkCompactCollectorOptions {
  // As given, or the option's default (kOptions in markcompact_options.cpp);
  // 0 where the collector works the default out.
  uint64_t gc_lab_bytes = 0;          // --gc-lab
  uint64_t young_bytes = 0;           // --young, both semispaces
  uint32_t tenure_age = 0;            // --tenure
  unsigned card_tasks = 0;            // --card-strides
  bool card_blocks = false;           // --card-partition=blocks
  unsigned mc_units_per_thread = 0;   // --mc-units (pmarkcompact.h)
  bool dense_prefix = true;           // --dense-prefix=off: false
  unsigned dense_prefix_percent = 0;  // --dense-prefix=PERCENT
  double pause_goal_ms = 0;           // --pause-goal; 0: none (young_sizing.h)
};

MarkCompactCollectorOptions markcompact_collector_options(const HeapOptions& heap);
std::span<const OptionSpec> markcompact_option_table();
// The variant the options select, and the options of the paper's (Flood
// et al. 2001) configuration: a young generation of fixed size, and no
// dense prefix in the parallel old-generation collector (L259).
Variant markcompact_variant(const HeapOptions& heap);
OptionValues markcompact_paper_configuration(const HeapOptions& heap);

}  // namespace gc
