#include "gc/spaces/copy_space.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "gc/heap/reservation.h"

namespace gc {

[[noreturn]] void to_space_overflow() {
  std::fprintf(stderr, "gc: internal error: to-space overflow during a collection\n");
  std::abort();
}

void CopySpace::reset(uint64_t capacity_bytes) {
  top_ = begin_;
  set_capacity(capacity_bytes);
}

void CopySpace::set_capacity(uint64_t capacity_bytes) {
  uint64_t bytes = std::min(round_up_pages(capacity_bytes), region_bytes());
  end_ = begin_ + bytes / kWordSize;
}

bool CopySpace::claim_lab(Lab& lab, uint64_t min_words, uint64_t lab_words) {
  uint64_t words = std::max(min_words, lab_words);
  if (lab.end != top_) {
    fill_dead_space(lab.top, lab.end);
    lab.top = lab.end = top_;
  }
  uint64_t room = static_cast<uint64_t>(region_end_ - top_);
  if (room < min_words - static_cast<uint64_t>(lab.end - lab.top)) return false;
  words = std::min(words, room);
  top_ += words;
  lab.end = top_;
  return true;
}

void CopySpace::retire_lab(Lab& lab) {
  if (lab.end == top_) {
    top_ = lab.top;
  } else {
    fill_dead_space(lab.top, lab.end);
  }
  lab.top = lab.end = top_;
}

Word* CopySpace::claim_shared(uint64_t min_words, uint64_t max_words, uint64_t* got) {
  std::atomic_ref<Word*> top(top_);
  Word* cur = top.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t room = static_cast<uint64_t>(region_end_ - cur);
    if (room < min_words) return nullptr;
    uint64_t words = std::min(std::max(min_words, max_words), room);
    if (top.compare_exchange_weak(cur, cur + words, std::memory_order_relaxed)) {
      *got = words;
      return cur;
    }
  }
}

bool CopySpace::unclaim_shared(Word* p, uint64_t words) {
  std::atomic_ref<Word*> top(top_);
  Word* expected = p + words;
  return top.compare_exchange_strong(expected, p, std::memory_order_relaxed);
}

void CopySpace::poison_contents() { std::fill(begin_, top_, Header::kPoison); }

}  // namespace gc
