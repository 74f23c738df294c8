// The traversal unit's marker (L154, L243-250, Figure 13): it takes
// references from the mark queue into one of its request slots (16, each
// holding a tag and an address), translates the address with its TLB, and
// reads the object's header word. The response marks the object and
// returns its reference count in one step, as the paper's fetch-or does;
// an object not marked before gets its header written back and, if it has
// references, goes to the tracer queue. An object already marked needs
// no write-back (L250: "we can elide write-backs if the object was already
// marked"). Responses are handled in the order they return.
//
// The optional mark-bit cache (L290-293, Figure 21) remembers the last
// objects sent to be marked; a reference that hits it is dropped without a
// memory request, since that object is marked or about to be.
//
// The mark itself is applied to the real header when the simulated read
// returns, so a second slot holding the same object sees it marked; the
// hardware could trace such an object twice, which is harmless.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gc/collectors/accel/mark_queue.h"
#include "gc/collectors/accel/port.h"
#include "gc/collectors/accel/tag_array.h"
#include "gc/collectors/accel/tracer_queue.h"
#include "gc/collectors/accel/translation.h"

namespace gc::accel {

struct MarkerConfig {
  unsigned slots = 16;
  unsigned mark_cache_entries = 0;  // 0: no mark-bit cache
};

struct MarkerStats {
  uint64_t objects_marked = 0;
  uint64_t already_marked = 0;  // responses that found the mark set
  uint64_t mark_cache_hits = 0;
  uint64_t reads = 0;
  uint64_t write_backs = 0;
};

class Marker {
 public:
  explicit Marker(const MarkerConfig& config);

  // One cycle: translations that finished, at most one memory request (a
  // write-back before a read), at most one object to the tracer queue, at
  // most one reference taken from the mark queue. True if it did something.
  bool step(Cycle now, MemoryPort& port, Translation& tr, MarkQueue& queue, TracerQueue& traced);
  void on_response(const MemResponse& response);

  bool idle() const { return busy_ == 0; }
  // Whether a step at `at` could do anything, as things stand (the unit
  // skips the cycles where no box can).
  bool may_act(Cycle at, const MemoryModel& memory, const Translation& tr, const MarkQueue& queue,
               const TracerQueue& traced) const;
  // The earliest cycle a translated slot may send its read (kNever: none,
  // or the memory is full: a response frees it and wakes the unit).
  Cycle next_wake(Cycle now, const MemoryModel& memory) const;
  const MarkerStats& stats() const { return stats_; }

 private:
  enum class State : uint8_t { kFree, kParked, kTranslated, kReading, kWriteBack, kToTracer, kCount };
  struct Slot {
    State state = State::kFree;
    Word* header = nullptr;
    Cycle ready = 0;  // kTranslated: the physical address is known then
    uint64_t nrefs = 0;
  };

  // The slots in one state, a bit each, so that finding the first of them
  // (the order the hardware's arbiter takes them in) is a bit scan.
  class SlotSet {
   public:
    static constexpr size_t kNone = SIZE_MAX;
    explicit SlotSet(size_t slots) : words_((slots + 63) / 64) {}
    void add(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
    void remove(size_t i) { words_[i / 64] &= ~(uint64_t{1} << (i % 64)); }
    // The lowest slot in the set from `from` on (kNone: none).
    size_t first(size_t from = 0) const {
      size_t w = from / 64;
      if (w >= words_.size()) return kNone;
      uint64_t bits = words_[w] & (~uint64_t{0} << (from % 64));
      while (bits == 0) {
        if (++w == words_.size()) return kNone;
        bits = words_[w];
      }
      return w * 64 + static_cast<size_t>(std::countr_zero(bits));
    }

   private:
    std::vector<uint64_t> words_;
  };

  bool send_one_request(Cycle now, MemoryPort& port);
  bool hand_one_to_tracer(TracerQueue& traced);
  bool take_one_reference(Cycle now, Translation& tr, MarkQueue& queue);
  void set(size_t slot, State state);
  unsigned in(State state) const { return in_state_[static_cast<unsigned>(state)]; }
  const SlotSet& slots_in(State state) const { return slot_sets_[static_cast<unsigned>(state)]; }

  std::vector<Slot> slots_;
  unsigned busy_ = 0;
  // Slots in each state, so that a step looks for a state only when some
  // slot is in it, and which they are.
  unsigned in_state_[static_cast<unsigned>(State::kCount)] = {};
  std::vector<SlotSet> slot_sets_;
  bool cache_enabled_;
  TagArray mark_cache_;
  MarkerStats stats_;
  std::vector<Translation::Done> translated_;  // scratch
};

}  // namespace gc::accel
