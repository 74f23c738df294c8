#include "gc/spaces/large_object_space.h"

#include <algorithm>

#include "gc/heap/reservation.h"
#include "gc/observe/recording.h"

namespace gc {

static_assert(kPageBytes == 4096);
constexpr uint64_t kWordsPerPage = kPageBytes / kWordSize;

LargeObjectSpace::LargeObjectSpace(Word* region_begin, Word* region_end)
    : begin_(region_begin), region_end_(region_end), frontier_(region_begin), high_water_(region_begin) {
  // Ordinary pages here, whatever the reservation asked for: a freed object
  // gives its pages back, and a huge page faulted in again for the next
  // object zeroes 2 MB for an object of 16 KB.
  Reservation::use_small_pages(region_begin, region_end);
}

uint64_t LargeObjectSpace::pages_for(uint64_t words) { return (words + kWordsPerPage - 1) / kWordsPerPage; }

Word* LargeObjectSpace::allocate_pages(uint64_t pages) {
  if (over_budget(pages)) return nullptr;
  for (auto it = free_runs_.begin(); it != free_runs_.end(); ++it) {
    if (it->second < pages) continue;
    Word* start = it->first;
    uint64_t left = it->second - pages;
    free_runs_.erase(it);
    if (left) free_runs_.emplace(start + pages * kWordsPerPage, left);
    committed_pages_ += pages;
    pages_allocated_since_sweep_ += pages;
    pages_since_budget_ += pages;
    retained_pages_ -= std::min(retained_pages_, pages);
    return start;
  }
  if (static_cast<uint64_t>(region_end_ - frontier_) / kWordsPerPage < pages) return nullptr;
  Word* start = frontier_;
  frontier_ += pages * kWordsPerPage;
  if (frontier_ <= high_water_) retained_pages_ -= std::min(retained_pages_, pages);
  high_water_ = std::max(high_water_, frontier_);
  committed_pages_ += pages;
  pages_allocated_since_sweep_ += pages;
  pages_since_budget_ += pages;
  return start;
}

LargeObjectSpace::Object LargeObjectSpace::allocate(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  uint64_t pages = pages_for(object_words(nrefs, raw_words));
  Word* start = allocate_pages(pages);
  if (!start) return Object{nullptr, nullptr, pages};
  Object o{format_object(start, class_id, nrefs, raw_words), start, pages};
  objects_.push_back(o);
  return o;
}

// The free pages past keep_pages, from the top down: the frontier's tail,
// then the highest free runs.
void LargeObjectSpace::release_beyond(uint64_t keep_pages) {
  uint64_t excess = retained_pages_ - std::min(retained_pages_, keep_pages);
  uint64_t tail = std::min(excess, static_cast<uint64_t>(high_water_ - frontier_) / kWordsPerPage);
  Reservation::release_pages_lazily(high_water_ - tail * kWordsPerPage, high_water_);
  high_water_ -= tail * kWordsPerPage;
  excess -= tail;
  for (auto it = free_runs_.rbegin(); excess > 0 && it != free_runs_.rend(); ++it) {
    uint64_t pages = std::min(excess, it->second);
    Word* end = it->first + it->second * kWordsPerPage;
    Reservation::release_pages_lazily(end - pages * kWordsPerPage, end);
    excess -= pages;
  }
  retained_pages_ = std::min(retained_pages_, keep_pages);
}

uint64_t LargeObjectSpace::sweep(bool poison) {
  uint64_t freed = 0;
  size_t kept = 0;
  // On the collecting thread, worker 0 (--gc-animate's record of it).
  observe::Recording* recording = observe::Recording::active();
  for (Object& o : objects_) {
    Word h = *o.header;
    if (Header::is_marked(h)) {
      *o.header = h & ~Header::kMarkBit;
      objects_[kept++] = o;
    } else {
      if (recording) [[unlikely]]
        recording->free(0, o.start, object_words(h));
      freed += o.pages * kPageBytes;
      free_run(o.start, o.pages, poison);
    }
  }
  objects_.resize(kept);
  release_beyond(
      std::max(kMinRetainedPages, pages_allocated_since_sweep_ + pages_allocated_since_sweep_ / 2));
  pages_allocated_since_sweep_ = 0;
  return freed;
}

void LargeObjectSpace::set_growth_budget(uint64_t heap_live_bytes) {
  budget_pages_ = std::max(kMinGrowthPages, heap_live_bytes / kPageBytes);
  pages_since_budget_ = 0;
}

void LargeObjectSpace::free_run(Word* start, uint64_t pages, bool poison) {
  Word* end = start + pages * kWordsPerPage;
  // The pages stay mapped for the next large object (release_beyond
  // gives them back past a bound).
  if (poison) std::fill(start, end, Header::kPoison);
  retained_pages_ += pages;
  committed_pages_ -= pages;
  // Coalesce with the run that ends where this one starts, and with the run
  // that starts where this one ends.
  auto next = free_runs_.lower_bound(start);
  if (next != free_runs_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second * kWordsPerPage == start) {
      start = prev->first;
      free_runs_.erase(prev);
    }
  }
  if (next != free_runs_.end() && next->first == end) {
    end = next->first + next->second * kWordsPerPage;
    free_runs_.erase(next);
  }
  // A run that reaches the frontier rejoins the never-used part.
  if (end == frontier_) {
    frontier_ = start;
  } else {
    free_runs_.emplace(start, static_cast<uint64_t>(end - start) / kWordsPerPage);
  }
}

}  // namespace gc
