// A local allocation buffer (Flood et al. 2001, section 4): a run of a space
// that one thread bumps without synchronisation. The mutator's buffer is
// Collector::top/limit; a GC worker copying into to-space holds one of these.
#pragma once

#include "gc/layout.h"

namespace gc {

struct Lab {
  Word* top = nullptr;
  Word* end = nullptr;

  bool fits(uint64_t words) const { return static_cast<uint64_t>(end - top) >= words; }
  // Bumps; the caller has checked fits().
  Word* bump(uint64_t words) {
    Word* p = top;
    top = p + words;
    return p;
  }
  // Retracts the most recent bump, if [p, p + words) was it (Flood et al.
  // 2001, L156: "A thread can also deallocate its most recent allocation").
  bool undo(Word* p, uint64_t words) {
    if (p + words != top) return false;
    top = p;
    return true;
  }
};

// A GC thread's LAB (to-space's or a promotion LAB): an object that does
// not fit the rest of it is claimed outside it, on its own, when it is
// larger than 1/8 of a LAB; smaller ones retire the LAB's tail as filler and
// take a new LAB. So a retired tail wastes less than 1/8 of its LAB
// (HotSpot's ParallelGCBufferWastePct is 10%, the same idea).
constexpr uint64_t kLabWasteFraction = 8;

// Makes [begin, end) one dead object (kFillerClass, header only plus raw
// words) so that a linear walk steps over it. Any length of at least one
// word can be filled, which is why a LAB's tail can always be retired.
inline void fill_dead_space(Word* begin, Word* end) {
  while (begin < end) {
    uint64_t raw = static_cast<uint64_t>(end - begin) - 1;
    // The raw size must be exactly representable; the largest exact size is
    // the mantissa's range, so long gaps become several fillers.
    if (raw >= (1u << SizeCode::kRawMantissaBits)) raw = (1u << SizeCode::kRawMantissaBits) - 1;
    *begin = Header::make(kFillerClass, 0, raw);
    begin += 1 + raw;
  }
}

}  // namespace gc
