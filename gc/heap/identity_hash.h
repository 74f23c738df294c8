// Identity hashes derived from an object's address (layout.h, HashState):
// an object hashed where it is gets the hash of its offset in the
// reservation; a moving collector that moves it keeps that hash in a new
// last raw word. Every moving collector computes it the same way here.
#pragma once

#include <cstdint>

#include "gc/heap/reservation.h"

namespace gc {

// Identity hashes fit a double's mantissa, so the VM can hand them to
// programs as exact numbers.
constexpr uint64_t kIdentityHashMask = (1ull << 52) - 1;

// A 64-bit finaliser (splitmix64): neighbouring addresses get unrelated
// hashes.
inline uint64_t address_hash(const Reservation& heap, const Word* header) {
  uint64_t x = heap.offset_of(header);
  x ^= x >> 30;
  x *= 0xBF58'476D'1CE4'E5B9ull;
  x ^= x >> 27;
  x *= 0x94D0'49BB'1331'11EBull;
  x ^= x >> 31;
  return x & kIdentityHashMask;
}

}  // namespace gc
