// markcompact's parallel young collector: pSemispaces (Flood et al. 2001,
// section 4) with promotion into the old generation.
#pragma once

#include <cstdint>

#include "gc/collectors/markcompact/promotion_lab.h"
#include "gc/plan/copy_scavenger.h"
#include "gc/spaces/offset_table.h"
#include "gc/spaces/old_space.h"

namespace gc {

class CardScan;

// One young collection's spaces: the copy's, and promotion's. Objects whose
// age is at least tenure_age go to `old`, whose cards are dirtied through
// card_base where a promoted slot still refers to to-space, and whose
// offset table records every object and filler written there; `cards` are
// the dirty cards scanned as roots.
struct PromotionSpaces : ScavengeSpaces {
  OldSpace* old = nullptr;
  OffsetTable* offsets = nullptr;
  uint8_t* card_base = nullptr;
  CardScan* cards = nullptr;
  uint32_t tenure_age = Header::kMaxAge + 1;
  // Survivor overflow: once this many bytes of survivors are kept young,
  // the rest are promoted whatever their age (promotion_lab.h).
  uint64_t keep_limit_bytes = UINT64_MAX;
};

// pSemispaces' copy policy (gc/plan/copy_scavenger.h) for the young
// generation, composed with promotion through promotion LABs (section 4,
// L162-164), the card invariant (card_scan.h), and the dirty cards as extra
// roots (CardScan::run, through the scavenger's scavenge_extra_roots hook).
class PromotingScavenger final : public CopyScavenger<PromotingScavenger> {
 public:
  using CopyScavenger::CopyScavenger;

  // The dirty cards are roots too, claimed after the root groups.
  static constexpr const char* kExtraRootsPhase = "scan cards";

  // Before each collection, on the mutator thread.
  void prepare(const PromotionSpaces& spaces, uint64_t lab_words);
  // After the phase: the promotion LAB's unused tail, given back or filled.
  void retire_promotion_lab_at_end();

  const Lab& promotion_lab() const { return plab_.lab(); }
  uint64_t bytes_promoted() const { return plab_.bytes_promoted(); }

  // A slot of an old object (a dirty card's, or a promoted object's):
  // scavenged, and true if it still refers to a young object.
  bool scavenge_old_slot(Value* slot) {
    trace_slot(slot);
    return refers_to_young(*slot);
  }

 private:
  friend class CopyScavenger<PromotingScavenger>;
  friend class parallel::Tracer<PromotingScavenger>;

  // Tenuring: an object old enough is promoted; every other copy is one
  // collection older. Survivor overflow may lower the threshold first.
  [[gnu::always_inline]] Word* allocate_copy(Word h, uint64_t words, Word& new_header) {
    if (!lab().fits(words)) [[unlikely]]
      overflow_survivors(kept_young_bytes(), keep_limit_, tenure_age_, stats_);
    return promotes(h, tenure_age_, new_header) ? plab_.allocate(words) : allocate(words);
  }
  void undo_copy(Word* p, uint64_t words) {
    if (in_old(p)) {
      plab_.undo(p, words);
    } else {
      undo_allocation(p, words);
    }
  }
  void copied(Word* p, uint64_t words) {
    if (in_old(p)) plab_.promoted(p, words);
  }

  // The tracer's hook for a grey object: a promoted one also dirties the
  // cards of its slots that keep young targets.
  [[gnu::always_inline]] void scan_object(Word* h, uint64_t n) {
    if (in_old(h)) [[unlikely]] {
      scavenge_promoted_slots(*this, card_base_, h, n);
    } else {
      scan_slots(h, 0, n);
    }
  }

  void scavenge_extra_roots();
  void report_extra(observe::Recorder& events) const;

  bool in_old(const Word* p) const { return reinterpret_cast<uintptr_t>(p) - old_begin_ < old_bytes_; }

  uintptr_t old_begin_ = 0;
  uint64_t old_bytes_ = 0;
  uint8_t* card_base_ = nullptr;
  CardScan* cards_ = nullptr;
  uint32_t tenure_age_ = Header::kMaxAge + 1;
  uint64_t keep_limit_ = UINT64_MAX;
  PromotionLab plab_;
};

}  // namespace gc
