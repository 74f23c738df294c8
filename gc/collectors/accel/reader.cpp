#include "gc/collectors/accel/reader.h"

#include <algorithm>

namespace gc::accel {

bool Reader::step(Cycle now, MemoryPort& port, const MarkQueue& queue) {
  if (next_ == roots_.size() || !port.ready(now)) return false;
  // Whole lines from the line-aligned hwgc-space: the last may hold fewer.
  uint64_t addr = kHwgcSpaceBase + next_ * kWordSize;
  uint64_t count = std::min<uint64_t>(kRootsPerLine, roots_.size() - next_);
  if (queue.room() < refs_in_flight_ + count) return false;
  port.submit(MemRequest{addr, 64, false, Source::kTracer, next_ << 4 | count}, now);
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
