// The clock every parallel phase measures itself with: steady (never
// jumps), in nanoseconds, as the Recorder's counters are.
#pragma once

#include <chrono>
#include <cstdint>

namespace gc::parallel {

inline uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace gc::parallel
