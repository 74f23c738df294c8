// cacheaware's options (docs/collectors/cacheaware.md), read from the
// command line's values through its registry entry's table, and the heap's
// shape they give: how many partitions of what size, on what mesh.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "gc/collector.h"
#include "gc/collectors/cacheaware/mapping.h"
#include "gc/options.h"

namespace gc::cacheaware {

// The second-level allocator clears memory in blocks of this size (L203:
// "we found that blocks of 4,096 bytes yielded optimal performance"), and
// a partition is a whole number of them.
constexpr uint64_t kClearBlockBytes = 4096;

struct Options {
  uint64_t partition_bytes = 0;  // each partition's size, a multiple of kClearBlockBytes
  uint32_t partitions = 0;       // N
  unsigned mesh_width = 0;       // the virtual mesh of cores, C = width * height
  unsigned mesh_height = 0;
  unsigned ref_cache_entries = 0;  // per core, a power of two
  unsigned request_list = 0;       // per core, the mark requests kept for the update phase
  unsigned global_search_percent = 0;
  // How a collection that compacts huge objects does it (huge.h): cached at
  // the top of the heap (L233-236), or by a sequential pass (L238).
  bool huge_cached_at_top = true;
  // Where cache lines are homed (mapping.h): on the partition's host, or
  // spread over the cores by address, the paper's dispar and, on one core,
  // its base (L264-268).
  Homing homing = Homing::kPartition;
  // --ca-trigger: collect also when the sizing policy's trigger is reached
  // (gclab's), not only when no allocator finds room (L82, L212).
  bool sizing_trigger = true;
  unsigned cores() const { return mesh_width * mesh_height; }
};

// The options as the collector runs with them, defaults applied; `error`
// says what is wrong with them taken together with --heap and
// --gc-threads (then the rest is unspecified).
Options cacheaware_options(const HeapOptions& heap, std::string* error);
// The registry's check: the same error, or empty.
std::string cacheaware_check_configuration(const HeapOptions& heap);
std::span<const OptionSpec> cacheaware_option_table();
// The variant the options select (the paper's cacheaware, dispar or base),
// and the options of the paper's configuration: no sizing trigger.
Variant cacheaware_variant(const HeapOptions& heap);
OptionValues cacheaware_paper_configuration(const HeapOptions& heap);

}  // namespace gc::cacheaware
