#include "gc/collectors/markcompact/promotion_lab.h"

#include <cstdio>
#include <cstdlib>

namespace gc {

[[noreturn]] void promotion_overflow() {
  std::fprintf(stderr, "gc: internal error: the old generation overflowed during a young collection\n");
  std::abort();
}

Word* PromotionLab::allocate_slow(uint64_t words) {
  uint64_t got = 0;
  if (words * kLabWasteFraction > lab_words_) {
    Word* p = old_->claim_shared(words, words, &got);
    if (!p) promotion_overflow();
    stats_->direct_allocations++;
    return p;
  }
  retire();
  Word* p = old_->claim_shared(words, lab_words_, &got);
  if (!p) promotion_overflow();
  stats_->labs_taken++;
  lab_.top = p;
  lab_.end = p + got;
  return lab_.bump(words);
}

void PromotionLab::undo(Word* p, uint64_t words) {
  stats_->undone_allocations++;
  if (lab_.undo(p, words)) return;
  if (old_->unclaim_shared(p, words)) return;
  offsets_->fill(p, p + words);
  stats_->lab_waste_bytes += words * kWordSize;
}

void PromotionLab::retire() {
  if (lab_.top < lab_.end && !old_->unclaim_shared(lab_.top, static_cast<uint64_t>(lab_.end - lab_.top))) {
    offsets_->fill(lab_.top, lab_.end);
    stats_->lab_waste_bytes += static_cast<uint64_t>(lab_.end - lab_.top) * kWordSize;
  }
  lab_.top = lab_.end = nullptr;
}

}  // namespace gc
