// The parallel tracer (Flood, Detlefs, Shavit and Zhang 2001, sections
// 3.1-3.4): one GC thread's part of a traversal of the object graph, shared
// by every parallel collector. Its steps, in order:
//
//   claim_roots  claim root groups until none is left (section 3.1:
//                static overpartitioning)
//   trace        take local work (the private stack, then the deque); when
//                there is none, refill from the overflow set, else steal,
//                else offer termination (sections 3.2-3.4)
//     process    scan one object, or one chunk of a large array
//
// A collector supplies only what it does to a slot and to an object, as the
// policy class that derives from Tracer<Policy> (so the per-object path is
// inlined into the loop, with no call through a pointer):
//
//   void trace_slot(Value* slot)           required: grey the slot's target
//                                          (copy-and-forward, or mark) and
//                                          defer() it if it has slots
//   void scan_object(Word* h, uint64_t n)  optional: scan a grey object of n
//                                          slots (the default scans them all
//                                          with scan_slots)
//
// A policy whose objects belong to chunk owners (ownership.h) sends the work
// on another thread's chunk there with send(owner, task); the loop takes
// its own inbox before it looks for work elsewhere and delivers what it
// has not sent yet before it steals or offers termination.
//
// The tri-colour invariant. White objects are unreached (not marked, not
// forwarded); grey ones are reached and their slots not yet all scanned;
// black ones are reached and scanned. A policy greys an object before it
// defers it, and every grey object is in exactly one place the loop takes
// work from (this thread's private stack or hand, a deque, the overflow
// set). So no black object refers to a white one, and when termination is
// declared (no thread holds work and every list is empty) there is no grey
// object: every reachable object is black. Collectors refer to this as "the
// tri-colour invariant (tracer.h)".
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gc/constants.h"
#include "gc/layout.h"
#include "gc/observe/recorder.h"
#include "gc/observe/recording.h"
#include "gc/parallel/overflow_set.h"
#include "gc/parallel/ownership.h"
#include "gc/parallel/private_tasks.h"
#include "gc/parallel/steal.h"
#include "gc/parallel/task.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/termination.h"
#include "gc/parallel/worker_pool.h"
#include "gc/parallel/worker_stats.h"
#include "gc/roots.h"

namespace gc::parallel {

// The work-sharing counters every tracer reports.
inline constexpr observe::Counter kTasks{"tasks", observe::Unit::kTasks};
inline constexpr observe::Counter kSteals{"steals", observe::Unit::kTasks};
inline constexpr observe::Counter kOverflowTasks{"overflow tasks", observe::Unit::kTasks};
inline constexpr observe::Counter kChunkTasks{"chunk tasks", observe::Unit::kTasks};
inline constexpr observe::Counter kTasksSent{"tasks sent", observe::Unit::kTasks};
inline constexpr observe::Counter kStealAttempts{"steal attempts", observe::Unit::kEvents};
inline constexpr observe::Counter kOverflowEvents{"overflow events", observe::Unit::kEvents};
inline constexpr observe::Counter kOverflowRefills{"overflow refills", observe::Unit::kEvents};
inline constexpr observe::Counter kTerminationIdleNs{"termination idle ns", observe::Unit::kNs};

// Large arrays are traced as tasks of at most this many slots (footnote 2,
// L119, suggests chunking; the paper did not implement it). 2048 slots are
// 16 KB, kLargeObjectBytes: the smallest large object is one chunk, so only
// large-object-space arrays are split, and a chunk is long enough that
// pushing it costs little next to scanning it.
constexpr uint32_t kChunkSlots = 2048;

// Objects with at most this many slots have their targets prefetched before
// they are traced: the targets' header misses overlap instead of following
// one another (depth-first order finds the first child in cache only when
// it was allocated next to its parent).
constexpr uint64_t kPrefetchSlots = 8;

// Each thread's deque holds 2^15 tasks (512 KB) unless --gc-deque says
// otherwise: "fixed-size work-stealing queues at startup" (section 3.4,
// L131-137), large enough that the overflow set is rare on the benchmarks
// (docs/collectors/semispace.md).
constexpr uint64_t kDefaultDequeTasks = uint64_t{1} << 15;

// A run of more slots than this is traced in blocks of this many, with a
// safe point between blocks (scan_long_run).
constexpr uint64_t kSafePointSlots = 256;

// Tasks sent to another thread's inbox go in batches of this many (one lock
// and two atomic adds a batch), or fewer when the sender runs out of work
// or sees a thread idle.
constexpr size_t kBatchTasks = 64;

// The deque capacity for a requested number of tasks (0: the default): a
// power of two, at least 4 so that half a deque is at least two tasks.
inline uint64_t deque_capacity(uint64_t requested) {
  if (requested == 0) return kDefaultDequeTasks;
  return std::max<uint64_t>(std::bit_ceil(requested), 4);
}

// The collector's work-sharing machinery, kept for every collection.
struct TraceShared {
  const std::vector<std::unique_ptr<TaskDeque>>& deques;
  OverflowSet& overflow;
  Termination& termination;
  Inbox* inboxes = nullptr;  // one per thread, for a policy that sends work
};

// One phase's root groups and their claim counter (section 3.1, L113: "We
// overpartition these roots into groups, and the GC threads compete
// dynamically to claim root groups"). The VM hands over groups of at most
// 256 slots (vm.cpp, kRootGroupSlots), many times more groups than threads.
struct RootClaim {
  std::span<const RootGroup> groups;
  std::atomic<size_t> next{0};
};

template <class Policy>
class Tracer {
 public:
  Tracer(const TraceShared& shared, unsigned id)
      : work_(shared),
        id_(id),
        threads_(static_cast<unsigned>(shared.deques.size())),
        deque_(*shared.deques[id]) {
    if (work_.inboxes) outboxes_.resize(threads_);
  }

