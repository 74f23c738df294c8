// semispace: Flood, Detlefs, Shavit and Zhang's pSemispaces (JVM'01,
// section 4; psemispaces.h) with --gc-threads=N >= 1, and the serial
// Cheney collector (Cheney 1970) it parallelises, the baseline of the
// paper's Table 1 "seq" column, with --gc-threads=0 (gc/plan/cheney.h; semispace.cpp,
// SerialScavenger): to-space is its own queue of objects to scan, large
// objects are marked in place and scanned from a mark stack.
//
// Heap (one reservation): [ semispace A | semispace B | large objects ].
// Each semispace region is reserved at twice the heap bound; the second
// half is headroom for the parallel copy's LAB tails and retracted copies
// (psemispaces.cpp, lab_words_for_collection), so to-space is never
// overrun.
//
// Sizing policy. --heap bounds 2 * S + L, S each semispace's capacity and
// L the large-object pages in use. S starts at kInitialSemispaceBytes,
// doubles after a collection that leaves more than half of it live, and
// shrinks toward (max - L) / 2 when large objects need the room. An
// allocation that does not fit after a collection with S at its bound
// returns nullptr (out of memory).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/semispace/psemispaces.h"
#include "gc/heap/reservation.h"
#include "gc/parallel/worker_stats.h"
#include "gc/plan/bump_allocating_collector.h"
#include "gc/plan/scavenge_threads.h"
#include "gc/spaces/copy_space.h"
#include "gc/spaces/large_object_space.h"
#include "gc/verify/verifier.h"

namespace gc {

class SerialScavenger;

class SemispaceCollector final : public BumpAllocatingCollector {
 public:
  SemispaceCollector(RootSet& roots, const HeapOptions& options);
  ~SemispaceCollector() override;

  void collect(GcCause cause) override;

  const char* name() const override { return "semispace"; }
  // The current semispace up to top (less filler), plus large-object pages.
  uint64_t heap_used() const override;
  // 2 * S + L: both semispaces count, as the policy above bounds them.
  uint64_t heap_size() const override;
  // Half of what the large objects leave, and the large objects.
  uint64_t live_capacity() const override { return semispace_bound(0) + los_.committed_bytes(); }

  void describe_heap(verify::HeapShape& out) const override;
  void describe_spaces(std::vector<observe::SpaceUsage>& out) const override;

  // For tests and observability.
  uint64_t semispace_bytes() const { return semispace_bytes_; }
  bool in_current_space(const Word* p) const { return p >= current_->begin() && p < top; }
  bool in_large_space(const Word* p) const { return los_.contains(p); }
  const LargeObjectSpace& large_objects() const { return los_; }
  // GC threads (0: the serial collector) and what each did, summed over
  // all collections.
  unsigned gc_threads() const { return options_.gc_threads; }
  const std::vector<parallel::WorkerStats>& worker_stats() const { return worker_totals_; }
  // Serial collections made to leave no gaps.
  uint64_t retries_leaving_no_gaps() const { return retries_leaving_no_gaps_; }

 private:
  friend class SerialScavenger;
  friend class ParallelScavenger;
  friend class SemispaceWeakResolver;

  // --- one collection, in order (collect() reads as this list)
  // In Collector::run_collection's frame.
  // Leaving::kNoGaps: Cheney's scavenger even with GC threads.
  void collect_making_room(GcCause cause, uint64_t pending_large_bytes, Leaving = Leaving::kAnyGaps);
  bool collection(Leaving);  // the frame's body, the steps below; false when to-space is too small
  void flip();
  void scavenge_serially();     // --gc-threads=0: Cheney
  void scavenge_in_parallel();  // pSemispaces (psemispaces.cpp)
  uint64_t lab_words_for_collection() const;
  void process_weak();
  void resize_semispaces();
  void release_from_space();

  // --- slow paths (BumpAllocator::Plan: the allocator asks for these)
  void collect_for_stress(uint64_t ordinal) override;
  bool collect_for_buffer(uint64_t words) override;
  Word* try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) override;
  void collect_for_large(uint64_t pending_large_bytes) override;
  bool collect_leaving_no_gaps(GcCause cause, uint64_t pending_large_bytes) override;
  bool try_grow_current_space(uint64_t words);
  uint64_t semispace_bound(uint64_t pending_large_bytes) const;
  void describe_events();

  CardTable cards_;
  CopySpace space_a_;
  CopySpace space_b_;
  LargeObjectSpace los_;
  CopySpace* current_;  // to-space between collections: the mutator allocates here
  CopySpace* other_;    // from-space during a collection, empty otherwise

  uint64_t semispace_bytes_;  // S
  uint64_t pending_large_bytes_ = 0;
  std::vector<RootGroup> root_groups_;   // reused: no allocation per collection
  std::vector<Word*> large_mark_stack_;  // reused

  // pSemispaces: allocated once, at construction, for every collection.
  uint64_t lab_words_;                 // --gc-lab
  uint64_t survivor_bound_words_ = 0;  // from-space words plus hash words owed
  // Filler the last parallel copy left in the current space (LAB tails,
  // retracted copies): not objects, so not counted as used or live.
  uint64_t waste_words_ = 0;
  uint64_t retries_leaving_no_gaps_ = 0;
  ScavengeThreads<ParallelScavenger> threads_;
  std::vector<parallel::WorkerStats> worker_totals_;
};

std::unique_ptr<Collector> create_semispace(RootSet& roots, const HeapOptions& options);

}  // namespace gc
