#include "gc/parallel/worker_pool.h"

#include "gc/parallel/cpu_relax.h"
#include "gc/parallel/futex.h"
#include "gc/parallel/thread_cpu.h"

namespace gc::parallel {

WorkerPool::WorkerPool(unsigned workers) : workers_(workers ? workers : 1) {}

WorkerPool::~WorkerPool() {
  if (threads_.empty()) return;
  stopping_.store(true, std::memory_order_release);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  futex_wake_all(&epoch_);
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::start_threads() {
  threads_.reserve(workers_ - 1);
  for (unsigned w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { thread_main(w); });
}

unsigned WorkerPool::run_erased(void* job, Fn fn, bool open) {
  ++phases_;
  if (workers_ == 1) {
    fn(job, 0);
    return 1;
  }
  if (threads_.empty()) start_threads();
  job_ = job;
  fn_ = fn;
  // Every thread admitted to the last phase has finished it, and one that
  // was not never touches finished_.
  finished_.store(0, std::memory_order_relaxed);
  uint32_t epoch = epoch_.load(std::memory_order_relaxed) + 1;
  admission_.store(uint64_t{epoch} << 32, std::memory_order_relaxed);
  epoch_.store(epoch, std::memory_order_seq_cst);
  futex_wake_all(&epoch_);
  fn(job, 0);
  uint32_t expected = open ? close_admission() : workers_ - 1;
  // Wait for them: spin first (they usually finish together, since the
  // phase ends by termination detection), then sleep.
  for (unsigned i = 0; i < kPoolSpinBeforeSleep; ++i) {
    if (finished_.load(std::memory_order_acquire) == expected) return expected + 1;
    cpu_relax();
  }
  for (uint32_t f; (f = finished_.load(std::memory_order_acquire)) != expected;)
    futex_wait(&finished_, f, kPoolSleepUs);
  return expected + 1;
}

bool WorkerPool::admit(uint32_t epoch) {
  uint64_t a = admission_.load(std::memory_order_acquire);
  for (;;) {
    if ((a >> 32) != epoch || (a & kClosed)) return false;
    if (admission_.compare_exchange_weak(a, a + 1, std::memory_order_acq_rel, std::memory_order_acquire))
      return true;
  }
}

uint32_t WorkerPool::close_admission() {
  uint64_t a = admission_.fetch_or(kClosed, std::memory_order_acq_rel);
  return static_cast<uint32_t>(a & (kClosed - 1));
}

void WorkerPool::thread_main(unsigned worker) {
  GcThreadCpu counted_as_gc_thread;
  uint32_t seen = 0;
  for (;;) {
    uint32_t e = epoch_.load(std::memory_order_acquire);
    for (unsigned i = 0; e == seen && i < kPoolSpinBeforeSleep; ++i) {
      cpu_relax();
      e = epoch_.load(std::memory_order_acquire);
    }
    while (e == seen) {
      futex_wait(&epoch_, seen, kPoolSleepUs);
      e = epoch_.load(std::memory_order_acquire);
    }
    seen = e;
    if (stopping_.load(std::memory_order_acquire)) return;
    if (!admit(e)) continue;
    fn_(job_, worker);
    finished_.fetch_add(1, std::memory_order_seq_cst);
    futex_wake_all(&finished_);
  }
}

}  // namespace gc::parallel
