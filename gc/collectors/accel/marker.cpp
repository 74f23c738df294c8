#include "gc/collectors/accel/marker.h"

#include <algorithm>

#include "gc/observe/recording.h"

namespace gc::accel {

namespace {
constexpr uint64_t kWriteTag = uint64_t{1} << 63;
}  // namespace

Marker::Marker(const MarkerConfig& config)
    : slots_(config.slots),
      slot_sets_(static_cast<unsigned>(State::kCount), SlotSet(config.slots)),
      cache_enabled_(config.mark_cache_entries > 0),
      mark_cache_(TagArray::fully_associative(std::max(config.mark_cache_entries, 1u))) {
  in_state_[static_cast<unsigned>(State::kFree)] = config.slots;
  for (size_t i = 0; i < config.slots; ++i) slot_sets_[static_cast<unsigned>(State::kFree)].add(i);
}

void Marker::set(size_t slot, State state) {
  Slot& s = slots_[slot];
  in_state_[static_cast<unsigned>(s.state)]--;
  slot_sets_[static_cast<unsigned>(s.state)].remove(slot);
  in_state_[static_cast<unsigned>(state)]++;
  slot_sets_[static_cast<unsigned>(state)].add(slot);
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
      set(d.tag, State::kTranslated);
      slots_[d.tag].ready = d.at;
      progress = true;
    }
  }
  progress |= send_one_request(now, port);
  progress |= hand_one_to_tracer(traced);
  progress |= take_one_reference(now, tr, queue);
  return progress;
}

// A write-back first (it frees a slot), else the read of a slot whose
// address is translated; the lowest-numbered slot of either kind.
bool Marker::send_one_request(Cycle now, MemoryPort& port) {
  if ((in(State::kWriteBack) == 0 && in(State::kTranslated) == 0) || !port.ready(now)) return false;
  size_t i = slots_in(State::kWriteBack).first();
  if (i != SlotSet::kNone) {
    Slot& s = slots_[i];
    port.submit(
        MemRequest{reinterpret_cast<uint64_t>(s.header), kWordSize, true, Source::kMarker, kWriteTag | i},
        now);
    stats_.write_backs++;
    set(i, s.nrefs ? State::kToTracer : State::kFree);
    return true;
  }
  const SlotSet& translated = slots_in(State::kTranslated);
  for (i = translated.first(); i != SlotSet::kNone; i = translated.first(i + 1)) {
    if (slots_[i].ready > now) continue;
    port.submit(
        MemRequest{reinterpret_cast<uint64_t>(slots_[i].header), kWordSize, false, Source::kMarker, i}, now);
    set(i, State::kReading);
    stats_.reads++;
    return true;
  }
  return false;
}

bool Marker::hand_one_to_tracer(TracerQueue& traced) {
  if (in(State::kToTracer) == 0 || traced.full()) return false;
  size_t i = slots_in(State::kToTracer).first();
  traced.push(TracerEntry{slots_[i].header, slots_[i].nrefs});
  set(i, State::kFree);
  return true;
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
  size_t i = slots_in(State::kFree).first();
  Slot& s = slots_[i];
  s.header = reinterpret_cast<Word*>(ref);
  // The host reads the header when the simulated read returns: its line
  // comes into the host's cache meanwhile.
  __builtin_prefetch(s.header);
  Cycle ready = now;
  bool now_translated = tr.translate(Port::kMarker, ref, i, now, &ready) == Translation::Outcome::kNow;
  set(i, now_translated ? State::kTranslated : State::kParked);
  s.ready = ready;
  return true;
}

// The read is back: the fetch-or, applied to the real header.
void Marker::on_response(const MemResponse& response) {
  if (response.request.tag & kWriteTag) return;  // a write-back's acknowledgement
  size_t i = response.request.tag;
  Slot& s = slots_[i];
  Word before = *s.header;
  if (Header::is_marked(before)) {
    stats_.already_marked++;
    set(i, State::kFree);
    return;
  }
  *s.header = before | Header::kMarkBit;
  stats_.objects_marked++;
  if (observe::Recording* r = observe::Recording::active()) [[unlikely]]
    r->grey(observe::Recording::kDevice, s.header);
  s.nrefs = Header::nrefs(before);
  set(i, State::kWriteBack);
}

// As step() would find it: a translation to take, a request the port
// takes, an object for the tracer queue, a reference from the mark queue.
bool Marker::may_act(Cycle at, const MemoryModel& memory, const Translation& tr, const MarkQueue& queue,
                     const TracerQueue& traced) const {
  if (in(State::kParked) && tr.has_done(Port::kMarker)) return true;
  if (memory.can_accept()) {
    if (in(State::kWriteBack)) return true;
    const SlotSet& translated = slots_in(State::kTranslated);
    for (size_t i = translated.first(); i != SlotSet::kNone; i = translated.first(i + 1))
      if (slots_[i].ready <= at) return true;
  }
  if (in(State::kToTracer) && !traced.full()) return true;
  return busy_ < slots_.size() && queue.can_pop() && !tr.blocked(Port::kMarker);
}

Cycle Marker::next_wake(Cycle now, const MemoryModel& memory) const {
  Cycle wake = kNever;
  if (!memory.can_accept()) return wake;
  const SlotSet& translated = slots_in(State::kTranslated);
  for (size_t i = translated.first(); i != SlotSet::kNone; i = translated.first(i + 1))
    if (slots_[i].ready > now) wake = std::min(wake, slots_[i].ready);
  return wake;
}

}  // namespace gc::accel
