#include "gc/alloc/bump_allocator.h"

#include "gc/heap/identity_hash.h"
#include "gc/spaces/large_object_space.h"

namespace gc {

Word* BumpAllocator::allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  count_stress_allocation();
  if (!representable(nrefs, raw_words)) return heap_.out_of_memory();
  uint64_t words = object_words(nrefs, raw_words);
  if (words * kWordSize >= kLargeObjectBytes) return allocate_large(class_id, nrefs, raw_words, words);
  if (!fits(words) && !plan_.collect_for_buffer(words)) return heap_.out_of_memory();
  return bump(class_id, nrefs, raw_words, words);
}

Word* BumpAllocator::allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  count_stress_allocation();
  if (!representable(nrefs, raw_words)) return heap_.out_of_memory();
  return allocate_large(class_id, nrefs, raw_words, object_words(nrefs, raw_words));
}

void BumpAllocator::count_stress_allocation() {
  if (heap_.stress_collection_due()) plan_.collect_for_stress(heap_.stress_collections());
}

// Past the buffer's limit only in stress mode, where limit stays at top.
Word* BumpAllocator::bump(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) {
  account();
  Word* p = heap_.top;
  heap_.top = p + words;
  start_ = heap_.top;
  if (heap_.options_.hide_buffer()) heap_.limit = heap_.top;
  heap_.stats_.bytes_allocated += words * kWordSize;
  return format_object(p, class_id, nrefs, raw_words);
}

// Large objects: the plan's space first; then a collection that makes room
// for them; then one that leaves no gaps; then out of memory.
Word* BumpAllocator::allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) {
  if (Word* h = try_allocate_large(class_id, nrefs, raw_words, words)) return h;
  uint64_t pending = LargeObjectSpace::pages_for(words) * kPageBytes;
  plan_.collect_for_large(pending);
  if (Word* h = try_allocate_large(class_id, nrefs, raw_words, words)) return h;
  if (plan_.collect_leaving_no_gaps(GcCause::kLargeAllocation, pending))
    if (Word* h = try_allocate_large(class_id, nrefs, raw_words, words)) return h;
  return heap_.out_of_memory();
}

Word* BumpAllocator::try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words,
                                        uint64_t words) {
  Word* h = plan_.try_allocate_large(class_id, nrefs, raw_words, words);
  if (!h) return nullptr;
  heap_.stats_.bytes_allocated += words * kWordSize;
  heap_.note_heap_size();
  return h;
}

void BumpAllocator::install(CopySpace& space) {
  space_ = &space;
  Word* top = space.top();
  Word* end = space.end();
  end_ =
      end > top && static_cast<uint64_t>(end - top) > hash_reserve_words_ ? end - hash_reserve_words_ : top;
  heap_.top = top;
  heap_.limit = heap_.options_.hide_buffer() ? top : end_;
  start_ = top;
}

void BumpAllocator::retire() {
  account();
  space_->set_top(heap_.top);
}

void BumpAllocator::account() {
  heap_.stats_.bytes_allocated += static_cast<uint64_t>(heap_.top - start_) * kWordSize;
  start_ = heap_.top;
}

uint64_t BumpAllocator::identity_hash(const Reservation& reservation, Word* header) {
  bool first_request = false;
  uint64_t hash = moving_identity_hash(reservation, header, first_request);
  if (first_request && header >= space_->begin() && header < heap_.top) {
    hash_reserve_words_++;
    if (end_ > heap_.top) end_--;
    if (heap_.limit > end_) heap_.limit = end_;
  }
  return hash;
}

}  // namespace gc
