// markcompact: Flood, Detlefs, Shavit and Zhang's generational collector
// (JVM'01, sections 4-6): the young generation collected by pSemispaces
// with promotion through LABs (with --gc-threads=0, by the serial Cheney
// scavenger it parallelises, serial_scavenger.h), the old generation by
// pMarkcompact, and old-to-young references remembered in a card table
// scanned in strides (card_scan.h).
//
// Heap (one reservation): [ young A | young B | old | large objects ].
// Young regions and the old generation are reserved at twice their
// capacity for the parallel copy's headroom (semispace/semispace.h); large objects
// never move and count as old.
//
// A young collection (young_collection) promotes a survivor of age
// >= --tenure, keeping the card invariant (card_scan.h), and copies the
// others to to-space one year older. A full collection (full_collection)
// first promotes every survivor (or none, when the old generation cannot
// take them all), so that the old generation's mark-compact
// (pMarkcompact, or with --gc-threads=0 the serial one it parallelises)
// finds the young generation empty and every card clean in the common
// case.
//
// Sizing policy. --heap bounds 2 * Y + O + L (Y a young semispace, O the
// old generation's capacity, L the large-object pages). Y is --young/2,
// or under --pause-goal decided after every young collection
// (young_sizing.h) within that. A young collection
// runs only under the promotion guarantee (promotion_guaranteed); else O
// grows within the bound (old_limit_bytes), or a full collection runs.
// After a full collection O's target is twice the old live data, and at
// least room to promote a young semispace of --young's full size (at least
// kInitialOldBytes). Under a goal, the young generation smaller than its
// full size leaves O what it gives up: the goal moves bytes from young to
// old, and the heap stays the size it would be without one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/markcompact/card_scan.h"
#include "gc/collectors/markcompact/markcompact_options.h"
#include "gc/collectors/markcompact/pmarkcompact.h"
#include "gc/collectors/markcompact/promoting_scavenger.h"
#include "gc/collectors/markcompact/serial_markcompact.h"
#include "gc/collectors/markcompact/serial_scavenger.h"
#include "gc/collectors/markcompact/young_sizing.h"
#include "gc/heap/reservation.h"
#include "gc/parallel/worker_pool.h"
#include "gc/plan/bump_allocating_collector.h"
#include "gc/plan/scavenge_threads.h"
#include "gc/spaces/copy_space.h"
#include "gc/spaces/large_object_space.h"
#include "gc/spaces/offset_table.h"
#include "gc/spaces/old_space.h"
#include "gc/verify/verifier.h"

namespace gc {

class MarkCompactCollector final : public BumpAllocatingCollector {
 public:
  MarkCompactCollector(RootSet& roots, const HeapOptions& options);
  ~MarkCompactCollector() override;

  // A full collection (gc(), the REPL's :gc).
  void collect(GcCause cause) override;
  void collect_young(GcCause cause);

  const char* name() const override { return "markcompact"; }
  uint64_t heap_used() const override;
  uint64_t heap_size() const override;
  // All but the two young semispaces.
  uint64_t live_capacity() const override;
  void describe_heap(verify::HeapShape& out) const override;
  void describe_spaces(std::vector<observe::SpaceUsage>& out) const override;

  // For tests and observability.
  bool in_young(const Word* p) const { return p >= young_->begin() && p < top; }
  bool in_old(const Word* p) const { return old_.contains(p); }
  bool in_large(const Word* p) const { return los_.contains(p); }
  uint32_t tenure_age() const { return tenure_age_; }
  const CardScan& card_scan() const { return cards_scan_; }
  const OldSpace& old_space() const { return old_; }
  uint64_t young_collections() const { return young_collections_; }
  uint64_t full_collections() const { return full_collections_; }
  uint64_t bytes_promoted() const { return bytes_promoted_; }
  // The parallel old-generation collector, or nullptr under --gc-threads=0.
  const ParallelMarkCompact* engine() const { return engine_.get(); }
  // Test-only: with false, the barrier's stores go to a scratch table, as
  // if there were no barrier (the verifier must then see a clean card).
  void set_write_barrier_for_testing(bool on);

