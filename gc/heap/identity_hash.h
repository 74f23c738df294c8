// Identity hashes derived from an object's address (layout.h, HashState):
// an object hashed where it is gets the hash of its offset in the
// reservation; a moving collector that moves it keeps that hash in a new
// last raw word. Every moving collector computes it the same way here.
#pragma once

#include <cstdint>

#include "gc/heap/reservation.h"
#include "gc/layout.h"

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

// A moving collector's identity_hash: a hash kept by a move is in the last
// raw word; otherwise it is the address's, and the first request moves the
// object from kUnhashed to kHashed (first_request says so: the object now
// owes a word for its next move).
inline uint64_t moving_identity_hash(const Reservation& heap, Word* header, bool& first_request) {
  Word h = *header;
  first_request = false;
  switch (Header::hash_state(h)) {
    case HashState::kHashedAndMoved:
      return header[Header::raw_words(h)];
    case HashState::kHashed:
      return address_hash(heap, header);
    default:
      break;
  }
  *header = Header::with_hash_state(h, HashState::kHashed);
  first_request = true;
  return address_hash(heap, header);
}

}  // namespace gc
