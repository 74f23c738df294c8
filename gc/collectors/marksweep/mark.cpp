// marksweep's CPU mark phase: the CPU marker's side (one phase on every GC
// thread) and the per-thread steps of marker.h that are not on the
// per-object path.
#include <algorithm>
#include <bit>

#include "gc/collectors/marksweep/marker.h"
#include "gc/parallel/overflow_set.h"
#include "gc/parallel/steal.h"
#include "gc/parallel/termination.h"

namespace gc {

namespace {

// Work-stealing deque capacity, as pSemispaces (semispace.cpp, kDequeTasks).
constexpr uint64_t kDequeTasks = 1u << 15;

uint64_t deque_tasks(const HeapOptions& o) {
  if (o.gc_deque_tasks == 0) return kDequeTasks;
  return std::max<uint64_t>(std::bit_ceil(o.gc_deque_tasks), 4);
}

}  // namespace

// ---------------------------------------------------------------------------
// The CPU marker's side

CpuMarker::CpuMarker(const HeapOptions& options, parallel::WorkerPool& pool,
                     std::vector<parallel::WorkerStats>& totals, observe::Recorder& events)
    : serial_(options.gc_threads <= 1), pool_(pool), totals_(totals), events(events), overflow_(0) {
  if (!serial_)
    for (unsigned w = 0; w < pool.size(); ++w)
      deques_.push_back(std::make_unique<parallel::TaskDeque>(deque_tasks(options)));
  for (const char* c : {"objects marked", "tasks", "overflow tasks", "chunk tasks"})
    events.describe_counter(c, "objects");
  events.describe_counter("termination idle ns", "ns");
  events.describe_counter("root groups", "groups");
}

CpuMarker::~CpuMarker() = default;

void CpuMarker::mark_from_roots(std::span<const RootGroup> roots) {
  events.count(0, "root groups", roots.size());
  run(roots, {});
}

void CpuMarker::mark_from_gray(std::span<Word* const> grey) { run({}, grey); }

void CpuMarker::run(std::span<const RootGroup> roots, std::span<Word* const> grey) {
  MarkPhaseWork work{roots, grey};
  if (serial_) {
    Marker<false> marker(*this, 0);
    marker.run(work);
    totals_[0].add(marker.stats());
    return;
  }
  unsigned threads = pool_.size();
  std::vector<Marker<true>> markers;
  markers.reserve(threads);
  for (unsigned w = 0; w < threads; ++w) markers.emplace_back(*this, w);
  termination_.reset(threads);
  auto job = [&](unsigned worker) { markers[worker].run(work); };
  pool_.run(job);
  for (unsigned w = 0; w < threads; ++w) totals_[w].add(markers[w].stats());
}

// ---------------------------------------------------------------------------
// One GC thread

// Sections 3.2-3.4 of Flood et al. 2001, as in pSemispaces: local work
// first, then the overflow set (L137), then stealing, then the termination
// protocol, which returns false when work has appeared somewhere. The
// serial marker has only its stack.
template <bool kParallel>
void Marker<kParallel>::trace() {
  parallel::Task t;
  if constexpr (!kParallel) {
    std::vector<parallel::Task>& stack = c_.serial_stack_;
    while (!stack.empty()) {
      t = stack.back();
      stack.pop_back();
      stats_.tasks_processed++;
      scan_slots(t.object, 0, Header::nrefs(*t.object));
    }
  } else {
    for (;;) {
      for (;;) {
        if (!held_.empty()) {
          t = held_;
          held_ = parallel::Task{};
        } else if (!deque_().pop(t)) {
          break;
        }
        process(t);
      }
      if (refill_from_overflow()) continue;
      if (steal(t)) {
        process(t);
        continue;
      }
      if (c_.termination_.offer([this] { return work_visible(); }, stats_.idle_ns)) return;
    }
  }
}

template <bool kParallel>
void Marker<kParallel>::process(parallel::Task t) {
  stats_.tasks_processed++;
  Word* h = t.object;
  if (t.is_range()) {
    scan_large(h, t.begin, t.end);
    return;
  }
  uint64_t n = Header::nrefs(load_header(h));
  if (n > kChunkSlots) [[unlikely]] {
    scan_large(h, 0, n);
  } else {
    scan_slots(h, 0, n);
  }
}

// A large array's slots [begin, end): the upper half becomes a stealable
// task until one chunk is left, which this thread scans.
template <bool kParallel>
void Marker<kParallel>::scan_large(Word* h, uint64_t begin, uint64_t end) {
  while (end - begin > kChunkSlots) {
    uint64_t half = ((end - begin) / 2 + kChunkSlots - 1) / kChunkSlots * kChunkSlots;
    uint64_t mid = begin + half;
    push(parallel::Task::slots(h, static_cast<uint32_t>(mid), static_cast<uint32_t>(end)));
    stats_.chunk_tasks++;
    end = mid;
  }
  scan_slots(h, begin, end);
}

// Section 3.4 (L144): refill at most the top half of the empty deque.
template <bool kParallel>
bool Marker<kParallel>::refill_from_overflow() {
  uint64_t n = c_.overflow_.refill(deque_(), deque_().capacity() / 2);
  if (n == 0) return false;
  stats_.refills++;
  return true;
}

// Section 3.4 (L139): a full deque's bottom half goes to the overflow set.
template <bool kParallel>
void Marker<kParallel>::overflow_and_push(parallel::Task t) {
  stats_.overflow_events++;
  stats_.overflow_tasks += c_.overflow_.take_bottom_half(deque_());
  bool pushed = deque_().push(t);
  (void)pushed;  // the deque is at most half full now
}

// Section 3.3: try the other threads' deques from a random start.
template <bool kParallel>
bool Marker<kParallel>::steal(parallel::Task& out) {
  return parallel::steal_from_others(c_.deques_, id_, steal_seed_, stats_, out);
}

template <bool kParallel>
bool Marker<kParallel>::work_visible() const {
  if (!c_.overflow_.looks_empty()) return true;
  for (const auto& d : c_.deques_)
    if (!d->looks_empty()) return true;
  return false;
}

// Once per phase, on this thread (the Recorder's rule).
template <bool kParallel>
void Marker<kParallel>::report() const {
  observe::Recorder& events = c_.events;
  if (!events.enabled()) return;
  events.count(id_, "objects marked", objects_marked_);
  events.count(id_, "root groups claimed", stats_.root_groups_claimed);
  events.count(id_, "tasks", stats_.tasks_processed);
  if constexpr (kParallel) {
    events.count(id_, "steal attempts", stats_.steal_attempts);
    events.count(id_, "steals", stats_.steals);
    events.count(id_, "overflow events", stats_.overflow_events);
    events.count(id_, "overflow tasks", stats_.overflow_tasks);
    events.count(id_, "overflow refills", stats_.refills);
    events.count(id_, "chunk tasks", stats_.chunk_tasks);
    events.count(id_, "termination idle ns", stats_.idle_ns);
  }
}

template class Marker<false>;
template class Marker<true>;

}  // namespace gc
