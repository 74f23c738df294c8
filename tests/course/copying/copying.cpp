// copying: a serial copying collector (Cheney 1970), built from the
// template by the course (docs/course/write-a-collector.md). Allocate by
// bumping through to-space; when it is full, flip the two semispaces and
// copy everything reachable from the roots into the empty one, scanning
// the copies in the order they were made (Cheney's queue needs no stack).
//
// The heap. Two semispace regions, each as large as --heap; at any time the
// halves may use S words each. Objects of kLargeObjectBytes and more, and
// pinned ones (fiber stacks), go to the shared large-object space
// (gc/spaces/large_object_space.h), where they are marked, never moved.
//
// Invariants:
//   walkable     [to-space, top) is objects end to end; the buffer is
//                [top, limit), nothing lies beyond it.
//   forwarded    during a copy, a from-space object that has been copied
//                has its header replaced by its copy's address (tag 00).
//   tri-colour   during a copy, to-space below scan is black (its slots
//                point into to-space or at marked large objects), scan to
//                top is grey; large objects are grey on the grey stack.
//   evacuated    between collections nothing points into from-space.
#include "gc/collectors/copying/copying.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "gc/heap/identity_hash.h"
#include "gc/heap/reservation.h"
#include "gc/observe/common_counters.h"
#include "gc/spaces/large_object_space.h"
#include "gc/verify/verifier.h"

namespace gc {

namespace {

// The two semispaces at the start (at most half of --heap, leaving room
// for fiber stacks): room for startup (prelude, classes, interned strings)
// before the first collection, as in the template.
constexpr uint64_t kInitialHeapBytes = 8ull << 20;
// The smallest --heap honoured: tests of out of memory use tiny heaps.
constexpr uint64_t kMinHeapBytes = 128 << 10;
// Address space for large objects, in heaps: a fragmented region must not
// refuse what the byte bound allows (marksweep's reason).
constexpr uint64_t kLargeRegionHeaps = 4;

// After copying, a from-space object survives as its copy, a large object
// if it is marked.
class Survivors final : public WeakResolver {
 public:
  Word* resolve(Word* header) override {
    if (Header::is_forwarded(*header)) return reinterpret_cast<Word*>(*header);
    return Header::is_marked(*header) ? header : nullptr;
  }
};

class CopyingCollector final : public Collector {
 public:
  CopyingCollector(RootSet& roots, const HeapOptions& options)
      : Collector(roots, resolved_heap_options(options, kMinHeapBytes)),
        reservation_(options_.max_heap_bytes * (2 + kLargeRegionHeaps)),
        cards_(reservation_),
        to_space_(reservation_.base()),
        from_space_(to_space_ + options_.max_heap_bytes / kWordSize),
        large_(from_space_ + options_.max_heap_bytes / kWordSize, reservation_.end()),
        trigger_bytes_(std::min(2 * kInitialHeapBytes, options_.max_heap_bytes)),
        poison_(options_.poison_freed_memory()),
        semispace_words_(std::min(kInitialHeapBytes, options_.max_heap_bytes / 2) / 2 / kWordSize) {
    card_base = cards_.biased_base();  // the write barrier stores here; nothing reads it
    top = limit = counted_ = to_space_;
  }

  const char* name() const override { return "copying"; }

  // --- allocation

  // Small objects in to-space; large ones up to the trigger first, after a
  // collection up to --heap.
  Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override {
    if (stress_collection_due()) collect(GcCause::kStress);
    if (!representable(nrefs, raw_words)) return out_of_memory();
    uint64_t words = object_words(nrefs, raw_words);
    if (words * kWordSize >= kLargeObjectBytes) return allocate_large(class_id, nrefs, raw_words, words);
    Word* start = take_small(words);
    if (!start) {
      collect(GcCause::kAllocationFailure);
      start = take_small(words);
      if (!start) return out_of_memory();
    }
    Word* header = format_object(start, class_id, nrefs, raw_words);
    // Stressed, every allocation must come here to be counted: no buffer.
    if (options_.hide_buffer()) retire_buffer();
    return header;
  }
  // Fiber stacks are pointed at from outside the heap: they must not move.
  Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override {
    if (!representable(nrefs, raw_words)) return out_of_memory();
    return allocate_large(class_id, nrefs, raw_words, object_words(nrefs, raw_words));
  }

