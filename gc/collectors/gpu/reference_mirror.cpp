#include "gc/collectors/gpu/reference_mirror.h"

#include <string>

#include "gc/collectors/gpu/gpu_marker.h"

namespace gc::gpu {

ReferenceMirror::ReferenceMirror(Word* origin, uint64_t words)
    : origin_(origin),
      entry_memory_(words * sizeof(uint32_t)),
      known_memory_((words + 63) / 64 * sizeof(uint64_t)),
      entries_(reinterpret_cast<uint32_t*>(entry_memory_.base())),
      // The barrier indexes with address >> 3 (mirror_store above).
      biased_(reinterpret_cast<uint32_t*>(reinterpret_cast<uintptr_t>(entries_) -
                                          (reinterpret_cast<uintptr_t>(origin) >> 3) * sizeof(uint32_t))),
      known_(known_memory_.base()) {}

uint64_t ReferenceMirror::update(const MarkableHeap& heap, uint64_t* nodes) {
  uint64_t bytes = 0, built = 0, origin = origin_bits();
  heap.for_each_object([&](Word* h) {
    uint64_t p = position(h);
    if (known(p) && kept_by_barrier(h)) return;
    uint64_t n = Header::nrefs(*h);
    uint32_t* node = entries_ + p;
    node[0] = static_cast<uint32_t>(n << 1);
    for (uint64_t i = 0; i < n; ++i)
      node[-1 - static_cast<int64_t>(i)] = mirror_entry(origin, ref_slot(h, i));
    set_known(p);
    bytes += (n + 1) * sizeof(uint32_t);
    ++built;
  });
  *nodes = built;
  return bytes;
}

void ReferenceMirror::retire(const MarkableHeap& heap) {
  heap.for_each_object([&](Word* h) {
    uint64_t p = position(h);
    if (entries_[p] & 1) {
      *h |= Header::kMarkBit;
      entries_[p] &= ~1u;
    } else {
      forget(p);
    }
  });
}

void ReferenceMirror::forget_all() { Reservation::release_pages(known_memory_.base(), known_memory_.end()); }

std::optional<verify::Failure> ReferenceMirror::check(const MarkableHeap& heap, uint64_t collection) const {
  std::optional<verify::Failure> failure;
  uint64_t origin = origin_bits();
  heap.for_each_object([&](Word* h) {
    uint64_t p = position(h);
    if (failure || !known(p) || !kept_by_barrier(h)) return;
    uint64_t n = Header::nrefs(*h);
    const uint32_t* node = entries_ + p;
    auto fail = [&](std::string what, int64_t slot) {
      failure =
          verify::Failure{std::move(what), reinterpret_cast<uintptr_t>(h), slot, "gpu graph", collection};
    };
    if (node[0] != static_cast<uint32_t>(n << 1)) {
      fail("the double-write graph's node holds " + std::to_string(node[0]) + " for an object of " +
               std::to_string(n) + " slots, unmarked",
           -1);
      return;
    }
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t want = mirror_entry(origin, ref_slot(h, i));
      uint32_t got = node[-1 - static_cast<int64_t>(i)];
      if (got == want) continue;
      fail("the double-write graph holds " + std::to_string(got) + " where the heap's slot gives " +
               std::to_string(want) + " (a reference store that skipped the write barrier)",
           static_cast<int64_t>(i));
      return;
    }
  });
  return failure;
}

}  // namespace gc::gpu
