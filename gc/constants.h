// The constants every layer of the collector library shares: the size
// from which an object is large, and the card table's geometry.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gc {

// Objects of at least this many bytes go to the large-object space and never
// move: copying them costs more than their headers save (Jikes RVM and
// HotSpot both use a few kilobytes).
constexpr size_t kLargeObjectBytes = 16 * 1024;

// Cards: one byte per 512 bytes of reservation, 0 = dirty (HotSpot's values,
// so the barrier stores a zero). 512 bytes is HotSpot's card size.
constexpr unsigned kCardShift = 9;
constexpr uint8_t kCardDirty = 0;
constexpr uint8_t kCardClean = 1;

}  // namespace gc
