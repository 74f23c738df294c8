// The traversal unit's mark queue and its spill path (L226, L238-256,
// Figure 12): references wait here between the tracer (or the root
// reader), which pushes them, and the marker, which pops them.
//
// When the main queue Q is full, pushes go to outQ, whose entries a small
// state machine writes to a spill region in memory a line at a time; when
// Q is empty, pops take from inQ, which that machine refills from the
// spill region. While outQ has entries and inQ has room they move across
// directly, with no memory request. When outQ reaches its threshold the
// tracer stops issuing requests (throttle()), so that outQ does not
// overflow, and outQ's writes go to memory before the reads (the paper's
// priority that avoids deadlock).
//
// Entries are 64-bit references, or 32-bit compressed ones (L256-258:
// "doubles the effective size of the mark queue and halves the amount of
// traffic for spilling"): the queue's SRAM is the same size, so it holds
// twice as many, and a 64-byte spill line carries 16 instead of 8.
//
// What gclab chose where the paper is silent (docs/collectors/accel.md):
// outQ and inQ hold 64 entries each, the throttle asserts at half of outQ,
// the spill region is a stack of lines (the last line written is read
// first), and a run that spills more than the region's size goes on
// (a "full implementation could dynamically allocate additional memory",
// L279) and reports how far it went (Stats::spill_peak_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gc/collectors/accel/memory.h"
#include "gc/collectors/accel/sim.h"

namespace gc::accel {

// A first-in first-out queue in one array used round, growing when full
// (std::deque's size and ends cost more, and the simulation asks for
// them every cycle).
template <class T>
class Ring {
 public:
  bool empty() const { return head_ == tail_; }
  size_t size() const { return tail_ - head_; }
  void push_back(const T& v) {
    if (size() == slots_.size()) grow();
    slots_[tail_++ & mask_] = v;
  }
  T pop_front() { return slots_[head_++ & mask_]; }

 private:
  void grow() {
    std::vector<T> slots(slots_.empty() ? 16 : 2 * slots_.size());
    for (size_t i = 0; i < size(); ++i) slots[i] = slots_[(head_ + i) & mask_];
    tail_ = size();
    head_ = 0;
    slots_ = std::move(slots);
    mask_ = slots_.size() - 1;
  }

  std::vector<T> slots_;
  size_t mask_ = 0;
  size_t head_ = 0;  // counts of pops and pushes, taken modulo the size
  size_t tail_ = 0;
};

struct MarkQueueConfig {
  unsigned entries = 1024;     // Q's size in 64-bit entries (twice as many when compressed)
  unsigned side_entries = 64;  // outQ's and inQ's
  bool compressed = false;
  uint64_t spill_base = 0;  // the spill region's physical address
  uint64_t spill_bytes = 4u << 20;
};

class MarkQueue {
 public:
  explicit MarkQueue(const MarkQueueConfig& config);

  // The producer's side: room in Q or in outQ.
  bool can_push() const { return room() > 0; }
  // How many pushes would be taken now.
  uint64_t room() const { return (q_capacity_ - q_.size()) + (config_.side_entries - out_.size()); }
  void push(uint64_t ref);
  // The tracer holds back its requests while outQ is this full.
  bool throttle() const { return out_.size() >= config_.side_entries / 2; }

  // The consumer's side: Q first, then inQ.
  bool can_pop() const { return !q_.empty() || !in_.empty(); }
  uint64_t pop();

  // Nothing anywhere: Q, inQ, outQ, the spill region, or on the way.
  bool empty() const;

  // The spill machine, for the simulation loop. It has work only while
  // outQ holds entries or a spilled line waits to come back (the loop
  // asks every cycle, and mostly it has none).
  Cycle next_event(Cycle now, const MemoryModel& memory) const {
    return idle() ? kNever : next_spill_event(now, memory);
  }
  // True if it moved entries or sent a request.
  bool advance(Cycle now, MemoryModel& memory) { return !idle() && advance_spill(now, memory); }
  void on_response(const MemResponse& response);

  struct Stats {
    uint64_t pushes = 0;
    uint64_t spilled_entries = 0;  // written to the spill region
    uint64_t direct_moves = 0;     // outQ to inQ without memory
    uint64_t spill_writes = 0;     // line requests
    uint64_t spill_reads = 0;
    uint64_t spill_peak_bytes = 0;
    uint64_t peak_occupancy = 0;  // Q's
  };
  const Stats& stats() const { return stats_; }
  unsigned occupancy() const { return static_cast<unsigned>(q_.size()); }
  unsigned capacity() const { return q_capacity_; }

 private:
  struct Line {
    std::vector<uint64_t> refs;
    bool written = false;  // its write has been acknowledged
  };

  // Nothing to move, write or read back.
  bool idle() const { return out_.empty() && !can_read_line(); }
  Cycle next_spill_event(Cycle now, const MemoryModel& memory) const;
  bool advance_spill(Cycle now, MemoryModel& memory);
  unsigned entries_per_line() const { return config_.compressed ? 16 : 8; }
  unsigned bytes_per_entry() const { return config_.compressed ? 4 : 8; }
  uint64_t line_address(size_t index) const { return config_.spill_base + index * 64; }
  bool can_move_directly() const { return !out_.empty() && in_.size() + in_reserved_ < config_.side_entries; }
  bool can_write_line() const { return out_.size() >= entries_per_line(); }
  // The top line comes back when its write is done, outQ is empty (its
  // writes go first) and inQ has room for all of it.
  bool can_read_line() const {
    return out_.empty() && !read_in_flight_ && !spilled_.empty() && spilled_.back().written &&
           in_.size() + spilled_.back().refs.size() <= config_.side_entries;
  }

  MarkQueueConfig config_;
  unsigned q_capacity_;
  Ring<uint64_t> q_;
  Ring<uint64_t> out_;
  Ring<uint64_t> in_;
  std::vector<Line> spilled_;      // the spill region, a stack of lines
  std::vector<uint64_t> reading_;  // the line a read in flight brings back
  unsigned writes_in_flight_ = 0;
  bool read_in_flight_ = false;
  unsigned in_reserved_ = 0;  // inQ slots that line will fill
  Stats stats_;
};

}  // namespace gc::accel
