#include "gc/collectors/cacheaware/huge.h"

#include <cstring>

#include "gc/heap/lab.h"

namespace gc::cacheaware {

bool HugeObjects::free_run(uint32_t first, uint32_t count) const {
  if (first + count > map_.count()) return false;
  for (uint32_t p = first; p < first + count; ++p) {
    const PartitionState& s = partitions_[p];
    if (s.holder >= 0 || s.floor != map_.begin(p) || s.top != map_.begin(p)) return false;
  }
  return true;
}

std::optional<uint32_t> HugeObjects::lowest_run_hosted_by(const std::vector<unsigned>& cores,
                                                          uint32_t count) const {
  std::optional<uint32_t> best;
  for (unsigned c : cores)
    for (uint32_t p : map_.hosted_by(c)) {
      if (best && p >= *best) break;
      if (free_run(p, count)) {
        best = p;
        break;
      }
    }
  return best;
}

Word* HugeObjects::allocate(unsigned core, uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  uint64_t words = object_words(nrefs, raw_words);
  uint64_t pw = map_.partition_words();
  uint32_t count = static_cast<uint32_t>((words + pw - 1) / pw);
  if (count > map_.count()) return nullptr;
  // Under line homing no core is nearer (allocator.h): the lowest run anywhere.
  std::optional<uint32_t> first;
  if (map_.homing() == Homing::kPartition) {
    first = lowest_run_hosted_by({core}, count);
    if (!first) first = lowest_run_hosted_by(mesh_.ring(core, 1), count);
    if (!first) first = lowest_run_hosted_by(mesh_.ring(core, 2), count);
  }
  if (!first)
    for (uint32_t p = 0; p + count <= map_.count(); ++p)
      if (free_run(p, count)) {
        first = p;
        break;
      }
  if (!first) return nullptr;
  Word* start = map_.begin(*first);
  Word* header = format_object(start, class_id, nrefs, raw_words);
  HugeObject o{start, header, header, *first, map_.partition_of(start + words - 1), words};
  cover(o);
  objects_.push_back(o);
  bytes_ += words * kWordSize;
  return header;
}

// Every partition it spans is covered (floor == end, the table's -1) but
// the last, where normal objects may follow it.
void HugeObjects::cover(const HugeObject& o) {
  Word* end = o.start + o.words;
  for (uint32_t p = o.first; p <= o.last; ++p) partitions_[p].floor = partitions_[p].top = map_.end(p);
  if (end < map_.end(o.last)) partitions_[o.last].floor = partitions_[o.last].top = end;
}

bool HugeObjects::free_for(const HugeObject& o, uint32_t p) const {
  const PartitionState& s = partitions_[p];
  if (p >= o.first && p < o.last) return true;
  // Nothing may follow it there: a top at the partition's end is also that
  // of normal objects filling the rest exactly.
  if (p == o.last) return s.top == o.start + o.words;
  return s.holder < 0 && s.floor == map_.begin(p) && s.top == map_.begin(p);
}

uint32_t HugeObjects::partitions_for(const HugeObject& o) const {
  uint64_t pw = map_.partition_words();
  return static_cast<uint32_t>((o.words + pw - 1) / pw);
}

std::optional<uint32_t> HugeObjects::lower_run_for(const HugeObject& o) const {
  uint32_t count = partitions_for(o);
  uint32_t run = 0;
  for (uint32_t p = 0; p < o.first; ++p) {
    run = free_for(o, p) ? run + 1 : 0;
    if (run == count) return p + 1 - count;
  }
  for (uint32_t p = o.first; p < o.first + count - 1 && p <= o.last && run > 0; ++p) {
    run = free_for(o, p) ? run + 1 : 0;
    if (run == count) return p + 1 - count;
  }
  return std::nullopt;
}

std::optional<uint32_t> HugeObjects::highest_run_for(const HugeObject& o) const {
  uint32_t count = partitions_for(o);
  uint32_t run = 0;
  for (uint32_t p = map_.count(); p-- > 0;) {
    run = free_for(o, p) ? run + 1 : 0;
    if (run == count) return p;
  }
  return std::nullopt;
}

uint64_t HugeObjects::cache() {
  std::sort(objects_.begin(), objects_.end(),
            [](const HugeObject& a, const HugeObject& b) { return a.start > b.start; });
  uint64_t bytes = 0;
  for (HugeObject& o : objects_) {
    if (Header::hash_state(*o.header) == HashState::kHashed) continue;
    std::optional<uint32_t> first = highest_run_for(o);
    if (!first || *first == o.first) continue;
    slide(o, *first);
    bytes += o.words * kWordSize;
  }
  return bytes;
}

// The run may overlap the object's own partitions (never a last partition
// that normal objects share), so it is copied before its old partitions
// are given back, and they are given back before the new ones are covered.
void HugeObjects::slide(HugeObject& o, uint32_t first) {
  HugeObject old = o;
  Word* start = map_.begin(first);
  std::memmove(start, old.start, old.words * kWordSize);
  o.header = start + (old.header - old.start);
  o.start = start;
  o.first = first;
  o.last = map_.partition_of(start + o.words - 1);
  release(old);
  bytes_ += o.words * kWordSize;
  cover(o);
}

void HugeObjects::release(const HugeObject& o) {
  for (uint32_t p = o.first; p < o.last; ++p) partitions_[p].floor = partitions_[p].top = map_.begin(p);
  PartitionState& tail = partitions_[o.last];
  Word* end = o.start + o.words;
  if (end >= map_.end(o.last)) {
    tail.floor = tail.top = map_.begin(o.last);
  } else if (tail.top == end) {
    tail.floor = tail.top = map_.begin(o.last);
  } else {
    // Normal objects follow it in its last partition: its part there
    // becomes a filler that compaction slides over.
    fill_dead_space(map_.begin(o.last), end);
    tail.floor = map_.begin(o.last);
  }
  bytes_ -= o.words * kWordSize;
}

uint64_t HugeObjects::sweep() {
  uint64_t freed = 0;
  size_t kept = 0;
  for (HugeObject& o : objects_) {
    Word hw = *o.header;
    if (!Header::is_marked(hw)) {
      freed += o.words * kWordSize;
      release(o);
      continue;
    }
    *o.header = hw & ~Header::kMarkBit;
    objects_[kept++] = o;
  }
  objects_.resize(kept);
  return freed;
}

}  // namespace gc::cacheaware
