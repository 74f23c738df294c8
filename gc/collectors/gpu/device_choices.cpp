// What the options become on the device they pick: the output offsets,
// the work-groups, and the variant the outputs name. Built with OpenCL
// only; without it, without_opencl.cpp names the variant.
#include <memory>
#include <string>

#include "gc/collectors/gpu/gpu_options.h"
#include "gc/collectors/gpu/opencl.h"

namespace gc {

Offsets offsets_on(const GpuOptions& options, const gpu::ClDevice& device) {
  if (options.offsets != Offsets::kAuto) return options.offsets;
  return device.is_gpu ? Offsets::kHistogram : Offsets::kAtomic;
}

unsigned work_groups_on(const GpuOptions& options, const gpu::ClDevice& device) {
  // A CPU device's compute units are the cores that also run the VM: one
  // work-group marks as fast there (docs/collectors/gpu.md, Figures) and
  // keeps the level widths.
  unsigned groups = options.compute_units ? options.compute_units : device.is_gpu ? device.compute_units : 1;
  // Work-groups sharing one queue wait on each other, so each must keep
  // running once started: at most one per compute unit, the most a device
  // is sure to hold at once (how many more fit depends on registers and
  // local memory OpenCL does not report per compute unit). Under one
  // launch per level no work-group waits on another.
  if (!options.launch_per_level) groups = std::min(groups, device.compute_units);
  return groups;
}

Variant gpu_variant(const HeapOptions& heap) {
  GpuOptions o = gpu_options(heap);
  // GpuOptions' defaults are the paper's values where it gives them.
  const GpuOptions paper{};
  std::string why;
  std::unique_ptr<gpu::ClDevice> device = gpu::choose_device(o.device, &why);
  if (!device)
    return {
        "the GPU mark of Maas et al. 2012",
        {o.cpu_when_no_device ? "marked on the CPU (the paper: on a GPU)" : "no OpenCL device to mark on"}};
  Variant v{std::string("the GPU mark of Maas et al. 2012 on ") + (device->is_gpu ? "a GPU" : "a CPU device"),
            {}};
  auto depart = [&](const std::string& text) { v.departures.push_back(text); };
  if (!o.graph) depart("marks the heap itself (the paper: a reference graph)");
  if (o.double_write) depart("double-write graph at the heap's positions (the paper: condensed)");
  if (offsets_on(o, *device) == Offsets::kAtomic) depart("atomic output offsets (the paper: a histogram)");
  unsigned groups = work_groups_on(o, *device);
  if (groups > 1 && !o.launch_per_level)
    depart(std::to_string(groups) + " work-groups share one queue (the paper: roots split among them)");
  if (o.launch_per_level) depart("one launch per level (the paper: one per collection)");
  if (!o.vector_loads) depart("no 128-bit loads (the paper: 128-bit)");
  if (o.split_refs != paper.split_refs)
    depart((o.split_refs ? "objects of over " + std::to_string(o.split_refs) + " references"
                         : std::string("no object")) +
           " copied by the whole work-group (the paper: over " + std::to_string(paper.split_refs) + ")");
  if (o.tail_width != paper.tail_width || o.tail_min_iterations != paper.tail_min_iterations)
    depart((o.tail_width ? "back to the CPU below width " + std::to_string(o.tail_width) + " after " +
                               std::to_string(o.tail_min_iterations) + " iterations"
                         : std::string("never back to the CPU")) +
           " (the paper: below " + std::to_string(paper.tail_width) + " after " +
           std::to_string(paper.tail_min_iterations) + ")");
  if (o.work_group_size != paper.work_group_size)
    depart(std::to_string(o.work_group_size) +
           " work-items per work-group (the paper: " + std::to_string(paper.work_group_size) + ")");
  return v;
}

}  // namespace gc
