// markcompact's parallel young collector (promoting_scavenger.h): the copy
// policy's out-of-line members instantiated for it, and promotion's.
#include "gc/collectors/markcompact/promoting_scavenger.h"

#include "gc/collectors/markcompact/card_scan.h"
#include "gc/plan/copy_scavenger_impl.h"

namespace gc {

template class CopyScavenger<PromotingScavenger>;

void PromotingScavenger::prepare(const PromotionSpaces& spaces, uint64_t lab_words) {
  CopyScavenger::prepare(spaces, lab_words);
  card_base_ = spaces.card_base;
  cards_ = spaces.cards;
  tenure_age_ = spaces.tenure_age;
  keep_limit_ = spaces.keep_limit_bytes;
  old_begin_ = reinterpret_cast<uintptr_t>(spaces.old->begin());
  old_bytes_ = static_cast<uint64_t>(spaces.old->region_end() - spaces.old->begin()) * kWordSize;
  plab_.begin(*spaces.old, *spaces.offsets, lab_words, stats_);
}

void PromotingScavenger::scavenge_extra_roots() { cards_->run(*this); }

void PromotingScavenger::report_extra(observe::Recorder& events) const {
  events.count(id(), kBytesPromoted, plab_.bytes_promoted());
  events.count(id(), kSurvivorOverflows, stats_.survivor_overflows);
}

void PromotingScavenger::retire_promotion_lab_at_end() {
  uint64_t before = stats_.lab_waste_bytes;
  plab_.retire();
  shared_.events.count(0, kLabWasteBytes, stats_.lab_waste_bytes - before);
}

}  // namespace gc
