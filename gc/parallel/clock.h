// The one clock gc/ measures with (the Recorder's phases and pauses, the
// termination protocol's idle time, a simulation's host time): steady
// (never jumps), in nanoseconds.
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
