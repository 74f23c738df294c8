// The heap reservation: one contiguous range of address space holding every
// managed object (gc/layout.h), so that any reference
// becomes an offset with one subtraction. It is reserved, not committed:
// pages cost memory only once touched.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gc/constants.h"
#include "gc/layout.h"

namespace gc {

// The unit in which spaces commit, release and align memory.
constexpr size_t kPageBytes = 4096;
inline uint64_t round_up_pages(uint64_t bytes) { return (bytes + kPageBytes - 1) & ~(kPageBytes - 1); }
inline uint64_t round_down_pages(uint64_t bytes) { return bytes & ~(kPageBytes - 1); }

class Reservation {
 public:
  // Reserves bytes (rounded up to pages) with MAP_NORESERVE; aborts with a
  // message if the address space cannot be had (nothing can run without it).
  explicit Reservation(uint64_t bytes);
  ~Reservation();
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;

  Word* base() const { return base_; }
  Word* end() const { return base_ + size_ / kWordSize; }
  uint64_t size_bytes() const { return size_; }
  bool contains(const void* p) const {
    return static_cast<uint64_t>(reinterpret_cast<const char*>(p) - reinterpret_cast<const char*>(base_)) <
           size_;
  }
  uint64_t offset_of(const void* p) const {
    return static_cast<uint64_t>(reinterpret_cast<const char*>(p) - reinterpret_cast<const char*>(base_));
  }

  // Gives the pages of [begin, end) back to the OS; they read as zero when
  // next touched. Both ends must be page-aligned.
  static void release_pages(Word* begin, Word* end);
  // The same, lazily (MADV_FREE): the kernel takes the pages back only when
  // it needs memory, so pages reused before then cost no fault. Their
  // contents are undefined until written.
  static void release_pages_lazily(Word* begin, Word* end);
  // Ordinary pages for [begin, end), page-aligned inward (no huge pages).
  static void use_small_pages(Word* begin, Word* end);
  // Faults in the pages of [begin, end) (page-aligned outward) as a write
  // would, their contents unchanged, so that a later first touch costs no
  // fault. Nothing where the kernel cannot (MADV_POPULATE_WRITE, Linux
  // 5.14): the touch then faults as before.
  static void populate(Word* begin, Word* end);

 private:
  Word* base_;
  uint64_t size_;
};

// The card table (docs/architecture.md, "Allocators"): one byte per
// 2^kCardShift bytes of the reservation, biased so that the write barrier
// (mutator.h, store_and_dirty) indexes it with the slot address itself. It is
// reserved like the heap and cleaned lazily: a space cleans a range before
// handing it to the mutator. Only markcompact reads the cards (card_scan.h).
class CardTable {
 public:
  explicit CardTable(const Reservation& heap);
  ~CardTable();
  CardTable(const CardTable&) = delete;
  CardTable& operator=(const CardTable&) = delete;

  uint8_t* biased_base() const { return biased_; }
  uint8_t card(const void* addr) const { return biased_[reinterpret_cast<uintptr_t>(addr) >> kCardShift]; }
  void clean(const Word* begin, const Word* end);

 private:
  uint8_t* table_;
  uint64_t table_bytes_;
  uint8_t* biased_;
};

}  // namespace gc
