// Where compaction moved each object: the paper's local table (section
// 2.2, L126: "it records the object's new location in a table"), in a form
// the update phase computes from instead of searching. The partitions are
// cut into chunks of 64 words; per chunk it keeps a bit per word of the
// objects that moved and where the chunk's first such word went, so that a
// moved object's new header is that plus the moved words before its header
// in the chunk: one popcount (serial_markcompact.h counts its cards the
// same way, after HotSpot's parallel compactor). An object whose bit is
// clear did not move.
//
// A chunk whose moved objects did not land as one run (they went to two
// destination partitions, or to a balancing destination, or one grew its
// hash word, or one stayed in place between them) has its runs in a side
// list, each run the offset of its first word and where that went. The
// chunks cost 16 bytes per 512 bytes of partitions (1/32), reserved with
// the heap and touched only up to the highest partition used; the runs,
// 24 bytes each. Huge objects (huge.h) move after the partitions are
// compacted and are few: they keep a list of their own.
//
// Each core records the chunks of the partitions it hosts (a Writer), in
// address order; after the compaction phase every core reads any chunk.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "gc/heap/bit_count.h"
#include "gc/heap/reservation.h"
#include "gc/layout.h"

namespace gc::cacheaware {

class ForwardingMap {
  struct Chunk;

 public:
  static constexpr uint64_t kChunkWords = 64;

  // Over the `words` words from `base` (the partitions), for `writers`
  // cores.
  ForwardingMap(Word* base, uint64_t words, unsigned writers);

  // One core's records, in address order of the old addresses.
  class Writer {
   public:
    // Forgets [begin, end), chunk-aligned, before this collection's moves.
    void clear(Word* begin, Word* end);
    // The object of `words` words at `from` (its first word) now starts
    // at `to`.
    void moved(Word* from, uint64_t words, Word* to) {
      uint64_t offset = static_cast<uint64_t>(from - map_->base_);
      uint64_t chunk = offset / kChunkWords, lo = offset % kChunkWords;
      Chunk& c = map_->chunks_[chunk];
      if (chunk != chunk_)
        c.destination = reinterpret_cast<uint64_t>(to);
      else if (to != next_)
        split(chunk, lo, to);
      next_ = to + words;
      if (lo + words < kChunkWords) [[likely]] {
        c.moved |= ((uint64_t{1} << words) - 1) << lo;
        chunk_ = chunk;
        return;
      }
      moved_across(offset, words, to);
    }

   private:
    friend class ForwardingMap;
    void split(uint64_t chunk, uint64_t offset, Word* to);
    void moved_across(uint64_t offset, uint64_t words, Word* to);

    ForwardingMap* map_ = nullptr;
    unsigned index_ = 0;
    uint64_t chunk_ = UINT64_MAX;  // the chunk of the last recorded word
    Word* next_ = nullptr;         // where the next moved word of that chunk goes if it continues the run
    uint64_t touched_ = 0;         // one past the highest chunk cleared
  };
  Writer& writer(unsigned core) { return writers_[core]; }

  // Before a collection's compaction: no runs, no huge objects' moves.
  void reset();
  // A huge object's move (after compaction), by its header.
  void huge_moved(const Word* from, Word* to);

  // forward() with the map's fields as plain values: the loops that store
  // into the heap keep one in registers, where a store could otherwise
  // alias the fields and force them to be loaded again for every
  // reference. Valid until the next move is recorded.
  class Reader {
   public:
    explicit Reader(const ForwardingMap& map)
        : base_(map.base_), chunks_(map.chunks_), any_huge_(!map.huge_.empty()), map_(&map) {}

    // Where the object with header `h` is now (h itself if it did not
    // move).
    Word* forward(Word* h) const {
      uint64_t offset = static_cast<uint64_t>(h - base_);
      const Chunk& c = chunks_[offset / kChunkWords];
      uint64_t bit = offset % kChunkWords;
      uint64_t below = c.moved & ((uint64_t{1} << bit) - 1);
      if (!(c.moved >> bit & 1)) [[unlikely]]
        return any_huge_ ? map_->forward_huge(h) : h;
      if (!(c.destination & kSplit)) [[likely]]
        return reinterpret_cast<Word*>(c.destination) + bit_count(below);
      return map_->forward_split(c.destination, bit, below);
    }

   private:
    const Word* base_;
    const Chunk* chunks_;
    bool any_huge_;
    const ForwardingMap* map_;
  };
  Word* forward(Word* h) const { return Reader(*this).forward(h); }

  // The memory held: chunks up to the highest touched, runs and the huge
  // objects' list.
  uint64_t bytes() const;

 private:
  struct Chunk {
    uint64_t moved = 0;        // bit i: word i of the chunk belongs to an object that moved
    uint64_t destination = 0;  // where the first moved word went, or kSplit | the runs' place
  };
  struct Run {
    uint64_t chunk;
    uint64_t offset;  // the run's first word, within the chunk
    Word* to;
  };
  static constexpr uint64_t kSplit = 1;
  static constexpr unsigned kWriterBits = 16;

  Word* forward_split(uint64_t destination, uint64_t bit, uint64_t below) const;
  Word* forward_huge(Word* h) const;

  Word* base_;
  Reservation memory_;
  Chunk* chunks_;
  std::vector<Writer> writers_;
  std::vector<std::vector<Run>> runs_;  // per writer
  std::vector<std::pair<const Word*, Word*>> huge_;
};

}  // namespace gc::cacheaware
