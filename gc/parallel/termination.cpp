#include "gc/parallel/termination.h"

#include <sched.h>

#include <algorithm>

#include "gc/parallel/cpu_relax.h"
#include "gc/parallel/futex.h"

namespace gc::parallel {

void Termination::reset(unsigned threads) {
  joined_.store(threads, std::memory_order_relaxed);
  in_flight_.store(0, std::memory_order_relaxed);
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
