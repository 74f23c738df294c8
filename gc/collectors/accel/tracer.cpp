#include "gc/collectors/accel/tracer.h"

#include <bit>

#include "gc/observe/recording.h"

namespace gc::accel {

namespace {
constexpr uint64_t kMaxRequest = 64;
constexpr uint64_t kPageBytes = uint64_t{1} << kPageShift;
}  // namespace

uint32_t request_bytes(uint64_t addr, uint64_t end) {
  uint64_t aligned =
      addr ? std::min<uint64_t>(uint64_t{1} << std::countr_zero(addr), kMaxRequest) : kMaxRequest;
  uint64_t fits = std::bit_floor(end - addr);
  return static_cast<uint32_t>(std::min(aligned, fits));
}

bool Tracer::step(Cycle now, MemoryPort& port, Translation& tr, MarkQueue& queue, TracerQueue& traced) {
  bool progress = false;
  translated_.clear();
  tr.take_done(Port::kTracer, translated_);
  if (!translated_.empty()) {
    translating_ = Translating::kDone;
    page_ready_ = translated_.back().at;
    progress = true;
  }
  if (!active_ && !traced.empty()) {
    TracerEntry e = traced.pop();
    end_ = reinterpret_cast<uint64_t>(e.header);
    cursor_ = end_ - e.nrefs * kWordSize;
    active_ = true;
    translating_ = Translating::kNeeded;
    stats_.objects_traced++;
    if (observe::Recording* r = observe::Recording::active()) [[unlikely]]
      r->scan(observe::Recording::kDevice, e.header);
    progress = true;
  }
  if (!active_) return progress;
  if (translating_ == Translating::kNeeded) {
    if (tr.blocked(Port::kTracer)) return progress;
    Cycle ready = now;
    if (tr.translate(Port::kTracer, cursor_, 0, now, &ready) == Translation::Outcome::kNow) {
      translating_ = Translating::kDone;
      page_ready_ = ready;
    } else {
      translating_ = Translating::kParked;
    }
    progress = true;
  }
  if (translating_ != Translating::kDone || page_ready_ > now || !port.ready(now)) return progress;
  uint32_t bytes = request_bytes(cursor_, end_);
  uint64_t refs = bytes / kWordSize;
  if (queue.throttle() || queue.room() < refs_in_flight_ + refs) {
    if (!held_) held_since_ = now;
    held_ = true;
    return progress;
  }
  if (held_) stats_.throttled_cycles += now - held_since_;
  held_ = false;
  port.submit(MemRequest{cursor_, bytes, false, Source::kTracer, kTag}, now);
  // The host reads the words when the simulated read returns: their line
  // comes into the host's cache meanwhile.
  __builtin_prefetch(reinterpret_cast<const void*>(cursor_));
  stats_.requests++;
  stats_.bytes += bytes;
  refs_in_flight_ += refs;
  cursor_ += bytes;
  if (cursor_ == end_) {
    active_ = false;
  } else if (cursor_ % kPageBytes == 0) {
    translating_ = Translating::kNeeded;
  }
  return true;
}

// The words of the response, read from the real heap: the references
// among them go to the mark queue.
void Tracer::on_response(const MemResponse& response, MarkQueue& queue) {
  auto* words = reinterpret_cast<const Value*>(response.request.addr);
  uint64_t n = response.request.bytes / kWordSize;
  for (uint64_t i = 0; i < n; ++i) {
    if (!words[i].is_ref()) continue;
    queue.push(reinterpret_cast<uint64_t>(words[i].as_ref()));
    stats_.refs_pushed++;
  }
  refs_in_flight_ -= n;
}

bool Tracer::may_act(Cycle at, const MemoryModel& memory, const Translation& tr,
                     const TracerQueue& traced) const {
  if (tr.has_done(Port::kTracer)) return true;
  if (!active_) return !traced.empty();
  if (translating_ == Translating::kNeeded) return !tr.blocked(Port::kTracer);
  return translating_ == Translating::kDone && page_ready_ <= at && memory.can_accept();
}

Cycle Tracer::next_wake(Cycle now, const MemoryModel& memory) const {
  return active_ && translating_ == Translating::kDone && page_ready_ > now && memory.can_accept()
             ? page_ready_
             : kNever;
}

}  // namespace gc::accel