  unsigned id() const { return id_; }
  const WorkerStats& stats() const { return stats_; }

  // A grey object found while tracing goes to the private stack in front of
  // the deque (private_tasks.h).
  [[gnu::always_inline]] void defer(Task t) {
    if (private_.full()) [[unlikely]]
      publish(PrivateTasks::kCapacity / 2);
    private_.push(t);
  }

  // Straight to the deque, where other threads can take it.
  void push(Task t) {
    if (!deque_.push(t)) [[unlikely]]
      overflow_and_push(t);
  }

  // To the thread that owns what the task works on, in the next batch.
  void send(unsigned owner, Task t) {
    std::vector<Task>& out = outboxes_[owner];
    out.push_back(t);
    stats_.tasks_sent++;
    unsent_++;
    if (out.size() == kBatchTasks) [[unlikely]]
      deliver(owner);
  }

 protected:
  // Before each phase on this thread: no work, fresh counters, and a steal
  // seed (nonzero) that differs from the other threads'.
  void begin_trace() {
    stats_ = WorkerStats{};
    private_.clear();
    for (auto& out : outboxes_) out.clear();
    unsent_ = 0;
    steal_seed_ = 0x9E37'79B9'7F4A'7C15ull * (id_ + 1);
    recording_ = observe::Recording::active();
  }

  void claim_roots(RootClaim& claim) {
    for (;;) {
      size_t i = claim.next.fetch_add(1, std::memory_order_relaxed);
      if (i >= claim.groups.size()) return;
      stats_.root_groups_claimed++;
      const RootGroup& g = claim.groups[i];
      for (size_t k = 0; k < g.count; ++k) policy().trace_slot(g.slots + k);
    }
  }

  void trace();

  // Whether scan_slots prefetches a small object's targets before tracing
  // them (a policy may declare its own): marking does little but read the
  // targets' headers, so their misses overlap; for copying the pass cost
  // more than it saved (docs/collectors/semispace.md, "The forest").
  static constexpr bool kPrefetchTargets = true;
  // Whether a thread outside the phase may ask for work
  // (Termination::ask_from_outside); off, the hot loop never looks.
  static constexpr bool kHelpedFromOutside = false;

  // Slots [begin, end) of the object whose header is h, their targets
  // prefetched first when they are few (kPrefetchTargets).
  [[gnu::always_inline]] void scan_slots(Word* h, uint64_t begin, uint64_t end) {
    Value* lo = reinterpret_cast<Value*>(h - end);
    Value* hi = reinterpret_cast<Value*>(h - begin);
    if constexpr (Policy::kPrefetchTargets) {
      if (end - begin <= kPrefetchSlots) {
        for (Value* slot = lo; slot < hi; ++slot) {
          uint64_t bits = slot->bits;
          if ((bits & Value::kTagMask) == Value::kRefTag)
            __builtin_prefetch(reinterpret_cast<const void*>(bits & ~Value::kTagMask), 1);
        }
      }
    }
    // Last field first: the other order is faster on some programs and far
    // slower on others (docs/collectors/semispace.md, "The forest").
    for (Value* slot = lo; slot < hi; ++slot) policy().trace_slot(slot);
  }

