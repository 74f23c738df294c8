#include "gc/collectors/gpu/gpu_options.h"

#include <algorithm>
#include <iostream>
#include <memory>

#include "gc/collectors/gpu/opencl.h"
#include "gc/collectors/gpu/reference_mirror.h"
#include "gc/spaces/marksweep_space.h"

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
    text_option("cl-device", "N|NAME", "the first GPU, else the first device",
                "the device to mark on: its --cl-list number or part of its name", check_device),
    choice_option("gpu-heap", "direct|graph|shared", "direct",
                  "the device marks the heap itself, through buffers made for each collection (zero-copy "
                  "where the device shares host memory); the condensed reference graph, rebuilt before "
                  "each collection; or the heap itself through buffers kept from one collection to the "
                  "next, on a device that shares host memory (--cl-list says which)",
                  "--gpu-heap", "direct, graph or shared"),
    choice_option("gpu-graph", "rebuild|double-write", "rebuild",
                  "with --gpu-heap=graph: the condensed graph rebuilt before each collection, or a graph "
                  "at the heap's positions that the write barrier keeps up to date, so that a collection "
                  "builds only the nodes of new objects",
                  "--gpu-graph", "rebuild or double-write"),
    choice_option("gpu-offsets", "histogram|prefix|atomic", "histogram on a GPU, atomic on any other device",
                  "output-queue offsets by the paper's histogram or prefix sum, or one atomic add per "
                  "work-item",
                  "--gpu-offsets", "histogram, prefix or atomic"),
    choice_option("gpu-vector", "on|off", "on", "128-bit loads of header and references", "--gpu-vector",
                  "on or off"),
    count_option("gpu-split", "16; 0: off",
                 "objects with more than N references are copied by the whole work-group", "--gpu-split",
                 "0 to 65536 references", 0, 65536),
    text_option("gpu-tail", "W[,I]", "20,5; 0: never",
                "back to the CPU when the queue is narrower than W after at least I iterations", check_tail),
    count_option("gpu-cus", "0: a GPU's compute units, 1 on any other device",
                 "work-groups (compute units): under one launch they share one queue, under one launch per "
                 "level the roots are split among them",
                 "--gpu-cus", "0: the device's compute units, or 1 to 4096", 0, 4096),
    text_option("gpu-wg", "N", "256", "work-items per work-group, a power of two", check_work_group),
    choice_option("gpu-launch", "collection|level", "collection",
                  "one kernel launch marks the whole heap, looping over the levels (the paper's), or one "
                  "launch per level with the host between them",
                  "--gpu-launch", "collection or level"),
    choice_option("gpu-fallback", "cpu|none", "none: --gc=gpu stops with a message",
                  "cpu marks on the CPU when there is no OpenCL device", "--gpu-fallback", "cpu or none"),
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
  o.double_write = o.graph && is(v, "gpu-graph", "double-write");
  o.shared_heap = is(v, "gpu-heap", "shared");
  if (is(v, "gpu-offsets", "histogram")) o.offsets = Offsets::kHistogram;
  if (is(v, "gpu-offsets", "prefix")) o.offsets = Offsets::kPrefixSum;
  if (is(v, "gpu-offsets", "atomic")) o.offsets = Offsets::kAtomic;
  o.vector_loads = !is(v, "gpu-vector", "off");
  if (auto n = option_count(v, "gpu-split")) o.split_refs = static_cast<unsigned>(*n);
  if (const std::string* tail = option_text(v, "gpu-tail"))
    parse_tail(*tail, &o.tail_width, &o.tail_min_iterations);
  if (auto n = option_count(v, "gpu-cus")) o.compute_units = static_cast<unsigned>(*n);
  if (auto n = option_count(v, "gpu-wg")) o.work_group_size = static_cast<unsigned>(*n);
  o.cpu_when_no_device = is(v, "gpu-fallback", "cpu");
  o.launch_per_level = is(v, "gpu-launch", "level");
  return o;
}

std::span<const OptionSpec> gpu_option_table() { return kOptions; }

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

OptionValues gpu_paper_configuration(const HeapOptions&) {
  // One compute unit: the paper's two split the roots under one launch,
  // which gclab does only with a launch per level (--gpu-launch=level).
  return {{"gpu-heap", "graph"}, {"gpu-offsets", "histogram"}, {"gpu-cus", "1"}};
}

std::string gpu_options_problem(const HeapOptions& heap) {
  const OptionValues& v = heap.collector_options;
  if (option_text(v, "gpu-graph") && !is(v, "gpu-heap", "graph"))
    return "--gpu-graph applies to --gpu-heap=graph only";
  if (!is(v, "gpu-graph", "double-write")) return "";
  uint64_t max_heap = MarkSweepSpace::resolved_options(heap).max_heap_bytes;
  uint64_t reach = gpu::ReferenceMirror::kMaxWords * kWordSize;
  if (MarkSweepSpace::reservation_bytes(max_heap) <= reach) return "";
  // The largest heap whose reservation (blocks and room for large objects)
  // the entries reach, in whole GiB.
  uint64_t gib = uint64_t{1} << 30, largest = 0;
  while (MarkSweepSpace::reservation_bytes((largest + 1) * gib) <= reach) ++largest;
  return "--gpu-graph=double-write: its 32-bit entries reach " + std::to_string((reach + gib - 1) >> 30) +
         " GiB of the heap's reservation, which holds " +
         std::to_string(MarkSweepSpace::reservation_bytes(gib) >> 30) +
         " times --heap (room for large objects), so --heap must be at most " + std::to_string(largest) + "G";
}

}  // namespace gc
