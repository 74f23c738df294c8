// markcompact's serial young collector (--gc-threads=0): Cheney's scan
// (gc/plan/cheney.h) over the young generation, composed with promotion
// through the same promotion LAB, tenuring rule and promoted-slot scan
// (promotion_lab.h) as the parallel PromotingScavenger, the
// dirty cards scanned as roots by one thread. It is the "seq" young
// collector of Flood et al.'s Table 1, which pSemispaces parallelises.
//
// Promoted objects lie in the old generation's free areas, not in one run
// behind a scan pointer, so they are grey on a stack of their own until
// their slots are scanned.
#pragma once

#include <vector>

#include "gc/collector.h"
#include "gc/collectors/markcompact/promoting_scavenger.h"
#include "gc/collectors/markcompact/promotion_lab.h"
#include "gc/plan/cheney.h"

namespace gc {

class SerialPromotingScavenger final : public CheneyScavenger<SerialPromotingScavenger> {
 public:
  // `grey_promoted` is kept by the collector between collections, so that
  // its room is allocated once.
  SerialPromotingScavenger(const Reservation& reservation, const PromotionSpaces& spaces, uint64_t lab_words,
                           std::vector<Word*>& grey_promoted)
      : CheneyScavenger(reservation, *spaces.to, spaces.from_begin, spaces.from_end, lab_words),
        old_begin_(reinterpret_cast<uintptr_t>(spaces.old->begin())),
        old_bytes_(static_cast<uint64_t>(spaces.old->region_end() - spaces.old->begin()) * kWordSize),
        card_base_(spaces.card_base),
        tenure_age_(spaces.tenure_age),
        keep_limit_(spaces.keep_limit_bytes),
        grey_promoted_(grey_promoted) {
    plab_.begin(*spaces.old, *spaces.offsets, lab_words, stats_);
    grey_promoted_.clear();
  }

  // A slot of an old object (a dirty card's): scavenged, and true if it
  // still refers to a young object (CardScan's question).
  bool scavenge_old_slot(Value* slot) {
    scavenge_slot(slot);
    return refers_to_young(*slot);
  }

  // Ends the copying: to-space's top is the copy pointer, and the
  // promotion LAB's tail goes back to its area.
  void finish() {
    CheneyScavenger::finish();
    plab_.retire();
  }

  uint64_t bytes_promoted() const { return plab_.bytes_promoted(); }

 private:
  friend class CheneyScavenger<SerialPromotingScavenger>;

  [[gnu::always_inline]] Word* allocate_copy(Word h, uint64_t words, Word& new_header) {
    if (!to_lab_fits(words)) [[unlikely]]
      overflow_survivors(kept_young_bytes(), keep_limit_, tenure_age_, stats_);
    return promotes(h, tenure_age_, new_header) ? plab_.allocate(words) : to_allocate(words);
  }

  void copied(Word* start, Word* moved, uint64_t words) {
    if (!in_old(start)) return;
    plab_.promoted(start, words);
    if (Header::nrefs(*moved)) grey_promoted_.push_back(moved);
  }

  bool scan_other_grey() {
    if (grey_promoted_.empty()) return false;
    while (!grey_promoted_.empty()) {
      Word* h = grey_promoted_.back();
      grey_promoted_.pop_back();
      scavenge_promoted_slots(*this, card_base_, h, Header::nrefs(*h));
    }
    return true;
  }

  bool in_old(const Word* p) const { return reinterpret_cast<uintptr_t>(p) - old_begin_ < old_bytes_; }

  uintptr_t old_begin_;
  uint64_t old_bytes_;
  uint8_t* card_base_;
  uint32_t tenure_age_;
  uint64_t keep_limit_;
  PromotionLab plab_;
  std::vector<Word*>& grey_promoted_;
};

}  // namespace gc
