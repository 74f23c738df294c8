// marksweep: the non-moving mark-sweep collector that Maas et al. 2012
// offload (Jikes RVM's MarkSweep plan: "We modified Jikes' MarkSweep garbage
// collector to offload its mark phase to the GPU", section 4.1), on the
// mark-sweep space of Maas et al. 2018 (gc/spaces/marksweep_space.h). It is
// the CPU baseline that `gpu` and `accel` are measured against, on the same
// heap.
//
// The plan: the space, the collection sequence and when to collect are the
// mark-sweep heap's (gc/spaces/marksweep_heap.h: mark, weak references,
// sweep, resize); marksweep's mark step is the CPU marker (cpu_marker.h).
//
// For collectors built on this heap (`gpu`, `accel`): compose the space as
// this plan does, not this plan. Derive from MarkSweepHeap (the space, the
// GC threads, the collection sequence), supply mark() with your own marker,
// and read the heap through space(): blocks() and their cells,
// large_objects(), for_each_object() and the mark-bit helpers. A CpuMarker
// of your own finishes from the grey objects your marker leaves
// (mark_from_gray) when an accelerator's frontier grows narrow.
#pragma once

#include <memory>

#include "gc/collectors/marksweep/cpu_marker.h"
#include "gc/spaces/marksweep_heap.h"

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

}  // namespace gc
