// The CPU marker: one GC thread's part of marksweep's mark phase
// (CpuMarker::run, mark.cpp). Its steps, in order:
//
//   mark_roots   claim root groups until none is left (Flood et al. 2001,
//                section 3.1: static overpartitioning)
//   take_grey    claim slices of the grey objects handed over by another
//                marker (CpuMarker::mark_from_gray)
//   trace        pop local work; when there is none, refill from the
//                overflow set, else steal, else offer termination (sections
//                3.2-3.4)
//     process    scan one object, or one chunk of a large array
//     mark_slot  mark the target in its header; the thread whose mark set
//                the bit pushes the object if it has reference slots
//
// kParallel false is the serial marker (--gc-threads=0 or 1): a mark stack
// and plain header stores, no atomics. kParallel true marks with one
// fetch-or per object (a plain store would let two threads both scan an
// object, which is harmless but doubles the work on shared structures) and
// shares work through the deques.
//
// Marking is mark-on-push: an object is marked when a reference to it is
// found, so a task is always a marked object whose slots are unscanned (a
// grey object), and an object enters the work lists at most once.
#pragma once

#include <atomic>
#include <chrono>
#include <span>
#include <vector>

#include "gc/collectors/marksweep/cpu_marker.h"
#include "gc/parallel/task.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/worker_stats.h"

namespace gc {

// What every GC thread shares in one mark phase.
struct MarkPhaseWork {
  std::span<const RootGroup> roots;
  std::span<Word* const> grey;
  std::atomic<size_t> next_root_group{0};  // the claim counter of static overpartitioning
  std::atomic<size_t> next_grey{0};
};

template <bool kParallel>
class Marker {
 public:
  // Large arrays are scanned as tasks of at most this many slots, as in
  // pSemispaces (Flood et al. 2001, footnote 2): 2048 slots are 16 KB, so
  // only large-object-space arrays are split.
  static constexpr uint32_t kChunkSlots = 2048;
  // Objects with at most this many slots have their targets' headers
  // prefetched before they are marked, so the misses overlap.
  static constexpr uint64_t kPrefetchSlots = 8;
  // Grey objects are claimed this many at a time: enough that the claim
  // counter is not contended, few enough to spread a small frontier.
  static constexpr size_t kGreySlice = 64;

  Marker(CpuMarker& c, unsigned id) : c_(c), id_(id) {}

  // The whole phase on this thread.
  void run(MarkPhaseWork& work) {
    stats_ = parallel::WorkerStats{};
    objects_marked_ = 0;
    held_ = parallel::Task{};
    steal_seed_ = 0x9E37'79B9'7F4A'7C15ull * (id_ + 1);
    auto start = std::chrono::steady_clock::now();
    c_.events.phase_start(id_, "mark");
    mark_roots(work);
    take_grey(work);
    trace();
    c_.events.phase_end(id_, "mark");
    stats_.busy_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
            .count());
    report();
  }

  const parallel::WorkerStats& stats() const { return stats_; }
  uint64_t objects_marked() const { return objects_marked_; }

 private:
  // --- the steps
  void mark_roots(MarkPhaseWork& work) {
    for (;;) {
      size_t i = work.next_root_group.fetch_add(1, std::memory_order_relaxed);
      if (i >= work.roots.size()) break;
      stats_.root_groups_claimed++;
      const RootGroup& g = work.roots[i];
      for (size_t k = 0; k < g.count; ++k) mark_slot(g.slots + k);
    }
  }

  void take_grey(MarkPhaseWork& work) {
    for (;;) {
      size_t i = work.next_grey.fetch_add(kGreySlice, std::memory_order_relaxed);
      if (i >= work.grey.size()) break;
      size_t end = std::min(work.grey.size(), i + kGreySlice);
      for (; i < end; ++i)
        if (Header::nrefs(load_header(work.grey[i]))) push(parallel::Task::whole(work.grey[i]));
    }
  }

  void trace();
  void process(parallel::Task t);
  void scan_large(Word* h, uint64_t begin, uint64_t end);
  bool refill_from_overflow();
  bool steal(parallel::Task& out);
  bool work_visible() const;
  void report() const;

  // --- the per-object path
  static Word load_header(const Word* h) {
    if constexpr (kParallel) {
      return std::atomic_ref<const Word>(*h).load(std::memory_order_relaxed);
    } else {
      return *h;
    }
  }

  void scan_slots(Word* h, uint64_t begin, uint64_t end) {
    Value* lo = reinterpret_cast<Value*>(h - end);
    Value* hi = reinterpret_cast<Value*>(h - begin);
    if (end - begin <= kPrefetchSlots) {
      for (Value* slot = lo; slot < hi; ++slot) {
        uint64_t bits = slot->bits;
        if ((bits & Value::kTagMask) == Value::kRefTag)
          __builtin_prefetch(reinterpret_cast<const void*>(bits & ~Value::kTagMask), 1);
      }
    }
    for (Value* slot = lo; slot < hi; ++slot) mark_slot(slot);
  }

  void mark_slot(const Value* slot) {
    uint64_t bits = slot->bits;
    if ((bits & Value::kTagMask) != Value::kRefTag) return;
    Word* h = reinterpret_cast<Word*>(bits & ~Value::kTagMask);
    Word before;
    if constexpr (kParallel) {
      std::atomic_ref<Word> header(*h);
      before = header.load(std::memory_order_relaxed);
      if (Header::is_marked(before)) return;
      before = header.fetch_or(Header::kMarkBit, std::memory_order_relaxed);
      if (Header::is_marked(before)) return;
    } else {
      before = *h;
      if (Header::is_marked(before)) return;
      *h = before | Header::kMarkBit;
    }
    objects_marked_++;
    // Objects with no reference slots (strings, number arrays) are black
    // as soon as they are marked.
    if (Header::nrefs(before)) defer(parallel::Task::whole(h));
  }

  // The task found last is held in hand and processed next; the one it
  // displaces is pushed where thieves can take it (psemispaces.h, defer).
  void defer(parallel::Task t) {
    if constexpr (kParallel) {
      if (!held_.empty()) push(held_);
      held_ = t;
    } else {
      c_.serial_stack_.push_back(t);
    }
  }

  void push(parallel::Task t) {
    if constexpr (kParallel) {
      if (!deque_().push(t)) [[unlikely]]
        overflow_and_push(t);
    } else {
      c_.serial_stack_.push_back(t);
    }
  }

  parallel::TaskDeque& deque_() const { return *c_.deques_[id_]; }
  [[gnu::noinline]] void overflow_and_push(parallel::Task t);

  CpuMarker& c_;
  unsigned id_;
  parallel::Task held_;
  uint64_t steal_seed_ = 0;
  uint64_t objects_marked_ = 0;
  parallel::WorkerStats stats_;
};

}  // namespace gc
