// A plan whose mutator allocates through a BumpAllocator
// (gc/alloc/bump_allocator.h): semispace, and markcompact's young
// generation. It holds the heap's one reservation and the allocator, and
// implements the Collector entry points that are the allocator's; the plan
// answers the allocator's questions (BumpAllocator::Plan).
#pragma once

#include <cstdint>

#include "gc/alloc/bump_allocator.h"
#include "gc/collector.h"
#include "gc/heap/reservation.h"

namespace gc {

class BumpAllocatingCollector : public Collector, private BumpAllocator::Plan {
 public:
  Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override {
    return mutator_.allocate_slow(class_id, nrefs, raw_words);
  }
  Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override {
    return mutator_.allocate_pinned(class_id, nrefs, raw_words);
  }
  bool in_heap(const void* addr) const override { return reservation_.contains(addr); }
  uint64_t identity_hash(Word* header) override { return mutator_.identity_hash(reservation_, header); }
  void flush_stats() override { mutator_.account(); }

 protected:
  // options already resolved; the reservation is reservation_bytes(options).
  BumpAllocatingCollector(RootSet& roots, const HeapOptions& options,
                          uint64_t (*reservation_bytes)(const HeapOptions&))
      : Collector(roots, options), reservation_(reservation_bytes(options_)), mutator_(*this, *this) {}

  // The plan's usual collection, or the one collect_leaving_no_gaps asks
  // for: serial, so that no filler or gap is left for scheduling to decide.
  enum class Leaving { kAnyGaps, kNoGaps };

  Reservation reservation_;
  BumpAllocator mutator_;  // the mutator's buffer
};

}  // namespace gc