  // --- a collection

  void collect(GcCause cause) override {
    retire_buffer();
    run_collection(observe::CollectionKind::kFull, cause, [this] {
      flip();
      events.phase(0, "copy", [&] { copy_from_roots(); });
      events.phase(0, "weak references", [&] {
        Survivors survivors;
        roots_.process_weak(survivors);
      });
      events.phase(0, "sweep", [&] { sweep(); });
      return true;
    });
  }

  // --- queries

  uint64_t heap_size() const override { return 2 * semispace_words_ * kWordSize + large_.committed_bytes(); }
  uint64_t heap_used() const override {
    return static_cast<uint64_t>(top - to_space_) * kWordSize + large_.committed_bytes();
  }
  void flush_stats() override {
    stats_.bytes_allocated += static_cast<uint64_t>(top - counted_) * kWordSize;
    counted_ = top;
  }
  bool in_heap(const void* addr) const override { return reservation_.contains(addr); }
  // Objects move: a hash taken from the address is kept in a word the
  // object grows when it is copied (layout.h, HashState).
  uint64_t identity_hash(Word* header) override {
    bool first_request;
    return moving_identity_hash(reservation_, header, first_request);
  }
  void describe_spaces(std::vector<observe::SpaceUsage>& out) const override {
    uint64_t used = heap_used() - large_.committed_bytes();
    out.push_back({"to-space", "allocation", semispace_words_ * kWordSize, used});
    out.push_back({"from-space", "empty until the next flip", semispace_words_ * kWordSize, 0});
    out.push_back(
        {"large objects", "large-object pages", large_.committed_bytes(), large_.committed_bytes()});
  }
  void describe_heap(verify::HeapShape& out) const override {
    out.linear_spaces.push_back({"to-space", to_space_, top});
    out.evacuated_spaces.push_back({"from-space", from_space_, from_space_ + semispace_words_});
    out.large_space = {"large", large_.begin(), reservation_.end()};
    for (const LargeObjectSpace::Object& o : large_.objects()) out.large_objects.push_back(o.header);
  }

 private:
  // Room for `words` at top: to-space up to its S words.
  Word* take_small(uint64_t words) {
    limit = std::max(top, to_space_ + semispace_words_);
    if (static_cast<uint64_t>(limit - top) < words) return nullptr;
    Word* start = top;
    top += words;
    return start;
  }

  // Ends the buffer: counts what was allocated in it. Nothing lies beyond
  // top, so its tail needs no filler.
  void retire_buffer() {
    flush_stats();
    limit = top;
  }

  Word* allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) {
    Word* header = take_large(class_id, nrefs, raw_words, trigger_bytes_);
    if (!header) {
      collect(GcCause::kLargeAllocation);
      header = take_large(class_id, nrefs, raw_words, options_.max_heap_bytes);
      if (!header) return out_of_memory();
    }
    stats_.bytes_allocated += words * kWordSize;
    note_heap_size();
    return header;
  }
  Word* take_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t limit_bytes) {
    uint64_t pages = LargeObjectSpace::pages_for(object_words(nrefs, raw_words));
    if (heap_size() + pages * kPageBytes > limit_bytes) return nullptr;
    return large_.allocate(class_id, nrefs, raw_words).header;
  }

  // --- copy: from the roots, then Cheney's scan of to-space

  // The semispaces swap roles: survivors will be copied to the empty one.
  void flip() {
    std::swap(to_space_, from_space_);
    from_top_ = top;
    top = limit = counted_ = to_space_;
  }

  bool in_from_space(const Word* p) const {
    return static_cast<uint64_t>(p - from_space_) < static_cast<uint64_t>(from_top_ - from_space_);
  }

