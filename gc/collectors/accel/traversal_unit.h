// The traversal unit (Figure 5 and 7, L156-162, L240-260): the reader, the
// mark queue with its spill path, the marker, the tracer queue and the
// tracer, with their translation, over one memory model. run() marks the
// real heap from the roots and returns the simulated cycles it took.
//
// The simulation is cycle by cycle while any box makes progress, and jumps
// to the next event (a memory response, a walk step, a translation
// becoming usable) while every box waits. In a cycle: memory responses are
// delivered, the walker and the spill machine step (they reach memory
// beside the port, the spill machine first: outQ's priority), then the
// marker, the tracer and the reader, in that order of priority for the
// port.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gc/collectors/accel/mark_queue.h"
#include "gc/collectors/accel/marker.h"
#include "gc/collectors/accel/memory.h"
#include "gc/collectors/accel/port.h"
#include "gc/collectors/accel/reader.h"
#include "gc/collectors/accel/timeline.h"
#include "gc/collectors/accel/tracer.h"
#include "gc/collectors/accel/tracer_queue.h"
#include "gc/collectors/accel/translation.h"

namespace gc::accel {

struct TraversalConfig {
  MarkQueueConfig queue;
  MarkerConfig marker;
  unsigned tracer_queue_entries = 32;
  TranslationConfig translation;
};

struct TraversalStats {
  Cycle cycles = 0;
  MarkerStats marker;
  TracerStats tracer;
  MarkQueue::Stats queue;
  TranslationStats translation;
  uint64_t root_lines = 0;
  uint64_t port_busy_cycles = 0;
  uint64_t tracer_queue_peak = 0;
  // For the report: memory requests (each at most one 64-byte line) per
  // kSampleCycles, and Q's occupancy, over the mark.
  std::vector<uint64_t> bandwidth;
  std::vector<uint64_t> occupancy;
  Cycle sample_interval = 0;  // cycles between two values of either
};

class TraversalUnit {
 public:
  static constexpr Cycle kSampleCycles = 1000;

  TraversalUnit(const TraversalConfig& config, MemoryModel& memory);

  // Marks every object reachable from `roots` (header addresses; the
  // span's memory is the hwgc-space), from cycle `start`. Returns the cycle
  // the last box went idle.
  Cycle run(std::span<Word* const> roots, Cycle start);

  // This run's counters.
  const TraversalStats& stats() const { return stats_; }

 private:
  Cycle step(Cycle now, Reader& reader);
  bool finished(const Reader& reader) const;

  TraversalConfig config_;
  MemoryModel& memory_;
  MemoryPort port_;
  Translation translation_;
  MarkQueue queue_;
  Marker marker_;
  TracerQueue traced_;
  Tracer tracer_;
  TraversalStats stats_;
  std::vector<MemResponse> responses_;  // scratch
};

}  // namespace gc::accel
