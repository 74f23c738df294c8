#include "gc/collectors/gpu/gpu_options.h"

#include <iostream>

#include "gc/collectors/gpu/opencl.h"

namespace gc {

namespace {

void list_devices() { std::cout << gpu::describe_devices(); }

std::string check_device(const std::string& value) {
  return value.empty() ? "--cl-device needs a device number or name (see --cl-list)" : "";
}

// --gpu-tail=WIDTH[,ITERATIONS]: the iterations default to the paper's 5.
bool parse_tail(const std::string& value, unsigned* width, unsigned* iterations) {
  size_t comma = value.find(',');
  auto w = parse_count(value.substr(0, comma));
  auto it = comma == std::string::npos ? std::optional<uint64_t>(5) : parse_count(value.substr(comma + 1));
  if (!w || !it || *w > (1u << 30) || *it > (1u << 30)) return false;
  *width = static_cast<unsigned>(*w);
  *iterations = static_cast<unsigned>(*it);
  return true;
}

std::string check_tail(const std::string& value) {
  unsigned w, it;
  return parse_tail(value, &w, &it)
             ? ""
             : "bad --gpu-tail '" + value + "' (WIDTH[,ITERATIONS], e.g. 20,5; 0: never)";
}

std::string check_work_group(const std::string& value) {
  auto n = parse_count(value);
  if (!n || *n == 0 || *n > 4096 || (*n & (*n - 1)))
    return "bad --gpu-wg '" + value + "' (a power of two up to 4096)";
  return "";
}

constexpr OptionSpec kOptions[] = {
    {.name = "cl-list",
     .kind = OptionKind::kAction,
     .help = "list the OpenCL devices and stop",
     .action = list_devices},
    {.name = "cl-device",
     .kind = OptionKind::kText,
     .value_name = "N|NAME",
     .default_text = "the first GPU, else the first device",
     .help = "the device to mark on: its --cl-list number or part of its name",
     .check = check_device},
    {.name = "gpu-heap",
     .kind = OptionKind::kChoice,
     .value_name = "direct|graph",
     .default_text = "direct",
     .help = "offload the heap blocks themselves (zero-copy where the device shares host memory) or the "
             "condensed "
             "reference graph, rebuilt before each collection",
     .what = "--gpu-heap",
     .hint = "direct or graph",
     .choices = "direct|graph"},
    {.name = "gpu-offsets",
     .kind = OptionKind::kChoice,
     .value_name = "histogram|prefix",
     .default_text = "histogram",
     .help = "output-queue offsets by histogram or prefix sum",
     .what = "--gpu-offsets",
     .hint = "histogram or prefix",
     .choices = "histogram|prefix"},
    {.name = "gpu-vector",
     .kind = OptionKind::kChoice,
     .value_name = "on|off",
     .default_text = "on",
     .help = "128-bit loads of header and references",
     .what = "--gpu-vector",
     .hint = "on or off",
     .choices = "on|off"},
    {.name = "gpu-split",
     .kind = OptionKind::kCount,
     .value_name = "N",
     .default_text = "16; 0: off",
     .help = "objects with more than N references are copied by the whole work-group",
     .what = "--gpu-split",
     .hint = "0 to 65536 references",
     .max = 65536},
    {.name = "gpu-tail",
     .kind = OptionKind::kText,
     .value_name = "W[,I]",
     .default_text = "20,5; 0: never",
     .help = "back to the CPU when the queue is narrower than W after at least I iterations",
     .check = check_tail},
    {.name = "gpu-cus",
     .kind = OptionKind::kCount,
     .value_name = "N",
     .default_text = "0: the device's compute units",
     .help = "work-groups (compute units), the roots split among them",
     .what = "--gpu-cus",
     .hint = "0: the device's compute units, or 1 to 4096",
     .max = 4096},
    {.name = "gpu-wg",
     .kind = OptionKind::kText,
     .value_name = "N",
     .default_text = "256",
     .help = "work-items per work-group, a power of two",
     .check = check_work_group},
    {.name = "gpu-fallback",
     .kind = OptionKind::kChoice,
     .value_name = "cpu|none",
     .default_text = "none: --gc=gpu stops with a message",
     .help = "cpu marks on the CPU when there is no OpenCL device",
     .what = "--gpu-fallback",
     .hint = "cpu or none",
     .choices = "cpu|none"},
};

bool is(const OptionValues& v, const char* name, const char* word) {
  const std::string* text = option_text(v, name);
  return text && *text == word;
}

}  // namespace

GpuOptions gpu_options(const HeapOptions& heap) {
  const OptionValues& v = heap.collector_options;
  GpuOptions o;
  if (const std::string* device = option_text(v, "cl-device")) o.device = *device;
  o.graph = is(v, "gpu-heap", "graph");
  o.prefix_sum = is(v, "gpu-offsets", "prefix");
  o.vector_loads = !is(v, "gpu-vector", "off");
  if (auto n = option_count(v, "gpu-split")) o.split_refs = static_cast<unsigned>(*n);
  if (const std::string* tail = option_text(v, "gpu-tail"))
    parse_tail(*tail, &o.tail_width, &o.tail_min_iterations);
  if (auto n = option_count(v, "gpu-cus")) o.compute_units = static_cast<unsigned>(*n);
  if (auto n = option_count(v, "gpu-wg")) o.work_group_size = static_cast<unsigned>(*n);
  o.cpu_when_no_device = is(v, "gpu-fallback", "cpu");
  return o;
}

std::span<const OptionSpec> gpu_option_table() { return kOptions; }

}  // namespace gc
