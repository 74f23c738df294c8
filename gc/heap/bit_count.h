// The number of set bits in a word, for the live-word bitmaps that
// mark-compact forwarding counts (serial_markcompact.h, cacheaware's
// forwarding_map.h). Without the popcnt instruction in the target,
// std::popcount is a call into libgcc; this is inline either way.
#pragma once

#include <bit>
#include <cstdint>

namespace gc {

[[gnu::always_inline]] inline uint64_t bit_count(uint64_t x) {
#ifdef __POPCNT__
  return static_cast<uint64_t>(std::popcount(x));
#else
  x -= (x >> 1) & 0x5555'5555'5555'5555ull;
  x = (x & 0x3333'3333'3333'3333ull) + ((x >> 2) & 0x3333'3333'3333'3333ull);
  x = (x + (x >> 4)) & 0x0f0f'0f0f'0f0f'0f0full;
  return (x * 0x0101'0101'0101'0101ull) >> 56;
#endif
}

}  // namespace gc
