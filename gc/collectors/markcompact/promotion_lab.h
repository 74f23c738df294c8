// A GC thread's promotion LAB (Flood et al. 2001, L164: "old-generation
// promotion therefore uses the same LAB-based allocation technique as
// to-space allocation"), for markcompact's young collections, which
// promote into an OldSpace: its parallel scavengers and its serial one. Claims
// come from the old space's free areas (safe from several threads at once);
// the LAB waste rule is lab.h's. Filler left in the old space
// is recorded in its offset table, since card scanning walks it.
#pragma once

#include <atomic>
#include <cstdint>

#include "gc/collector.h"
#include "gc/heap/lab.h"
#include "gc/parallel/worker_stats.h"
#include "gc/spaces/offset_table.h"
#include "gc/spaces/old_space.h"

namespace gc {

// The tenuring rule of every young collection: a survivor with header h is
// promoted once its age reaches tenure_age (true); otherwise it is copied
// young, one collection older (new_header, which starts as h).
[[gnu::always_inline]] inline bool promotes(Word h, uint32_t tenure_age, Word& new_header) {
  uint32_t age = Header::age(h);
  if (age >= tenure_age) return true;
  if (age < Header::kMaxAge) new_header = Header::with_age(h, age + 1);
  return false;
}

// Survivor overflow, as in HotSpot's Parallel collector, whose survivor
// space holds what its adaptive size policy allows and promotes what does
// not fit: a young collection keeps at most keep_limit bytes of survivors
// young, so that the next one does not start with more to copy again than
// its pause allows. A thread whose survivors kept young (kept_bytes, as
// far as it can see) reach the limit lowers its tenuring threshold to 0,
// so that the tenuring rule above promotes every survivor it copies from
// then on, and counts it once. Called when a thread's to-space LAB cannot
// hold the next copy, not per object.
[[gnu::noinline]] inline void overflow_survivors(uint64_t kept_bytes, uint64_t keep_limit,
                                                 uint32_t& tenure_age, parallel::WorkerStats& stats) {
  if (tenure_age == 0 || kept_bytes < keep_limit) return;
  tenure_age = 0;
  stats.survivor_overflows++;
}

// A GC thread dirties the card of a promoted slot that keeps a young
// target. Relaxed, since several threads may dirty one card, and read
// first, so that a card already dirty is not written again.
inline void dirty_card_from_gc(uint8_t* card_base, const Value* slot) {
  std::atomic_ref<uint8_t> card(card_base[reinterpret_cast<uintptr_t>(slot) >> kCardShift]);
  if (card.load(std::memory_order_relaxed) != kCardDirty) card.store(kCardDirty, std::memory_order_relaxed);
}

// A promoted object's n slots (h its header), scavenged by s, under the
// card invariant (card_scan.h): a slot that still refers to a
// young object dirties its card.
template <class Scavenger>
[[gnu::always_inline]] inline void scavenge_promoted_slots(Scavenger& s, uint8_t* card_base, Word* h,
                                                           uint64_t n) {
  Value* lo = reinterpret_cast<Value*>(h - n);
  for (Value* slot = lo; slot < reinterpret_cast<Value*>(h); ++slot)
    if (s.scavenge_old_slot(slot)) dirty_card_from_gc(card_base, slot);
}

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
