// The CPU marker of the mark-sweep space: its side (one phase on every GC
// thread) and the per-thread steps of marker.h that are not on the
// per-object path.
#include "gc/plan/marker.h"

#include <algorithm>

#include "gc/observe/common_counters.h"

namespace gc {

namespace {

constexpr observe::Counter kRootGroupsClaimed{"root groups claimed", observe::Unit::kGroups};

}  // namespace

// The CPU marker's side

CpuMarker::CpuMarker(const HeapOptions& options, parallel::WorkerPool& pool,
                     std::vector<parallel::WorkerStats>& totals, observe::Recorder& events)
    : serial_(options.gc_threads <= 1), pool_(pool), totals_(totals), events(events), overflow_(0) {
  if (!serial_)
    for (unsigned w = 0; w < pool.size(); ++w)
      deques_.push_back(
          std::make_unique<parallel::TaskDeque>(parallel::deque_capacity(options.gc_deque_tasks)));
}

CpuMarker::~CpuMarker() = default;

void CpuMarker::mark_from_roots(std::span<const RootGroup> roots) {
  events.count(0, observe::kRootGroups, roots.size());
  run(roots, {});
}

uint64_t CpuMarker::mark_from_gray(std::span<Word* const> grey) { return run({}, grey); }

uint64_t CpuMarker::run(std::span<const RootGroup> roots, std::span<Word* const> grey) {
  MarkPhaseWork work{{roots}, grey};
  if (serial_) {
    Marker<false> marker(*this, 0);
    marker.run(work);
    totals_[0].add(marker.stats());
    return marker.objects_marked();
  }
  unsigned threads = pool_.size();
  std::vector<Marker<true>> markers;
  markers.reserve(threads);
  for (unsigned w = 0; w < threads; ++w) markers.emplace_back(*this, w);
  // An open phase: a short mark does not wait for a GC thread to wake.
  parallel::trace_open(pool_, termination_, [&](unsigned worker) { markers[worker].run(work); });
  uint64_t marked = 0;
  for (unsigned w = 0; w < threads; ++w) {
    totals_[w].add(markers[w].stats());
    marked += markers[w].objects_marked();
  }
  return marked;
}

// The serial marker

void Marker<false>::run(MarkPhaseWork& work) {
  recording_ = observe::Recording::active();
  c_.events.phase(id_, "mark", [&] {
    if (recording_) [[unlikely]]
      mark_roots<true>(work);
    else
      mark_roots<false>(work);
    claim_grey(work, [this](parallel::Task t) { c_.serial_stack_.push_back(t); });
    if (recording_) [[unlikely]]
      trace<true>();
    else
      trace<false>();
  });
  report();
}

template <bool kRecord>
void Marker<false>::mark_roots(MarkPhaseWork& work) {
  for (const RootGroup& g : work.roots.groups) {
    stats_.root_groups_claimed++;
    for (size_t k = 0; k < g.count; ++k) mark_slot<kRecord>(g.slots + k);
  }
}

// Depth first from the stack until it is empty; large arrays are scanned
// whole, since no other thread could take a chunk.
template <bool kRecord>
void Marker<false>::trace() {
  std::vector<parallel::Task>& stack = c_.serial_stack_;
  while (!stack.empty()) {
    Word* h = stack.back().object;
    stack.pop_back();
    stats_.tasks_processed++;
    if constexpr (kRecord) recording_->scan(id_, h);
    uint64_t n = Header::nrefs(*h);
    Value* lo = reinterpret_cast<Value*>(h - n);
    if (n <= parallel::kPrefetchSlots) {
      for (Value* slot = lo; slot < reinterpret_cast<Value*>(h); ++slot) {
        uint64_t bits = slot->bits;
        if ((bits & Value::kTagMask) == Value::kRefTag)
          __builtin_prefetch(reinterpret_cast<const void*>(bits & ~Value::kTagMask), 1);
      }
    }
    for (Value* slot = lo; slot < reinterpret_cast<Value*>(h); ++slot) mark_slot<kRecord>(slot);
  }
}

// Once per phase (the Recorder's rule).
void Marker<false>::report() const {
  observe::Recorder& events = c_.events;
  if (!events.enabled()) return;
  events.count(id_, observe::kObjectsMarked, objects_marked_);
  events.count(id_, kRootGroupsClaimed, stats_.root_groups_claimed);
  events.count(id_, parallel::kTasks, stats_.tasks_processed);
}

// One thread of the parallel marker

void Marker<true>::run(MarkPhaseWork& work) {
  begin_trace();
  objects_marked_ = 0;
  c_.events.phase(id(), "mark", [&] {
    claim_roots(work.roots);
    claim_grey(work, [this](parallel::Task t) { push(t); });
    trace();
  });
  report();
}

// Once per phase, on this thread (the Recorder's rule).
void Marker<true>::report() const {
  observe::Recorder& events = c_.events;
  if (!events.enabled()) return;
  events.count(id(), observe::kObjectsMarked, objects_marked_);
  events.count(id(), kRootGroupsClaimed, stats_.root_groups_claimed);
  report_work_sharing(events);
}

}  // namespace gc
