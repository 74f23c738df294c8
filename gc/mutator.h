// The mutator's side of a collector, inlined into the interpreter: the
// allocation fast path and the write barrier's common path, over the fields of
// gc::Collector (collector.h) that the collector keeps up to date.
#pragma once

#include <atomic>
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

// The common path's store: the slot written and its card dirtied, one
// shift and one byte store (no test of the value stored); generational
// collectors rely on it for the card invariant (markcompact/card_scan.h).
// A collector's own barrier calls it to make the store it intercepted.
inline void dirty_card(Collector& c, const Value* slot) {
  c.card_base[reinterpret_cast<uintptr_t>(slot) >> kCardShift] = kCardDirty;
}
inline void store_and_dirty(Collector& c, Value* slot, Value v) {
  *slot = v;
  dirty_card(c, slot);
}
// The same store released, for a barrier whose collector's GC threads load
// slots (with acquire) while the program runs: what they find through the
// slot is then formatted.
inline void store_released_and_dirty(Collector& c, Value* slot, Value v) {
  std::atomic_ref<uint64_t>(slot->bits).store(v.bits, std::memory_order_release);
  dirty_card(c, slot);
}

// The write barrier: every reference store into a heap object goes through
// here, with the object stored into. Where a collector selected a barrier
// of its own (Collector::write_barrier) the store is that barrier's to
// make; elsewhere that costs one load and a branch that is never taken.
inline void write_ref(Collector& c, Word* object, Value* slot, Value v) {
  if (WriteBarrier barrier = c.write_barrier) [[unlikely]] {
    barrier(c, object, slot, v);
    return;
  }
  store_and_dirty(c, slot, v);
}

}  // namespace gc
