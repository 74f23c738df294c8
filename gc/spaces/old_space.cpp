#include "gc/spaces/old_space.h"

#include <algorithm>

#include "gc/heap/reservation.h"

namespace gc {

OldSpace::OldSpace(Word* region_begin, Word* region_end, OffsetTable& offsets)
    : begin_(region_begin), end_(region_begin), region_end_(region_end), offsets_(offsets) {}

uint64_t OldSpace::free_bytes() const {
  uint64_t words = 0;
  for (size_t i = current_.load(std::memory_order_relaxed); i < areas_.size(); ++i)
    words += static_cast<uint64_t>(areas_[i].end - areas_[i].top);
  return words * kWordSize;
}

void OldSpace::occupied_runs(std::vector<Run>& out) const {
  Word* p = begin_;
  for (size_t i = current_.load(std::memory_order_relaxed); i < areas_.size(); ++i) {
    const Area& a = areas_[i];
    if (a.top > p) out.push_back({p, a.top});
    p = a.end;
  }
  if (end_ > p) out.push_back({p, end_});
}

void OldSpace::grow_to(uint64_t bytes) {
  Word* new_end = std::min(begin_ + round_up_pages(bytes) / kWordSize, region_end_);
  if (new_end <= end_) return;
  size_t cur = current_.load(std::memory_order_relaxed);
  if (cur < areas_.size() && areas_.back().end == end_) {
    areas_.back().end = new_end;
  } else {
    areas_.push_back({end_, end_, new_end});
  }
  end_ = new_end;
}

void OldSpace::reset_after_compaction(const std::vector<Run>& runs, uint64_t capacity_bytes) {
  Word* new_end = std::min(begin_ + round_up_pages(capacity_bytes) / kWordSize, region_end_);
  areas_.clear();
  Word* p = begin_;
  for (const Run& r : runs) {
    if (r.begin > p) areas_.push_back({p, p, r.begin});
    p = r.end;
  }
  new_end = std::max(new_end, p);
  if (new_end > p) areas_.push_back({p, p, new_end});
  if (new_end < end_)
    Reservation::release_pages(begin_ + round_up_pages((new_end - begin_) * kWordSize) / kWordSize, end_);
  end_ = new_end;
  current_.store(0, std::memory_order_relaxed);
}

// An area that cannot hold a claim is closed, its top set to nullptr with
// a compare-and-swap (its unclaimed tail, if any, becoming filler), and
// claims move on to the next one. Closing must be a CAS even when the
// area looks full: a thread retiring the LAB that ends the area may give
// its tail back (unclaim_shared) at any moment until then, and a tail
// given back to an area that claims have left would stay unformatted
// inside the walkable old space.
Word* OldSpace::claim_shared(uint64_t min_words, uint64_t max_words, uint64_t* got) {
  size_t i = current_.load(std::memory_order_acquire);
  while (i < areas_.size()) {
    Area& a = areas_[i];
    std::atomic_ref<Word*> top(a.top);
    Word* cur = top.load(std::memory_order_relaxed);
    if (cur) {
      uint64_t room = static_cast<uint64_t>(a.end - cur);
      if (room >= min_words) {
        uint64_t words = std::min(std::max(min_words, max_words), room);
        if (top.compare_exchange_weak(cur, cur + words, std::memory_order_relaxed)) {
          *got = words;
          return cur;
        }
        continue;
      }
      if (!top.compare_exchange_strong(cur, nullptr, std::memory_order_relaxed)) continue;
      if (room) offsets_.fill(cur, a.end);
    }
    if (current_.compare_exchange_strong(i, i + 1, std::memory_order_acq_rel)) ++i;
  }
  return nullptr;
}

bool OldSpace::unclaim_shared(Word* p, uint64_t words) {
  for (size_t i = current_.load(std::memory_order_acquire); i < areas_.size(); ++i) {
    Area& a = areas_[i];
    if (p < a.begin || p >= a.end) continue;
    std::atomic_ref<Word*> top(a.top);
    Word* expected = p + words;
    return top.compare_exchange_strong(expected, p, std::memory_order_relaxed);
  }
  return false;
}

void OldSpace::touch_next_claims(uint64_t bytes) const {
  constexpr uint64_t kLineWords = 64 / kWordSize;
  uint64_t left = bytes / kWordSize;
  for (size_t i = current_.load(std::memory_order_relaxed); i < areas_.size() && left; ++i) {
    const Area& a = areas_[i];
    if (!a.top) continue;
    volatile Word* p = a.top;
    uint64_t words = std::min(left, static_cast<uint64_t>(a.end - a.top));
    for (uint64_t w = 0; w < words; w += kLineWords) p[w] = p[w];
    left -= words;
  }
}

Word* OldSpace::fill_free_areas() {
  Word* walkable_end = end_;
  for (size_t i = current_.load(std::memory_order_relaxed); i < areas_.size(); ++i) {
    Area& a = areas_[i];
    if (a.end == end_) {
      walkable_end = a.top;
    } else if (a.top < a.end) {
      offsets_.fill(a.top, a.end);
    }
  }
  areas_.clear();
  current_.store(0, std::memory_order_relaxed);
  return walkable_end;
}

}  // namespace gc
