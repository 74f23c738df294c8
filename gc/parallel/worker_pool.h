// The GC worker pool (DESIGN.md, "Roots and safepoints": --gc-threads=N).
//
// N workers run each parallel phase: the calling (mutator) thread is worker
// 0 and N - 1 pool threads are the others, so one GC thread means no pool
// thread at all. Pool threads start on the first phase and sleep on a futex
// between phases; after a phase they spin briefly first, because a
// collection's phases follow one another closely and a wake costs tens of
// microseconds.
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
    run_erased(&job, [](void* j, unsigned w) { (*static_cast<Job*>(j))(w); });
  }

  // Phases run so far (tests).
  uint64_t phases() const { return phases_; }

 private:
  using Fn = void (*)(void*, unsigned);
  void run_erased(void* job, Fn fn);
  void start_threads();
  void thread_main(unsigned worker);

  unsigned workers_;
  std::vector<std::thread> threads_;
  std::atomic<uint32_t> epoch_{0};    // bumped to start a phase (futex word)
  std::atomic<uint32_t> pending_{0};  // pool threads still in the phase (futex word)
  std::atomic<bool> stopping_{false};
  void* job_ = nullptr;  // written before epoch_ is bumped
  Fn fn_ = nullptr;
  uint64_t phases_ = 0;
};

}  // namespace gc::parallel
