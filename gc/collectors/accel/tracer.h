// The traversal unit's tracer (L162, L246-252, Figure 14): it takes an
// object from the tracer queue and copies its references into the mark
// queue. Its requests are untagged: it sends as many as the port takes,
// keeps no state for them, and pushes the references of each response in
// the order responses return. The request generator walks the reference
// section (below the header in gclab's bidirectional layout) and issues
// the largest aligned request it can, 8 to 64 bytes: 15 references at
// 0x1a18 are requests of 8, 32, 64 and 16 bytes, in that order (L252).
// Entering a new page, it translates again.
//
// It stops issuing while the mark queue asserts its throttle (outQ is
// filling, L247), and while the mark queue has no room for what its
// requests in flight will bring back: the hardware needs the same bound,
// or a response could find nowhere to go.
//
// A slot's value is pushed when it is a reference (gclab's values carry a
// tag; the hardware would test the same bits).
#pragma once

#include <cstdint>
#include <vector>

#include "gc/collectors/accel/mark_queue.h"
#include "gc/collectors/accel/port.h"
#include "gc/collectors/accel/tracer_queue.h"
#include "gc/collectors/accel/translation.h"

namespace gc::accel {

// The largest aligned power-of-two request, 8 to 64 bytes, at `addr` that
// does not go past `end` (addresses 8-byte aligned).
uint32_t request_bytes(uint64_t addr, uint64_t end);

struct TracerStats {
  uint64_t objects_traced = 0;
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t refs_pushed = 0;
  uint64_t throttled_cycles = 0;  // a request was ready and the mark queue held it back
};

class Tracer {
 public:
  // One cycle: a finished translation, the next object, at most one
  // request. True if it did something.
  bool step(Cycle now, MemoryPort& port, Translation& tr, MarkQueue& queue, TracerQueue& traced);
  void on_response(const MemResponse& response, MarkQueue& queue);

  bool idle() const { return !active_ && refs_in_flight_ == 0; }
  // Whether a step at `at` could do anything, as things stand (the unit
  // skips the cycles where no box can). Being held back by the mark
  // queue counts: the cycle it starts is counted.
  bool may_act(Cycle at, const MemoryModel& memory, const Translation& tr, const TracerQueue& traced) const;
  // The cycle its page's translation becomes usable (kNever: none, or the
  // memory is full: a response frees it and wakes the unit).
  Cycle next_wake(Cycle now, const MemoryModel& memory) const;
  const TracerStats& stats() const { return stats_; }

  // The tag of the tracer's requests, beside the root reader's on the same source.
  static constexpr uint64_t kTag = uint64_t{1} << 62;

 private:
  enum class Translating : uint8_t { kNeeded, kParked, kDone };

  bool active_ = false;
  uint64_t cursor_ = 0;  // the next byte of the reference section to request
  uint64_t end_ = 0;     // the header's address: the section ends there
  Translating translating_ = Translating::kNeeded;
  Cycle page_ready_ = 0;
  uint64_t refs_in_flight_ = 0;
  bool held_ = false;  // a request is ready and the mark queue holds it back
  Cycle held_since_ = 0;
  TracerStats stats_;
  std::vector<Translation::Done> translated_;  // scratch
};

}  // namespace gc::accel
