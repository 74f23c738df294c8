// The old generation's space (MMTk's mark-compact space): objects arrive by
// promotion through the GC threads' promotion LABs (Flood et al. 2001,
// L164: "old-generation promotion therefore uses the same LAB-based
// allocation technique as to-space allocation") and leave only when a full
// collection compacts the space.
//
// A compaction leaves free areas (pMarkcompact: floor((n+1)/2) of them);
// promotion fills them in address order, bumping each one's top with a
// compare-and-swap, its tail becoming filler when it cannot hold a claim,
// so the occupied runs stay walkable. The capacity the sizing policy lets
// the space use is a prefix of its reservation.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gc/layout.h"
#include "gc/spaces/offset_table.h"

namespace gc {

class OldSpace {
 public:
  struct Area {
    Word* begin;
    Word* top;  // claims so far end here; nullptr once claims have left the area
    Word* end;
  };
  struct Run {
    Word* begin;
    Word* end;
  };

  OldSpace(Word* region_begin, Word* region_end, OffsetTable& offsets);

  Word* begin() const { return begin_; }
  Word* end() const { return end_; }  // end of the capacity
  Word* region_end() const { return region_end_; }
  bool contains(const Word* p) const { return p >= begin_ && p < end_; }
  uint64_t capacity_bytes() const { return static_cast<uint64_t>(end_ - begin_) * kWordSize; }
  uint64_t free_bytes() const;
  uint64_t used_bytes() const { return capacity_bytes() - free_bytes(); }
  const std::vector<Area>& areas() const { return areas_; }
  // The occupied runs, walkable, in address order.
  void occupied_runs(std::vector<Run>& out) const;

  // Grows the capacity to `bytes` (page multiple, at most the region).
  void grow_to(uint64_t bytes);
  // After a full collection: the objects occupy `runs` (in address order)
  // and the rest of the capacity is free, shrunk or grown to `capacity`.
  void reset_after_compaction(const std::vector<Run>& runs, uint64_t capacity_bytes);

  // A promotion LAB of min_words to max_words (*got) from the free areas,
  // or nullptr; safe from several GC threads at once.
  Word* claim_shared(uint64_t min_words, uint64_t max_words, uint64_t* got);
  // Gives back [p, p + words) if it is still the end of its area's claims.
  bool unclaim_shared(Word* p, uint64_t words);
  // Before a full collection: every free area's unclaimed part becomes
  // filler, except one that ends the capacity, so that [begin, returned
  // end) is one walkable run holding every object.
  Word* fill_free_areas();
  // Touches the next `bytes` of free space in the order promotion claims
  // it (each cache line's first word read and written back unchanged), so
  // that those lines wait in this thread's caches, owned, for the copies
  // that will be written there. Not while a collection claims.
  void touch_next_claims(uint64_t bytes) const;

 private:
  Word* begin_;
  Word* end_;
  Word* region_end_;
  OffsetTable& offsets_;
  std::vector<Area> areas_;
  std::atomic<size_t> current_{0};  // the area claims go to
};

}  // namespace gc
