// What every box of the simulated GC unit shares (Maas, Asanović and
// Kubiatowicz 2018, "A Hardware Accelerator for Tracing Garbage
// Collection"; docs/collectors/accel.md): simulated time, and the memory
// requests the units send.
#pragma once

#include <cstdint>

namespace gc::accel {

// Simulated time in cycles of the paper's 1 GHz clock (Table I, L270): one
// cycle is one nanosecond, so DRAM timings in ns are cycles as they are.
using Cycle = uint64_t;
inline constexpr Cycle kNever = UINT64_MAX;
// Simulated time as the recorder takes a modelled pause (Recorder::simulated_phase).
inline constexpr int64_t simulated_ns(Cycle cycles) { return static_cast<int64_t>(cycles); }

// Who sent a memory request. The paper counts requests by source
// (Figure 18, L320-326): the marker, the tracer, the mark queue's spill
// path, the block sweepers and the page-table walker; the in-order CPU
// baseline's cache misses are a sixth.
enum class Source : uint8_t { kMarker, kTracer, kSpill, kSweeper, kWalker, kCpu };
inline constexpr unsigned kSourceCount = 6;

const char* source_name(Source s);

// Where the hwgc-space (the roots the runtime hands the unit, L222-226)
// lives in simulated memory: at a fixed line-aligned address, not the host
// vector's, so that a run's banks, rows and cache sets do not depend on
// where the host's allocator put it. The block list has its own
// (kBlockListBase, reclamation_unit.h).
inline constexpr uint64_t kHwgcSpaceBase = uint64_t{7} << 44;

// A unit found itself with work left and nothing that could move it: an
// internal error, reported with the unit's name and the cycle.
[[noreturn]] void stalled(const char* unit, Cycle at);

// One request on the memory port: at most one 64-byte line, aligned to
// its power-of-two size (the interconnect's rule, L252).
struct MemRequest {
  uint64_t addr = 0;
  uint32_t bytes = 8;
  bool write = false;
  Source source = Source::kMarker;
  uint64_t tag = 0;  // the sender's, handed back with the response
};

struct MemResponse {
  MemRequest request;
  Cycle at = 0;  // the cycle the data (or the write's acknowledgement) arrives
};

}  // namespace gc::accel
