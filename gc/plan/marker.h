// One GC thread's part of the CPU marker's mark (CpuMarker::run,
// cpu_marker.h and marker.cpp). Its steps, in order:
//
//   claim_roots  claim root groups until none is left (Flood et al. 2001,
//                section 3.1: static overpartitioning)
//   take_grey    claim slices of the grey objects handed over by another
//                marker (CpuMarker::mark_from_gray)
//   trace        the shared parallel tracer's loop (gc/parallel/tracer.h),
//                exactly as pSemispaces traces; this marker is its mark
//                policy:
//     trace_slot mark the target in its header; the thread whose mark set
//                the bit defers the object if it has reference slots
//
// Marker<false> is the serial marker (--gc-threads=0 or 1): a mark stack
// and plain header stores. Marker<true> shares work through the tracer and
// marks as pMarkcompact does, with a relaxed load and store: "marking is
// idempotent and therefore requires no synchronization" (Flood et al.
// 2001, L194). Two threads racing on one object both mark and scan it, a
// rare cost next to a fetch-or's locked instruction on every object.
//
// Marking is mark-on-push: a task is always a grey object (tracer.h), and
// an object enters the work lists once (twice at most, after such a race).
#pragma once

#include <atomic>
#include <span>
#include <vector>

#include "gc/parallel/task.h"
#include "gc/parallel/tracer.h"
#include "gc/parallel/worker_stats.h"
#include "gc/plan/cpu_marker.h"

namespace gc {

// What every GC thread shares in one mark phase.
struct MarkPhaseWork {
  parallel::RootClaim roots;
  std::span<Word* const> grey;
  std::atomic<size_t> next_grey{0};
};

// Grey objects are claimed this many at a time: enough that the claim
// counter is not contended, few enough to spread a small frontier.
constexpr size_t kGreySlice = 64;

// Claims slices of work.grey until none is left; each grey object with
// slots goes to `take`.
template <class Take>
void claim_grey(MarkPhaseWork& work, Take&& take) {
  for (;;) {
    size_t i = work.next_grey.fetch_add(kGreySlice, std::memory_order_relaxed);
    if (i >= work.grey.size()) return;
    size_t end = std::min(work.grey.size(), i + kGreySlice);
    for (; i < end; ++i)
      if (uint64_t n = Header::nrefs(std::atomic_ref<Word>(*work.grey[i]).load(std::memory_order_relaxed)))
        take(parallel::Task::whole(work.grey[i], n));
  }
}

template <bool kParallel>
class Marker;

template <>
class Marker<false> {
 public:
  Marker(CpuMarker& c, unsigned id) : c_(c), id_(id) {}

  // The whole phase on this thread.
  void run(MarkPhaseWork& work);

  const parallel::WorkerStats& stats() const { return stats_; }
  uint64_t objects_marked() const { return objects_marked_; }

 private:
  // Compiled twice: recording (--gc-animate) or not, so that the loop
  // that runs when nothing is recorded has no test for it.
  template <bool kRecord>
  void mark_roots(MarkPhaseWork& work);
  template <bool kRecord>
  void trace();
  void report() const;

  template <bool kRecord>
  void mark_slot(const Value* slot) {
    uint64_t bits = slot->bits;
    if ((bits & Value::kTagMask) != Value::kRefTag) return;
    Word* h = reinterpret_cast<Word*>(bits & ~Value::kTagMask);
    Word before = *h;
    if (Header::is_marked(before)) return;
    *h = before | Header::kMarkBit;
    objects_marked_++;
    if constexpr (kRecord) recording_->grey(id_, h);
    // Objects with no reference slots (strings, number arrays) are black
    // as soon as they are marked.
    if (uint64_t n = Header::nrefs(before)) c_.serial_stack_.push_back(parallel::Task::whole(h, n));
  }

  CpuMarker& c_;
  unsigned id_;
  uint64_t objects_marked_ = 0;
  parallel::WorkerStats stats_;
  observe::Recording* recording_ = nullptr;  // the collection's, if it is recorded (--gc-animate)
};

template <>
class Marker<true> : public parallel::Tracer<Marker<true>> {
 public:
  Marker(CpuMarker& c, unsigned id)
      : Tracer(parallel::TraceShared{c.deques_, c.overflow_, c.termination_}, id), c_(c) {}

  // The whole phase on this thread.
  void run(MarkPhaseWork& work);

  uint64_t objects_marked() const { return objects_marked_; }

 private:
  friend class parallel::Tracer<Marker<true>>;

  // The tracer's hook for a slot: an unmarked target is marked with a
  // plain store (idempotent, above) and deferred if it has slots.
  [[gnu::always_inline]] void trace_slot(const Value* slot) {
    uint64_t bits = slot->bits;
    if ((bits & Value::kTagMask) != Value::kRefTag) return;
    Word* h = reinterpret_cast<Word*>(bits & ~Value::kTagMask);
    std::atomic_ref<Word> header(*h);
    Word before = header.load(std::memory_order_relaxed);
    if (Header::is_marked(before)) return;
    header.store(before | Header::kMarkBit, std::memory_order_relaxed);
    objects_marked_++;
    if (recording_) [[unlikely]]
      recording_->grey(id(), h);
    if (uint64_t n = Header::nrefs(before)) defer(parallel::Task::whole(h, n));
  }

  void report() const;

  CpuMarker& c_;
  uint64_t objects_marked_ = 0;
};

}  // namespace gc
