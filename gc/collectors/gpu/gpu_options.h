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
struct GpuOptions {
  std::string device;  // --cl-device: an index or part of a name; empty: the first GPU, else the first device
  bool graph = false;  // offload the condensed reference graph instead of the heap blocks themselves
  bool prefix_sum = false;           // output offsets by prefix sum instead of the histogram
  bool vector_loads = true;          // 128-bit loads
  unsigned split_refs = 16;          // wider objects go to the cooperative stack; 0: off
  unsigned tail_width = 20;          // back to the CPU below this queue width ...
  unsigned tail_min_iterations = 5;  // ... after at least this many iterations; width 0: never
  unsigned compute_units = 0;        // work-groups, each with its share of the roots; 0: the device's
  unsigned work_group_size = 256;    // work-items per work-group (the paper's n)
  bool cpu_when_no_device = false;   // --gpu-fallback=cpu: mark on the CPU when no device can be used
};

GpuOptions gpu_options(const HeapOptions& heap);
std::span<const OptionSpec> gpu_option_table();

}  // namespace gc
