// The gpu collector's view of OpenCL 1.2: which devices there are, which one
// --cl-device picks, and one context, queue and program cache per process.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gc/collectors/gpu/devices.h"

namespace gc::gpu {

struct ClDevice {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name;
  std::string platform_name;
  std::string version;
  bool is_gpu = false;
  unsigned compute_units = 1;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  size_t max_work_group_size = 1;
  uint64_t local_mem_bytes = 0;
  bool host_unified_memory = false;  // shares memory with the host: zero-copy possible
};

// Every device of every platform, in platform order.
std::vector<ClDevice> list_devices();
// The device --cl-device=spec names: an index into list_devices(), or the
// first device whose name contains spec (case-insensitive); an empty spec
// picks the first GPU, else the first device. nullptr with *why set if
// there is none.
std::unique_ptr<ClDevice> choose_device(const std::string& spec, std::string* why);

// Where to get a device when there is none (one line, for messages).
extern const char* const kNoDeviceHint;

// A context and in-order queue on one device, and its programs, each built
// once per set of build options (compile once per process, then cached).
class ClSession {
 public:
  // The session for a device, created on first use; sessions live until
  // the process ends.
  static ClSession& for_device(const ClDevice& device);

  const ClDevice& device() const { return device_; }
  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  // The kernel named name from the embedded source, built with options.
  // Aborts with the build log if the source does not compile: it is ours.
  cl_kernel kernel(const std::string& name, const std::string& options);

  ClSession(const ClSession&) = delete;
  ClSession& operator=(const ClSession&) = delete;
  ~ClSession();

 private:
  explicit ClSession(const ClDevice& device);
  ClDevice device_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::map<std::string, cl_program> programs_;
  std::map<std::string, cl_kernel> kernels_;
};

// Aborts with a message naming the call if err is not CL_SUCCESS: an error
// here is a bug or a broken driver, not something a program can cause.
void check(cl_int err, const char* what);

// The kernel source embedded at build time (gpu_mark.cl).
extern const char* const kMarkKernelSource;

}  // namespace gc::gpu
