#include "gc/collectors/accel/mark_queue.h"

#include <algorithm>

namespace gc::accel {

namespace {
constexpr uint64_t kLineBytes = 64;
constexpr uint64_t kReadTag = uint64_t{1} << 63;
}  // namespace

MarkQueue::MarkQueue(const MarkQueueConfig& config)
    : config_(config), q_capacity_(config.compressed ? 2 * config.entries : config.entries) {}

void MarkQueue::push(uint64_t ref) {
  stats_.pushes++;
  if (q_.size() < q_capacity_) {
    q_.push_back(ref);
    stats_.peak_occupancy = std::max<uint64_t>(stats_.peak_occupancy, q_.size());
  } else {
    out_.push_back(ref);
  }
}

uint64_t MarkQueue::pop() { return q_.empty() ? in_.pop_front() : q_.pop_front(); }

bool MarkQueue::empty() const {
  return q_.empty() && in_.empty() && out_.empty() && spilled_.empty() && writes_in_flight_ == 0 &&
         !read_in_flight_;
}

Cycle MarkQueue::next_spill_event(Cycle now, const MemoryModel& memory) const {
  if (can_move_directly()) return now;
  if ((can_write_line() || can_read_line()) && memory.can_accept()) return now;
  return kNever;
}

// One step of the spill machine: direct moves, then at most one memory
// request, a write before a read.
bool MarkQueue::advance_spill(Cycle now, MemoryModel& memory) {
  bool moved = can_move_directly();
  while (can_move_directly()) {
    in_.push_back(out_.pop_front());
    stats_.direct_moves++;
  }
  if (!memory.can_accept()) return moved;
  if (can_write_line()) {
    Line line;
    for (unsigned i = 0; i < entries_per_line(); ++i) {
      line.refs.push_back(out_.pop_front());
    }
    uint64_t index = spilled_.size();
    spilled_.push_back(std::move(line));
    memory.submit(MemRequest{line_address(index), kLineBytes, true, Source::kSpill, index}, now);
    writes_in_flight_++;
    stats_.spill_writes++;
    stats_.spilled_entries += entries_per_line();
    stats_.spill_peak_bytes = std::max<uint64_t>(stats_.spill_peak_bytes, spilled_.size() * kLineBytes);
  } else if (can_read_line()) {
    uint64_t index = spilled_.size() - 1;
    reading_ = std::move(spilled_.back().refs);
    spilled_.pop_back();
    in_reserved_ = static_cast<unsigned>(reading_.size());
    read_in_flight_ = true;
    memory.submit(MemRequest{line_address(index), kLineBytes, false, Source::kSpill, index | kReadTag}, now);
    stats_.spill_reads++;
  } else {
    return moved;
  }
  return true;
}

void MarkQueue::on_response(const MemResponse& response) {
  uint64_t tag = response.request.tag;
  if (tag & kReadTag) {
    for (uint64_t ref : reading_) in_.push_back(ref);
    reading_.clear();
    in_reserved_ = 0;
    read_in_flight_ = false;
  } else {
    spilled_[tag].written = true;
    writes_in_flight_--;
  }
}

}  // namespace gc::accel
