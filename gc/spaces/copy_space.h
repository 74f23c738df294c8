// A copy space (MMTk's CopySpace policy): one region of the reservation
// filled by bumping, emptied all at once when its survivors have been
// evacuated (semispace's two, markcompact's young generation). Its capacity
// is a prefix of the region, so resizing never moves it.
#pragma once

#include <cstdint>
#include <cstring>

#include "gc/heap/lab.h"
#include "gc/layout.h"

namespace gc {

// Internal error: a collection's copies overran to-space's region.
// Unreachable by construction: the plans check room before collecting.
[[noreturn]] void to_space_overflow();

// Copies n words of an object being evacuated. Small objects dominate: a
// part of at most 8 words is copied as at most four 16-byte moves,
// overlapping where n is odd, with no loop and no call; memcpy beyond.
[[gnu::always_inline]] inline void copy_words(Word* dst, const Word* src, uint64_t n) {
  auto pair = [&](uint64_t i) { __builtin_memcpy(dst + i, src + i, 2 * kWordSize); };
  if (n > 8) [[unlikely]] {
    std::memcpy(dst, src, n * kWordSize);
  } else if (n >= 4) {
    pair(0);
    pair(2);
    pair(n - 4);
    pair(n - 2);
  } else if (n >= 2) {
    pair(0);
    pair(n - 2);
  } else if (n == 1) {
    dst[0] = src[0];
  }
}

class CopySpace {
 public:
  CopySpace(const char* name, Word* region_begin, Word* region_end)
      : name_(name), begin_(region_begin), region_end_(region_end), top_(region_begin), end_(region_begin) {}

  const char* name() const { return name_; }
  Word* begin() const { return begin_; }
  Word* top() const { return top_; }  // end of the objects
  Word* end() const { return end_; }  // end of the capacity
  Word* region_end() const { return region_end_; }
  uint64_t capacity_bytes() const { return static_cast<uint64_t>(end_ - begin_) * kWordSize; }
  uint64_t used_bytes() const { return static_cast<uint64_t>(top_ - begin_) * kWordSize; }
  uint64_t region_bytes() const { return static_cast<uint64_t>(region_end_ - begin_) * kWordSize; }

  // One unsigned compare: the test the scavenger makes for every reference.
  bool contains(const Word* p) const {
    return static_cast<uint64_t>(p - begin_) < static_cast<uint64_t>(top_ - begin_);
  }
  bool in_region(const Word* p) const { return p >= begin_ && p < region_end_; }

  // Empties the space and gives it capacity_bytes (page multiple, at most
  // the region).
  void reset(uint64_t capacity_bytes);
  void set_capacity(uint64_t capacity_bytes);
  void set_top(Word* top) { top_ = top; }

  // Serial copying (--gc-threads=0; not thread-safe): room for at least
  // min_words, up to the region's end (the sizing policy guarantees that
  // survivors fit). A LAB at the frontier is extended in place, so the LABs
  // form one run, the Cheney scan's queue; another has its tail retired as
  // filler. False if the region cannot hold min_words more.
  bool claim_lab(Lab& lab, uint64_t min_words, uint64_t lab_words);
  // After a collection: gives back the unused tail of the last worker's
  // LAB, so the objects end at the space's top.
  void retire_lab(Lab& lab);

  // Parallel copying (Flood et al. 2001, section 4, L156: "atomic allocation
  // only to allocate relatively large regions called local allocation
  // buffers"): claims between min_words and max_words with one CAS on top;
  // nullptr when the region cannot hold min_words; *got is the size.
  Word* claim_shared(uint64_t min_words, uint64_t max_words, uint64_t* got);
  // Gives back [p, p + words) if nothing was claimed after it (the top is
  // still its end); false otherwise, and the caller fills it as dead space.
  bool unclaim_shared(Word* p, uint64_t words);

  // Overwrites [begin, top) with Header::kPoison (stress and verify modes).
  void poison_contents();

 private:
  const char* name_;
  Word* begin_;
  Word* region_end_;
  Word* top_;
  Word* end_;
};

}  // namespace gc