  // The policy's hooks for ownership (ownership.h), by default none:
  // safe_point() is called where this thread has no slot half traced
  // (before each task, and between blocks of a long run of slots while
  // long_runs_need_safe_points(); the whole objects of such a run are then
  // scanned with scan_slots).
  void safe_point() {}
  bool long_runs_need_safe_points() const { return false; }
  bool asked_to_share() const { return false; }

  // The policy's default for a whole object.
  [[gnu::always_inline]] void scan_object(Word* h, uint64_t n) { scan_slots(h, 0, n); }

  // Some thread that takes part has offered termination: it can only find
  // work that sits in a deque. Alone, nothing to load; else two relaxed
  // loads of a line written only when a thread joins, goes idle or comes
  // back.
  bool others_idle() const {
    if constexpr (Policy::kHelpedFromOutside)
      if (work_.termination.asked_from_outside()) [[unlikely]]
        return true;
    return threads_ > 1 && work_.termination.active() < work_.termination.joined();
  }

  // The work-sharing counters every parallel phase reports, once per phase
  // on this thread (the Recorder's rule).
  void report_work_sharing(observe::Recorder& events) const {
    events.count(id_, kTasks, stats_.tasks_processed);
    events.count(id_, kStealAttempts, stats_.steal_attempts);
    events.count(id_, kSteals, stats_.steals);
    events.count(id_, kOverflowEvents, stats_.overflow_events);
    events.count(id_, kOverflowTasks, stats_.overflow_tasks);
    events.count(id_, kOverflowRefills, stats_.refills);
    events.count(id_, kChunkTasks, stats_.chunk_tasks);
    if (work_.inboxes) events.count(id_, kTasksSent, stats_.tasks_sent);
    events.count(id_, kTerminationIdleNs, stats_.idle_ns);
  }

  WorkerStats stats_;  // this phase's
  // The collection's recording (--gc-animate), almost always none: the
  // policy reports each object it greys to it.
  observe::Recording* recording_ = nullptr;

 private:
  Policy& policy() { return static_cast<Policy&>(*this); }
  const Policy& policy() const { return static_cast<const Policy&>(*this); }

  [[gnu::always_inline]] void process(Task t) {
    policy().safe_point();
    stats_.tasks_processed++;
    if (recording_ && t.begin == 0) [[unlikely]]
      recording_->scan(id_, t.object);
    if (t.end - t.begin > kSafePointSlots && policy().long_runs_need_safe_points()) [[unlikely]] {
      scan_long_run(t.object, t.begin, t.end);
      return;
    }
    if (t.end - t.begin > kChunkSlots) [[unlikely]] {
      scan_large(t.object, t.begin, t.end);
    } else if (t.begin == 0) {
      policy().scan_object(t.object, t.end);
    } else {
      scan_slots(t.object, t.begin, t.end);
    }
  }

  // A large array's slots [begin, end): the upper half of the range becomes
  // a task (stealable, and split again by whoever takes it) until what is
  // left is one chunk, which this thread scans. The halves pushed first are
  // the biggest and sit nearest the top, where thieves take from.
  void scan_large(Word* h, uint64_t begin, uint64_t end) { scan_slots(h, begin, split_large(h, begin, end)); }

  // Pushes the upper halves of [begin, end) as tasks until one chunk is
  // left; returns its end.
  uint64_t split_large(Word* h, uint64_t begin, uint64_t end) {
    while (end - begin > kChunkSlots) {
      uint64_t half = ((end - begin) / 2 + kChunkSlots - 1) / kChunkSlots * kChunkSlots;
      uint64_t mid = begin + half;
      push(Task::slots(h, static_cast<uint32_t>(mid), static_cast<uint32_t>(end)));
      stats_.chunk_tasks++;
      end = mid;
    }
    return end;
  }

  // A long run of slots (a large array's chunk, a big object) traced in
  // blocks: between blocks the loop does what it does between tasks,
  // answers requests to share and, when a thread is idle, delivers what it
  // has for it, rather than after the whole run.
  [[gnu::noinline]] void scan_long_run(Word* h, uint64_t begin, uint64_t end) {
    end = split_large(h, begin, end);
    while (begin < end) {
      uint64_t block_end = std::min<uint64_t>(end, begin + kSafePointSlots);
      scan_slots(h, begin, block_end);
      begin = block_end;
      policy().safe_point();
      if (others_idle()) deliver_all();
    }
  }

