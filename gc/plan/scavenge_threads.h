// The GC threads of the plans that scavenge in parallel (semispace's
// collection and markcompact's young collection), allocated once: the
// pool, one deque per thread, the overflow set, the termination protocol
// and the scavengers (copy_scavenger.h).
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "gc/heap/lab.h"
#include "gc/parallel/ownership.h"
#include "gc/parallel/tracer.h"
#include "gc/parallel/worker_pool.h"
#include "gc/plan/copy_scavenger.h"

namespace gc {

template <class Scavenger>
struct ScavengeThreads {
  ScavengeThreads(unsigned threads, uint64_t deque_tasks) : overflow(parallel::deque_capacity(deque_tasks)) {
    if (threads == 0) return;
    pool = std::make_unique<parallel::WorkerPool>(threads);
    for (unsigned w = 0; w < threads; ++w)
      deques.push_back(std::make_unique<parallel::TaskDeque>(parallel::deque_capacity(deque_tasks)));
  }

  // by_owner: forwarding by ownership, for a scavenger that can.
  void make_scavengers(observe::Recorder& events, const Reservation& reservation, bool by_owner = false) {
    shared =
        std::make_unique<ScavengeShared>(ScavengeShared{deques, overflow, termination, events, reservation});
    if (Scavenger::kOwnedForwarding && by_owner && pool->size() > 1 &&
        pool->size() <= parallel::ChunkOwners::kMaxThreads) {
      inboxes = std::make_unique<parallel::Inbox[]>(pool->size());
      shared->owners = &owners;
      shared->inboxes = inboxes.get();
    }
    for (unsigned w = 0; w < pool->size(); ++w) scavengers.push_back(std::make_unique<Scavenger>(*shared, w));
  }

  // The GC threads that are awake run their scavengers over the phase (an
  // open phase: a small collection does not wait for a thread to wake),
  // then, on the program's thread, the threads' last to-space LABs are
  // retired. `spaces` is the ScavengeSpaces, or the struct derived from it,
  // that the scavenger's prepare takes.
  template <class Spaces>
  void run(const Spaces& spaces, uint64_t lab_words, ParallelScavengePhase& phase) {
    if (shared->owners) owners.reset(spaces.from_begin, spaces.from_end, pool->size());
    for (auto& s : scavengers) s->prepare(spaces, lab_words);
    parallel::trace_open(*pool, termination, [&](unsigned worker) { scavengers[worker]->run(phase); });
    retire_highest_first([](const Scavenger& s) -> const Lab& { return s.lab(); },
                         [](Scavenger& s) { s.retire_lab_at_end(); });
  }

  // After the phase, on the program's thread: one LAB of every scavenger
  // (lab_of) retired, highest first, so that tails adjacent at a space's
  // top all return to it and the others become filler.
  template <class LabOf, class Retire>
  void retire_highest_first(LabOf lab_of, Retire retire) {
    std::vector<Scavenger*> order;
    order.reserve(scavengers.size());
    for (auto& s : scavengers) order.push_back(s.get());
    std::sort(order.begin(), order.end(),
              [&](const Scavenger* a, const Scavenger* b) { return lab_of(*a).end > lab_of(*b).end; });
    for (Scavenger* s : order) retire(*s);
  }

  std::unique_ptr<parallel::WorkerPool> pool;  // none under --gc-threads=0
  std::vector<std::unique_ptr<parallel::TaskDeque>> deques;
  parallel::OverflowSet overflow;
  parallel::Termination termination;
  parallel::ChunkOwners owners;
  std::unique_ptr<parallel::Inbox[]> inboxes;
  std::unique_ptr<ScavengeShared> shared;
  std::vector<std::unique_ptr<Scavenger>> scavengers;
};

}  // namespace gc
