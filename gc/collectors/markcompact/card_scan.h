// Card scanning for young collections (Flood et al. 2001, section 4,
// L164-171): the dirty cards of the old generation and of large objects are
// roots of a young collection. The cards to look at are the occupied runs
// of the old space and the large objects, one after another; they are
// split into N tasks that the GC threads claim with a fetch-and-add after
// their root groups:
//
//   strides (the paper's choice, L171): task i = cards i, i+N, i+2N, ...,
//            so a dense area (a large array of references) is shared by
//            every task;
//   blocks  (the paper's first try, L166-168): task i = the i-th of N
//            contiguous runs of cards, so a dense area lands in one task
//            and that task dominates the phase.
//
// A dirty card is cleaned, then every reference slot that lies in it is
// scavenged; if one still refers to a young object afterwards the card is
// dirtied again (L186, footnote 4). Two kinds of card are scanned but never
// cleaned: a card that straddles the edge of an occupied run (promotion may
// write the other part of it during the phase), and the cards of fiber
// value stacks, which the interpreter writes without the barrier.
//
// The card invariant: between collections, every reference from an object
// outside the young generation (old or large) to a young object lies on a
// dirty card. Young collections rely on it to find those references without
// scanning the old generation; --gc-verify checks it (gc/verify). It is
// kept by
//   - the write barrier (collector.h, write_ref), for the mutator's stores;
//   - a large object's cards starting dirty, for the VM's initialising
//     stores, which skip the barrier (markcompact.cpp, try_allocate_large);
//   - the scavenger, which dirties the card of a promoted object's slot
//     that still refers to a young object (psemispaces.h);
//   - card scanning, which cleans a card before scavenging its slots and
//     dirties it again if one still refers to a young object, and never
//     cleans the cards it cannot scan whole (above);
//   - the compactors, which dirty the card of a moved slot that refers to a
//     young object (pmarkcompact.h, Input::card_base).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gc/collectors/semispace/psemispaces.h"
#include "gc/spaces/large_object_space.h"
#include "gc/spaces/offset_table.h"
#include "gc/spaces/old_space.h"

namespace gc {

// N, the number of card tasks (--card-strides; the paper leaves it open,
// L171): many more than GC threads, as static overpartitioning wants, so
// that a dense run of cards is shared by all threads; few enough that a
// task's claim and its walk of the segment list stay small next to the
// cards it scans (docs/collectors/markcompact.md has the measurement).
constexpr unsigned kDefaultCardTasks = 256;

class CardScan {
 public:
  // What one task found, for statistics and tests.
  struct TaskStats {
    uint64_t dirty = 0;  // dirty cards found
    uint64_t kept = 0;   // still holding an old-to-young reference after
    uint64_t slots = 0;  // reference slots scanned
  };

  CardScan(unsigned tasks, bool blocks) : tasks_(tasks ? tasks : kDefaultCardTasks), blocks_(blocks) {}

  unsigned tasks() const { return tasks_; }
  bool blocks() const { return blocks_; }

  // Before a young collection, on the mutator thread: the cards to scan.
  void prepare(const std::vector<OldSpace::Run>& old_runs, const LargeObjectSpace& large,
               const OffsetTable& offsets, uint8_t* card_base);
  // On every GC thread, after its root groups: claims tasks until none is
  // left (ParallelScavengePhase::extra_roots).
  static void run(void* self, PromotingScavenger& s);
  const std::vector<TaskStats>& last_tasks() const { return stats_; }

 private:
  // A stretch of cards: an occupied run of the old space (objects found
  // through the offset table) or one large object.
  struct Segment {
    Word* begin;
    Word* end;
    uintptr_t first_card;  // absolute card index of begin
    uint64_t first;        // position of that card in the concatenation
    uint64_t cards;
    bool one_object;   // a large object: it starts at begin
    bool never_clean;  // a fiber value stack
  };

  void scan_task(unsigned task, PromotingScavenger& s);
  void scan_card(const Segment& seg, uintptr_t card, PromotingScavenger& s, TaskStats& st);

  unsigned tasks_;
  bool blocks_;
  std::vector<Segment> segments_;
  uint64_t total_cards_ = 0;
  const OffsetTable* offsets_ = nullptr;
  uint8_t* card_base_ = nullptr;
  std::atomic<unsigned> next_task_{0};
  std::vector<TaskStats> stats_;
};

}  // namespace gc
