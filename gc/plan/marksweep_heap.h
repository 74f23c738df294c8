// The Collector side every plan on the mark-sweep space shares (`marksweep`,
// `gpu`, `accel`): it owns the space and the GC threads, answers the
// mutator's slow paths and says when to collect: when a cell or large
// object does not fit under the space's trigger (it then may take up to
// --heap, else out of memory). A plan derives from it and supplies mark(),
// and may supply sweep() (an accelerator's block sweepers).
//
// A collection, in order (collect_making_room reads as this list):
//   mark            the plan's: every object reachable from the roots marked
//   process_weak    fibers' native state: unmarked means dead
//   sweep           the space's parallel block sweep and large objects
//   resize          the space's sizing policy
#pragma once

#include <memory>
#include <vector>

#include "gc/collector.h"
#include "gc/parallel/worker_pool.h"
#include "gc/parallel/worker_stats.h"
#include "gc/spaces/marksweep_space.h"
#include "gc/verify/verifier.h"

namespace gc {

class MarkSweepHeap : public Collector {
 public:
  ~MarkSweepHeap() override;

  Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override;
  Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override;
  void collect(GcCause cause) override;

  uint64_t heap_used() const override { return space_.used_bytes(); }
  uint64_t heap_size() const override { return space_.size_bytes(); }
  bool in_heap(const void* addr) const override { return space_.contains(addr); }
  // Objects never move: the hash is the address's.
  uint64_t identity_hash(Word* header) override;
  void flush_stats() override { space_.account_allocation_lists(); }

  void describe_heap(verify::HeapShape& out) const override { space_.describe_heap(out); }
  void describe_spaces(std::vector<observe::SpaceUsage>& out) const override { space_.describe_spaces(out); }

  // For tests and observability.
  const MarkSweepSpace& space() const { return space_; }
  unsigned gc_threads() const { return options_.gc_threads; }
  bool serial() const { return options_.gc_threads <= 1; }
  // Summed over all collections, per GC thread.
  const std::vector<parallel::WorkerStats>& worker_stats() const { return worker_totals_; }

 protected:
  MarkSweepHeap(RootSet& roots, const HeapOptions& options);

  // The plan's mark step (see the list above).
  virtual void mark() = 0;
  // A plan with block sweepers of its own replaces the sweep step with the
  // space's steps (MarkSweepSpace::sweep_block and what follows it).
  virtual void sweep();
  // When the plan knows before a collection that it would leave no room
  // for an allocation of request_bytes (a cell of that size, or with large
  // a large object's pages): the bytes it would leave in use, and the collection is
  // given up and the allocation answered out of memory at once. 0: the
  // collection runs, as it always does by default. For a plan whose
  // collections are costly to run (accel's simulation).
  virtual uint64_t live_bytes_if_no_room(uint64_t /*request_bytes*/, bool /*large*/) { return 0; }
  MarkSweepSpace& mutable_space() { return space_; }

  // The root groups for this collection (gathered again on each call).
  const std::vector<RootGroup>& gather_roots();
  // The GC threads, and each one's statistics summed over all collections,
  // for the plan's marker.
  parallel::WorkerPool& pool() { return *pool_; }
  std::vector<parallel::WorkerStats>& worker_totals() { return worker_totals_; }

  // --- one collection, in order (a plan with slow paths of its own calls
  // it as collect does)
  // request_bytes: the allocation that failed (a cell's, or with large a
  // large object's pages), 0 for gc() and stress.
  void collect_making_room(GcCause cause, uint64_t request_bytes, bool large);

 private:
  // After a given-up collection the live data is what the plan found
  // reachable, not the heap's garbage as well.
  Word* exhausted();
  void process_weak();

  // --- slow paths
  Word* allocate_cell(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words);
  Word* allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words, GcCause cause);
  void count_stress_allocation();

  MarkSweepSpace space_;
  uint64_t given_up_live_bytes_ = 0;  // 0: the last collection ran
  std::vector<RootGroup> root_groups_;
  std::unique_ptr<parallel::WorkerPool> pool_;
  std::vector<parallel::WorkerStats> worker_totals_;
};

}  // namespace gc
