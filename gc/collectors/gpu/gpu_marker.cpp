#include "gc/collectors/gpu/gpu_marker.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gc::gpu {

const char* const kPhaseBuildGraph = "gpu build graph";
const char* const kPhaseTransfer = "gpu transfer";
const char* const kPhaseRootsInPlace = "gpu roots in place";
const char* const kPhaseKernel = "gpu kernel";
const char* const kPhaseCopyBack = "gpu copy back";
const char* const kPhaseApplyMarks = "gpu apply marks";

const observe::Counter kDegreeCounters[kDegreeBuckets] = {
    {"out-degree 0", observe::Unit::kObjects},      {"out-degree 1", observe::Unit::kObjects},
    {"out-degree 2", observe::Unit::kObjects},      {"out-degree 3", observe::Unit::kObjects},
    {"out-degree 4", observe::Unit::kObjects},      {"out-degree 5", observe::Unit::kObjects},
    {"out-degree 6", observe::Unit::kObjects},      {"out-degree 7", observe::Unit::kObjects},
    {"out-degree 8", observe::Unit::kObjects},      {"out-degree 9-16", observe::Unit::kObjects},
    {"out-degree 17-32", observe::Unit::kObjects},  {"out-degree 33-64", observe::Unit::kObjects},
    {"out-degree 65-128", observe::Unit::kObjects}, {"out-degree 129-256", observe::Unit::kObjects},
    {"out-degree 257+", observe::Unit::kObjects}};

size_t degree_bucket(uint64_t nrefs) {
  if (nrefs <= 8) return nrefs;
  if (nrefs > 256) return kDegreeBuckets - 1;
  // 9-16 -> 9, 17-32 -> 10, ..., 129-256 -> 13
  return 9 + (std::bit_width(nrefs - 1) - 4);
}

// An object's out-degree is its references: the slots holding numbers, nil
// or booleans are edges of no graph (the paper's Figure 3 counts pointers).
std::array<uint64_t, kDegreeBuckets> marked_out_degrees(const MarkableHeap& heap) {
  std::array<uint64_t, kDegreeBuckets> h{};
  heap.for_each_object([&](Word* header) {
    if (!Header::is_marked(*header)) return;
    uint64_t refs = 0, n = Header::nrefs(*header);
    for (uint64_t i = 0; i < n; ++i) refs += ref_slot(header, i).is_ref();
    ++h[degree_bucket(refs)];
  });
  return h;
}