  // Where a reference leads after the collection: a small object's copy
  // (made now, at top, on the first visit), or the large object itself,
  // marked and pushed grey on the first visit.
  void scavenge(Value* slot) {
    if (!slot->is_ref()) return;
    Word* header = slot->as_ref();
    if (!in_from_space(header)) {
      if (Header::is_marked(*header)) return;
      *header |= Header::kMarkBit;
      grey_.push_back(header);
      return;
    }
    if (!Header::is_forwarded(*header)) copy(header);
    *slot = Value::ref(reinterpret_cast<Word*>(*header));
  }

  // The whole object moves with one memcpy; an object hashed at its old
  // address gets one more raw word holding that hash.
  void copy(Word* old) {
    Word h = *old;
    uint64_t below = words_below(Header::nrefs(h));
    uint64_t raw = Header::raw_words(h);
    bool hashed = Header::hash_state(h) == HashState::kHashed;
    Word* start = top;
    top += below + 1 + raw + (hashed ? 1 : 0);
    std::memcpy(start, old - below, (below + 1 + raw) * kWordSize);
    Word* moved = start + below;
    if (hashed) {  // small objects: raw + 1 is exact (layout.h, SizeCode)
      moved[raw + 1] = address_hash(reservation_, old);
      *moved = Header::with_hash_state(Header::with_raw_words(h, raw + 1), HashState::kHashedAndMoved);
    }
    *old = reinterpret_cast<Word>(moved);  // the forwarding pointer
  }

  void scan_slots(Word* header) {
    uint64_t nrefs = Header::nrefs(*header);
    Value* slots = ref_slots_begin(header, nrefs);
    for (uint64_t i = 0; i < nrefs; ++i) scavenge(slots + i);
  }

  void copy_from_roots() {
    root_groups_.clear();
    roots_.root_groups(root_groups_);
    for (const RootGroup& g : root_groups_)
      for (size_t i = 0; i < g.count; ++i) scavenge(g.slots + i);
    Word* scan = to_space_;
    while (scan < top || !grey_.empty()) {
      if (scan < top) {
        Word* header = header_from_start(scan);
        scan_slots(header);
        scan += object_words(*header);
      } else {
        Word* header = grey_.back();
        grey_.pop_back();
        scan_slots(header);
      }
    }
    uint64_t copied = static_cast<uint64_t>(top - to_space_) * kWordSize;
    stats_.bytes_copied += copied;
    events.count(0, observe::kBytesCopied, copied);
  }

  // --- sweep: from-space is garbage as a whole (poisoned in verify and
  // stress modes); the large-object space sweeps its own.

  void sweep() {
    if (poison_) std::fill(from_space_, from_top_, Header::kPoison);
    large_.sweep(poison_);
    uint64_t live_words = static_cast<uint64_t>(top - to_space_);
    stats_.last_live_bytes = live_words * kWordSize + large_.committed_bytes();

    // The halves double while more than half of one is live: a copy then
    // wins back at least as much room as it copies.
    uint64_t large = large_.committed_bytes();
    uint64_t most = options_.max_heap_bytes > large ? (options_.max_heap_bytes - large) / 2 / kWordSize : 0;
    if (2 * live_words > semispace_words_)
      semispace_words_ = std::max(semispace_words_, std::min(2 * semispace_words_, most));
    // Large objects may then take as much again as is live (at least
    // kInitialHeapBytes) before they start the next collection.
    trigger_bytes_ =
        std::min(options_.max_heap_bytes, heap_size() + std::max(kInitialHeapBytes, stats_.last_live_bytes));
  }

  Reservation reservation_;  // two semispaces, then kLargeRegionHeaps heaps of large ones
  CardTable cards_;
  Word* to_space_;    // the mutator allocates here
  Word* from_space_;  // empty between collections
  Word* from_top_ = nullptr;
  Word* counted_;  // the buffer's allocation below this is in stats_
  LargeObjectSpace large_;
  uint64_t trigger_bytes_;
  bool poison_;  // verify and stress modes: freed memory is poisoned
  uint64_t semispace_words_;
  std::vector<Word*> grey_;
  std::vector<RootGroup> root_groups_;
};

}  // namespace

std::unique_ptr<Collector> create_copying(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<CopyingCollector>(roots, options);
}

}  // namespace gc
