// The traversal unit's reader (L240-242): "At the beginning of a GC, a
// reader copies all references from the hwgc-space into the mark queue."
// The runtime has written the roots there (the plan gathers the root
// set's references into one array, whose address is the hwgc-space); the
// reader streams it a line of 8 references at a time through the unit's
// port, and pushes each line's references when it arrives. Its requests
// count as the tracer's (the paper's sources have no reader; it copies
// references into the mark queue as the tracer does). It reads a
// line only when the mark queue has room for it and every line before it.
#pragma once

#include <cstdint>
#include <span>

#include "gc/collectors/accel/mark_queue.h"
#include "gc/collectors/accel/port.h"
#include "gc/layout.h"

namespace gc::accel {

class Reader {
 public:
  // The roots, header addresses; the span's memory is the hwgc-space.
  explicit Reader(std::span<Word* const> roots) : roots_(roots) {}

  // One cycle: at most one line requested. True if it did something.
  bool step(Cycle now, MemoryPort& port, const MarkQueue& queue);
  void on_response(const MemResponse& response, MarkQueue& queue);

  // Whether a step could do anything, as things stand: a line to request
  // and a port that may take it (the room in the mark queue is not asked).
  bool may_act(const MemoryModel& memory) const { return next_ != roots_.size() && memory.can_accept(); }
  bool done() const { return next_ == roots_.size() && lines_in_flight_ == 0; }
  uint64_t lines_read() const { return lines_read_; }

 private:
  static constexpr uint64_t kRootsPerLine = 8;

  std::span<Word* const> roots_;
  size_t next_ = 0;  // the first root not yet requested
  unsigned lines_in_flight_ = 0;
  uint64_t refs_in_flight_ = 0;
  uint64_t lines_read_ = 0;
};

}  // namespace gc::accel
