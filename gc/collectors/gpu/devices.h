// What the VM asks of the OpenCL runtime outside a collection: the devices
// there are (--cl-list) and why the collector cannot run. No OpenCL types,
// so that a vm built without OpenCL answers too (without_opencl.cpp).
#pragma once

#include <string>

namespace gc::gpu {

// The --cl-list text: one device a line, with its index and what it is.
std::string describe_devices();
// Why no device can run the gpu collector, or empty if one can; `spec` is
// --cl-device's value (empty: any device).
std::string unavailable_reason(const std::string& spec);

}  // namespace gc::gpu