 private:
  friend class MarkCompactWeakResolver;

  // --- a young collection, in order
  bool promotion_guaranteed(uint64_t capacity_limit);
  void young_collection(GcCause cause, bool promote_all);
  struct Scavenged {
    uint64_t young_bytes = 0;   // in the young generation at the flip
    uint64_t copied_bytes = 0;  // survivors, promoted ones included
    uint64_t promoted_bytes = 0;
    uint64_t dirty_cards = 0;
  };
  // Flip, roots + cards + trace, weak; survivors kept young beyond
  // keep_limit_bytes are promoted (survivor overflow).
  Scavenged scavenge_young(uint32_t tenure_age, uint64_t keep_limit_bytes = UINT64_MAX);
  void scavenge_serially(SerialPromotingScavenger& s);  // --gc-threads=0
  uint64_t count_card_scan();
  void resize_young(const Scavenged& s);
  void release_from_space();

  // --- a full collection, in order
  // Leaving::kNoGaps: the serial compactor even with GC threads.
  void full_collection(GcCause cause, uint64_t pending_large_bytes, Leaving = Leaving::kAnyGaps);
  void compact_old_generation(uint64_t pending_large_bytes, Leaving);  // then the old generation's size
  ParallelMarkCompact::Result mark_compact_old(Word* old_top, Leaving);
  void resize_old_generation(uint64_t occupied_bytes, uint64_t pending_large_bytes);
  void ready_promotion_area();

  // --- slow paths (BumpAllocator::Plan: the allocator asks for these)
  void collect_for_stress(uint64_t ordinal) override;
  bool collect_for_buffer(uint64_t words) override;
  Word* try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) override;
  void collect_for_large(uint64_t pending_large_bytes) override;
  bool collect_leaving_no_gaps(GcCause cause, uint64_t pending_large_bytes) override;
  uint64_t promotion_words(uint64_t young_words, uint64_t lab_words) const;
  uint64_t young_worst_case_words() const;
  uint64_t old_bound_bytes(uint64_t pending_large_bytes) const;
  // The old generation's largest capacity before a full collection is
  // due: its target, and under a goal what the young generation gives up.
  uint64_t old_limit_bytes() const;
  uint64_t lab_words_for(uint64_t headroom_words) const;
  void describe_events();

  CardTable cards_;
  CopySpace young_a_;
  CopySpace young_b_;
  OffsetTable offsets_;
  OldSpace old_;
  LargeObjectSpace los_;
  CopySpace* young_;        // the mutator allocates here; to-space of the last young collection
  CopySpace* young_other_;  // from-space during a young collection, empty otherwise

  MarkCompactOptions knobs_;             // this collector's options, its full collections' too
  uint64_t young_bytes_;                 // Y: each young semispace's capacity
  uint64_t young_max_bytes_;             // what the reservation holds of Y
  std::unique_ptr<YoungSizing> sizing_;  // nullptr: Y fixed by --young
  int64_t last_young_end_ns_ = 0;        // for the policy's interval between young collections
  Word* old_populated_end_ = nullptr;    // under a pause goal: old pages below are faulted in
  uint64_t old_target_bytes_;            // the old generation's capacity after a full collection
  uint32_t tenure_age_;                  // --tenure
  uint64_t lab_words_;                   // --gc-lab
  uint64_t young_collections_ = 0;
  uint64_t full_collections_ = 0;
  uint64_t bytes_promoted_ = 0;
  std::vector<uint8_t> scratch_cards_;  // set_write_barrier_for_testing

  // The GC threads' machinery, allocated once.
  std::vector<RootGroup> root_groups_;
  ScavengeThreads<PromotingScavenger> threads_;  // at least one GC thread
  std::vector<Word*> grey_promoted_;             // --gc-threads=0: reused
  CardScan cards_scan_;
  std::unique_ptr<ParallelMarkCompact> engine_;  // --gc-threads >= 1
  SerialMarkCompact serial_;                     // --gc-threads=0
  std::vector<OldSpace::Run> runs_;              // scratch
};

std::unique_ptr<Collector> create_markcompact(RootSet& roots, const HeapOptions& options);

}  // namespace gc
