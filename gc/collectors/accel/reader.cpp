#include "gc/collectors/accel/reader.h"

#include <algorithm>

namespace gc::accel {

bool Reader::step(Cycle now, MemoryPort& port, const MarkQueue& queue) {
  if (next_ == roots_.size() || !port.ready(now)) return false;
  // Whole aligned lines: the array's first and last may hold fewer roots.
  auto addr = reinterpret_cast<uintptr_t>(roots_.data() + next_);
  uint64_t in_line = (64 - addr % 64) / kWordSize;
  uint64_t count = std::min<uint64_t>(in_line, roots_.size() - next_);
  if (queue.room() < refs_in_flight_ + count) return false;
  port.submit(MemRequest{addr & ~uint64_t{63}, 64, false, Source::kTracer, next_ << 4 | count}, now);
  next_ += count;
  lines_in_flight_++;
  refs_in_flight_ += count;
  return true;
}

void Reader::on_response(const MemResponse& response, MarkQueue& queue) {
  uint64_t first = response.request.tag >> 4;
  uint64_t count = response.request.tag & 15;
  for (uint64_t i = first; i < first + count; ++i) queue.push(reinterpret_cast<uint64_t>(roots_[i]));
  lines_in_flight_--;
  refs_in_flight_ -= count;
  lines_read_++;
}

}  // namespace gc::accel
