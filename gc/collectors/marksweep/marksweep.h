// marksweep: the non-moving mark-sweep collector that Maas et al. 2012
// offload (Jikes RVM's MarkSweep plan, section 4.1), on the mark-sweep space
// of Maas et al. 2018 (gc/spaces/marksweep_space.h): the CPU baseline that
// `gpu` and `accel` are measured against, on the same heap. The collection
// sequence and when to collect are the mark-sweep heap's
// (gc/plan/marksweep_heap.h); the mark step is the CPU marker
// (gc/plan/cpu_marker.h).
//
// A collector built on this heap derives from MarkSweepHeap, as this plan
// does, supplies mark() with its own marker, and reads the heap through
// space(); a CpuMarker of its own can finish from the grey objects its
// marker leaves (mark_from_gray).
#pragma once

#include <memory>

#include "gc/plan/cpu_marker.h"
#include "gc/plan/marksweep_heap.h"

namespace gc {

class MarkSweep final : public MarkSweepHeap {
 public:
  MarkSweep(RootSet& roots, const HeapOptions& options);
  const char* name() const override { return "marksweep"; }

 private:
  void mark() override;

  CpuMarker cpu_;
};

std::unique_ptr<Collector> create_marksweep(RootSet& roots, const HeapOptions& options);
// It has no options: always the papers' CPU baseline, whose configuration
// is the default.
Variant marksweep_variant(const HeapOptions& options);
OptionValues marksweep_paper_configuration(const HeapOptions& options);

}  // namespace gc
