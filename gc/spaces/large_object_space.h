// The large-object space (MMTk's LargeObjectSpace policy; docs/architecture.md,
// "Policies"): objects of at least kLargeObjectBytes, and every pinned
// object (fiber value stacks), on whole pages that never move. After a
// collection every unmarked object is freed (poisoned in stress and verify
// modes) and its run put back in an address-ordered free list where
// neighbouring runs coalesce. Freed pages stay mapped for the next large
// objects, up to half again what the last cycle allocated (kMinRetainedPages
// at least), so that they are not faulted in again, zeroed; a sweep returns
// only what is past that bound to the OS, from the highest pages down,
// lazily (MADV_FREE). docs/collectors/semispace.md has what returning them
// sooner cost.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "gc/heap/reservation.h"
#include "gc/layout.h"

namespace gc {

class LargeObjectSpace {
 public:
  struct Object {
    Word* header;
    Word* start;  // page-aligned
    uint64_t pages;

    Word* end() const { return start + pages * (kPageBytes / kWordSize); }
  };

  LargeObjectSpace(Word* region_begin, Word* region_end);

  // A new object (format_object) on pages of its own, recorded; header is
  // nullptr when allocate_pages gives no pages for it.
  Object allocate(uint32_t class_id, uint64_t nrefs, uint64_t raw_words);
  // A page-aligned run of `pages` pages (pages_for gives an object's), or
  // nullptr when the region has no run that long or the space has used its
  // growth budget (below): then the caller collects and asks again.
  Word* allocate_pages(uint64_t pages);

  Word* begin() const { return begin_; }
  Word* frontier() const { return frontier_; }
  bool contains(const Word* p) const { return p >= begin_ && p < frontier_; }
  uint64_t committed_bytes() const { return committed_pages_ * kPageBytes; }
  // Free pages kept mapped for the next large objects, and the highest
  // address they lie below.
  uint64_t retained_bytes() const { return retained_pages_ * kPageBytes; }
  Word* high_water() const { return high_water_; }
  uint64_t object_count() const { return objects_.size(); }
  const std::vector<Object>& objects() const { return objects_; }

  // Frees every unmarked object (poisoned when `poison`, else its pages
  // given back) and clears the others' marks. Returns the bytes freed.
  uint64_t sweep(bool poison);

  // The growth budget, for plans whose own trigger does not count large
  // objects (the copying ones: they collect when a semispace fills). Set at
  // the start (0) and after each collection that swept the space, it hands
  // out as many pages as the heap's live data, at least kMinGrowthPages,
  // and then asks for a collection, as MMTk's spaces poll for one when they
  // acquire pages. The next objects then reuse dead objects' pages, still
  // mapped, instead of faulting in fresh ones, and a collection costs about
  // one pass over the live data per as much allocated
  // (docs/collectors/semispace.md has a program that never collected
  // without it). The first
  // allocation after it is set always gets its pages, whatever its size.
  // Never set, the space has no budget.
  void set_growth_budget(uint64_t heap_live_bytes);
  static constexpr uint64_t kMinGrowthPages = (4ull << 20) / kPageBytes;

  static uint64_t pages_for(uint64_t words);

 private:
  void free_run(Word* start, uint64_t pages, bool poison);
  void release_beyond(uint64_t keep_pages);

  // Free pages kept mapped after a sweep: half again as many as the cycle
  // that ended allocated (a program churning through large objects reuses
  // them all in the next cycle), and at least 32 MiB. They lie below the
  // high-water mark, so the heap never maps more than --heap allowed it.
  static constexpr uint64_t kMinRetainedPages = (32ull << 20) / kPageBytes;

  bool over_budget(uint64_t pages) const {
    return pages_since_budget_ > 0 && pages_since_budget_ + pages > budget_pages_;
  }

  Word* begin_;
  Word* region_end_;
  Word* frontier_;    // pages at and above it are not handed out now
  Word* high_water_;  // the frontier's highest point since pages were last released
  // Free pages still mapped, below high_water_. An estimate: a run whose
  // top was released and then handed out again counts as mapped.
  uint64_t retained_pages_ = 0;
  uint64_t pages_allocated_since_sweep_ = 0;
  uint64_t budget_pages_ = UINT64_MAX;
  uint64_t pages_since_budget_ = 0;
  uint64_t committed_pages_ = 0;
  std::vector<Object> objects_;
  // Free runs below the frontier, by address, so neighbours coalesce. The
  // space holds few objects (each is at least 16 KB), so a first-fit walk
  // of this map is cheap next to the allocation it serves.
  std::map<Word*, uint64_t> free_runs_;
};

}  // namespace gc
