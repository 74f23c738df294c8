// gpu's options (docs/collectors/gpu.md), read from the command line's
// values through its registry entry's table.
#pragma once

#include <span>
#include <string>

#include "gc/collector.h"
#include "gc/options.h"

namespace gc {

// The gpu collector's knobs. Defaults are the paper's full configuration
// (Maas et al. 2012, section 5 and L1288).
// How a work-group computes where each object's references go in the
// out-queue: the paper's two (section 5.1), or one atomic add per
// work-item, which a CPU device runs far faster; auto picks the histogram
// on a GPU and the atomic add elsewhere.
enum class Offsets { kAuto, kHistogram, kPrefixSum, kAtomic };

// The paper's narrow tail (L1288): back to the CPU once the queue is
// narrower than this after at least this many iterations.
inline constexpr unsigned kTailWidth = 20;
inline constexpr unsigned kTailMinIterations = 5;
// The paper's n, work-items per work-group.
inline constexpr unsigned kWorkGroupSize = 256;

struct GpuOptions {
  std::string device;  // --cl-device: an index or part of a name; empty: the first GPU, else the first device
  bool graph = false;  // offload the reference graph instead of the heap blocks themselves
  // --gpu-graph=double-write: the graph kept by the write barrier
  // (reference_mirror.h) instead of rebuilt, condensed, for each collection.
  bool double_write = false;
  bool shared_heap = false;  // --gpu-heap=shared: the heap's buffers kept over host memory across collections
  Offsets offsets = Offsets::kAuto;  // --gpu-offsets
  bool vector_loads = true;          // 128-bit loads
  unsigned split_refs = 16;          // wider objects go to the cooperative stack; 0: off
  // Back to the CPU below this queue width after at least this many
  // iterations; width 0: never.
  unsigned tail_width = kTailWidth;
  unsigned tail_min_iterations = kTailMinIterations;
  unsigned compute_units = 0;                 // work-groups; 0: a GPU's compute units, 1 on any other device
  unsigned work_group_size = kWorkGroupSize;  // work-items per work-group
  bool launch_per_level = false;    // --gpu-launch=level: one kernel launch per level, not per collection
  bool cpu_when_no_device = false;  // --gpu-fallback=cpu: mark on the CPU when no device can be used
};

GpuOptions gpu_options(const HeapOptions& heap);

namespace gpu {
struct ClDevice;
}
// What the device resolves of the options: the offset method (kAuto
// settled), and the work-groups that mark, at most one per compute unit
// when they share one queue, since each waits on the others and must keep
// running once started.
Offsets offsets_on(const GpuOptions& options, const gpu::ClDevice& device);
unsigned work_groups_on(const GpuOptions& options, const gpu::ClDevice& device);
// The variant the options select on the device they pick, and the options
// of the paper's (Maas et al. 2012) configuration: the reference graph,
// the histogram, one compute unit.
Variant gpu_variant(const HeapOptions& heap);
OptionValues gpu_paper_configuration(const HeapOptions& heap);
// What is wrong with gpu's options taken together (--gpu-graph without
// --gpu-heap=graph, a heap too large for the double-write graph's 32-bit
// entries), or empty.
std::string gpu_options_problem(const HeapOptions& heap);
std::span<const OptionSpec> gpu_option_table();

}  // namespace gc
