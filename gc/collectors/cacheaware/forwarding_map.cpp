#include "gc/collectors/cacheaware/forwarding_map.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace gc::cacheaware {

namespace {

uint64_t chunks_for(uint64_t words) {
  return (words + ForwardingMap::kChunkWords - 1) / ForwardingMap::kChunkWords;
}

}  // namespace

ForwardingMap::ForwardingMap(Word* base, uint64_t words, unsigned writers)
    : base_(base),
      memory_(round_up_pages(std::max<uint64_t>(chunks_for(words), 1) * sizeof(Chunk))),
      chunks_(reinterpret_cast<Chunk*>(memory_.base())),
      writers_(writers),
      runs_(writers) {
  for (unsigned w = 0; w < writers; ++w) {
    writers_[w].map_ = this;
    writers_[w].index_ = w;
  }
}

void ForwardingMap::reset() {
  for (std::vector<Run>& runs : runs_) runs.clear();
  for (Writer& w : writers_) w.chunk_ = UINT64_MAX;
  huge_.clear();
}

void ForwardingMap::Writer::clear(Word* begin, Word* end) {
  uint64_t first = static_cast<uint64_t>(begin - map_->base_) / kChunkWords;
  uint64_t last = chunks_for(static_cast<uint64_t>(end - map_->base_));
  if (last > first) std::memset(static_cast<void*>(map_->chunks_ + first), 0, (last - first) * sizeof(Chunk));
  touched_ = std::max(touched_, last);
}

// The object's words past its first chunk: each later chunk it reaches
// begins with it.
void ForwardingMap::Writer::moved_across(uint64_t offset, uint64_t words, Word* to) {
  Chunk* chunks = map_->chunks_;
  uint64_t chunk = offset / kChunkWords, lo = offset % kChunkWords, end = offset + words;
  for (uint64_t k = chunk; k * kChunkWords < end; ++k) {
    uint64_t hi = std::min(end - k * kChunkWords, kChunkWords);
    uint64_t bits = hi == kChunkWords ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
    chunks[k].moved |= bits & ~((uint64_t{1} << lo) - 1);
    if (k != chunk) chunks[k].destination = reinterpret_cast<uint64_t>(to + (k * kChunkWords - offset));
    lo = 0;
    chunk_ = k;
  }
}

// The chunk's moved words so far form the runs before this one; its first
// run is where its destination pointed.
void ForwardingMap::Writer::split(uint64_t chunk, uint64_t offset, Word* to) {
  std::vector<Run>& runs = map_->runs_[index_];
  Chunk& c = map_->chunks_[chunk];
  if (!(c.destination & kSplit)) {
    uint64_t first = static_cast<uint64_t>(std::countr_zero(c.moved));
    Word* first_to = reinterpret_cast<Word*>(c.destination);
    c.destination = runs.size() << kWriterBits << 1 | uint64_t{index_} << 1 | kSplit;
    runs.push_back({chunk, first, first_to});
  }
  runs.push_back({chunk, offset, to});
}

Word* ForwardingMap::forward_split(uint64_t destination, uint64_t bit, uint64_t below) const {
  const std::vector<Run>& runs = runs_[destination >> 1 & ((uint64_t{1} << kWriterBits) - 1)];
  size_t i = destination >> (kWriterBits + 1);
  uint64_t chunk = runs[i].chunk;
  while (i + 1 < runs.size() && runs[i + 1].chunk == chunk && runs[i + 1].offset <= bit) ++i;
  return runs[i].to + bit_count(below & ~((uint64_t{1} << runs[i].offset) - 1));
}

void ForwardingMap::huge_moved(const Word* from, Word* to) {
  huge_.insert(std::upper_bound(huge_.begin(), huge_.end(), std::make_pair(from, to)), {from, to});
}

Word* ForwardingMap::forward_huge(Word* h) const {
  auto it =
      std::lower_bound(huge_.begin(), huge_.end(), h,
                       [](const std::pair<const Word*, Word*>& e, const Word* p) { return e.first < p; });
  return it != huge_.end() && it->first == h ? it->second : h;
}

uint64_t ForwardingMap::bytes() const {
  uint64_t chunks = 0, runs = 0;
  for (const Writer& w : writers_) chunks = std::max(chunks, w.touched_);
  for (const std::vector<Run>& r : runs_) runs += r.capacity();
  return chunks * sizeof(Chunk) + runs * sizeof(Run) + huge_.capacity() * sizeof(huge_[0]);
}

}  // namespace gc::cacheaware
