// The serial mark-compact collector of the old generation: the sequential
// algorithm pMarkcompact parallelises (Flood et al. 2001, section 5, L176:
// mark, install forwarding addresses, redirect references, compact), the
// "seq" baseline of the paper's Table 1 for old collections
// (--gc-threads=0), with ParallelMarkCompact::collect's input and result.
//
// The header word has no room for a forwarding address (layout.h), so
// none is stored: per card of the old space it records the first object
// starting there and its destination, and an object's new address is its
// card's destination plus the live words before it in the card.
//
// Live objects slide to the start of the space in address order. Young
// objects are neither marked nor moved: all of them survived the young
// collection just before, so every one is a root.
#pragma once

#include <cstdint>
#include <vector>

#include "gc/collectors/markcompact/pmarkcompact.h"

namespace gc {

class SerialMarkCompact {
 public:
  SerialMarkCompact(observe::Recorder& events, bool poison_free_areas);

  ParallelMarkCompact::Result collect(const ParallelMarkCompact::Input& in);

 private:
  class WeakResolver;

  // --- the four phases, in the paper's order
  void mark(const ParallelMarkCompact::Input& in);
  void install_forwarding();
  void redirect(const ParallelMarkCompact::Input& in);
  Word* compact(const ParallelMarkCompact::Input& in);

  void mark_slots(Word* h);
  void mark_value(Value v);
  void redirect_slots(Word* h);
  Word* forward(Word* h) const;
  bool in_old(const Word* p) const { return p >= begin_ && p < end_; }
  bool in_young(const Word* p) const;
  // An object's size at its destination: a moving object in state kHashed
  // grows one word for its hash.
  static uint64_t size_at(Word* start, Word header, const Word* dest);

  observe::Recorder& events_;
  bool poison_;
  Word* begin_ = nullptr;
  Word* end_ = nullptr;
  const ParallelMarkCompact::Input* in_ = nullptr;
  std::vector<Word*> stack_;
  // Per card of [begin_, end_): the first object starting at or after the
  // card's first word, and its destination.
  std::vector<Word*> card_first_;
  std::vector<Word*> card_dest_;
  uint64_t moved_bytes_ = 0;
  uint64_t moved_objects_ = 0;
};

}  // namespace gc
