// The GC threads' to-space LABs of the plans that copy with pSemispaces
// (semispace, and markcompact's young generation): the --gc-lab option
// both list, its default, and the LAB one collection uses.
#pragma once

#include <algorithm>
#include <cstdint>

#include "gc/layout.h"
#include "gc/options.h"

namespace gc {

// --gc-lab: each GC thread's to-space allocation buffer. Every collector
// that copies with pSemispaces lists this one definition in its table.
// Its default serves semispace and markcompact alike (Flood et al. 2001,
// section 4, L156: "large enough to reduce contention on the copy pointer,
// yet small enough to avoid excessive fragmentation"; the paper gives no
// value). Serially LABs are extended in place and waste nothing; in
// parallel each GC thread claims its own with one atomic bump. Measured in
// docs/collectors/semispace.md: below 8 KB the shared bump starts to show
// in GC time with 2 threads, above 64 KB the tails left at the end of a
// collection cost more to-space than they save.
inline constexpr OptionSpec kGcLabOption = size_option(
    "gc-lab", uint64_t{32} << 10, "each GC thread's to-space allocation buffer for parallel copying",
    "LAB size", "64 to 1G, e.g. 32K", 64, 1ull << 30);

// The LAB in words for --gc-lab's bytes.
constexpr uint64_t gc_lab_words(uint64_t bytes) { return std::max<uint64_t>(bytes / kWordSize, 1); }
inline constexpr uint64_t kDefaultGcLabWords = gc_lab_words(kGcLabOption.default_value);

// The LAB for one parallel copy: `lab_words`, shrunk so that the threads'
// LABs take at most a quarter of to-space's headroom (the waste bound,
// semispace/psemispaces.cpp), but not below a few objects' worth
// (kMinLabWords), under which objects are copied one CAS each.
inline constexpr uint64_t kMinLabWords = 64;
constexpr uint64_t lab_words_within(uint64_t lab_words, uint64_t headroom_words, unsigned threads) {
  return std::max(std::min(lab_words, headroom_words / (4 * threads)), std::min(kMinLabWords, lab_words));
}

}  // namespace gc
