// The gpu collector in a vm built without OpenCL (GCLAB_OPENCL=OFF): its
// options are known, so that a command line that names them reads the
// same, and every way of running it says why it cannot.
#include "gc/collectors/gpu/devices.h"
#include "gc/collectors/gpu/registration.h"
#include "gc/exit_status.h"

namespace gc {

namespace {

const char* const kNoOpenCl =
    "this vm was built without OpenCL (GCLAB_OPENCL=OFF); build it with OpenCL to run gpu";

}  // namespace

namespace gpu {

std::string describe_devices() { return std::string(kNoOpenCl) + "\n"; }
std::string unavailable_reason(const std::string&) { return kNoOpenCl; }

}  // namespace gpu

std::unique_ptr<Collector> create_gpu(RootSet&, const HeapOptions&) {
  throw CreationError(kExitUnavailable, std::string("--gc=gpu: ") + kNoOpenCl);
}

std::string gpu_unavailable() { return kNoOpenCl; }

Variant gpu_variant(const HeapOptions&) {
  return {"the GPU mark of Maas et al. 2012", {"no OpenCL in this vm to mark with"}};
}

std::string gpu_check_configuration(const HeapOptions& options) { return gpu_options_problem(options); }

}  // namespace gc
