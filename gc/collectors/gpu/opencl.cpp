#include "gc/collectors/gpu/opencl.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace gc::gpu {

const char* const kNoDeviceHint =
    "install an OpenCL driver (on Debian: apt-get install pocl-opencl-icd for a CPU device), or pass "
    "--gpu-fallback=cpu to mark on the CPU";

void check(cl_int err, const char* what) {
  if (err == CL_SUCCESS) return;
  std::fprintf(stderr, "vm: OpenCL call %s failed with error %d\n", what, err);
  std::abort();
}

namespace {

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  clGetDeviceInfo(d, what, n, s.data(), nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <class T>
T device_value(cl_device_id d, cl_device_info what) {
  T v{};
  clGetDeviceInfo(d, what, sizeof v, &v, nullptr);
  return v;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<ClDevice> list_devices() {
  std::vector<ClDevice> out;
  cl_uint nplatforms = 0;
  // No ICD installed reads as no platform (CL_PLATFORM_NOT_FOUND_KHR).
  if (clGetPlatformIDs(0, nullptr, &nplatforms) != CL_SUCCESS || nplatforms == 0) return out;
  std::vector<cl_platform_id> platforms(nplatforms);
  clGetPlatformIDs(nplatforms, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    size_t n = 0;
    std::string pname;
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, nullptr, &n) == CL_SUCCESS && n) {
      pname.resize(n);
      clGetPlatformInfo(p, CL_PLATFORM_NAME, n, pname.data(), nullptr);
      while (!pname.empty() && pname.back() == '\0') pname.pop_back();
    }
    cl_uint ndevices = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndevices) != CL_SUCCESS || ndevices == 0) continue;
    std::vector<cl_device_id> ids(ndevices);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndevices, ids.data(), nullptr);
    for (cl_device_id id : ids) {
      ClDevice d;
      d.platform = p;
      d.id = id;
      d.platform_name = pname;
      d.name = device_string(id, CL_DEVICE_NAME);
      d.version = device_string(id, CL_DEVICE_VERSION);
      d.is_gpu = device_value<cl_device_type>(id, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU;
      d.compute_units = std::max<cl_uint>(1, device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
      d.global_mem_bytes = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
      d.max_alloc_bytes = device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      d.max_work_group_size = device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      d.local_mem_bytes = device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE);
      // Deprecated in 2.0 but the one portable 1.2 answer to "zero-copy?".
      d.host_unified_memory = device_value<cl_bool>(id, CL_DEVICE_HOST_UNIFIED_MEMORY);
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::string describe_devices() {
  std::vector<ClDevice> devices = list_devices();
  if (devices.empty()) return std::string("no OpenCL device: ") + kNoDeviceHint + "\n";
  std::string out;
  char buf[512];
  for (size_t i = 0; i < devices.size(); ++i) {
    const ClDevice& d = devices[i];
    std::snprintf(buf, sizeof buf, "%zu  %s (%s, %s) %s: %u compute units, %.0f MiB, %s memory\n", i,
                  d.name.c_str(), d.platform_name.c_str(), d.version.c_str(), d.is_gpu ? "GPU" : "not a GPU",
                  d.compute_units, static_cast<double>(d.global_mem_bytes) / (1 << 20),
                  d.host_unified_memory ? "host-shared" : "separate");
    out += buf;
  }
  return out;
}

std::unique_ptr<ClDevice> choose_device(const std::string& spec, std::string* why) {
  std::vector<ClDevice> devices = list_devices();
  if (devices.empty()) {
    *why = std::string("no OpenCL device: ") + kNoDeviceHint;
    return nullptr;
  }
  if (spec.empty()) {
    for (const ClDevice& d : devices)
      if (d.is_gpu) return std::make_unique<ClDevice>(d);
    return std::make_unique<ClDevice>(devices[0]);
  }
  if (std::all_of(spec.begin(), spec.end(), [](char c) { return c >= '0' && c <= '9'; }) && spec.size() < 6) {
    size_t i = std::stoul(spec);
    if (i < devices.size()) return std::make_unique<ClDevice>(devices[i]);
    *why = "no OpenCL device number " + spec + " (--cl-list lists " + std::to_string(devices.size()) + ")";
    return nullptr;
  }
  for (const ClDevice& d : devices)
    if (lower(d.name).find(lower(spec)) != std::string::npos) return std::make_unique<ClDevice>(d);
  *why = "no OpenCL device named like '" + spec + "' (see --cl-list)";
  return nullptr;
}

std::string unavailable_reason(const std::string& spec) {
  std::string why;
  return choose_device(spec, &why) ? std::string() : why;
}

ClSession& ClSession::for_device(const ClDevice& device) {
  static std::mutex lock;
  static std::map<cl_device_id, std::unique_ptr<ClSession>> sessions;
  std::lock_guard<std::mutex> guard(lock);
  std::unique_ptr<ClSession>& s = sessions[device.id];
  if (!s) s.reset(new ClSession(device));
  return *s;
}

ClSession::ClSession(const ClDevice& device) : device_(device) {
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(device.platform), 0};
  context_ = clCreateContext(props, 1, &device_.id, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  // Profiling gives the device's own kernel times, launch overhead excluded
  // (the paper excludes it too, L716-719, L1279).
  queue_ = clCreateCommandQueue(context_, device_.id, CL_QUEUE_PROFILING_ENABLE, &err);
  check(err, "clCreateCommandQueue");
}

ClSession::~ClSession() {
  for (auto& [k, kernel] : kernels_) clReleaseKernel(kernel);
  for (auto& [k, program] : programs_) clReleaseProgram(program);
  if (queue_) clReleaseCommandQueue(queue_);
  if (context_) clReleaseContext(context_);
}

cl_kernel ClSession::kernel(const std::string& name, const std::string& options) {
  std::string key = name + "|" + options;
  if (auto it = kernels_.find(key); it != kernels_.end()) return it->second;
  cl_program& program = programs_[options];
  if (!program) {
    cl_int err = CL_SUCCESS;
    const char* src = kMarkKernelSource;
    program = clCreateProgramWithSource(context_, 1, &src, nullptr, &err);
    check(err, "clCreateProgramWithSource");
    std::string opts = "-cl-std=CL1.2 " + options;
    if (clBuildProgram(program, 1, &device_.id, opts.c_str(), nullptr, nullptr) != CL_SUCCESS) {
      size_t n = 0;
      clGetProgramBuildInfo(program, device_.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      clGetProgramBuildInfo(program, device_.id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      std::fprintf(stderr, "vm: the mark kernel does not build on %s (options %s):\n%s\n",
                   device_.name.c_str(), opts.c_str(), log.c_str());
      std::abort();
    }
  }
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(program, name.c_str(), &err);
  check(err, "clCreateKernel");
  kernels_[key] = k;
  return k;
}

}  // namespace gc::gpu
