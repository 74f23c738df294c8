#include "gc/parallel/termination.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <ctime>

#include "gc/parallel/cpu_relax.h"

namespace gc::parallel {

namespace {

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, unsigned timeout_us) {
  timespec ts{static_cast<time_t>(timeout_us / 1000000), static_cast<long>(timeout_us % 1000000) * 1000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

void Termination::reset(unsigned threads) {
  joined_.store(threads, std::memory_order_relaxed);
  active_.store(threads, std::memory_order_release);
}

void Termination::backoff(unsigned round, uint64_t waited_ns, unsigned& sleeps, uint32_t generation) {
  if (round < kTerminationSpinRounds) {
    for (unsigned i = 0; i < (1u << round); ++i) cpu_relax();
  } else if (waited_ns < kTerminationYieldNs) {
    sched_yield();
  } else {
    unsigned us = kTerminationFirstSleepUs << std::min(sleeps++, 10u);
    futex_wait(&generation_, generation, std::min(us, kTerminationMaxSleepUs));
  }
}

void Termination::wake_all() {
  generation_.fetch_add(1, std::memory_order_acq_rel);
  futex_wake_all(&generation_);
}

}  // namespace gc::parallel