  // Section 3.4 (L144): "filling no more than the top half of the queue
  // when retrieving work from the overflow set". The deque is empty here.
  bool refill_from_overflow() {
    if (work_.overflow.refill(deque_, deque_.capacity() / 2) == 0) return false;
    stats_.refills++;
    return true;
  }

  // Section 3.4 (L140): "If adding an element would cause the queue to
  // overflow, we pop all elements in the bottom half of the queue and add
  // them to the overflow set."
  [[gnu::noinline]] void overflow_and_push(Task t) {
    stats_.overflow_events++;
    stats_.overflow_tasks += work_.overflow.take_bottom_half(deque_);
    bool pushed = deque_.push(t);
    (void)pushed;  // the deque is at most half full now
  }

  // The oldest private tasks go to the deque, where thieves take from the
  // top: in depth-first order those are the biggest pending subgraphs.
  [[gnu::noinline]] void publish(unsigned n) {
    private_.release_oldest(n, [this](Task t) { push(t); });
  }

  // Tasks sent here, taken by this thread, which is active.
  bool take_inbox() {
    if (!work_.inboxes || work_.inboxes[id_].looks_empty()) return false;
    work_.inboxes[id_].take(received_, work_.termination);
    for (Task t : received_) process(t);
    return true;
  }

  void deliver(unsigned owner) {
    unsent_ -= static_cast<uint32_t>(outboxes_[owner].size());
    work_.inboxes[owner].deliver(outboxes_[owner], work_.termination);
  }

  // Every batch not yet sent, before this thread looks for work elsewhere:
  // a thread that goes idle holds no work.
  void deliver_all() {
    for (unsigned owner = 0; unsent_ != 0; ++owner)
      if (!outboxes_[owner].empty()) deliver(owner);
  }

  // What an idle thread peeks at before it marks itself active (L127).
  bool work_visible() const {
    if (work_.inboxes && (!work_.inboxes[id_].looks_empty() || policy().asked_to_share())) return true;
    if (!work_.overflow.looks_empty()) return true;
    for (const auto& d : work_.deques)
      if (!d->looks_empty()) return true;
    return false;
  }

  TraceShared work_;
  unsigned id_;
  unsigned threads_;  // in the pool, whether or not they take part
  TaskDeque& deque_;
  PrivateTasks private_;
  uint64_t steal_seed_ = 0;
  // Tasks for other threads' chunks (send), by owner, and how many in all;
  // the tasks taken from this thread's inbox.
  std::vector<std::vector<Task>> outboxes_;
  uint32_t unsent_ = 0;
  std::vector<Task> received_;
};

// Sections 3.2-3.4: local work first (the private stack, then PopBottom),
// then the overflow set ("Threads without work look to the overflow set for
// work before resorting to stealing", L133), then stealing ("When a thread
// runs out of work it uses PopTop to steal a task from some other thread's
// work queue", L105), then the termination protocol (section 3.3, L127),
// which returns false when work has appeared somewhere.
template <class Policy>
void Tracer<Policy>::trace() {
  Task t;
  for (;;) {
    for (;;) {
      // The private stack's task goes straight to process(); only the
      // deque's and the thieves' pass through memory.
      if (!private_.empty()) {
        if (others_idle()) [[unlikely]] {
          if (private_.size() > 1) publish(private_.size() / 2);
          deliver_all();
        }
        process(private_.pop());
      } else if (deque_.pop(t)) {
        process(t);
      } else {
        break;
      }
    }
    if (take_inbox()) continue;
    if (refill_from_overflow()) continue;
    deliver_all();
    if (unsigned victim; steal_from_others(work_.deques, id_, steal_seed_, stats_, t, &victim)) {
      if (recording_) [[unlikely]]
        recording_->steal(id_, victim, t.object);
      process(t);
      continue;
    }
    policy().safe_point();
    if (work_.termination.offer([this] { return work_visible(); }, stats_.idle_ns)) return;
  }
}

// A traversal as an open phase (WorkerPool::run_open): worker 0 starts it
// alone, and a pool thread that arrives takes part (part(worker)) only if
// it joins the termination count before the traversal is over. Roots and
// work must be claimed, never assigned by worker id. Returns the workers
// that took part.
template <class Part>
unsigned trace_open(WorkerPool& pool, Termination& termination, Part&& part) {
  termination.reset_open();
  auto job = [&](unsigned worker) {
    if (worker == 0 || termination.join()) part(worker);
  };
  return pool.run_open(job);
}

}  // namespace gc::parallel
