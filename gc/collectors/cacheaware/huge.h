// Huge objects (Zhou and Demsky, section 4, L214-244): objects longer than
// a partition, on two or more contiguous partitions. The partition-head
// table (PartitionState::floor, allocator.h) says where normal objects may
// start in each partition: -1 (floor == end) where a huge object covers the
// partition, the huge object's end in the partition where it ends.
//
// Most collections leave live huge objects where they are and compact
// normal objects around them (L230). A collection that needs their space
// (a huge allocation found no run, or a program's gc(), or --gc-stress)
// compacts them too, by one of the paper's two ways (--ca-huge):
//   top         L233-236: cached at the top of the heap before normal
//               compaction, so that normal objects can use their space,
//               then each compacted from there to the lowest run of free
//               partitions that holds it. The allocator keeps free space
//               for the cache (Allocator::charge's reserve).
//   sequential  L238: left in place during normal compaction, then each
//               slid down to the lowest run below it that holds it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "gc/collectors/cacheaware/allocator.h"
#include "gc/collectors/cacheaware/mapping.h"
#include "gc/layout.h"

namespace gc::cacheaware {

struct HugeObject {
  Word* start;
  Word* header;
  Word* origin;    // the header where this collection found it
  uint32_t first;  // the partitions it spans, first to last
  uint32_t last;
  uint64_t words;
};

class HugeObjects {
 public:
  HugeObjects(const PartitionMap& map, const Mesh& mesh, std::vector<PartitionState>& partitions)
      : map_(map), mesh_(mesh), partitions_(partitions) {}

  // The lowest run of free partitions long enough for `words`, starting in
  // a partition of core c, then of its ring 1, ring 2, then anywhere
  // (L242: the allocator's search, each candidate checked for enough
  // contiguous free partitions). Returns the formatted object's header, or
  // nullptr.
  Word* allocate(unsigned core, uint32_t class_id, uint64_t nrefs, uint64_t raw_words);

  // After marking: dead huge objects give their partitions back; live ones
  // lose their mark. Returns the bytes freed.
  uint64_t sweep();

  // Before normal compaction (--ca-huge=top): each live huge object moves
  // to the highest run of free partitions that holds it, its own counting
  // as free, highest objects first. One with no such run stays. Returns
  // the bytes copied.
  uint64_t cache();

  // After normal compaction: each live huge object, lowest first, slides
  // down to the lowest run below it that holds it (a hashed object stays:
  // its move would grow it). `moved` then hears of each one that is not
  // where the collection found it. Returns the bytes copied by this pass.
  template <class Moved>
  uint64_t compact(Moved&& moved);

  const std::vector<HugeObject>& objects() const { return objects_; }
  uint64_t bytes() const { return bytes_; }

 private:
  bool free_run(uint32_t first, uint32_t count) const;
  std::optional<uint32_t> lowest_run_hosted_by(const std::vector<unsigned>& cores, uint32_t count) const;
  void release(const HugeObject& o);
  void cover(const HugeObject& o);
  // Whether partition p is free for `o`: empty, or its own (its last only
  // when nothing follows it there).
  bool free_for(const HugeObject& o, uint32_t p) const;
  uint32_t partitions_for(const HugeObject& o) const;
  // The lowest first partition of a run that can hold `o` below it, and
  // the highest of any run that can hold it.
  std::optional<uint32_t> lower_run_for(const HugeObject& o) const;
  std::optional<uint32_t> highest_run_for(const HugeObject& o) const;
  void slide(HugeObject& o, uint32_t first);

  const PartitionMap& map_;
  const Mesh& mesh_;
  std::vector<PartitionState>& partitions_;
  std::vector<HugeObject> objects_;
  uint64_t bytes_ = 0;
};

template <class Moved>
uint64_t HugeObjects::compact(Moved&& moved) {
  std::sort(objects_.begin(), objects_.end(),
            [](const HugeObject& a, const HugeObject& b) { return a.start < b.start; });
  uint64_t bytes = 0;
  for (HugeObject& o : objects_) {
    if (Header::hash_state(*o.header) == HashState::kHashed) continue;
    std::optional<uint32_t> first = lower_run_for(o);
    if (!first) continue;
    slide(o, *first);
    bytes += o.words * kWordSize;
  }
  for (HugeObject& o : objects_) {
    if (o.header != o.origin) moved(o.origin, o.header);
    o.origin = o.header;
  }
  return bytes;
}

}  // namespace gc::cacheaware
