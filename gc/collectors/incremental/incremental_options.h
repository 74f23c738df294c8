// incremental's options (docs/collectors/incremental.md), read from the
// command line's values through its registry entry's table.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "gc/collector.h"
#include "gc/options.h"

namespace gc {

// --barrier: which write barrier keeps the tri-colour invariant while a
// cycle marks.
enum class IncrementalBarrier : uint8_t {
  kDijkstra,  // insertion: shade the target stored into a marked object (Dijkstra et al. 1978)
  kYuasa,     // deletion, snapshot at the beginning: shade the value overwritten (Yuasa 1990)
  kBackward,  // re-grey the marked object stored into (Steele 1975; Lua 5.4's luaC_barrierback)
  kNone,      // none, for teaching: objects are lost, and --gc-verify says which
};
const char* barrier_name(IncrementalBarrier barrier);

// --inc-mode: where a cycle's marking runs.
enum class IncrementalMode : uint8_t {
  kIncremental,  // in steps on the program's thread, paid for by its allocation
  kConcurrent,   // on the GC threads while the program runs, under the snapshot barrier
};

// As incremental_options reads them: each default is its option spec's
// (incremental_options.cpp), written there once.
struct IncrementalOptions {
  // --inc-pause: a cycle starts when the heap in use has grown to this
  // percentage of what was in use when the last cycle ended (Lua's pause).
  uint64_t pause_percent = 0;
  // --inc-stepmul: the work each step does for the words allocated since
  // the last one, in percent: units of work (a slot scanned, an object
  // marked, a cell swept) per 100 words (Lua's stepmul).
  uint64_t stepmul_percent = 0;
  IncrementalBarrier barrier = IncrementalBarrier::kDijkstra;
  IncrementalMode mode = IncrementalMode::kIncremental;
  // --inc-assist: in concurrent mode, allocation beyond the cycle's
  // allowance pays for marking on the program's thread.
  bool assist = true;
};

IncrementalOptions incremental_options(const HeapOptions& heap);
std::span<const OptionSpec> incremental_option_table();
// Concurrent marking needs the snapshot barrier: a usage error for another.
std::string incremental_check_configuration(const HeapOptions& heap);
// The variant the options select; the paper's configuration is the
// default (Dijkstra et al. 1978's insertion barrier).
Variant incremental_variant(const HeapOptions& heap);
OptionValues incremental_paper_configuration(const HeapOptions& heap);

}  // namespace gc
