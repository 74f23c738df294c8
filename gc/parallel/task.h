// One unit of tracing work (Flood et al. 2001, section 3.2: "The tasks are
// references to objects to be scanned"): an object whose reference slots
// must be scanned, or, for a large array, a range of its slots (the chunking
// the paper suggests in footnote 2 and did not implement).
#pragma once

#include <cstdint>

#include "gc/layout.h"

namespace gc::parallel {

struct Task {
  Word* object = nullptr;  // header address
  // Slots [begin, end) of the object; begin == end == 0 means all of them.
  uint32_t begin = 0;
  uint32_t end = 0;

  static Task whole(Word* object) { return Task{object, 0, 0}; }
  static Task slots(Word* object, uint32_t begin, uint32_t end) { return Task{object, begin, end}; }
  bool is_range() const { return end != 0; }
  bool empty() const { return object == nullptr; }
};

}  // namespace gc::parallel
