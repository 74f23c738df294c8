// The gpu collector as the registry sees it, the same whether the vm was
// built with OpenCL (gpu.cpp) or without (without_opencl.cpp, where every
// entry says why the collector cannot run).
#pragma once

#include <memory>
#include <string>

#include "gc/collector.h"
#include "gc/collectors/gpu/gpu_options.h"

namespace gc {

std::unique_ptr<Collector> create_gpu(RootSet& roots, const HeapOptions& options);
// Why gpu cannot run here (no OpenCL device, or none built in), or empty.
std::string gpu_unavailable();
// A --cl-device that names none of the devices there are: a bad command
// line (exit 64), found before anything runs. Where there is no device at
// all, creating the collector says so instead.
std::string gpu_check_configuration(const HeapOptions& options);

}  // namespace gc
