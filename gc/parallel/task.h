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
  // Slots [begin, end) of the object. A whole object is [0, nrefs): its
  // task says how many slots to scan, so scanning it does not read its
  // header again. A range's begin is never 0 (tracer.h, scan_large).
  uint32_t begin = 0;
  uint32_t end = 0;

  // nrefs fits: Header::nrefs is at most 0xFFFF << 15 (layout.h).
  static Task whole(Word* object, uint64_t nrefs) { return Task{object, 0, static_cast<uint32_t>(nrefs)}; }
  static Task slots(Word* object, uint32_t begin, uint32_t end) { return Task{object, begin, end}; }
  // One slot anywhere (a root, or a slot of an object another thread
  // scans): the whole of a pretend object of one slot whose header would
  // be the next word. Only its slot is read.
  static Task slot(Value* slot) { return Task{reinterpret_cast<Word*>(slot + 1), 0, 1}; }
  bool empty() const { return object == nullptr; }
};

}  // namespace gc::parallel
