// Old address to new address for the objects other cores asked a core to
// mark: the shared table each core builds after compaction from its bounded
// request list (Zhou and Demsky, section 2.2, L128: "it builds a hash table
// from the old locations to the new locations for the objects for which it
// received mark messages"), moved or not, so that a hit also says "did not
// move". Open addressing with linear probing, sized from the request list
// and doubled when half full; written by its core, then read by any.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "gc/layout.h"

namespace gc::cacheaware {

class AddressTable {
 public:
  // Empty, with room for about `expected` entries before it first grows.
  void clear(uint64_t expected) {
    uint64_t capacity = std::bit_ceil(std::max<uint64_t>(kInitialSlots, expected * 2));
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    size_ = 0;
  }
  void insert(const Word* from, Word* to) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (uint64_t i = index(from);; i = (i + 1) & mask_) {
      if (!slots_[i].from || slots_[i].from == from) {
        size_ += slots_[i].from == nullptr;
        slots_[i] = {from, to};
        return;
      }
    }
  }
  // The new address, or nullptr when the table does not know `from`.
  Word* find(const Word* from) const {
    if (size_ == 0) return nullptr;
    for (uint64_t i = index(from);; i = (i + 1) & mask_) {
      if (slots_[i].from == from) return slots_[i].to;
      if (!slots_[i].from) return nullptr;
    }
  }
  uint64_t size() const { return size_; }
  uint64_t bytes() const { return slots_.size() * sizeof(Slot); }

 private:
  static constexpr uint64_t kInitialSlots = 64;
  struct Slot {
    const Word* from = nullptr;
    Word* to = nullptr;
  };
  void grow() {
    spare_.assign(slots_.size() * 2, Slot{});
    std::swap(slots_, spare_);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : spare_)
      if (s.from) insert(s.from, s.to);
  }
  uint64_t index(const Word* p) const {
    return ((reinterpret_cast<uintptr_t>(p) >> 3) * 0x9E37'79B9'7F4A'7C15ull >> 20) & mask_;
  }
  std::vector<Slot> slots_;
  std::vector<Slot> spare_;  // the other buffer, for growing
  uint64_t mask_ = 0;
  uint64_t size_ = 0;
};

}  // namespace gc::cacheaware
