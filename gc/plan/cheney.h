// Cheney's serial copying collection (Cheney 1970), the serial form of
// pSemispaces (copy_scavenger.h) and the baseline of Flood et al.'s Table 1
// "seq" column: to-space is its own queue of objects to scan. The scan
// pointer chases the copy pointer through one contiguous run of to-space
// (CopySpace::claim_lab extends the LAB in place), so no object is ever
// pushed anywhere. Run with --gc-threads=0 by semispace (SerialScavenger,
// semispace/semispace.cpp) and by markcompact's young collections, where
// promotion is a hook (SerialPromotingScavenger,
// markcompact/serial_scavenger.h).
//
// A scavenger `Derived` supplies, resolved at compile time (the defaults
// below copy everything into to-space and trace nothing else):
//
//   void target_outside_from_space(uintptr_t addr)
//                                        a reference outside from-space
//   Word* allocate_copy(Word h, uint64_t words, Word& new_header)
//                                        where a survivor goes
//   void copied(Word* start, Word* moved, uint64_t words)
//   bool scan_other_grey()               scans grey objects outside
//                                        to-space; false if there were none
#pragma once

#include <algorithm>
#include <cstring>

#include "gc/heap/identity_hash.h"
#include "gc/heap/lab.h"
#include "gc/layout.h"
#include "gc/observe/recording.h"
#include "gc/parallel/worker_stats.h"
#include "gc/spaces/copy_space.h"

namespace gc {

template <class Derived>
class CheneyScavenger {
 public:
  CheneyScavenger(const Reservation& reservation, CopySpace& to, const Word* from_begin, const Word* from_end,
                  uint64_t lab_words)
      : recording_(observe::Recording::active()),
        reservation_(reservation),
        to_(to),
        from_begin_(reinterpret_cast<uintptr_t>(from_begin)),
        from_bytes_(static_cast<uint64_t>(from_end - from_begin) * kWordSize),
        to_begin_(reinterpret_cast<uintptr_t>(to.begin())),
        to_bytes_(to.region_bytes()),
        lab_words_(lab_words),
        scan_(to.begin()) {
    lab_.top = lab_.end = to.begin();
  }

  // Roots and slots alike: copy (or find the copy of) a from-space target
  // and redirect the slot.
  [[gnu::always_inline]] void scavenge_slot(Value* slot) {
    uint64_t bits = slot->bits;
    if ((bits & Value::kTagMask) != Value::kRefTag) return;
    uintptr_t addr = static_cast<uintptr_t>(bits & ~Value::kTagMask);
    if (addr - from_begin_ < from_bytes_) {
      slot->bits = Value::kRefTag | reinterpret_cast<uintptr_t>(forward(reinterpret_cast<Word*>(addr)));
    } else {
      derived().target_outside_from_space(addr);
    }
  }

  // The transitive closure: to-space's grey objects, then the scavenger's
  // others, until neither has any.
  void trace() {
    for (;;) {
      scan_to_space();
      if (!derived().scan_other_grey()) return;
    }
  }

  // Ends the copying: the space's top is the copy pointer.
  void finish() { to_.retire_lab(lab_); }

  // True if v refers to an object in to-space.
  bool refers_to_young(Value v) const {
    return v.is_ref() && reinterpret_cast<uintptr_t>(v.as_ref()) - to_begin_ < to_bytes_;
  }

  const parallel::WorkerStats& stats() const { return stats_; }

 protected:
  Derived& derived() { return static_cast<Derived&>(*this); }

  void target_outside_from_space(uintptr_t) {}
  Word* allocate_copy(Word, uint64_t words, Word&) { return to_allocate(words); }
  void copied(Word*, Word*, uint64_t) {}
  bool scan_other_grey() { return false; }

  [[gnu::always_inline]] void scan_slots(Word* h, uint64_t n) {
    Value* slots = ref_slots_begin(h, n);
    for (uint64_t i = 0; i < n; ++i) scavenge_slot(slots + i);
  }

  bool to_lab_fits(uint64_t words) const { return lab_.fits(words); }
  // Survivors kept young so far: to-space up to the copy pointer.
  uint64_t kept_young_bytes() const {
    return lab_.top ? static_cast<uint64_t>(reinterpret_cast<uintptr_t>(lab_.top) - to_begin_) : 0;
  }

  Word* to_allocate(uint64_t words) {
    if (!lab_.fits(words)) [[unlikely]]
      refill_lab(words);
    return lab_.bump(words);
  }

  parallel::WorkerStats stats_;
  observe::Recording* recording_;  // the collection's, if it is recorded (--gc-animate)

 private:
  // Cheney's scan: the objects between the scan pointer and the copy
  // pointer (the LAB's top) are grey; scanning one may copy more.
  void scan_to_space() {
    while (scan_ < lab_.top) {
      Word* h = header_from_start(scan_);
      Word header = *h;
      if (recording_) [[unlikely]]
        recording_->scan(0, h);
      scan_slots(h, Header::nrefs(header));
      scan_ = h + 1 + Header::raw_words(header);
    }
  }

  [[gnu::always_inline]] Word* forward(Word* old) {
    Word h = *old;
    if (Header::is_forwarded(h)) return reinterpret_cast<Word*>(h);
    return copy(old, h);
  }

  // The whole object (count word, slots, header, raw words) moves at once; the old header word becomes the
  // forwarding pointer. An object hashed at its current address keeps that hash in a new last raw word
  // (layout.h, HashState).
  [[gnu::always_inline]] Word* copy(Word* old, Word h) {
    uint64_t below = words_below(Header::nrefs(h));
    uint64_t raw = Header::raw_words(h);
    uint64_t words = below + 1 + raw_words_when_moved(h);
    Word new_header = h;
    Word* dst = derived().allocate_copy(h, words, new_header);
    copy_words(dst, old - below, below + 1 + raw);
    Word* moved = dst + below;
    if (grows_when_moved(h)) [[unlikely]]
      new_header = grow_hash_word(moved, new_header, address_hash(reservation_, old));
    *moved = new_header;
    *old = reinterpret_cast<Word>(moved);
    stats_.objects_copied++;
    stats_.bytes_copied += words * kWordSize;
    if (recording_) [[unlikely]]
      recording_->copy(0, old, moved);
    derived().copied(dst, moved, words);
    return moved;
  }

  [[gnu::noinline]] void refill_lab(uint64_t words) {
    if (!to_.claim_lab(lab_, words, lab_words_)) to_space_overflow();
  }

  const Reservation& reservation_;
  CopySpace& to_;
  uintptr_t from_begin_;
  uint64_t from_bytes_;
  uintptr_t to_begin_;
  uint64_t to_bytes_;
  uint64_t lab_words_;
  Lab lab_;
  Word* scan_;
};

}  // namespace gc
