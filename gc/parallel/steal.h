// Section 3.3 of Flood et al. 2001: a thread with no work peeks at the
// other threads' deques from a random start and tries the first with work.
// Every parallel collector steals through this one function.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gc/parallel/task_deque.h"
#include "gc/parallel/worker_stats.h"

namespace gc::parallel {

// The `self` of a thief that owns none of the deques: a thread outside the
// phase, which every deque may give to (the incremental collector's mark
// assist).
constexpr unsigned kNoOwnDeque = ~0u;

// `seed` is the thief's own xorshift state (nonzero): cheap, and different
// threads start at different victims. The caller is active (it has not
// offered termination, or the protocol made it active again), or outside
// the phase (self kNoOwnDeque). On success *victim (when given) is the
// thread the task came from.
inline bool steal_from_others(const std::vector<std::unique_ptr<TaskDeque>>& deques, unsigned self,
                              uint64_t& seed, WorkerStats& stats, Task& out, unsigned* victim_out = nullptr) {
  unsigned n = static_cast<unsigned>(deques.size());
  if (n == 1 && self == 0) return false;
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  unsigned start = static_cast<unsigned>(seed % n);
  for (unsigned k = 0; k < n; ++k) {
    unsigned victim = (start + k) % n;
    if (victim == self) continue;
    TaskDeque& d = *deques[victim];
    // A lost race (kAbort) means the victim had work a moment ago: try it
    // again a few times before moving on.
    for (int tries = 0; tries < 4 && !d.looks_empty(); ++tries) {
      stats.steal_attempts++;
      TaskDeque::Steal r = d.steal(out);
      if (r == TaskDeque::Steal::kSuccess) {
        stats.steals++;
        if (victim_out) *victim_out = victim;
        return true;
      }
      if (r == TaskDeque::Steal::kEmpty) break;
    }
  }
  return false;
}

}  // namespace gc::parallel
