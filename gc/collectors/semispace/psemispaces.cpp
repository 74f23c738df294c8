// pSemispaces: the parallel phase of a semispace collection (Flood et al.
// 2001, sections 3 and 4). See gc/plan/copy_scavenger.h for the per-thread
// steps and semispace.h for the heap they work on.
#include "gc/collectors/semispace/psemispaces.h"

#include <algorithm>

#include "gc/collectors/semispace/semispace.h"
#include "gc/collectors/semispace/semispace_options.h"
#include "gc/plan/copy_scavenger_impl.h"

namespace gc {

// The collector's side: one parallel phase per collection.

// LAB size for this collection: --gc-lab, shrunk when the heap is so small
// that the LABs of all threads would eat into to-space's headroom. To-space
// holds the survivors (at most survivor_bound_words_, which the sizing policy
// keeps within the first half of the region) plus the waste of parallel
// copying: retired LAB tails (each under 1/8 of its LAB, so under 1/7 of
// what was copied), the threads' last LAB tails (at most one LAB each), and
// the rare retracted copy that another thread's claim made impossible to
// give back. Limiting the LABs to a quarter of the headroom divided among
// the threads keeps all of that well inside the region.
uint64_t SemispaceCollector::lab_words_for_collection() const {
  uint64_t region = current_->region_bytes() / kWordSize;
  uint64_t headroom = region - std::min(region, survivor_bound_words_);
  return lab_words_within(lab_words_, headroom, options_.gc_threads);
}

void SemispaceCollector::scavenge_in_parallel() {
  unsigned threads = options_.gc_threads;
  if (threads_.scavengers.empty())
    threads_.make_scavengers(events, reservation_, semispace_options(options_).forwarding_by_owner);

  root_groups_.clear();
  roots_.root_groups(root_groups_);
  ParallelScavengePhase phase{{root_groups_}};
  ScavengeSpaces spaces;
  spaces.from_begin = other_->begin();
  spaces.from_end = other_->top();
  spaces.los_begin = los_.begin();
  spaces.los_end = los_.frontier();
  spaces.to = current_;
  threads_.run(spaces, lab_words_for_collection(), phase);
  for (unsigned w = 0; w < threads; ++w) {
    const parallel::WorkerStats& s = threads_.scavengers[w]->stats();
    worker_totals_[w].add(s);
    stats_.bytes_copied += s.bytes_copied;
    waste_words_ += s.lab_waste_bytes / kWordSize;
  }
}

template class CopyScavenger<ParallelScavenger>;

}  // namespace gc
