// Termination detection for a work-stealing phase (Flood et al. 2001,
// section 3.3, L125-129).
//
// The paper keeps a status word with one bit per thread and mentions Peter
// Kessler's alternative, an atomic count of active threads, which removes
// the word-width limit on threads; gclab uses the count. A thread that
// finds no work anywhere offers to terminate: it decrements the count and
// loops until the count is zero (the phase is over) or it sees work, when
// it increments the count *before* trying to take it, so no thread can see
// zero while a task is in flight.
//
// The loop backs off so that more threads than cores neither hang nor burn
// the machine: a bounded spin, then yields, then futex sleeps with a
// growing timeout; the thread that sees zero wakes every sleeper.
#pragma once

#include <atomic>
#include <cstdint>

#include "gc/parallel/clock.h"

namespace gc::parallel {

// Backoff schedule: spinning longer only delays yielding to a descheduled
// worker when threads outnumber cores, and a thread that sleeps is slow to
// come back while the others keep their cores busy, so a thread yields for
// up to a millisecond, as long as most phases' tails, before it sleeps
// (docs/collectors/semispace.md, "The paper's parameters and gclab's", has
// the wake-up times).
constexpr unsigned kTerminationSpinRounds = 8;       // round r spins 2^r pause instructions
constexpr uint64_t kTerminationYieldNs = 1'000'000;  // then sched_yield for this long
constexpr unsigned kTerminationFirstSleepUs = 20;    // then futex sleeps, doubling
constexpr unsigned kTerminationMaxSleepUs = 1000;    // up to 1 ms (HotSpot's sleep)

class Termination {
 public:
  // Before a phase: all `threads` start active.
  void reset(unsigned threads);
  // Before an open phase (WorkerPool::run_open): the caller starts active
  // alone, and the others join().
  void reset_open() { reset(1); }
  // A worker arriving in an open phase becomes active, unless the phase is
  // already over (false: it must not take part). Active before it takes any
  // work, as a thief is (L127), so no thread sees zero while it works.
  bool join() {
    int64_t a = active_.load(std::memory_order_acquire);
    while (a != 0)
      if (active_.compare_exchange_weak(a, a + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        joined_.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
    return false;
  }

  // Called by a thread with no local work that found none to take. Returns
  // true when the phase is over, false when `has_work()` saw work: the
  // caller is active again and should try to take it (and offer again if
  // it fails). idle_ns accumulates the time spent here.
  template <class HasWork>
  bool offer(HasWork&& has_work, uint64_t& idle_ns);

  // A batch of tasks sent to another thread's inbox (ownership.h) counts as
  // an active thread from before it is delivered until its receiver, active
  // itself, takes it: no thread sees zero while a batch is in flight.
  void hold() {
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    active_.fetch_add(1, std::memory_order_acq_rel);
  }
  void release(uint32_t batches) {
    if (batches == 0) return;
    active_.fetch_sub(batches, std::memory_order_acq_rel);
    in_flight_.fetch_sub(batches, std::memory_order_relaxed);
  }

  bool done() const { return active_.load(std::memory_order_acquire) == 0; }
  // Threads active (racy: for heuristics), batches in flight not counted.
  unsigned active() const {
    int64_t a = active_.load(std::memory_order_relaxed) - in_flight_.load(std::memory_order_relaxed);
    return a > 0 ? static_cast<unsigned>(a) : 0;
  }
  // The threads taking part so far (racy: for heuristics).
  unsigned joined() const { return joined_.load(std::memory_order_relaxed); }
  // A thread outside the phase that would take work (the incremental
  // collector's mark assist): while it asks, tracers whose policy admits
  // such help share their private tasks as they do with an idle thread.
  // Never reset with the phase, which the asker may span (racy: a hint).
  void ask_from_outside(bool asking) { outside_asking_.store(asking, std::memory_order_relaxed); }
  bool asked_from_outside() const { return outside_asking_.load(std::memory_order_relaxed); }

 private:
  // Round `round` of waiting, `waited_ns` into it; sleeps counts the futex
  // sleeps so far.
  void backoff(unsigned round, uint64_t waited_ns, unsigned& sleeps, uint32_t generation);
  void wake_all();

  std::atomic<int64_t> active_{0};
  std::atomic<uint32_t> joined_{0};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<bool> outside_asking_{false};
  // Futex word for sleepers: changes when the phase ends.
  std::atomic<uint32_t> generation_{0};
};

template <class HasWork>
bool Termination::offer(HasWork&& has_work, uint64_t& idle_ns) {
  uint64_t start = now_ns();
  uint32_t generation = generation_.load(std::memory_order_acquire);
  bool over = false;
  if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    over = true;
    wake_all();
  }
  unsigned sleeps = 0;
  for (unsigned round = 0; !over; ++round) {
    if (active_.load(std::memory_order_acquire) == 0 ||
        generation_.load(std::memory_order_acquire) != generation) {
      over = true;
      break;
    }
    if (has_work()) {
      // The thief marks itself active before it steals (L127).
      active_.fetch_add(1, std::memory_order_acq_rel);
      break;
    }
    backoff(round, now_ns() - start, sleeps, generation);
  }
  idle_ns += now_ns() - start;
  return over;
}

}  // namespace gc::parallel
