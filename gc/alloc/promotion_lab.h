// A GC thread's promotion LAB (Flood et al. 2001, L164: "old-generation
// promotion therefore uses the same LAB-based allocation technique as
// to-space allocation"), for every young collection that promotes into an
// OldSpace: markcompact's parallel scavengers and its serial one. Claims
// come from the old space's free areas (safe from several threads at once);
// the LAB waste rule is lab.h's. Filler left in the old space
// is recorded in its offset table, since card scanning walks it.
#pragma once

#include <cstdint>

#include "gc/alloc/lab.h"
#include "gc/parallel/worker_stats.h"
#include "gc/spaces/offset_table.h"
#include "gc/spaces/old_space.h"

namespace gc {

// Internal error: a promotion found no room in the old generation.
// Unreachable by construction: before a young collection the plan makes
// room for every young object (markcompact.cpp, the promotion guarantee).
[[noreturn]] void promotion_overflow();

class PromotionLab {
 public:
  // Before each collection; counts go to `stats` (the thread's own).
  void begin(OldSpace& old, OffsetTable& offsets, uint64_t lab_words, parallel::WorkerStats& stats) {
    old_ = &old;
    offsets_ = &offsets;
    lab_words_ = lab_words;
    stats_ = &stats;
    lab_.top = lab_.end = nullptr;
    bytes_promoted_ = 0;
  }

  [[gnu::always_inline]] Word* allocate(uint64_t words) {
    if (lab_.fits(words)) [[likely]]
      return lab_.bump(words);
    return allocate_slow(words);
  }
  // A copy that lost its forwarding race is retracted.
  void undo(Word* p, uint64_t words);
  // A copy that won: recorded in the offset table.
  void promoted(Word* p, uint64_t words) {
    offsets_->record(p, words);
    bytes_promoted_ += words * kWordSize;
  }
  // The LAB's unused tail, given back to its area or filled.
  void retire();

  const Lab& lab() const { return lab_; }
  uint64_t bytes_promoted() const { return bytes_promoted_; }

 private:
  [[gnu::noinline]] Word* allocate_slow(uint64_t words);

  Lab lab_;
  OldSpace* old_ = nullptr;
  OffsetTable* offsets_ = nullptr;
  uint64_t lab_words_ = 0;
  parallel::WorkerStats* stats_ = nullptr;
  uint64_t bytes_promoted_ = 0;
};

}  // namespace gc