namespace {

// Per-partition state words shared with the kernel (gpu_mark.cl, ST_* and
// WHY_*).
constexpr size_t kStateWords = 8;
constexpr size_t kBegin = 0, kEnd = 1, kOut = 2, kFlip = 3, kLevels = 4, kOpen = 5, kRecorded = 6, kWhy = 7;
constexpr uint64_t kWhyFull = 1, kWhyLevels = 2, kWhyTail = 3;

// Levels one launch may begin per work-group under --gpu-launch=collection:
// the length of each work-group's width history. A deeper graph takes one
// more launch per this many levels.
constexpr uint32_t kLevelsPerLaunch = 4096;

// mark_shared's counters (gpu_mark.cl, Q_*: head, tail, active, stop), and
// its largest queue: the kernel indexes it with 32-bit counters.
constexpr size_t kQueueCounters = 4;
constexpr size_t kHead = 0, kTail = 1, kStop = 3;
constexpr uint64_t kMaxOneQueueEntries = uint64_t{1} << 31;

// The first queue capacity per partition, in entries; it doubles when a
// step's output does not fit. Big enough that small heaps never grow.
constexpr uint64_t kInitialCapacity = 1 << 14;

// A graph node: [count << 1 | mark, ref 0 .. ref count-1, back reference as
// two uints], padded to 16 bytes so that a node starts on a 128-bit boundary
// (L1121-1127). The back reference comes last, so the first 128-bit load
// holds the header and three references, as in the paper.
constexpr uint64_t node_granules(uint64_t count) { return (1 + count + 2 + 3) / 4; }

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llxul", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

GpuMarker::GpuMarker(ClSession& session, const GpuOptions& options) : session_(session), options_(options) {
  const ClDevice& d = session.device();
  groups_ = work_groups_on(options, d);
  // The work-group size is a power of two (the prefix sum needs it) that
  // the device accepts.
  wg_size_ = std::bit_floor(std::max(1u, options.work_group_size));
  while (wg_size_ > 1 && wg_size_ > d.max_work_group_size) wg_size_ >>= 1;
  entry_bytes_ = options.graph ? sizeof(uint32_t) : sizeof(uint64_t);
  build_options_ =
      "-DWG_SIZE=" + std::to_string(wg_size_) + " -DSPLIT_REFS=" + std::to_string(options.split_refs) +
      " -DMARK_BIT=" + hex(Header::kMarkBit) + " -DREF_TAG=" + hex(Value::kRefTag) +
      " -DTAG_MASK=" + hex(Value::kTagMask) + " -DREFS_SHIFT=" + std::to_string(Header::kRefsShift);
  if (options.double_write)
    build_options_ += " -DMIRROR";
  else if (options.graph)
    build_options_ += " -DGRAPH";
  Offsets offsets = offsets_on(options, d);
  if (offsets == Offsets::kPrefixSum) build_options_ += " -DPREFIX_SUM";
  if (offsets == Offsets::kAtomic) build_options_ += " -DATOMIC_OFFSETS";
  if (options.vector_loads) build_options_ += " -DVECTOR";
  kernel_ = session.kernel("mark", build_options_);
  cl_int err = CL_SUCCESS;
  state_ = clCreateBuffer(session.context(), CL_MEM_READ_WRITE, groups_ * kStateWords * sizeof(uint64_t),
                          nullptr, &err);
  check(err, "clCreateBuffer(state)");
  levels_per_launch_ = options.launch_per_level ? 1 : kLevelsPerLaunch;
  history_ = clCreateBuffer(session.context(), CL_MEM_READ_WRITE,
                            groups_ * levels_per_launch_ * sizeof(uint64_t), nullptr, &err);
  check(err, "clCreateBuffer(history)");
  one_queue_ = !options.launch_per_level && groups_ > 1;
  if (one_queue_) {
    shared_kernel_ = session.kernel("mark_shared", build_options_);
    counters_ = clCreateBuffer(session.context(), CL_MEM_READ_WRITE, kQueueCounters * sizeof(uint32_t),
                               nullptr, &err);
    check(err, "clCreateBuffer(counters)");
  }
}

GpuMarker::~GpuMarker() {
  for (cl_mem m : {shared_dense_.buffer, shared_sparse_.buffer})
    if (m) clReleaseMemObject(m);
  for (cl_mem m : {queue_a_, queue_b_, state_, history_, counters_, one_queue_buffer_})
    if (m) clReleaseMemObject(m);
}

// A queue buffer. Beside a shared heap, one the host can map in place
// (zero-copy on a device that shares host memory), so that the roots need
// no transfer either.
cl_mem GpuMarker::queue_buffer(uint64_t bytes) {
  cl_int err = CL_SUCCESS;
  cl_mem_flags flags = CL_MEM_READ_WRITE | (options_.shared_heap ? CL_MEM_ALLOC_HOST_PTR : 0);
  cl_mem q = clCreateBuffer(session_.context(), flags, bytes, nullptr, &err);
  check(err, "clCreateBuffer(queue)");
  return q;
}

// The roots into a queue: written in place through a map beside a shared
// heap; otherwise a write the device copies, without waiting for it (the
// staging copies stay until the next mark, and the in-order queue runs
// the write before the first launch).
void GpuMarker::put_roots(cl_mem queue, uint64_t offset, uint64_t bytes, const void* src) {
  if (!options_.shared_heap) {
    check(clEnqueueWriteBuffer(session_.queue(), queue, CL_FALSE, offset, bytes, src, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer(roots)");
    return;
  }
  cl_int err = CL_SUCCESS;
  void* p = clEnqueueMapBuffer(session_.queue(), queue, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, offset,
                               bytes, 0, nullptr, nullptr, &err);
  check(err, "clEnqueueMapBuffer(roots)");
  std::memcpy(p, src, bytes);
  check(clEnqueueUnmapMemObject(session_.queue(), queue, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
}

// Grows the queues to at least `entries` per partition, keeping what each
// partition has in them: its in-queue up to its end and its out-queue up to
// its length (state says which buffer is which).
void GpuMarker::ensure_capacity(uint64_t entries, const std::vector<uint64_t>& state) {
  if (entries <= capacity_) return;
  uint64_t cap = std::max(capacity_ ? capacity_ : kInitialCapacity, kInitialCapacity);
  while (cap < entries) cap *= 2;
  size_t bytes = groups_ * cap * entry_bytes_;
  cl_mem a = queue_buffer(bytes);
  cl_mem b = queue_buffer(bytes);
  if (capacity_) {
    auto keep = [&](cl_mem from, cl_mem to, unsigned p, uint64_t n) {
      if (n)
        check(clEnqueueCopyBuffer(session_.queue(), from, to, p * capacity_ * entry_bytes_,
                                  p * cap * entry_bytes_, n * entry_bytes_, 0, nullptr, nullptr),
              "clEnqueueCopyBuffer");
    };
    for (unsigned p = 0; p < groups_; ++p) {
      const uint64_t* s = &state[p * kStateWords];
      bool flipped = s[kFlip] != 0;
      keep(flipped ? queue_b_ : queue_a_, flipped ? b : a, p, s[kEnd]);
      keep(flipped ? queue_a_ : queue_b_, flipped ? a : b, p, s[kOut]);
    }
    check(clFinish(session_.queue()), "clFinish");
    clReleaseMemObject(queue_a_);
    clReleaseMemObject(queue_b_);
  }
  queue_a_ = a;
  queue_b_ = b;
  capacity_ = cap;
}

// Splits the roots among the partitions (one per compute unit, no
// balancing: L1088-1094) and writes them as the first in-queue. Root i goes
// to partition i mod groups: the VM's roots come in runs of one kind
// (globals, then stacks, ...), which halves of the list would keep apart.
void GpuMarker::write_roots(const std::vector<uint64_t>& entries, std::vector<uint64_t>& state) {
  state.assign(groups_ * kStateWords, 0);
  if (one_queue_) {
    write_roots_to_one_queue(entries);
    return;
  }
  uint64_t per = (entries.size() + groups_ - 1) / groups_;
  ensure_capacity(std::max<uint64_t>(per, 1), state);
  // Staged: a write without waiting reads them after this returns.
  staged_roots_.resize(groups_);
  staged_narrow_roots_.resize(groups_);
  for (unsigned p = 0; p < groups_; ++p) {
    std::vector<uint64_t>& wide = staged_roots_[p];
    wide.clear();
    for (size_t i = p; i < entries.size(); i += groups_) wide.push_back(entries[i]);
    state[p * kStateWords + kEnd] = wide.size();
    if (wide.empty()) continue;
    const void* src = wide.data();
    if (entry_bytes_ == sizeof(uint32_t)) {
      staged_narrow_roots_[p].assign(wide.begin(), wide.end());
      src = staged_narrow_roots_[p].data();
    }
    put_roots(queue_a_, p * capacity_ * entry_bytes_, wide.size() * entry_bytes_, src);
  }
}

// mark_shared's queue starts as the roots, the rest of it empty.
void GpuMarker::write_roots_to_one_queue(const std::vector<uint64_t>& entries) {
  ensure_one_queue(std::max<uint64_t>(entries.size(), 1));
  staged_roots_.assign(1, entries);
  const void* src = staged_roots_[0].data();
  if (entry_bytes_ == sizeof(uint32_t)) {
    staged_narrow_roots_.assign(1, std::vector<uint32_t>(entries.begin(), entries.end()));
    src = staged_narrow_roots_[0].data();
  }
  if (!entries.empty()) put_roots(one_queue_buffer_, 0, entries.size() * entry_bytes_, src);
  counters_host_ = {0, static_cast<uint32_t>(entries.size()), 0, 0};
}

// A queue of at least `entries` places, every one empty (EMPTY_ENTRY: all
// bits set). The kernel leaves what it consumed empty, so a queue is
// filled once, when it is made.
cl_mem GpuMarker::empty_queue(uint64_t entries) {
  cl_mem q = queue_buffer(entries * entry_bytes_);
  uint64_t ones = ~uint64_t{0};
  check(clEnqueueFillBuffer(session_.queue(), q, &ones, entry_bytes_, 0, entries * entry_bytes_, 0, nullptr,
                            nullptr),
        "clEnqueueFillBuffer(queue)");
  return q;
}

void GpuMarker::ensure_one_queue(uint64_t entries) {
  if (entries <= one_capacity_) return;
  uint64_t cap = std::max<uint64_t>(one_capacity_, kInitialCapacity * groups_);
  while (cap < entries) cap *= 2;
  if (one_queue_buffer_) clReleaseMemObject(one_queue_buffer_);
  one_queue_buffer_ = empty_queue(cap);
  one_capacity_ = cap;
}

// The kernel's heap arguments: the two regions (or the graph, twice), with
// their base addresses, and the per-partition state.
void GpuMarker::set_heap_args(cl_mem dense, cl_mem sparse, const Region& d, const Region& s) {
  set_heap_args(dense, sparse, reinterpret_cast<uint64_t>(d.begin), reinterpret_cast<uint64_t>(s.begin),
                s.words());
}

// base and large_base in the unit of the queue's entries: addresses, or
// the mirror's positions.
void GpuMarker::set_heap_args(cl_mem dense, cl_mem sparse, cl_ulong base, cl_ulong large_base,
                              cl_ulong large_words) {
  // Both kernels take the heap first (gpu_mark.cl, HEAP_ARGS).
  auto heap_args = [&](cl_kernel k) {
    check(clSetKernelArg(k, 0, sizeof(cl_mem), &dense), "clSetKernelArg");
    check(clSetKernelArg(k, 1, sizeof base, &base), "clSetKernelArg");
    check(clSetKernelArg(k, 2, sizeof(cl_mem), &sparse), "clSetKernelArg");
    check(clSetKernelArg(k, 3, sizeof large_base, &large_base), "clSetKernelArg");
    check(clSetKernelArg(k, 4, sizeof large_words, &large_words), "clSetKernelArg");
  };
  heap_args(kernel_);
  check(clSetKernelArg(kernel_, 8, sizeof(cl_mem), &state_), "clSetKernelArg");
  check(clSetKernelArg(kernel_, 9, sizeof(cl_mem), &history_), "clSetKernelArg");
  cl_uint tail_width = options_.tail_width, min_iterations = options_.tail_min_iterations;
  if (one_queue_) {
    heap_args(shared_kernel_);
    check(clSetKernelArg(shared_kernel_, 7, sizeof(cl_mem), &counters_), "clSetKernelArg");
    check(clSetKernelArg(shared_kernel_, 8, sizeof(cl_mem), &state_), "clSetKernelArg");
    check(clSetKernelArg(shared_kernel_, 9, sizeof tail_width, &tail_width), "clSetKernelArg");
    check(clSetKernelArg(shared_kernel_, 10, sizeof min_iterations, &min_iterations), "clSetKernelArg");
  }
  // One launch per level: the host tests the tail between launches.
  cl_uint levels = levels_per_launch_, width = options_.launch_per_level ? 0 : tail_width;
  check(clSetKernelArg(kernel_, 10, sizeof levels, &levels), "clSetKernelArg");
  check(clSetKernelArg(kernel_, 11, sizeof width, &width), "clSetKernelArg");
  check(clSetKernelArg(kernel_, 12, sizeof min_iterations, &min_iterations), "clSetKernelArg");
}

// The levels of the mark: one launch for all of them (--gpu-launch=
// collection, the paper's loop), or one launch per level (level), the host
// testing the tail between launches. A launch is repeated from where the
// work-groups stopped when an out-queue was full (after growing it) or a
// width history filled. Stops when every queue is empty, or (the tail
// fallback, L1138-1150) leaves the narrow queues in `tail`.
void GpuMarker::iterate(MarkReport& report, std::vector<uint64_t>& tail) {
  std::vector<uint64_t>& state = state_host_;
  std::vector<uint64_t> history(groups_ * levels_per_launch_);
  for (;;) {
    uint64_t width = 0;
    for (unsigned p = 0; p < groups_; ++p) width += state[p * kStateWords + kEnd];
    if (width == 0) return;
    if (options_.launch_per_level && options_.tail_width &&
        report.frontier.size() >= options_.tail_min_iterations && width < options_.tail_width) {
      take_tail(
          state, [](const uint64_t*) { return true; }, tail);
      return;
    }
    std::vector<uint64_t> levels_before(groups_);
    for (unsigned p = 0; p < groups_; ++p) levels_before[p] = state[p * kStateWords + kLevels];
    launch(state, report);
    bool full = false, more = false;
    for (unsigned p = 0; p < groups_; ++p) {
      const uint64_t* s = &state[p * kStateWords];
      if (s[kRecorded] == 0) continue;
      check(
          clEnqueueReadBuffer(session_.queue(), history_, CL_TRUE, p * levels_per_launch_ * sizeof(uint64_t),
                              s[kRecorded] * sizeof(uint64_t), history.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer(history)");
      if (report.frontier.size() < levels_before[p] + s[kRecorded])
        report.frontier.resize(levels_before[p] + s[kRecorded]);
      for (uint64_t j = 0; j < s[kRecorded]; ++j) report.frontier[levels_before[p] + j] += history[j];
    }
    for (unsigned p = 0; p < groups_; ++p) {
      full |= state[p * kStateWords + kWhy] == kWhyFull;
      more |= state[p * kStateWords + kWhy] == kWhyLevels;
    }
    if (full) {
      ensure_capacity(capacity_ * 2, state);
      continue;
    }
    if (more || options_.launch_per_level) continue;
    take_tail(
        state, [](const uint64_t* s) { return s[kWhy] == kWhyTail; }, tail);
    return;
  }
}

// One launch over every partition's state; the state as the work-groups
// left it comes back in `state`.
void GpuMarker::launch(std::vector<uint64_t>& state, MarkReport& report) {
  for (unsigned p = 0; p < groups_; ++p) state[p * kStateWords + kRecorded] = 0;
  check(clEnqueueWriteBuffer(session_.queue(), state_, CL_FALSE, 0, state.size() * sizeof(uint64_t),
                             state.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer(state)");
  cl_ulong cap = capacity_;
  check(clSetKernelArg(kernel_, 5, sizeof(cl_mem), &queue_a_), "clSetKernelArg");
  check(clSetKernelArg(kernel_, 6, sizeof(cl_mem), &queue_b_), "clSetKernelArg");
  check(clSetKernelArg(kernel_, 7, sizeof cap, &cap), "clSetKernelArg");
  run_kernel(kernel_, report);
  check(clEnqueueReadBuffer(session_.queue(), state_, CL_TRUE, 0, state.size() * sizeof(uint64_t),
                            state.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer(state)");
}

// Enqueues one launch of `kernel` over every work-group and waits for it,
// counting it and its device time.
void GpuMarker::run_kernel(cl_kernel kernel, MarkReport& report) {
  const size_t local = wg_size_, global = static_cast<size_t>(groups_) * wg_size_;
  cl_event done = nullptr;
  check(clEnqueueNDRangeKernel(session_.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, &done),
        "clEnqueueNDRangeKernel");
  check(clWaitForEvents(1, &done), "clWaitForEvents");
  cl_ulong t0 = 0, t1 = 0;
  clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr);
  clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr);
  clReleaseEvent(done);
  report.kernel_ns += t1 > t0 ? t1 - t0 : 0;
  ++report.launches;
}

// The in-queues of the partitions `chosen` picks (all at the start of a
// level), for the CPU to finish.
template <class Chosen>
void GpuMarker::take_tail(const std::vector<uint64_t>& state, Chosen chosen, std::vector<uint64_t>& tail) {
  for (unsigned p = 0; p < groups_; ++p) {
    const uint64_t* s = &state[p * kStateWords];
    uint64_t n = s[kEnd];
    if (!n || !chosen(s)) continue;
    cl_mem in = s[kFlip] ? queue_b_ : queue_a_;
    std::vector<uint64_t> wide(n);
    if (entry_bytes_ == sizeof(uint64_t)) {
      check(clEnqueueReadBuffer(session_.queue(), in, CL_TRUE, p * capacity_ * entry_bytes_, n * entry_bytes_,
                                wide.data(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer(tail)");
    } else {
      std::vector<uint32_t> narrow(n);
      check(clEnqueueReadBuffer(session_.queue(), in, CL_TRUE, p * capacity_ * entry_bytes_, n * entry_bytes_,
                                narrow.data(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer(tail)");
      wide.assign(narrow.begin(), narrow.end());
    }
    tail.insert(tail.end(), wide.begin(), wide.end());
  }
}

// Several work-groups, one queue (gpu_mark.cl, mark_shared): launches until
// no work-group stopped for want of room. Then the queue is empty, or the
// narrow rest of it (the tail fallback) is left in `tail`. A stopped
// work-group's claim and the unclaimed entries move to the front of a new
// queue, with room for twice them and the largest step that did not fit.
void GpuMarker::mark_with_one_queue(MarkReport& report, std::vector<uint64_t>& tail) {
  std::vector<uint64_t>& state = state_host_;
  for (;;) {
    check(clEnqueueWriteBuffer(session_.queue(), counters_, CL_FALSE, 0, kQueueCounters * sizeof(uint32_t),
                               counters_host_.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer(counters)");
    cl_uint capacity = static_cast<cl_uint>(one_capacity_);
    check(clSetKernelArg(shared_kernel_, 5, sizeof(cl_mem), &one_queue_buffer_), "clSetKernelArg");
    check(clSetKernelArg(shared_kernel_, 6, sizeof capacity, &capacity), "clSetKernelArg");
    run_kernel(shared_kernel_, report);
    check(clEnqueueReadBuffer(session_.queue(), counters_, CL_FALSE, 0, kQueueCounters * sizeof(uint32_t),
                              counters_host_.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer(counters)");
    check(clEnqueueReadBuffer(session_.queue(), state_, CL_TRUE, 0, state.size() * sizeof(uint64_t),
                              state.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer(state)");
    std::vector<std::pair<uint64_t, uint64_t>> kept;  // [begin, end) of the old queue, in order
    uint64_t step_needs = 0;
    for (unsigned p = 0; p < groups_; ++p) {
      const uint64_t* st = &state[p * kStateWords];
      if (st[kWhy] != kWhyFull) continue;
      kept.emplace_back(st[kBegin], st[kEnd]);
      step_needs = std::max(step_needs, st[kOut]);
    }
    uint64_t head = counters_host_[kHead], end = counters_host_[kTail];
    if (kept.empty()) {
      if (counters_host_[kStop] && end > head) take_one_queue_tail(head, end, tail);
      return;
    }
    kept.emplace_back(head, end);
    uint64_t moved = 0;
    for (auto [b, e] : kept) moved += e - b;
    uint64_t cap = one_capacity_;
    uint64_t needs = 2 * moved + step_needs + kInitialCapacity * groups_;
    while (cap < needs && cap < kMaxOneQueueEntries) cap *= 2;
    if (moved + step_needs > cap) {
      std::fprintf(stderr, "gc: the gpu mark queue would pass %llu entries\n",
                   static_cast<unsigned long long>(kMaxOneQueueEntries));
      std::abort();
    }
    cl_mem next = empty_queue(cap);
    uint64_t at = 0;
    for (auto [b, e] : kept) {
      if (e > b)
        check(clEnqueueCopyBuffer(session_.queue(), one_queue_buffer_, next, b * entry_bytes_,
                                  at * entry_bytes_, (e - b) * entry_bytes_, 0, nullptr, nullptr),
              "clEnqueueCopyBuffer(queue)");
      at += e - b;
    }
    check(clFinish(session_.queue()), "clFinish");
    clReleaseMemObject(one_queue_buffer_);
    one_queue_buffer_ = next;
    one_capacity_ = cap;
    counters_host_ = {0, static_cast<uint32_t>(moved), 0, 0};
  }
}

// The entries [head, end) left when the queue went narrow, for the CPU; their
// places are made empty again for the next mark.
void GpuMarker::take_one_queue_tail(uint64_t head, uint64_t end, std::vector<uint64_t>& tail) {
  uint64_t n = end - head;
  std::vector<uint64_t> wide(n);
  if (entry_bytes_ == sizeof(uint64_t)) {
    check(clEnqueueReadBuffer(session_.queue(), one_queue_buffer_, CL_TRUE, head * entry_bytes_,
                              n * entry_bytes_, wide.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer(tail)");
  } else {
    std::vector<uint32_t> narrow(n);
    check(clEnqueueReadBuffer(session_.queue(), one_queue_buffer_, CL_TRUE, head * entry_bytes_,
                              n * entry_bytes_, narrow.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer(tail)");
    wide.assign(narrow.begin(), narrow.end());
  }
  tail.insert(tail.end(), wide.begin(), wide.end());
  uint64_t ones = ~uint64_t{0};
  check(clEnqueueFillBuffer(session_.queue(), one_queue_buffer_, &ones, entry_bytes_, head * entry_bytes_,
                            n * entry_bytes_, 0, nullptr, nullptr),
        "clEnqueueFillBuffer(queue)");
}

// A reference's node index (in 16-byte granules): through a table indexed
// by word in the dense region, a hash map for the few sparse objects.
uint32_t GpuMarker::node_of(const Word* header, const Region& dense) const {
  if (dense.contains(header)) return node_of_[static_cast<size_t>(header - dense.begin)];
  return sparse_node_of_.at(header);
}

void GpuMarker::build_graph(const MarkableHeap& heap, const Region& dense) {
  objects_.clear();
  sparse_node_of_.clear();
  node_of_.resize(static_cast<size_t>(dense.words()));
  uint64_t granules = 0;
  heap.for_each_object([&](Word* h) {
    objects_.push_back(h);
    uint64_t refs = 0, n = Header::nrefs(*h);
    for (uint64_t i = 0; i < n; ++i) refs += ref_slot(h, i).is_ref();
    if (dense.contains(h))
      node_of_[static_cast<size_t>(h - dense.begin)] = static_cast<uint32_t>(granules);
    else
      sparse_node_of_[h] = static_cast<uint32_t>(granules);
    granules += node_granules(refs);
  });
  graph_.assign(granules * 4, 0);
  uint64_t g = 0;
  for (Word* h : objects_) {
    uint32_t* node = graph_.data() + g * 4;
    uint64_t n = Header::nrefs(*h), count = 0;
    for (uint64_t i = 0; i < n; ++i) {
      Value v = ref_slot(h, i);
      if (v.is_ref()) node[1 + count++] = node_of(v.as_ref(), dense);
    }
    node[0] = static_cast<uint32_t>(count << 1);
    uint64_t back = reinterpret_cast<uint64_t>(h);
    node[1 + count] = static_cast<uint32_t>(back);
    node[2 + count] = static_cast<uint32_t>(back >> 32);
    g += node_granules(count);
  }
}

namespace {

Word* back_reference(const uint32_t* node) {
  uint64_t count = node[0] >> 1;
  return reinterpret_cast<Word*>(node[1 + count] | static_cast<uint64_t>(node[2 + count]) << 32);
}

// A buffer over host memory the device may use in place (zero-copy where it
// shares memory with the host); a region with nothing in it still needs a
// buffer to pass.
cl_mem host_buffer(cl_context context, void* begin, uint64_t bytes, Word* placeholder) {
  cl_int err = CL_SUCCESS;
  bool empty = bytes == 0;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, empty ? kWordSize : bytes,
                            empty ? placeholder : begin, &err);
  check(err, "clCreateBuffer(heap)");
  return m;
}
cl_mem host_buffer(cl_context context, const Region& r, Word* placeholder) {
  return host_buffer(context, r.begin, r.words() * kWordSize, placeholder);
}

// Makes the device's stores to a host buffer visible to the host (and, for
// a device with memory of its own, copies them back).
void sync_to_host(cl_command_queue q, cl_mem m, size_t bytes) {
  cl_int err = CL_SUCCESS;
  void* p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ, 0, bytes, 0, nullptr, nullptr, &err);
  check(err, "clEnqueueMapBuffer(heap)");
  check(clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
}

}  // namespace

// The paper's Figure 4 (L436-475), one step each, in its order (section 4.1,
// L485-494): the CPU is idle while the device marks.
void GpuMarker::mark(const MarkableHeap& heap, const std::vector<Word*>& roots, observe::Recorder& events,
                     MarkReport& report) {
  report = MarkReport{};
  heap.regions(&dense_, &sparse_);
  mirror_ = options_.double_write ? heap.reference_mirror() : nullptr;
  if (options_.double_write && !mirror_) {
    // The kernel was built for the mirror's entries: nothing else will do.
    std::fprintf(stderr,
                 "gc: gpu: --gpu-graph=double-write on a heap that keeps no graph (internal error)\n");
    std::abort();
  }
  update_reference_graph(heap, roots, events, report);
  if (!fits_on_device(report)) {
    report.gray = roots;
    // The CPU marks it all: no node can tell which objects die.
    if (mirror_) mirror_->forget_all();
    return;
  }
  if (options_.shared_heap) {
    uint64_t made = shared_buffers_made_;
    keep_shared_buffers(heap);
    report.buffers_made = shared_buffers_made_ - made;
  }
  events.phase(0, options_.shared_heap ? kPhaseRootsInPlace : kPhaseTransfer, [&] { copy_to_device(); });
  std::vector<uint64_t> tail = events.phase(0, kPhaseKernel, [&] { return mark_on_device(report); });
  events.phase(0, kPhaseCopyBack, [&] { copy_back(report); });
  write_marks_back(heap, tail, events, report);
}

// Step 1, "Update reference graph" (L446-447): the graph is filled in now,
// section 4.3's "most basic approach" (L586-592), or (double-write) only
// the nodes of objects the barrier has not kept, and the roots become its
// node indices. Direct offloads the heap as it is: the roots stay
// references.
void GpuMarker::update_reference_graph(const MarkableHeap& heap, const std::vector<Word*>& roots,
                                       observe::Recorder& events, MarkReport& report) {
  root_entries_.clear();
  root_entries_.reserve(roots.size());
  if (mirror_) {
    events.phase(0, kPhaseBuildGraph,
                 [&] { report.graph_bytes_updated = mirror_->update(heap, &report.objects); });
    for (Word* r : roots) root_entries_.push_back(mirror_->position(r));
    report.offloaded_bytes = offloaded(dense_).bytes + offloaded(sparse_).bytes;
  } else if (condensed_graph()) {
    events.phase(0, kPhaseBuildGraph, [&] {
      build_graph(heap, dense_);
      for (Word* r : roots) root_entries_.push_back(node_of(r, dense_));
    });
    report.objects = objects_.size();
    report.offloaded_bytes = graph_.size() * sizeof(uint32_t);
    report.graph_bytes_updated = report.offloaded_bytes;
  } else {
    for (Word* r : roots) root_entries_.push_back(Value::ref(r).bits);
    report.offloaded_bytes = offloaded(dense_).bytes + offloaded(sparse_).bytes;
  }
}

// What the device reads of a heap region: the heap's words themselves, or
// the double-write graph's entries at the same positions; base is where
// queue entries count from (an address, or a position).
GpuMarker::OffloadedRegion GpuMarker::offloaded(const Region& r) const {
  if (mirror_) return {mirror_->entry(r.begin), r.words() * sizeof(uint32_t), mirror_->position(r.begin)};
  return {r.begin, r.words() * kWordSize, reinterpret_cast<uint64_t>(r.begin)};
}

// Whether each buffer the device must hold fits in one of its allocations.
// When not (or when there is nothing to offload), the CPU marks it all.
bool GpuMarker::fits_on_device(MarkReport& report) const {
  uint64_t largest = condensed_graph() ? report.offloaded_bytes
                                       : std::max(offloaded(dense_).bytes, offloaded(sparse_).bytes);
  if (largest <= session_.device().max_alloc_bytes && report.offloaded_bytes != 0) return true;
  report.too_large = report.offloaded_bytes != 0;
  return false;
}

// Step 2, "Copy to GPU" (L451): the graph, or the heap's two regions, and
// the roots as the first in-queue. A shared heap is already there, and its
// roots are written in place: nothing is transferred.
void GpuMarker::copy_to_device() {
  cl_int err = CL_SUCCESS;
  if (condensed_graph()) {
    dense_buffer_ = clCreateBuffer(session_.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   graph_.size() * sizeof(uint32_t), graph_.data(), &err);
    check(err, "clCreateBuffer(graph)");
    sparse_buffer_ = dense_buffer_;
    set_heap_args(dense_buffer_, sparse_buffer_, dense_, sparse_);
  } else if (options_.shared_heap) {
    set_heap_args(shared_dense_.buffer, shared_sparse_.buffer, shared_dense_.covers, shared_sparse_.covers);
  } else {
    // The heap itself, or the graph at its positions: zero-copy where the
    // device shares host memory, otherwise the driver copies the regions
    // over (and back, below).
    OffloadedRegion d = offloaded(dense_), s = offloaded(sparse_);
    dense_buffer_ = host_buffer(session_.context(), d.host, d.bytes, placeholder_);
    sparse_buffer_ = host_buffer(session_.context(), s.host, s.bytes, placeholder_);
    set_heap_args(dense_buffer_, sparse_buffer_, d.base, s.base, sparse_.words());
  }
  write_roots(root_entries_, state_host_);
}

// --gpu-heap=shared: each region's buffer is kept while it covers what is in
// use; past that, a new one covers twice what is in use (at least 64 MiB),
// within the reservation and the device's largest buffer (fits_on_device
// has checked that what is in use fits).
void GpuMarker::keep_shared_buffers(const MarkableHeap& heap) {
  Region dense_limit, sparse_limit;
  heap.reserved_regions(&dense_limit, &sparse_limit);
  uint64_t max_words = session_.device().max_alloc_bytes / kWordSize;
  auto keep = [&](SharedBuffer& b, const Region& used, const Region& limit) {
    if (b.buffer && (used.words() == 0 || (b.covers.begin == used.begin && used.end <= b.covers.end))) return;
    if (b.buffer) clReleaseMemObject(b.buffer);
    b.covers = {};
    if (used.words()) {
      uint64_t words = std::max<uint64_t>(2 * used.words(), (uint64_t{64} << 20) / kWordSize);
      words = std::min({words, static_cast<uint64_t>(limit.end - used.begin), max_words});
      b.covers = {used.begin, used.begin + std::max(words, used.words())};
    }
    b.buffer = host_buffer(session_.context(), b.covers, placeholder_);
    ++shared_buffers_made_;
  };
  keep(shared_dense_, dense_, dense_limit);
  keep(shared_sparse_, sparse_, sparse_limit);
}

// Step 3, "GPU Mark Algorithm" (L455-456; Algorithm 1, L739-904): the
// levels, until the queue is empty or left to the CPU as the tail.
std::vector<uint64_t> GpuMarker::mark_on_device(MarkReport& report) {
  std::vector<uint64_t> tail;
  if (one_queue_) {
    mark_with_one_queue(report, tail);
  } else {
    iterate(report, tail);
  }
  return tail;
}

// Step 4, "Copy back" (L463; its cost, section 4.5, L722-732): the graph's
// marks, or the device's stores to the heap, back in host memory (for a
// heap the device shares, mapping what is in use is the synchronisation
// OpenCL asks for).
void GpuMarker::copy_back(const MarkReport& report) {
  if (condensed_graph()) {
    check(clEnqueueReadBuffer(session_.queue(), dense_buffer_, CL_TRUE, 0, report.offloaded_bytes,
                              graph_.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer(graph)");
    clReleaseMemObject(dense_buffer_);
  } else if (options_.shared_heap) {
    if (dense_.words()) sync_to_host(session_.queue(), shared_dense_.buffer, dense_.words() * kWordSize);
    if (sparse_.words()) sync_to_host(session_.queue(), shared_sparse_.buffer, sparse_.words() * kWordSize);
    check(clFinish(session_.queue()), "clFinish");
  } else {
    // An empty region's buffer is the one-word placeholder.
    sync_to_host(session_.queue(), dense_buffer_, std::max<uint64_t>(offloaded(dense_).bytes, kWordSize));
    sync_to_host(session_.queue(), sparse_buffer_, std::max<uint64_t>(offloaded(sparse_).bytes, kWordSize));
    check(clFinish(session_.queue()), "clFinish");
    clReleaseMemObject(sparse_buffer_);
    clReleaseMemObject(dense_buffer_);
  }
  dense_buffer_ = sparse_buffer_ = nullptr;
}

// "Write markings back to heap" (Figure 4, L441-442; L493): the graph's
// marks go into the headers (direct: the kernel set them there), and the
// tail becomes the headers the CPU marks.
void GpuMarker::write_marks_back(const MarkableHeap& heap, const std::vector<uint64_t>& tail,
                                 observe::Recorder& events, MarkReport& report) {
  if (mirror_) {
    events.phase(0, kPhaseApplyMarks, [&] { mirror_->retire(heap); });
    for (uint64_t p : tail) report.gray.push_back(mirror_->word_at(p));
  } else if (condensed_graph()) {
    events.phase(0, kPhaseApplyMarks, [&] {
      // One linear walk of the graph: each marked node's back reference
      // gets its mark bit.
      for (size_t g = 0; g < graph_.size();) {
        const uint32_t* node = graph_.data() + g;
        if (node[0] & 1) *back_reference(node) |= Header::kMarkBit;
        g += node_granules(node[0] >> 1) * 4;
      }
      for (uint64_t n : tail) report.gray.push_back(back_reference(graph_.data() + n * 4));
    });
  } else {
    for (uint64_t v : tail)
      if (Value::from_bits(v).is_ref()) report.gray.push_back(Value::from_bits(v).as_ref());
  }
}

}  // namespace gc::gpu
