// markcompact's options (docs/collectors/markcompact.md), read from the
// command line's values through its registry entry's table.
#pragma once

#include <cstdint>
#include <span>

#include "gc/collector.h"
#include "gc/options.h"

namespace gc {

struct MarkCompactCollectorOptions {
  uint64_t gc_lab_bytes = 0;  // --gc-lab; 0: the collector's default
  // The young generation's size, both semispaces (--young; 0: the
  // collector's default); the young collections an object survives before
  // it is promoted (--tenure; -1: the default); card-table scan tasks
  // (--card-strides; 0: the default) and whether they are strides or
  // contiguous blocks (--card-partition).
  uint64_t young_bytes = 0;
  int tenure_age = -1;
  unsigned card_tasks = 0;
  bool card_blocks = false;
  // Full collections (pmarkcompact.h): old-space units per GC thread
  // (--mc-units; 0: the paper's 4) and the dense prefix (--dense-prefix=off,
  // or the percentage of a unit that must be live for it to stay in place;
  // 0: the default, 95).
  unsigned mc_units_per_thread = 0;
  bool dense_prefix = true;
  unsigned dense_prefix_percent = 0;
};

MarkCompactCollectorOptions markcompact_collector_options(const HeapOptions& heap);
std::span<const OptionSpec> markcompact_option_table();

}  // namespace gc
