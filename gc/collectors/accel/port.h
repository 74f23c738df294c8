// The traversal unit's port to the interconnect: the marker, the tracer
// and the root reader share it, one request a cycle (the paper counts the
// port busy 88% of mark cycles with the ideal pipe, L315). The spill
// machine and the page-table walker have small caches of their own (L318-
// 326) and reach memory beside it.
#pragma once

#include "gc/collectors/accel/memory.h"
#include "gc/collectors/accel/sim.h"

namespace gc::accel {

class MemoryPort {
 public:
  explicit MemoryPort(MemoryModel& memory) : memory_(memory) {}

  // Free this cycle, and the memory takes a request.
  bool ready(Cycle now) const { return last_ != now && memory_.can_accept(); }
  void submit(const MemRequest& r, Cycle now) {
    memory_.submit(r, now);
    last_ = now;
    busy_cycles_++;
  }
  uint64_t busy_cycles() const { return busy_cycles_; }

 private:
  MemoryModel& memory_;
  Cycle last_ = kNever;
  uint64_t busy_cycles_ = 0;
};

}  // namespace gc::accel
