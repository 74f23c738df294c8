#include "gc/collectors/accel/traversal_unit.h"

#include <algorithm>

namespace gc::accel {

TraversalUnit::TraversalUnit(const TraversalConfig& config, MemoryModel& memory)
    : config_(config),
      memory_(memory),
      port_(memory),
      translation_(config.translation),
      queue_(config.queue),
      marker_(config.marker),
      traced_(config.tracer_queue_entries) {}

Cycle TraversalUnit::run(std::span<Word* const> roots, Cycle start) {
  Reader reader(roots);
  Cycle now = start;
  Timeline bandwidth(Timeline::Kind::kRate, kSampleCycles, start);
  Timeline occupancy(Timeline::Kind::kLevel, kSampleCycles, start);
  uint64_t sampled_requests = memory_.submitted();
  for (;;) {
    // Requests are sent at the cycle stepped, so those before `now` are in.
    while (bandwidth.due(now)) {
      bandwidth.close(memory_.submitted() - sampled_requests);
      sampled_requests = memory_.submitted();
      occupancy.close(queue_.occupancy());
    }
    if (step(now, reader)) {
      now++;
      continue;
    }
    Cycle next = next_event(now);
    if (next == kNever) break;
    now = std::max(next, now + 1);
  }
  if (!finished(reader)) stalled("traversal unit", now);
  stats_.cycles = now - start;
  stats_.marker = marker_.stats();
  stats_.tracer = tracer_.stats();
  stats_.queue = queue_.stats();
  stats_.translation = translation_.stats();
  stats_.root_lines = reader.lines_read();
  stats_.port_busy_cycles = port_.busy_cycles();
  stats_.tracer_queue_peak = traced_.peak();
  stats_.bandwidth = bandwidth.values();
  stats_.occupancy = occupancy.values();
  stats_.sample_interval = bandwidth.interval();
  return now;
}

// One cycle; true if anything happened in it.
bool TraversalUnit::step(Cycle now, Reader& reader) {
  uint64_t requests_before = memory_.submitted();
  responses_.clear();
  if (memory_.next_event() <= now) memory_.advance(now, responses_);
  for (const MemResponse& r : responses_) {
    switch (r.request.source) {
      case Source::kWalker:
        translation_.on_response(r);
        break;
      case Source::kSpill:
        queue_.on_response(r);
        break;
      case Source::kMarker:
        marker_.on_response(r);
        break;
      case Source::kTracer:
        if (r.request.tag == Tracer::kTag) {
          tracer_.on_response(r, queue_);
        } else {
          reader.on_response(r, queue_);
        }
        break;
      default:
        break;
    }
  }
  translation_.advance(now, memory_);
  bool progress = !responses_.empty();
  progress |= queue_.advance(now, memory_);
  progress |= marker_.step(now, port_, translation_, queue_, traced_);
  progress |= tracer_.step(now, port_, translation_, queue_, traced_);
  progress |= reader.step(now, port_, queue_);
  return progress || memory_.submitted() != requests_before;
}

Cycle TraversalUnit::next_event(Cycle now) const {
  return std::min({memory_.next_event(), translation_.next_event(), queue_.next_event(now, memory_),
                   marker_.next_wake(now), tracer_.next_wake(now)});
}

bool TraversalUnit::finished(const Reader& reader) const {
  return reader.done() && queue_.empty() && marker_.idle() && traced_.empty() && tracer_.idle();
}

}  // namespace gc::accel
