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
    Cycle next = step(now, reader);
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

// One cycle; returns the next cycle to step (kNever: the run is over).
Cycle TraversalUnit::step(Cycle now, Reader& reader) {
  uint64_t requests_before = memory_.submitted();
  bool progress = false;
  if (memory_.next_event() <= now) {
    responses_.clear();
    memory_.advance(now, responses_);
    progress = !responses_.empty();
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
  }
  translation_.advance(now, memory_);
  progress |= queue_.advance(now, memory_);
  progress |= marker_.step(now, port_, translation_, queue_, traced_);
  progress |= tracer_.step(now, port_, translation_, queue_, traced_);
  progress |= reader.step(now, port_, queue_);
  bool busy = progress || memory_.submitted() != requests_before;
  // After a busy cycle the next is stepped, unless no box could act in
  // it; then, as after a quiet cycle, the loop jumps to the next event.
  // (Skipped cycles are ones where nothing would happen.)
  Cycle next = now + 1;
  if (busy && (translation_.next_event() <= next || translation_.has_done(Port::kMarker) ||
               translation_.has_done(Port::kTracer) || queue_.next_event(next, memory_) <= next ||
               marker_.may_act(next, memory_, translation_, queue_, traced_) ||
               tracer_.may_act(next, memory_, translation_, traced_) || reader.may_act(memory_)))
    return next;
  // No box acts before `wake` nor sends a request: the memory's decisions
  // up to then can be taken now, and the loop need not stop at each.
  Cycle wake = std::min({translation_.next_event(), queue_.next_event(now, memory_),
                         marker_.next_wake(now, memory_), tracer_.next_wake(now, memory_)});
  memory_.settle(wake);
  // The cycle after the last busy one is the last: the run ends there.
  if (busy && wake == kNever && memory_.next_event() == kNever) return next;
  // Settling decides but delivers nothing, so no box's wake has moved:
  // the next event is the earlier of it and the memory's.
  return std::min(wake, memory_.next_event());
}

bool TraversalUnit::finished(const Reader& reader) const {
  return reader.done() && queue_.empty() && marker_.idle() && traced_.empty() && tracer_.idle();
}

}  // namespace gc::accel
