// The mutator's allocator onto a copy space (MMTk's bump allocator), for
// the plans whose mutator allocates in a semispace: semispace, and
// markcompact's young generation.
//
// Behind the inline fast path (gc::allocate, gc/mutator.h): the slow path,
// the buffer's install after a collection, the bytes the fast path
// allocated, the hash words the space owes, and hiding the buffer under
// --gc-stress (limit stays at top). When to collect, how a space grows and
// where large objects go are the plan's, through Plan.
#pragma once

#include <cstdint>

#include "gc/collector.h"
#include "gc/heap/reservation.h"
#include "gc/spaces/copy_space.h"

namespace gc {

class BumpAllocator {
 public:
  // What the allocator asks of the plan that owns the space.
  class Plan {
   public:
    // The collection --gc-stress asks for; ordinal counts them from 1.
    virtual void collect_for_stress(uint64_t ordinal) = 0;
    // Collects (and grows the space) until words fit in the buffer; false
    // when they cannot.
    virtual bool collect_for_buffer(uint64_t words) = 0;
    // Formats an object in the large-object space, within the heap bound, or
    // returns nullptr.
    virtual Word* try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words,
                                     uint64_t words) = 0;
    // A collection that makes room for pending_large_bytes more of large
    // objects.
    virtual void collect_for_large(uint64_t pending_large_bytes) = 0;
    // The last resort before out of memory: a collection that leaves no dead
    // space for the parallel collector's scheduling to decide, so that
    // whether a program fits depends only on its live data. False (nothing
    // done) when the last collection already left none.
    virtual bool collect_leaving_no_gaps(GcCause cause, uint64_t pending_large_bytes) = 0;
    virtual ~Plan() = default;
  };

  BumpAllocator(Collector& heap, Plan& plan) : heap_(heap), plan_(plan) {}

  // Collector::allocate_slow and allocate_pinned; nullptr: out of memory.
  Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words);
  Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words);

  // After a collection: the buffer is the rest of space, less the hash
  // words it owes.
  void install(CopySpace& space);
  // At a collection's start: the fast path's allocation is counted and the
  // space's top is the buffer's.
  void retire();
  // Counts what the fast path allocated since the buffer was last counted.
  void account();
  bool fits(uint64_t words) const { return static_cast<uint64_t>(end_ - heap_.top) >= words; }

  // Collector::identity_hash for a moving collector: an object of the
  // buffer's space hashed at its address owes one word for when it is
  // copied, which comes out of the buffer.
  uint64_t identity_hash(const Reservation& reservation, Word* header);
  // Words the space owes to objects in state kHashed (each grows one hash
  // word when copied, so a copy of the space needs this much beyond its
  // objects).
  uint64_t hash_reserve_words() const { return hash_reserve_words_; }
  // A flip: the new to-space owes nothing until objects are hashed in it.
  void forget_hash_reserve() { hash_reserve_words_ = 0; }

 private:
  void count_stress_allocation();
  Word* allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words);
  Word* try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words);
  Word* bump(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words);

  Collector& heap_;
  Plan& plan_;
  CopySpace* space_ = nullptr;
  Word* start_ = nullptr;  // where the buffer was last counted (bytes_allocated)
  Word* end_ = nullptr;    // the buffer's real end (limit is top under --gc-stress)
  uint64_t hash_reserve_words_ = 0;
};

}  // namespace gc
