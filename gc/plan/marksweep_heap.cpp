#include "gc/plan/marksweep_heap.h"

#include <algorithm>
#include <atomic>

namespace gc {

MarkSweepHeap::MarkSweepHeap(RootSet& roots, const HeapOptions& options)
    : Collector(roots, MarkSweepSpace::resolved_options(options)),
      space_(options_, stats_, events),
      pool_(std::make_unique<parallel::WorkerPool>(std::max(1u, options_.gc_threads))),
      worker_totals_(std::max(1u, options_.gc_threads)) {
  card_base = space_.card_base();
  // Every allocation reaches allocate_slow in stress mode; otherwise the
  // inline path pops the lists (top == limit == nullptr: no bump buffer).
  if (!options_.hide_buffer()) {
    size_class_of = marksweep::kSizeClassOfWords.data();
    free_lists = space_.free_lists();
  }
}

MarkSweepHeap::~MarkSweepHeap() = default;

// One collection

void MarkSweepHeap::collect(GcCause cause) { collect_making_room(cause, 0, false); }

void MarkSweepHeap::collect_making_room(GcCause cause, uint64_t request_bytes, bool large) {
  // Accounted, the lists hold no unaccounted cells: dropping them leaves
  // heap_used as the recorder reads it at the collection's start.
  space_.account_allocation_lists();
  space_.retire_allocation_lists();
  given_up_live_bytes_ = 0;
  run_collection(observe::CollectionKind::kFull, cause, [this, request_bytes, large] {
    if (request_bytes) given_up_live_bytes_ = live_bytes_if_no_room(request_bytes, large);
    if (given_up_live_bytes_) return false;
    mark();
    events.phase(0, "weak references", [&] { process_weak(); });
    sweep();
    events.phase(0, "resize", [&] { space_.resize(large ? request_bytes : 0); });
    return true;
  });
}

void MarkSweepHeap::sweep() { space_.sweep(*pool_); }

const std::vector<RootGroup>& MarkSweepHeap::gather_roots() {
  root_groups_.clear();
  roots_.root_groups(root_groups_);
  return root_groups_;
}

void MarkSweepHeap::process_weak() {
  MarkedSurvives resolver;
  roots_.process_weak(resolver);
}

// Slow paths

Word* MarkSweepHeap::allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  count_stress_allocation();
  if (!representable(nrefs, raw_words)) return out_of_memory();
  uint64_t words = object_words(nrefs, raw_words);
  if (words > marksweep::kMaxCellObjectWords)
    return allocate_large(class_id, nrefs, raw_words, words, GcCause::kLargeAllocation);
  return allocate_cell(class_id, nrefs, raw_words, words);
}

Word* MarkSweepHeap::allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  count_stress_allocation();
  if (!representable(nrefs, raw_words)) return out_of_memory();
  return allocate_large(class_id, nrefs, raw_words, object_words(nrefs, raw_words),
                        GcCause::kLargeAllocation);
}

void MarkSweepHeap::count_stress_allocation() {
  if (stress_collection_due()) collect_making_room(GcCause::kStress, 0, false);
}

// Up to the trigger first; after a collection, up to --heap.
Word* MarkSweepHeap::allocate_cell(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) {
  unsigned size_class = marksweep::kSizeClassOfWords[words];
  Word* cell = space_.take_cell(size_class, space_.trigger_bytes());
  if (!cell) {
    collect_making_room(GcCause::kAllocationFailure, marksweep::kClassWords[size_class] * kWordSize, false);
    cell = space_.take_cell(size_class, space_.max_heap_bytes());
    if (!cell) return exhausted();
  }
  return format_object(cell, class_id, nrefs, raw_words);
}

Word* MarkSweepHeap::allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words,
                                    GcCause cause) {
  if (Word* h = space_.allocate_large(class_id, nrefs, raw_words, words, space_.trigger_bytes())) return h;
  uint64_t bytes = LargeObjectSpace::pages_for(words) * kPageBytes;
  collect_making_room(cause, bytes, true);
  if (Word* h = space_.allocate_large(class_id, nrefs, raw_words, words, space_.max_heap_bytes())) return h;
  return exhausted();
}

Word* MarkSweepHeap::exhausted() {
  out_of_memory();
  if (given_up_live_bytes_) live_at_exhaustion_ = given_up_live_bytes_;
  return nullptr;
}

// A fetch-or, for GC threads may be setting the mark bit of the same word
// (the incremental collector's concurrent marking).
uint64_t MarkSweepHeap::identity_hash(Word* header) {
  std::atomic_ref<Word> word(*header);
  if (Header::hash_state(word.load(std::memory_order_relaxed)) == HashState::kUnhashed)
    word.fetch_or(Header::with_hash_state(0, HashState::kHashed), std::memory_order_relaxed);
  return space_.hash_of_address(header);
}

}  // namespace gc
