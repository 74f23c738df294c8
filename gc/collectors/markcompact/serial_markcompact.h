// The serial mark-compact collector of the old generation: the sequential
// algorithm pMarkcompact parallelises (Flood et al. 2001, section 5, L176:
// mark, install forwarding addresses, redirect references, compact), the
// "seq" baseline of the paper's Table 1 for old collections
// (--gc-threads=0), with ParallelMarkCompact::collect's input and result.
//
// The header word has no room for a forwarding address (layout.h), so
// none is stored: per card of the old space (64 words) it records the
// first object starting there, its destination, and a bit per live word,
// and an object's new address is its card's destination plus the live
// words before it in the card, one popcount (HotSpot's parallel compactor
// counts a mark bitmap the same way).
//
// Live objects slide to the start of the space in address order, after a
// dense prefix that stays in place: the optimisation of the paper's
// sequential collector that pMarkcompact lacked (L259), "avoids copying
// large blocks of data when there is only a small amount of free area to
// be reclaimed". Its form here is HotSpot's serial mark-compact's
// (MarkSweepDeadRatio): leading objects keep their place while the dead
// words met so far are at most 1 - dense_prefix_min_live of the old space
// (5%); the dead object that would pass that ends the prefix, and those
// before it stay as fillers. Young objects are neither marked nor moved:
// all of them survived the young collection just before, so every one is
// a root.
#pragma once

#include <cstdint>
#include <vector>

#include "gc/collectors/markcompact/pmarkcompact.h"

namespace gc {

class SerialMarkCompact {
 public:
  // options: the dense prefix (on, and its threshold) and poisoning; the
  // parallel engine's other options do not apply.
  SerialMarkCompact(observe::Recorder& events, const MarkCompactOptions& options);

  ParallelMarkCompact::Result collect(const ParallelMarkCompact::Input& in);

 private:
  class WeakResolver;

  // --- the four phases, in the paper's order (the dense prefix found
  // between the first two)
  void mark(const ParallelMarkCompact::Input& in);
  void find_dense_prefix();
  void install_forwarding();
  void redirect(const ParallelMarkCompact::Input& in);
  Word* compact(const ParallelMarkCompact::Input& in);

  void mark_slots(Word* h);
  void mark_value(Value v);
  void mark_live_words(Word* from, Word* to);
  void redirect_slots(Word* h);
  void dirty_young_cards(const ParallelMarkCompact::Input& in, Word* h) const;
  Word* forward(Word* h) const;
  bool in_old(const Word* p) const { return p >= begin_ && p < end_; }
  bool in_young(const Word* p) const;
  // An object's size at its destination: a moving object in state kHashed
  // grows one word for its hash.
  static uint64_t size_at(Word* start, Word header, const Word* dest);

  observe::Recorder& events_;
  bool poison_;
  bool dense_prefix_;
  double dense_prefix_min_live_;
  Word* begin_ = nullptr;
  Word* end_ = nullptr;
  Word* prefix_end_ = nullptr;  // [begin_, prefix_end_) does not move
  uint64_t prefix_dead_words_ = 0;
  const ParallelMarkCompact::Input* in_ = nullptr;
  bool has_young_ = false;  // young objects survive this collection (none, usually: all were promoted)
  std::vector<Word*> stack_;
  // The collection's recording (--gc-animate), if it is recorded.
  observe::Recording* recording_ = nullptr;
  // Per card of [begin_, end_): the first object starting at or after the
  // card's first word, and its destination.
  std::vector<Word*> card_first_;
  std::vector<Word*> card_dest_;
  std::vector<uint64_t> live_words_;  // per card: bit i = word i is live
  std::vector<uint8_t> card_grows_;   // per card: an object starting there grows as it moves
  uint64_t moved_bytes_ = 0;
  uint64_t moved_objects_ = 0;
};

}  // namespace gc
