#include "gc/collectors/accel/marker.h"

#include <algorithm>

namespace gc::accel {

namespace {
constexpr uint64_t kWriteTag = uint64_t{1} << 63;
}  // namespace

Marker::Marker(const MarkerConfig& config)
    : slots_(config.slots),
      cache_enabled_(config.mark_cache_entries > 0),
      mark_cache_(TagArray::fully_associative(std::max(config.mark_cache_entries, 1u))) {
  in_state_[static_cast<unsigned>(State::kFree)] = config.slots;
}

void Marker::set(Slot& s, State state) {
  in_state_[static_cast<unsigned>(s.state)]--;
  in_state_[static_cast<unsigned>(state)]++;
  if (s.state == State::kFree) busy_++;
  if (state == State::kFree) busy_--;
  s.state = state;
}

bool Marker::step(Cycle now, MemoryPort& port, Translation& tr, MarkQueue& queue, TracerQueue& traced) {
  bool progress = false;
  if (in(State::kParked)) {
    translated_.clear();
    tr.take_done(Port::kMarker, translated_);
    for (const Translation::Done& d : translated_) {
      Slot& s = slots_[d.tag];
      set(s, State::kTranslated);
      s.ready = d.at;
      progress = true;
    }
  }
  progress |= send_one_request(now, port);
  progress |= hand_one_to_tracer(traced);
  progress |= take_one_reference(now, tr, queue);
  return progress;
}

// A write-back first (it frees a slot), else the read of a slot whose
// address is translated.
bool Marker::send_one_request(Cycle now, MemoryPort& port) {
  if ((in(State::kWriteBack) == 0 && in(State::kTranslated) == 0) || !port.ready(now)) return false;
  Slot* read = nullptr;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.state == State::kWriteBack) {
      port.submit(
          MemRequest{reinterpret_cast<uint64_t>(s.header), kWordSize, true, Source::kMarker, kWriteTag | i},
          now);
      stats_.write_backs++;
      set(s, s.nrefs ? State::kToTracer : State::kFree);
      return true;
    }
    if (!read && s.state == State::kTranslated && s.ready <= now) read = &s;
  }
  if (!read) return false;
  port.submit(MemRequest{reinterpret_cast<uint64_t>(read->header), kWordSize, false, Source::kMarker,
                         static_cast<uint64_t>(read - slots_.data())},
              now);
  set(*read, State::kReading);
  stats_.reads++;
  return true;
}

bool Marker::hand_one_to_tracer(TracerQueue& traced) {
  if (in(State::kToTracer) == 0 || traced.full()) return false;
  for (Slot& s : slots_) {
    if (s.state == State::kToTracer) {
      traced.push(TracerEntry{s.header, s.nrefs});
      set(s, State::kFree);
      return true;
    }
  }
  return false;
}

bool Marker::take_one_reference(Cycle now, Translation& tr, MarkQueue& queue) {
  if (busy_ == slots_.size() || !queue.can_pop() || tr.blocked(Port::kMarker)) return false;
  uint64_t ref = queue.pop();
  if (cache_enabled_) {
    if (mark_cache_.access(ref)) {
      stats_.mark_cache_hits++;
      return true;
    }
    mark_cache_.fill(ref);
  }
  auto free =
      std::find_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.state == State::kFree; });
  Slot& s = *free;
  s.header = reinterpret_cast<Word*>(ref);
  Cycle ready = now;
  auto tag = static_cast<uint64_t>(free - slots_.begin());
  bool now_translated = tr.translate(Port::kMarker, ref, tag, now, &ready) == Translation::Outcome::kNow;
  set(s, now_translated ? State::kTranslated : State::kParked);
  s.ready = ready;
  return true;
}

// The read is back: the fetch-or, applied to the real header.
void Marker::on_response(const MemResponse& response) {
  if (response.request.tag & kWriteTag) return;  // a write-back's acknowledgement
  Slot& s = slots_[response.request.tag];
  Word before = *s.header;
  if (Header::is_marked(before)) {
    stats_.already_marked++;
    set(s, State::kFree);
    return;
  }
  *s.header = before | Header::kMarkBit;
  stats_.objects_marked++;
  s.nrefs = Header::nrefs(before);
  set(s, State::kWriteBack);
}

Cycle Marker::next_wake(Cycle now) const {
  Cycle wake = kNever;
  if (in(State::kTranslated) == 0) return wake;
  for (const Slot& s : slots_)
    if (s.state == State::kTranslated && s.ready > now) wake = std::min(wake, s.ready);
  return wake;
}

}  // namespace gc::accel
