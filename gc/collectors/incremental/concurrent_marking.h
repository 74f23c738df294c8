// The incremental collector's concurrent marking (--inc-mode=concurrent):
// rounds of marking on the GC threads while the program runs, each from a
// list of grey objects, with the shared parallel tracer (Flood et al.
// 2001; gc/parallel/tracer.h) and a mark policy of its own.
//
// A round runs on a coordinator thread, kept while the collector lives: it waits for a round, runs it on the
// heap's worker pool as that pool's worker 0 (the pool's other threads are the other workers), and says the
// round is over. The program's thread starts a round, looks without waiting whether it is over, and reads its
// figures once it is.
//
// What the program does meanwhile, and why the markers see it race-free
// (the C++ memory model, not x86's):
//   - every store into an object's reference slot goes through the
//     snapshot barrier, which stores with release; the markers load slots
//     with acquire, so an object they find through a slot is formatted;
//   - the program never stores into slots of an object a marker may scan
//     other than through the barrier: fresh objects (initialised without
//     it) are allocated marked, so no marker scans them, and fiber stacks
//     (written without it) are marked and scanned at the cycle's start;
//   - mark bits are set by a fetch-or on the header, by the markers and by
//     the barrier, and the program's other uses of a header (its class,
//     its size, the identity hash's state) are atomic too (vm/object.h,
//     MarkSweepHeap::identity_hash).
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "gc/observe/recorder.h"
#include "gc/parallel/overflow_set.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/termination.h"
#include "gc/parallel/tracer.h"
#include "gc/parallel/worker_pool.h"
#include "gc/plan/marker.h"

namespace gc {

// One GC thread's part of a round: the tracer's loop over the round's grey
// objects, marking by fetch-or (the program marks too, in its barrier, so
// a plain store could lose its bit or the identity hash's).
class ConcurrentMarker : public parallel::Tracer<ConcurrentMarker> {
 public:
  ConcurrentMarker(const parallel::TraceShared& shared, unsigned id) : Tracer(shared, id) {}

  void run(MarkPhaseWork& work);
  // On the program's thread once the round is over (the Recorder's rule:
  // a worker's counts, once per collection).
  void report(observe::Recorder& events) const;
  uint64_t objects_marked() const { return objects_marked_; }

  // Prefetching reads a slot without the acquire a slot the program stores
  // into needs.
  static constexpr bool kPrefetchTargets = false;
  // The program's mark assist asks for work (ConcurrentMarking::steal).
  static constexpr bool kHelpedFromOutside = true;

 private:
  friend class parallel::Tracer<ConcurrentMarker>;

  [[gnu::always_inline]] void trace_slot(const Value* slot) {
    uint64_t bits =
        std::atomic_ref<uint64_t>(const_cast<uint64_t&>(slot->bits)).load(std::memory_order_acquire);
    if ((bits & Value::kTagMask) != Value::kRefTag) return;
    Word* h = reinterpret_cast<Word*>(bits & ~Value::kTagMask);
    std::atomic_ref<Word> header(*h);
    if (Header::is_marked(header.load(std::memory_order_relaxed))) return;
    Word before = header.fetch_or(Header::kMarkBit, std::memory_order_relaxed);
    if (Header::is_marked(before)) return;
    objects_marked_++;
    if (recording_) [[unlikely]]
      recording_->grey(id(), h);
    if (uint64_t n = Header::nrefs(before)) defer(parallel::Task::whole(h, n));
  }

  uint64_t objects_marked_ = 0;
};

class ConcurrentMarking {
 public:
  ConcurrentMarking(parallel::WorkerPool& pool, uint64_t deque_tasks);
  // Waits for a round in progress, then stops the coordinator.
  ~ConcurrentMarking();
  ConcurrentMarking(const ConcurrentMarking&) = delete;
  ConcurrentMarking& operator=(const ConcurrentMarking&) = delete;

  // Asks for a round marking everything reachable from `grey` (marked
  // objects whose slots are not yet scanned) and returns at once: an
  // atomic add, no lock the coordinator could be holding. No round may be
  // in progress. The round begins once the coordinator is woken (wake, or
  // at most the sleep's bound later).
  void start(std::vector<Word*> grey);
  // Wakes the coordinator for the round asked for, if not yet: after the
  // pause that asked, for on a machine without a free core the kernel may
  // hand the woken thread the program's core there and then.
  void wake();
  // Whether a round was started and its figures not yet taken.
  bool in_progress() const { return in_progress_; }
  // Whether the round in progress is over (then everything its markers
  // did is visible to the caller). Never waits.
  bool over() const { return rounds_done_.load(std::memory_order_acquire) == rounds_started_; }
  // Waits until the round in progress is over.
  void wait();
  // Mark assist, on the program's thread while a round is in progress: a
  // task from the GC threads' deques, taken as any thief takes one
  // (parallel::steal_from_others, a thief that owns no deque). Never
  // waits: false when every deque was empty or lost its races. The markers' termination needs
  // nothing from the program: a task it takes is no longer in a deque,
  // and what it finds there it marks itself or keeps for the next round.
  bool steal(parallel::Task& out);
  // While asking, the markers move their private tasks to their deques,
  // where steal finds them.
  void ask_for_work(bool asking) { termination_.ask_from_outside(asking); }

  struct RoundFigures {
    uint64_t objects_marked = 0;
    int64_t wall_ns = 0;
  };
  // Once over(): the round's figures, each marker's counts reported to
  // events on the worker that made them; no round is in progress after.
  RoundFigures finish(observe::Recorder& events);

 private:
  void coordinate();
  void run_round();

  parallel::WorkerPool& pool_;
  std::vector<std::unique_ptr<parallel::TaskDeque>> deques_;
  parallel::OverflowSet overflow_;
  parallel::Termination termination_;
  std::vector<ConcurrentMarker> markers_;
  // Written by the program's thread before the round's request, read by
  // the coordinator after it.
  std::vector<Word*> grey_;
  // Written by the coordinator before the round is said to be over.
  RoundFigures figures_;
  // The program's thread's own.
  bool in_progress_ = false;
  bool wake_pending_ = false;
  uint32_t rounds_started_ = 0;
  // The program's steals for its assists (steal): its xorshift state and
  // its counts, apart from the markers'.
  uint64_t assist_seed_ = 0x2545'F491'4F6C'DD1Dull;
  parallel::WorkerStats assist_stats_;

  // Futex words (gc/parallel/futex.h): the rounds asked for (and one more
  // to stop), and the rounds over.
  std::atomic<uint32_t> requests_{0};
  std::atomic<uint32_t> rounds_done_{0};
  std::atomic<bool> stopping_{false};
  std::thread coordinator_;
};

}  // namespace gc
