// The GC worker pool (docs/architecture.md, "The tracer": --gc-threads=N).
//
// N workers run each parallel phase: the calling (mutator) thread is worker
// 0 and N - 1 pool threads are the others, so one GC thread means no pool
// thread at all. Pool threads start on the first phase and sleep on a futex
// between phases; after a phase they spin briefly first, because a
// collection's phases follow one another closely and a wake costs tens of
// microseconds.
//
// A phase is closed (run: every worker runs it, and the caller waits for
// all) or open (run_open: a pool thread takes part only if it is admitted
// before the caller's own part returns). An open phase never waits for a
// thread the operating system has not woken yet: a young collection of a
// tenth of a millisecond is not held up by a wake-up that takes as long, or
// by a scheduler that leaves the thread asleep for milliseconds. The
// caller waits only for the threads admitted.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace gc::parallel {

// Spins (pause instructions) a pool thread makes after a phase before it
// sleeps: about 20 microseconds on current x86, less than one futex
// wake-up, so back-to-back phases do not pay one.
constexpr unsigned kPoolSpinBeforeSleep = 2000;

// The longest a pool thread or the caller sleeps before it looks at the
// word it waits on again. The waits are plain futex calls (futex.h), which
// lose no wake-up by construction; the bound makes a lost one cost
// milliseconds, not the run, for one was lost through the standard
// library's atomic wait (docs/collectors/semispace.md, "The paper's
// parameters and gclab's"). An idle pool thread wakes 100 times a second
// for it.
constexpr unsigned kPoolSleepUs = 10'000;

class WorkerPool {
 public:
  explicit WorkerPool(unsigned workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned size() const { return workers_; }

  // Runs job(worker) for worker in [0, size()) concurrently, the caller as
  // worker 0; returns when all have returned. Everything each worker wrote
  // is visible to the caller afterwards.
  template <class Job>
  void run(Job& job) {
    run_erased(
        &job, [](void* j, unsigned w) { (*static_cast<Job*>(j))(w); }, false);
  }

  // As run, but pool threads join only while the caller's job(0) runs; a
  // thread that wakes after it returned skips the phase. The job must be
  // complete with any subset of workers that includes worker 0: its work
  // claimed dynamically and its termination counting only the workers that
  // joined (Termination::reset_open). Returns the workers that took part.
  template <class Job>
  unsigned run_open(Job& job) {
    return run_erased(
        &job, [](void* j, unsigned w) { (*static_cast<Job*>(j))(w); }, true);
  }

  // Phases run so far (tests).
  uint64_t phases() const { return phases_; }

 private:
  using Fn = void (*)(void*, unsigned);
  unsigned run_erased(void* job, Fn fn, bool open);
  void start_threads();
  void thread_main(unsigned worker);
  // A pool thread woken for phase `epoch` asks to take part; false: the
  // phase is over (or a later one has begun) and it must not touch job_.
  bool admit(uint32_t epoch);
  // Closes the phase to newcomers; returns the pool threads admitted.
  uint32_t close_admission();

  // The admission word: the phase's epoch in the high half, then kClosed,
  // then the number of pool threads admitted.
  static constexpr uint64_t kClosed = uint64_t{1} << 31;

  unsigned workers_;
  std::vector<std::thread> threads_;
  std::atomic<uint32_t> epoch_{0};  // bumped to start a phase (futex word)
  std::atomic<uint64_t> admission_{0};
  std::atomic<uint32_t> finished_{0};  // admitted pool threads done with the phase (futex word)
  std::atomic<bool> stopping_{false};
  void* job_ = nullptr;  // written before epoch_ is bumped
  Fn fn_ = nullptr;
  uint64_t phases_ = 0;
};

}  // namespace gc::parallel
