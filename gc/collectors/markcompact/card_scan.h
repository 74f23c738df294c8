// Card scanning for young collections (Flood et al. 2001, section 4,
// L164-171): the dirty cards of the old generation and of large objects are
// roots of a young collection. The cards of the old space's occupied runs
// and of the large objects, one after another, are split into N tasks that
// the GC threads claim after their root groups:
//
//   strides (the paper's choice, L171): task i = cards i, i+N, i+2N, ...,
//            so a dense area (a large array of references) is shared;
//   blocks  (the paper's first try, L166-168): task i = the i-th of N
//            contiguous runs, so a dense area dominates one task.
//
// A dirty card is cleaned, then its slots are scavenged; if one still
// refers to a young object the card is dirtied again (L186, footnote 4).
// Never cleaned: a card straddling the edge of an occupied run (promotion
// may write its other part meanwhile), and the cards of fiber value stacks
// (the interpreter writes them without the barrier).
//
// The card invariant: between collections, every reference from an old or
// large object to a young one lies on a dirty card; --gc-verify checks it.
// Besides card scanning, it is kept by the write barrier (gc/mutator.h), a
// large object's cards starting dirty (the VM's initialising stores skip
// the barrier), the scavenger dirtying a promoted slot's card
// (promoting_scavenger.h, serial_scavenger.h), and the compactors dirtying a moved slot's card
// (pmarkcompact.h, Input::card_base).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gc/spaces/large_object_space.h"
#include "gc/spaces/offset_table.h"
#include "gc/spaces/old_space.h"

namespace gc {

namespace observe {
class Recording;
}

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
    uint64_t dirty = 0;   // dirty cards found
    uint64_t kept = 0;    // still holding an old-to-young reference after
    uint64_t slots = 0;   // reference slots scanned
    unsigned worker = 0;  // the GC thread that claimed the task
  };

  CardScan(unsigned tasks, bool blocks) : tasks_(tasks ? tasks : kDefaultCardTasks), blocks_(blocks) {}

  unsigned tasks() const { return tasks_; }
  bool blocks() const { return blocks_; }

  // Before a young collection, on the mutator thread: the cards to scan.
  void prepare(const std::vector<OldSpace::Run>& old_runs, const LargeObjectSpace& large,
               const OffsetTable& offsets, uint8_t* card_base);
  // On every GC thread, after its root groups: claims tasks until none is
  // left (PromotingScavenger::scavenge_extra_roots). The scavenger is the
  // parallel PromotingScavenger or, on the one thread of --gc-threads=0,
  // the SerialPromotingScavenger; each answers scavenge_old_slot.
  template <class Scavenger>
  void run(Scavenger& s);
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

  // kRecord: a recorded collection (--gc-animate), whose card steps count
  // the slots that referred to young objects.
  template <bool kRecord, class Scavenger>
  void scan_task(unsigned task, Scavenger& s, observe::Recording* recording);
  // Before the phase: the dirty cards, found eight at a time, listed by
  // task. Most cards are clean and every young collection reads them all;
  // tasks that each visited every Nth card paid for every clean one.
  void index_dirty_cards();
  template <bool kRecord, class Scavenger>
  void scan_dirty_card(const Segment& seg, uintptr_t card, Scavenger& s, TaskStats& st,
                       observe::Recording* recording);

  unsigned tasks_;
  bool blocks_;
  std::vector<Segment> segments_;
  uint64_t total_cards_ = 0;
  struct DirtyCard {
    uint32_t task;
    uint32_t segment;
    uintptr_t card;  // absolute card index
  };
  std::vector<DirtyCard> found_;      // in address order
  std::vector<DirtyCard> dirty_;      // by task
  std::vector<uint64_t> task_begin_;  // task t's are dirty_[task_begin_[t], task_begin_[t + 1])
  std::vector<uint64_t> cursor_;      // the sort's next place for each task
  const OffsetTable* offsets_ = nullptr;
  uint8_t* card_base_ = nullptr;
  std::atomic<unsigned> next_task_{0};
  std::vector<TaskStats> stats_;
};

}  // namespace gc
