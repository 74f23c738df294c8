// Waiting for another thread without a futex: spin with pause instructions,
// twice as long each round, then yield the processor, so that a waiting GC
// thread never starves the thread it waits for when there are more GC
// threads than processors (cacheaware's mesh, simulated on a few cores).
#pragma once

#include <sched.h>

#include "gc/parallel/cpu_relax.h"

namespace gc::parallel {

class Backoff {
 public:
  // Rounds of spinning (1, 2, 4, ... 64 pauses) before each wait yields.
  static constexpr unsigned kSpinRounds = 7;

  void wait() {
    if (round_ < kSpinRounds) {
      for (unsigned i = 0; i < (1u << round_); ++i) cpu_relax();
      ++round_;
    } else {
      sched_yield();
    }
  }
  // Work arrived: the next wait spins briefly again.
  void reset() { round_ = 0; }

 private:
  unsigned round_ = 0;
};

}  // namespace gc::parallel
