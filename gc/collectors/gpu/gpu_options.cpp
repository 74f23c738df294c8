#include "gc/collectors/gpu/gpu_options.h"

#include <iostream>

#include "gc/collectors/gpu/devices.h"
#include "gc/collectors/gpu/reference_mirror.h"
#include "gc/spaces/marksweep_space.h"

namespace gc {

namespace {

void list_devices() { std::cout << gpu::describe_devices(); }

std::string check_device(const std::string& value) {
  return value.empty() ? "--cl-device needs a device number or name (see --cl-list)" : "";
}

// --gpu-tail=WIDTH[,ITERATIONS]: the iterations default to the paper's.
bool parse_tail(const std::string& value, unsigned* width, unsigned* iterations) {
  size_t comma = value.find(',');
  auto w = parse_count(value.substr(0, comma));
  auto it = comma == std::string::npos ? std::optional<uint64_t>(kTailMinIterations)
                                       : parse_count(value.substr(comma + 1));
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

constexpr OptionSpec kListOption = {.name = "cl-list",
                                    .kind = OptionKind::kAction,
                                    .help = "list the OpenCL devices and stop",
                                    .action = list_devices};
constexpr OptionSpec kDeviceOption =
    text_option("cl-device", "N|NAME", "the first GPU, else the first device",
                "the device to mark on: its --cl-list number or part of its name", check_device);
constexpr OptionSpec kHeapOption =
    choice_option("gpu-heap", "direct|graph|shared", "direct",
                  "the device marks the heap itself, through buffers made for each collection (zero-copy "
                  "where the device shares host memory); the condensed reference graph, rebuilt before "
                  "each collection; or the heap itself through buffers kept from one collection to the "
                  "next, on a device that shares host memory (--cl-list says which)",
                  "--gpu-heap", "direct, graph or shared");
constexpr OptionSpec kGraphOption =
    choice_option("gpu-graph", "rebuild|double-write", "rebuild",
                  "with --gpu-heap=graph: the condensed graph rebuilt before each collection, or a graph "
                  "at the heap's positions that the write barrier keeps up to date, so that a collection "
                  "builds only the nodes of new objects",
                  "--gpu-graph", "rebuild or double-write");
constexpr OptionSpec kOffsetsOption =
    choice_option("gpu-offsets", "histogram|prefix|atomic",
                  WorkedOutDefault{"histogram on a GPU, atomic on any other device"},
                  "output-queue offsets by the paper's histogram or prefix sum, or one atomic add per "
                  "work-item",
                  "--gpu-offsets", "histogram, prefix or atomic");
constexpr OptionSpec kVectorOption = choice_option(
    "gpu-vector", "on|off", "on", "128-bit loads of header and references", "--gpu-vector", "on or off");
constexpr OptionSpec kSplitOption = count_option(
    "gpu-split", 16, "objects with more than N references are copied by the whole work-group; 0: off",
    "--gpu-split", "0 to 65536 references", 0, 65536);
constexpr OptionSpec kTailOption = checked(
    count_option("gpu-tail", kTailWidth,
                 "back to the CPU when the queue is narrower than W after at least I iterations (5 if left "
                 "out), never when W is 0",
                 nullptr, nullptr, 0, 1u << 30),
    "W[,I]", check_tail);
constexpr OptionSpec kComputeUnitsOption =
    count_option("gpu-cus", WorkedOutDefault{"0: a GPU's compute units, 1 on any other device"},
                 "work-groups (compute units): under one launch they share one queue, under one launch per "
                 "level the roots are split among them",
                 "--gpu-cus", "0: the device's compute units, or 1 to 4096", 0, 4096);
constexpr OptionSpec kWorkGroupOption =
    checked(count_option("gpu-wg", kWorkGroupSize, "work-items per work-group, a power of two", nullptr,
                         nullptr, 1, 4096),
            check_work_group);
constexpr OptionSpec kLaunchOption =
    choice_option("gpu-launch", "collection|level", "collection",
                  "one kernel launch marks the whole heap, looping over the levels (the paper's), or one "
                  "launch per level with the host between them",
                  "--gpu-launch", "collection or level");
constexpr OptionSpec kFallbackOption =
    choice_option("gpu-fallback", "cpu|none", "none",
                  "cpu marks on the CPU when there is no OpenCL device; none stops --gc=gpu with a message",
                  "--gpu-fallback", "cpu or none");
constexpr OptionSpec kOptions[] = {kListOption,         kDeviceOption,    kHeapOption,   kGraphOption,
                                   kOffsetsOption,      kVectorOption,    kSplitOption,  kTailOption,
                                   kComputeUnitsOption, kWorkGroupOption, kLaunchOption, kFallbackOption};

}  // namespace

GpuOptions gpu_options(const HeapOptions& heap) {
  const OptionValues& v = heap.collector_options;
  GpuOptions o;
  if (const std::string* device = given_text(v, kDeviceOption)) o.device = *device;
  o.graph = option_is(v, kHeapOption, "graph");
  o.double_write = o.graph && option_is(v, kGraphOption, "double-write");
  o.shared_heap = option_is(v, kHeapOption, "shared");
  if (option_is(v, kOffsetsOption, "histogram")) o.offsets = Offsets::kHistogram;
  if (option_is(v, kOffsetsOption, "prefix")) o.offsets = Offsets::kPrefixSum;
  if (option_is(v, kOffsetsOption, "atomic")) o.offsets = Offsets::kAtomic;
  o.vector_loads = option_is(v, kVectorOption, "on");
  o.split_refs = static_cast<unsigned>(option_count(v, kSplitOption));
  if (const std::string* tail = given_text(v, kTailOption))
    parse_tail(*tail, &o.tail_width, &o.tail_min_iterations);
  if (auto n = given_count(v, kComputeUnitsOption)) o.compute_units = static_cast<unsigned>(*n);
  o.work_group_size = static_cast<unsigned>(option_count(v, kWorkGroupOption));
  o.cpu_when_no_device = option_is(v, kFallbackOption, "cpu");
  o.launch_per_level = option_is(v, kLaunchOption, "level");
  return o;
}

std::span<const OptionSpec> gpu_option_table() { return kOptions; }

OptionValues gpu_paper_configuration(const HeapOptions&) {
  // One compute unit: the paper's two split the roots under one launch,
  // which gclab does only with a launch per level (--gpu-launch=level).
  return {{kHeapOption.name, "graph"}, {kOffsetsOption.name, "histogram"}, {kComputeUnitsOption.name, "1"}};
}

std::string gpu_options_problem(const HeapOptions& heap) {
  const OptionValues& v = heap.collector_options;
  if (given_text(v, kGraphOption) && !option_is(v, kHeapOption, "graph"))
    return "--gpu-graph applies to --gpu-heap=graph only";
  if (!option_is(v, kGraphOption, "double-write")) return "";
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
