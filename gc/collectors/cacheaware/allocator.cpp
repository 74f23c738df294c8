#include "gc/collectors/cacheaware/allocator.h"

#include <algorithm>
#include <cstring>

namespace gc::cacheaware {

namespace {

constexpr uint64_t kClearBlockWords = kClearBlockBytes / kWordSize;
// A partition with less room than this is not worth a block: the search
// passes it by (its tail stays free until the next collection compacts).
constexpr uint64_t kMinBlockWords = 16;

}  // namespace

const char* search_step_name(SearchStep step) {
  switch (step) {
    case SearchStep::kLocal:
      return "local";
    case SearchStep::kRing1:
      return "ring 1";
    case SearchStep::kRing2:
      return "ring 2";
    case SearchStep::kGlobal:
      return "global";
    default:
      return "none";
  }
}

Allocator::Allocator(const PartitionMap& map, const Mesh& mesh, std::vector<PartitionState>& partitions,
                     unsigned global_search_percent)
    : map_(map),
      mesh_(mesh),
      partitions_(partitions),
      global_search_percent_(global_search_percent),
      cores_(mesh.cores()),
      cursor_(mesh.cores(), 0) {}

// Second level

Word* Allocator::allocate(unsigned c, uint64_t words, bool after_collection) {
  Core& core = cores_[c];
  for (unsigned k = 0; k < 2; ++k) {
    unsigned i = (core.current + k) % 2;
    Block& b = core.blocks[i];
    if (b.partition >= 0 && b.room() >= words) {
      clear_to(b, b.top + words);
      core.current = i;
      Word* p = b.top;
      b.top += words;
      return p;
    }
  }
  if (!take_block(c, words, after_collection)) return nullptr;
  Block& b = core.blocks[core.current];
  clear_to(b, b.top + words);
  Word* p = b.top;
  b.top += words;
  return p;
}

// L203: memory is cleared when it is used, a block of 4096 bytes at a time,
// so that clearing is spread over the run and new objects are in cache.
void Allocator::clear_to(Block& b, Word* need) {
  while (b.cleared < need) {
    Word* next = std::min(b.end, b.cleared + kClearBlockWords);
    std::memset(b.cleared, 0, static_cast<size_t>(next - b.cleared) * kWordSize);
    counters_.bytes_cleared += static_cast<uint64_t>(next - b.cleared) * kWordSize;
    b.cleared = next;
  }
}

// The new block replaces the one with less room; the other is kept (L203).
bool Allocator::take_block(unsigned c, uint64_t words, bool after_collection) {
  auto [step, p] = search(c, words, after_collection);
  if (step == SearchStep::kNone) {
    counters_.refused++;
    return false;
  }
  counters_.blocks[static_cast<unsigned>(step)]++;
  Core& core = cores_[c];
  unsigned slot = core.blocks[0].partition < 0                     ? 0
                  : core.blocks[1].partition < 0                   ? 1
                  : core.blocks[0].room() <= core.blocks[1].room() ? 0
                                                                   : 1;
  Block& b = core.blocks[slot];
  if (b.partition >= 0) {
    PartitionState& old = partitions_[static_cast<uint32_t>(b.partition)];
    old.top = b.top;
    old.holder = -1;
    taken_bytes_ += static_cast<uint64_t>(b.top - b.start) * kWordSize;
  }
  PartitionState& s = partitions_[p];
  extend_frontier(p + 1);
  s.holder = static_cast<int32_t>(c);
  b.partition = p;
  b.top = b.cleared = b.start = s.top;
  b.end = map_.end(p);
  core.current = slot;
  return true;
}

// Top level

bool Allocator::usable(uint32_t p, uint64_t min_words) const {
  const PartitionState& s = partitions_[p];
  uint64_t room = static_cast<uint64_t>(map_.end(p) - s.top);
  return s.holder < 0 && s.floor < map_.end(p) && room >= std::max(min_words, kMinBlockWords);
}

// A core's partitions fill from the lowest; the cursor passes those too
// full for any block, so each is looked at once per collection cycle.
std::optional<uint32_t> Allocator::lowest_of(unsigned c, uint64_t min_words) {
  const std::vector<uint32_t>& hosted = map_.hosted_by(c);
  uint32_t& cursor = cursor_[c];
  while (cursor < hosted.size() && !usable(hosted[cursor], 0) && partitions_[hosted[cursor]].holder < 0)
    ++cursor;
  for (uint32_t i = cursor; i < hosted.size(); ++i)
    if (usable(hosted[i], min_words)) return hosted[i];
  return std::nullopt;
}

std::optional<uint32_t> Allocator::lowest_in_ring(unsigned c, unsigned distance, uint64_t min_words) {
  std::optional<uint32_t> best;
  for (unsigned n : mesh_.ring(c, distance))
    if (auto p = lowest_of(n, min_words); p && (!best || *p < *best)) best = p;
  return best;
}

uint64_t Allocator::budget() const {
  uint64_t spoken_for = used_after_ + reserved_bytes_;
  return trigger_bytes_ > spoken_for ? trigger_bytes_ - spoken_for : 0;
}

std::pair<SearchStep, uint32_t> Allocator::search(unsigned c, uint64_t min_words, bool after_collection) {
  uint64_t budget = this->budget();
  uint64_t taken = taken_bytes();
  if (!after_collection && taken + min_words * kWordSize > budget) return {SearchStep::kNone, 0};
  // Under line homing no core's partitions are nearer to it than the rest
  // (L264-267), so none is preferred and the whole heap is open.
  if (map_.homing() == Homing::kLines) return lowest_anywhere(min_words);
  if (auto p = lowest_of(c, min_words)) return {SearchStep::kLocal, *p};
  if (auto p = lowest_in_ring(c, 1, min_words)) return {SearchStep::kRing1, *p};
  if (auto p = lowest_in_ring(c, 2, min_words)) return {SearchStep::kRing2, *p};
  if (!global_flag_ && taken * 100 < budget * global_search_percent_) global_flag_ = true;
  if (!global_flag_ && !after_collection) return {SearchStep::kNone, 0};
  return lowest_anywhere(min_words);
}

std::pair<SearchStep, uint32_t> Allocator::lowest_anywhere(uint64_t min_words) {
  std::optional<uint32_t> best;
  for (unsigned k = 0; k < mesh_.cores(); ++k)
    if (auto p = lowest_of(k, min_words); p && (!best || *p < *best)) best = p;
  if (best) return {SearchStep::kGlobal, *best};
  return {SearchStep::kNone, 0};
}

bool Allocator::charge(uint64_t bytes, uint64_t reserve, bool after_collection) {
  if (!after_collection && taken_bytes() + bytes + reserve > budget()) return false;
  taken_bytes_ += bytes;
  reserved_bytes_ += reserve;
  return true;
}

uint64_t Allocator::taken_bytes() const {
  uint64_t words = 0;
  for (const Core& core : cores_)
    for (const Block& b : core.blocks)
      if (b.partition >= 0) words += static_cast<uint64_t>(b.top - b.start);
  return taken_bytes_ + words * kWordSize;
}

void Allocator::retire_all() {
  for (Core& core : cores_)
    for (Block& b : core.blocks) {
      if (b.partition < 0) continue;
      PartitionState& s = partitions_[static_cast<uint32_t>(b.partition)];
      s.top = b.top;
      s.holder = -1;
      b = Block{};
    }
}

void Allocator::reset(uint64_t used_bytes, uint64_t trigger_bytes) {
  used_after_ = used_bytes;
  trigger_bytes_ = trigger_bytes;
  taken_bytes_ = 0;
  reserved_bytes_ = 0;
  global_flag_ = false;
  std::fill(cursor_.begin(), cursor_.end(), 0);
}

AllocatorCounters Allocator::take_counters() {
  AllocatorCounters c = counters_;
  counters_ = AllocatorCounters{};
  return c;
}

}  // namespace gc::cacheaware
