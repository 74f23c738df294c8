// The offset table (a block-offset table, as HotSpot's old generations keep
// one): for every card of a linearly allocated space, how many words back
// from the card's first word the object covering that word starts. Card
// scanning finds the first object of a dirty card with one lookup instead
// of a walk from the start of the space.
//
// Whoever writes an object or a filler into the space records it (record,
// fill); a collector that moves objects inside the space rebuilds the table
// for the range it rewrote (rebuild). Entries of cards past a space's
// occupied part are stale and never read.
#pragma once

#include <cstdint>

#include "gc/constants.h"
#include "gc/layout.h"

namespace gc {

class OffsetTable {
 public:
  static constexpr uint64_t kCardWords = (uint64_t{1} << kCardShift) / kWordSize;

  // Covers [begin, end), both card-aligned; reserves the entries (touched
  // only where objects are recorded).
  OffsetTable(Word* begin, Word* end);
  ~OffsetTable();
  OffsetTable(const OffsetTable&) = delete;
  OffsetTable& operator=(const OffsetTable&) = delete;

  // An object (or filler) of `words` words now starts at `start`: every card
  // whose first word it covers points back to it. Objects that do not cross
  // a card start cost one compare. Different threads may record disjoint
  // objects at once (each card start lies in exactly one object).
  void record(const Word* start, uint64_t words) {
    uintptr_t s = reinterpret_cast<uintptr_t>(start);
    uintptr_t e = reinterpret_cast<uintptr_t>(start + words);
    uintptr_t card = (s + (uintptr_t{1} << kCardShift) - 1) >> kCardShift;
    for (; (card << kCardShift) < e; ++card)
      entries_[card - first_card_] = static_cast<uint32_t>(((card << kCardShift) - s) / kWordSize);
  }
  // Makes [begin, end) dead space (layout fillers) and records it.
  void fill(Word* begin, Word* end);
  // Re-records every object of the walkable range [begin, end) (after a
  // compaction rewrote it).
  void rebuild(Word* begin, Word* end);

  // The start of the object covering card_start, the first word of a card
  // (the caller knows that word lies in an occupied part).
  Word* object_start_for_card(const Word* card_start) const {
    uintptr_t card = reinterpret_cast<uintptr_t>(card_start) >> kCardShift;
    return const_cast<Word*>(card_start) - entries_[card - first_card_];
  }

 private:
  uintptr_t first_card_;
  uint64_t cards_;
  uint32_t* entries_;
};

}  // namespace gc
