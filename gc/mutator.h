// The mutator's side of a collector, inlined into the interpreter: the
// allocation fast path and the write barrier, over the fields of
// gc::Collector (collector.h) that the collector keeps up to date.
#pragma once

#include <cstdint>

#include "gc/collector.h"
#include "gc/constants.h"
#include "gc/layout.h"

namespace gc {

// The allocation fast path, inlined into the interpreter: a bump of the
// collector's buffer, or else one pop of a size class's free list (free-list
// collectors keep top == limit and pay one failed compare). Everything else
// is the collector's slow path.
inline Word* allocate(Collector& c, uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  uint64_t words = object_words(nrefs, raw_words);
  if (nrefs < (1u << SizeCode::kRefMantissaBits) && raw_words < (1u << SizeCode::kRawMantissaBits) &&
      words * kWordSize < kLargeObjectBytes) [[likely]] {
    Word* p = c.top;
    if (static_cast<uint64_t>(c.limit - p) >= words) [[likely]] {
      c.top = p + words;
      return format_object(p, class_id, nrefs, raw_words);
    }
    if (const uint8_t* classes = c.size_class_of) {
      Word** head = c.free_lists + classes[words];
      if (Word* cell = *head) [[likely]] {
        *head = reinterpret_cast<Word*>(*cell);
        return format_object(cell, class_id, nrefs, raw_words);
      }
    }
  }
  if (c.overhead_limit_exceeded()) [[unlikely]]
    return nullptr;
  return c.allocate_slow(class_id, rounded_refs(nrefs), rounded_raw(raw_words));
}

// A reference mirror's entry for a slot holding v: the referent's header
// as a word offset from the mirror's origin, or kMirrorNoRef when v is
// not a reference (so a mirror reaches at most 2^32 - 1 words).
constexpr uint32_t kMirrorNoRef = 0xFFFF'FFFF;
constexpr uint32_t mirror_entry(uint64_t origin, Value v) {
  return v.is_ref() ? static_cast<uint32_t>((v.bits - origin) >> 3) : kMirrorNoRef;
}

// The second write of a reference store, into a mirror (biased as
// Collector::ref_mirror is).
inline void mirror_store(uint32_t* biased, uint64_t origin, const Value* slot, Value v) {
  biased[reinterpret_cast<uintptr_t>(slot) >> 3] = mirror_entry(origin, v);
}

// The write barrier: every reference store into a heap object goes through
// here. It dirties the card of the slot unconditionally (no test of the
// value stored), which is one shift and one byte store; generational
// collectors rely on it for the card invariant (markcompact/card_scan.h).
// Where a collector keeps a reference mirror, the store is written twice,
// the second time into the mirror (Maas et al. 2012's double-write, L593-598);
// elsewhere that costs one load and a branch that is never taken.
inline void write_ref(Collector& c, Value* slot, Value v) {
  *slot = v;
  c.card_base[reinterpret_cast<uintptr_t>(slot) >> kCardShift] = kCardDirty;
  if (uint32_t* mirror = c.ref_mirror) [[unlikely]]
    mirror_store(mirror, c.ref_mirror_origin, slot, v);
}

}  // namespace gc
