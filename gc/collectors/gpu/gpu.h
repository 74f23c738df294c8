// gpu: Maas et al. 2012's collector: the mark-sweep space with its mark
// phase offloaded to an OpenCL device (docs/collectors/gpu.md). The plan
// composes the space (through MarkSweepHeap, as marksweep does), its own
// marker (GpuMarker) and the CPU marker, which finishes the narrow tail.
//
// A collection, in order (the paper's Figure 4, L436-475): 1. update the
// reference graph (--gpu-heap=graph: rebuilt, or only its new nodes where
// the write barrier keeps it; direct offloads the heap as it is);
// 2. copy it and the roots to the device; 3. mark, one kernel launch
// (gpu_mark.cl) looping over the frontier queue until it is empty
// or narrow enough for the CPU marker (--gpu-launch=level: a launch per
// level); 4. copy back and apply the marks; then the space's parallel
// sweep on the CPU (L485-501).
#pragma once

#include <memory>
#include <string>

#include "gc/collectors/gpu/gpu_marker.h"
#include "gc/collectors/gpu/registration.h"
#include "gc/plan/cpu_marker.h"
#include "gc/plan/marksweep_heap.h"

namespace gc {

class GpuCollector final : public MarkSweepHeap, private gpu::MarkableHeap {
 public:
  // device nullptr: no OpenCL device, marking on the CPU (--gpu-fallback=cpu).
  GpuCollector(RootSet& roots, const HeapOptions& options, std::unique_ptr<gpu::ClDevice> device);
  const char* name() const override { return "gpu"; }
  // nullptr when marking on the CPU for want of a device.
  const gpu::GpuMarker* marker() const { return marker_.get(); }
  // --gpu-graph=double-write's mirror, which its barrier writes.
  const gpu::ReferenceMirror& mirror() const { return *mirror_; }

 private:
  void mark() override;
  void regions(gpu::Region* dense, gpu::Region* sparse) const override;
  void reserved_regions(gpu::Region* dense, gpu::Region* sparse) const override;
  void for_each_object(const std::function<void(Word*)>& f) const override;
  gpu::ReferenceMirror* reference_mirror() const override { return mirror_.get(); }
  void record_device_levels(observe::Recording& recording);
  void finish_on_cpu(const std::vector<Word*>& gray);
  void report(const gpu::MarkReport& r);
  void describe_gpu_events();

  std::unique_ptr<gpu::ClDevice> device_;
  std::unique_ptr<gpu::GpuMarker> marker_;
  std::unique_ptr<gpu::ReferenceMirror> mirror_;  // --gpu-graph=double-write
  CpuMarker cpu_;
  std::vector<Word*> roots_scratch_;
};

}  // namespace gc
