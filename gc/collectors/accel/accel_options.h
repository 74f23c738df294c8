// accel's options (docs/collectors/accel.md), read from the command line's
// values through its registry entry's table. Every default is the paper's
// (Maas et al. 2018, Table I and section VI) or, where the paper gives
// none, gclab's choice, which the docs page names.
#pragma once

#include <span>

#include "gc/collector.h"
#include "gc/collectors/accel/cpu_baseline.h"
#include "gc/collectors/accel/memory.h"
#include "gc/collectors/accel/reclamation_unit.h"
#include "gc/collectors/accel/traversal_unit.h"
#include "gc/options.h"

namespace gc {

struct AccelOptions {
  bool ideal_memory = false;  // --accel-memory=ideal: the 1-cycle, 8 GB/s pipe
  accel::DramConfig dram;
  accel::PipeConfig pipe;
  accel::TraversalConfig traversal;
  accel::ReclamationConfig reclamation;
  accel::CpuConfig cpu;
  bool baseline = true;  // --accel-baseline: the CPU's replay, for the speedups
};

// The heap limit without --heap: the paper's largest heap (section VI,
// "a 200MB maximum heap"), since every collection is simulated, at some 30
// times marksweep's time on the host for the same heap.
constexpr uint64_t kAccelPaperHeapBytes = uint64_t{200} << 20;
inline constexpr const char* kAccelPaperHeapReason =
    "the paper's maximum heap, since every collection is simulated";

AccelOptions accel_options(const HeapOptions& heap);
std::span<const OptionSpec> accel_option_table();
// The variant the options select: every option given away from its
// default, the paper's (Table I) or, where it gives none, gclab's model;
// the paper's configuration is the defaults.
Variant accel_variant(const HeapOptions& heap);
OptionValues accel_paper_configuration(const HeapOptions& heap);

}  // namespace gc
