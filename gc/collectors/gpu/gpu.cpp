#include "gc/collectors/gpu/gpu.h"

#include <unordered_set>

#include "gc/collectors/gpu/gpu_options.h"
#include "gc/exit_status.h"
#include "gc/mutator.h"
#include "gc/observe/recording.h"
#include "gc/verify/verifier.h"

namespace gc {

namespace {

constexpr observe::Counter kGpuIterations{"gpu iterations", observe::Unit::kLevels};
constexpr observe::Counter kGpuLaunches{"gpu launches", observe::Unit::kLaunches};
constexpr observe::Counter kGpuKernelDeviceNs{"gpu kernel device ns", observe::Unit::kNs};
constexpr observe::Counter kGpuOffloadedBytes{"gpu offloaded bytes", observe::Unit::kBytes};
constexpr observe::Counter kGpuGraphNodes{"gpu graph nodes", observe::Unit::kObjects,
                                          observe::CounterKind::kPeak};
constexpr observe::Counter kGpuGraphBytesUpdated{"gpu graph bytes updated", observe::Unit::kBytes};
constexpr observe::Counter kGpuTailObjects{"gpu tail objects", observe::Unit::kObjects};
constexpr observe::Counter kGpuWidestFrontier{"gpu widest frontier", observe::Unit::kObjects,
                                              observe::CounterKind::kPeak};
constexpr observe::Counter kGpuMarkedOnCpuTooLarge{"gpu marked on cpu (too large)",
                                                   observe::Unit::kCollections};
constexpr observe::Counter kGpuHeapBuffersMade{"gpu heap buffers made", observe::Unit::kBuffers};
constexpr observe::Sequence kFrontierWidth{"gpu frontier width"};
constexpr observe::Sequence kOutDegree{"gpu out-degree"};

// The barrier of --gpu-graph=double-write (Maas et al. 2012's double-write,
// L593-598): the store, its card, and the store again into the mirror.
void double_write(Collector& c, Word* /*object*/, Value* slot, Value v) {
  store_and_dirty(c, slot, v);
  const gpu::ReferenceMirror& mirror = static_cast<GpuCollector&>(c).mirror();
  gpu::mirror_store(mirror.biased(), mirror.origin_bits(), slot, v);
}

const char* const kPhaseCpuTail = "gpu cpu tail";
const char* const kPhaseOutDegrees = "gpu out-degree statistics";

}  // namespace

GpuCollector::GpuCollector(RootSet& roots, const HeapOptions& options, std::unique_ptr<gpu::ClDevice> device)
    : MarkSweepHeap(roots, options),
      device_(std::move(device)),
      cpu_(options_, pool(), worker_totals(), events) {
  // The kernel is compiled here, once per process and variant, not in the
  // first collection's pause.
  if (device_)
    marker_ = std::make_unique<gpu::GpuMarker>(gpu::ClSession::for_device(*device_), gpu_options(options));
  // The write barrier double-writes into the graph from the first store on.
  if (marker_ && gpu_options(options).double_write) {
    const Reservation& r = space().reservation();
    mirror_ = std::make_unique<gpu::ReferenceMirror>(r.base(), r.size_bytes() / kWordSize);
    write_barrier = double_write;
  }
  describe_gpu_events();
}

void GpuCollector::describe_gpu_events() {
  events.add_sequence_panel({"GPU frontier width per iteration",
                             "objects in the queue",
                             "The paper's Figure 2: how many objects each kernel launch had to mark. Wide "
                             "iterations keep the device busy; a long narrow tail is a list, which the CPU "
                             "finishes once the queue stays below --gpu-tail's width.",
                             &kFrontierWidth,
                             "iteration",
                             {}});
  std::vector<std::string> ticks;
  for (const observe::Counter& c : gpu::kDegreeCounters) ticks.push_back(std::string(c.name).substr(11));
  events.add_sequence_panel(
      {"Out-degree of live objects", "objects",
       "The paper's Figure 3: most objects have few references, a few have many. Objects "
       "above --gpu-split's count are copied by the whole work-group.",
       &kOutDegree, "references per object", ticks});
  events.add_panel({"GPU mark time per collection",
                    "ms",
                    "Device time of the mark kernel (profiling, launch overhead excluded) against the wall "
                    "time of the phases around it: building the graph, transfers, copying back and the "
                    "CPU's tail.",
                    {{"kernel (device)", &kGpuKernelDeviceNs, nullptr, 1e-6}}});
}

void GpuCollector::regions(gpu::Region* dense, gpu::Region* sparse) const {
  const auto& bs = space().blocks();
  *dense = {};
  if (!bs.empty()) *dense = {bs.front().begin, bs.back().end()};
  *sparse = {space().large_objects().begin(), space().large_objects().frontier()};
}

// Blocks from the reservation's start up to the large-object region, which
// runs to the reservation's end.
void GpuCollector::reserved_regions(gpu::Region* dense, gpu::Region* sparse) const {
  Word* los = space().large_objects().begin();
  *dense = {space().reservation().base(), los};
  *sparse = {los, space().reservation().end()};
}

void GpuCollector::for_each_object(const std::function<void(Word*)>& f) const {
  space().for_each_object([&](Word* h) { f(h); });
}

// The tail the GPU left (queue entries: references to objects it did not
// reach, some twice, some marked since): those not marked yet are marked
// here and become the CPU marker's grey set. `gpu tail objects` is every
// object the CPU marks, those and what it reaches from them.
void GpuCollector::finish_on_cpu(const std::vector<Word*>& gray) {
  std::vector<Word*> grey;
  observe::Recording* recording = observe::Recording::active();
  for (Word* h : gray)
    if (MarkSweepSpace::set_mark(h)) {
      grey.push_back(h);
      if (recording) [[unlikely]]
        recording->grey(0, h);
    }
  uint64_t marked = grey.size();
  if (!grey.empty()) marked += cpu_.mark_from_gray(grey);
  events.count(0, kGpuTailObjects, marked);
}

// A recorded collection (--gc-animate) sees the device's marking as the
// paper's levels (Algorithm 1: level k holds the objects first reached from
// level k - 1): the objects whose marks the device set, in breadth-first
// order from the roots. The host sees which objects the device marked, not
// the order it marked them in within a level, so the page's order within a
// level is the breadth-first walk's.
void GpuCollector::record_device_levels(observe::Recording& recording) {
  constexpr unsigned kDevice = observe::Recording::kDevice;
  std::vector<Word*> level, next;
  std::unordered_set<Word*> seen;
  for (Word* h : roots_scratch_)
    if (MarkSweepSpace::is_marked(h) && seen.insert(h).second) level.push_back(h);
  for (uint64_t k = 0; !level.empty(); ++k) {
    recording.level(kDevice, k, level.size());
    for (Word* h : level) recording.grey(kDevice, h);
    next.clear();
    for (Word* h : level) {
      recording.scan(kDevice, h);
      uint64_t n = Header::nrefs(*h);
      const Value* slots = ref_slots_begin(h, n);
      for (uint64_t i = 0; i < n; ++i)
        if (slots[i].is_ref() && MarkSweepSpace::is_marked(slots[i].as_ref()) &&
            seen.insert(slots[i].as_ref()).second)
          next.push_back(slots[i].as_ref());
    }
    level.swap(next);
  }
}

void GpuCollector::mark() {
  if (!marker_) {
    cpu_.mark_from_roots(gather_roots());
    return;
  }
  roots_scratch_.clear();
  for (const RootGroup& g : gather_roots())
    for (size_t i = 0; i < g.count; ++i)
      if (g.slots[i].is_ref()) roots_scratch_.push_back(g.slots[i].as_ref());
  if (mirror_ && options_.verify)
    events.phase(0, "verify graph", [&] {
      if (auto failure = mirror_->check(*this, stats_.collections)) verify::report_and_exit(*failure);
    });
  gpu::MarkReport r;
  marker_->mark(*this, roots_scratch_, events, r);
  if (observe::Recording* recording = observe::Recording::active()) [[unlikely]]
    record_device_levels(*recording);
  events.phase(0, kPhaseCpuTail, [&] { finish_on_cpu(r.gray); });
  report(r);
  if (options_.verify)
    events.phase(0, "verify marks", [&] { verify::verify_marks_or_exit(*this, roots_, stats_.collections); });
}

void GpuCollector::report(const gpu::MarkReport& r) {
  if (!events.enabled()) return;
  uint64_t widest = 0;
  for (uint64_t w : r.frontier) widest = std::max(widest, w);
  events.count(0, kGpuIterations, r.frontier.size());
  events.count(0, kGpuLaunches, r.launches);
  events.count(0, kGpuKernelDeviceNs, r.kernel_ns);
  events.count(0, kGpuOffloadedBytes, r.offloaded_bytes);
  events.count(0, kGpuWidestFrontier, widest);
  if (r.objects) events.count(0, kGpuGraphNodes, r.objects);
  if (r.graph_bytes_updated) events.count(0, kGpuGraphBytesUpdated, r.graph_bytes_updated);
  if (r.too_large) events.count(0, kGpuMarkedOnCpuTooLarge, 1);
  if (r.buffers_made) events.count(0, kGpuHeapBuffersMade, r.buffers_made);
  events.sequence(0, kFrontierWidth, r.frontier);
  // Figure 3 costs a walk of the heap: only when someone looks, and in a
  // phase of its own so that it does not inflate the others.
  events.phase(0, kPhaseOutDegrees, [&] {
    auto degrees = gpu::marked_out_degrees(*this);
    for (size_t b = 0; b < gpu::kDegreeBuckets; ++b)
      if (degrees[b]) events.count(0, gpu::kDegreeCounters[b], degrees[b]);
    events.sequence(0, kOutDegree, std::vector<uint64_t>(degrees.begin(), degrees.end()));
  });
}

std::unique_ptr<Collector> create_gpu(RootSet& roots, const HeapOptions& options) {
  std::string why;
  std::unique_ptr<gpu::ClDevice> device = gpu::choose_device(gpu_options(options).device, &why);
  if (!device && !gpu_options(options).cpu_when_no_device)
    throw CreationError(kExitUnavailable, "--gc=gpu: " + why);
  // Checked here, not with the other options: asking OpenCL before the VM
  // forks the runs of --compare would leave the children a driver that is
  // not safe to use after fork().
  if (device && gpu_options(options).shared_heap && !device->host_unified_memory)
    throw CreationError(
        kExitUsage, "--gpu-heap=shared needs a device that shares memory with the host, and " + device->name +
                        " does not (--cl-list says which do; --gpu-heap=direct copies the heap "
                        "instead)");
  return std::make_unique<GpuCollector>(roots, options, std::move(device));
}

std::string gpu_unavailable() { return gpu::unavailable_reason(""); }

std::string gpu_check_configuration(const HeapOptions& options) {
  if (std::string problem = gpu_options_problem(options); !problem.empty()) return problem;
  const std::string& spec = gpu_options(options).device;
  if (spec.empty() || gpu::list_devices().empty()) return "";
  return gpu::unavailable_reason(spec);
}

}  // namespace gc
