// --gpu-graph=double-write: the reference graph kept up to date by the
// write barrier, the paper's second approach (Maas et al. 2012, section
// 4.3, L593-598), instead of rebuilt before every collection (L586-592).
//
// The barrier must find a slot's entry from the slot's address alone, so
// the graph is laid out at the heap's own positions: one 32-bit entry per
// heap word, which gpu's write barrier keeps (gpu.cpp, double_write). At an object's header
// position the node's header, its slot count << 1 | mark; slot i's entry
// i + 1 below it, as in the heap (gc/layout.h), holding the referent's
// position or kMirrorNoRef. Every slot has an entry because any slot may
// come to hold a reference (the paper's Java had typed fields); the back
// reference is the position itself. Entries at raw words and free cells
// are never read.
//
// Which nodes are up to date is the `known` bitmap, a bit per position.
// A node is known from the collection that builds it until the one that
// finds its object unmarked: that object's cell is freed by the sweep that
// follows, so a known position holds the very object the node was built
// for, and the barrier has written every store into it since. Fiber value
// stacks, which the interpreter writes without the barrier, are built
// again every time.
#pragma once

#include <cstdint>
#include <optional>

#include "gc/collector.h"
#include "gc/heap/reservation.h"
#include "gc/layout.h"
#include "gc/verify/verifier.h"

namespace gc::gpu {

class MarkableHeap;

// A mirror's entry for a slot holding v: the referent's header as a word
// offset from the mirror's origin, or kMirrorNoRef when v is not a
// reference (so a mirror reaches at most 2^32 - 1 words).
constexpr uint32_t kMirrorNoRef = 0xFFFF'FFFF;
constexpr uint32_t mirror_entry(uint64_t origin, Value v) {
  return v.is_ref() ? static_cast<uint32_t>((v.bits - origin) >> 3) : kMirrorNoRef;
}

// The second write of a reference store, into a mirror biased as
// ReferenceMirror::biased() is: entry = biased[address >> 3].
inline void mirror_store(uint32_t* biased, uint64_t origin, const Value* slot, Value v) {
  biased[reinterpret_cast<uintptr_t>(slot) >> 3] = mirror_entry(origin, v);
}

class ReferenceMirror {
 public:
  // The heap words [origin, origin + words) mirrored, at most
  // kMaxWords. Memory is reserved, and touched where written.
  ReferenceMirror(Word* origin, uint64_t words);
  static constexpr uint64_t kMaxWords = kMirrorNoRef;

  // For the write barrier's mirror_store.
  uint32_t* biased() const { return biased_; }
  uint64_t origin_bits() const { return Value::ref(origin_).bits; }

  uint32_t position(const Word* p) const { return static_cast<uint32_t>(p - origin_); }
  Word* word_at(uint64_t position) const { return origin_ + position; }
  uint32_t* entry(const Word* p) const { return entries_ + position(p); }

  // Step 1 of a collection (Figure 4's "update reference graph", L446-447):
  // a node for every object that has none known; the others are as the
  // barrier left them. Returns the bytes written; *nodes, the nodes built.
  uint64_t update(const MarkableHeap& heap, uint64_t* nodes);
  // After the device's mark: its marks into the headers and out of the
  // nodes; unmarked objects forgotten (the CPU's tail may still mark some:
  // they are built again next time).
  void retire(const MarkableHeap& heap);
  // Every node forgotten: a collection marked without the device.
  void forget_all();
  // --gc-verify: the first known node that differs from its object (a
  // reference store that skipped the barrier), if any.
  std::optional<verify::Failure> check(const MarkableHeap& heap, uint64_t collection) const;

 private:
  bool known(uint64_t position) const { return known_[position >> 6] >> (position & 63) & 1; }
  void set_known(uint64_t position) { known_[position >> 6] |= uint64_t{1} << (position & 63); }
  void forget(uint64_t position) { known_[position >> 6] &= ~(uint64_t{1} << (position & 63)); }
  // Whether the barrier keeps h's node: all but fiber value stacks.
  static bool kept_by_barrier(const Word* h) { return Header::class_id(*h) != kStackClass; }

  Word* origin_;
  Reservation entry_memory_;
  Reservation known_memory_;
  uint32_t* entries_;
  uint32_t* biased_;
  uint64_t* known_;
};

}  // namespace gc::gpu
