// Huge objects (Zhou and Demsky, section 4, L214-244): objects longer than
// a partition, on two or more contiguous partitions. The partition-head
// table (PartitionState::floor, allocator.h) says where normal objects may
// start in each partition: -1 (floor == end) where a huge object covers the
// partition, the huge object's end in the partition where it ends.
//
// Live huge objects stay where they are while normal objects are compacted
// around them, and are then compacted by one sequential pass, each slid
// down to the lowest run of free partitions that holds it: the alternative
// L238 describes, which needs no free space reserved at the top of the
// heap. The paper's own choice (huge objects cached at the top, compacted
// last) is not implemented; docs/collectors/cacheaware.md says why.
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

  // After normal compaction: the sequential pass over live huge objects,
  // lowest first. `moved` hears of each one that moves (a hashed object
  // stays: its move would grow it). Returns the bytes moved.
  template <class Moved>
  uint64_t compact(Moved&& moved);

  const std::vector<HugeObject>& objects() const { return objects_; }
  uint64_t bytes() const { return bytes_; }

 private:
  bool free_run(uint32_t first, uint32_t count) const;
  std::optional<uint32_t> lowest_run_hosted_by(const std::vector<unsigned>& cores, uint32_t count) const;
  void release(const HugeObject& o);
  void cover(const HugeObject& o);
  // The lowest first partition of a run that can hold `o` below it, its
  // own partitions counting as free.
  std::optional<uint32_t> lower_run_for(const HugeObject& o) const;
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
    Word* old_header = o.header;
    slide(o, *first);
    moved(old_header, o.header);
    bytes += o.words * kWordSize;
  }
  return bytes;
}

}  // namespace gc::cacheaware
