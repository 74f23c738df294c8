#include "gc/parallel/worker_pool.h"

#include "gc/parallel/cpu_relax.h"

namespace gc::parallel {

WorkerPool::WorkerPool(unsigned workers) : workers_(workers ? workers : 1) {}

WorkerPool::~WorkerPool() {
  if (threads_.empty()) return;
  stopping_.store(true, std::memory_order_release);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  epoch_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::start_threads() {
  threads_.reserve(workers_ - 1);
  for (unsigned w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { thread_main(w); });
}

void WorkerPool::run_erased(void* job, Fn fn) {
  ++phases_;
  if (workers_ == 1) {
    fn(job, 0);
    return;
  }
  if (threads_.empty()) start_threads();
  job_ = job;
  fn_ = fn;
  pending_.store(workers_ - 1, std::memory_order_relaxed);
  epoch_.fetch_add(1, std::memory_order_release);
  epoch_.notify_all();
  fn(job, 0);
  // Wait for the others: spin first (they usually finish together, since
  // the phase ends by termination detection), then sleep.
  for (unsigned i = 0; i < kPoolSpinBeforeSleep; ++i) {
    if (pending_.load(std::memory_order_acquire) == 0) return;
    cpu_relax();
  }
  for (uint32_t p; (p = pending_.load(std::memory_order_acquire)) != 0;)
    pending_.wait(p, std::memory_order_acquire);
}

void WorkerPool::thread_main(unsigned worker) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t e = epoch_.load(std::memory_order_acquire);
    for (unsigned i = 0; e == seen && i < kPoolSpinBeforeSleep; ++i) {
      cpu_relax();
      e = epoch_.load(std::memory_order_acquire);
    }
    while (e == seen) {
      epoch_.wait(seen, std::memory_order_acquire);
      e = epoch_.load(std::memory_order_acquire);
    }
    seen = e;
    if (stopping_.load(std::memory_order_acquire)) return;
    fn_(job_, worker);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace gc::parallel
