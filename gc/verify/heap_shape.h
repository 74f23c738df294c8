// What a collector tells the heap verifier (verifier.h) about its heap: the
// description a space fills in, with nothing of the verifier or of the
// collector interface, so that a policy can describe itself.
#pragma once

#include <cstdint>
#include <vector>

#include "gc/layout.h"

namespace gc::verify {

struct SpaceRange {
  const char* name;
  const Word* begin;
  const Word* end;
};

// A run of equal-size cells (a non-moving collector's block): each cell is
// free, its first word a free-list link (tag 00), or holds one object
// starting at the cell's first word, with unused words after it.
struct CellRange {
  const char* name;
  const Word* begin;
  const Word* end;  // begin plus a whole number of cells
  uint64_t cell_words;
};

// What a collector tells the verifier about its heap right now.
struct HeapShape {
  // Spaces allocated by bumping, each walkable from begin to exactly end.
  std::vector<SpaceRange> linear_spaces;
  // Blocks of cells (segregated free lists).
  std::vector<CellRange> cell_spaces;
  // Spaces whose contents are stale (from-space): nothing may point there.
  std::vector<SpaceRange> evacuated_spaces;
  // Live large objects (header addresses) and the region they live in.
  std::vector<const Word*> large_objects;
  SpaceRange large_space{"large", nullptr, nullptr};
  // Generational heaps: the young spaces and the biased card table, for
  // the card invariant (card_scan.h); no card table: not checked.
  std::vector<SpaceRange> young_spaces;
  const uint8_t* card_base = nullptr;
  // Class ids above this are corrupt headers.
  uint32_t max_class_id = kMaxClassId;
};

}  // namespace gc::verify
