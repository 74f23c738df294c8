// none: allocation without collection (Epsilon, JEP 318; MMTk's NoGC).
//
// Heap (one reservation): [ bump space | large objects ]. The mutator
// allocates through the shared fast path (gc::allocate) into the bump
// space's buffer, whose slow path is the shared BumpAllocator
// (gc/alloc/bump_allocator.h); objects of kLargeObjectBytes and more, and
// pinned ones, go to the shared large-object space. Nothing is ever freed
// or moved.
//
// Sizing policy. --heap bounds C + L, C the bump space's capacity and L the
// large-object pages in use. C grows by kExpandBytes (or what one object
// needs) when the buffer runs out; a large object that does not fit first
// takes back the buffer's unused pages. An allocation that does not fit
// then is out of memory: whether a program fits depends only on what it
// allocated, never on what is live.
//
// Invariants:
//   walkable   [bump space's begin, top) is objects end to end, so the
//              verifier (at a gc() under --gc-verify) and heap walks work.
//   never-collected  no collection record is ever made: --gc-stats reports
//              zero collections and zero pause time.
#include "gc/collectors/none/none.h"

#include <algorithm>

#include "gc/heap/identity_hash.h"
#include "gc/heap/reservation.h"
#include "gc/plan/bump_allocating_collector.h"
#include "gc/spaces/copy_space.h"
#include "gc/spaces/large_object_space.h"
#include "gc/verify/verifier.h"

namespace gc {

namespace {

// The smallest --heap honoured: tests of out of memory use tiny heaps.
constexpr uint64_t kMinHeapBytes = 64ull << 10;
// The bump space grows by this much at a time: a slow-path call per 4 MiB
// costs nothing next to filling them, and the heap spans at most this much
// more than it holds (Epsilon grows its committed space in steps too,
// EpsilonMinHeapExpand).
constexpr uint64_t kExpandBytes = 4ull << 20;

// The bump space's region and the large objects' region are each the whole
// heap: C + L <= --heap, and nothing freed leaves no fragmentation.
uint64_t reservation_bytes(const HeapOptions& o) { return 2 * o.max_heap_bytes; }

class NoneCollector final : public BumpAllocatingCollector {
 public:
  NoneCollector(RootSet& roots, const HeapOptions& options)
      : BumpAllocatingCollector(roots, resolved_heap_options(options, kMinHeapBytes), reservation_bytes),
        cards_(reservation_),
        space_("bump space", reservation_.base(), reservation_.base() + options_.max_heap_bytes / kWordSize),
        los_(space_.region_end(), reservation_.end()) {
    card_base = cards_.biased_base();  // the write barrier stores here; nothing reads it
    space_.reset(std::min(kExpandBytes, options_.max_heap_bytes));
    mutator_.install(space_);
    note_heap_size();
  }

  const char* name() const override { return "none"; }

  // A request to collect (gc(), the REPL's :gc) is ignored, as Epsilon
  // ignores System.gc(); the log records it, and --gc-verify checks the
  // heap there, the only point at which a program asks for it.
  void collect(GcCause cause) override {
    events.collection_ignored(cause);
    if (!options_.verify) return;
    mutator_.retire();
    roots_.prepare_for_collection();
    verify::verify_heap_or_exit(*this, roots_, 0, "at an ignored collection request");
  }

  uint64_t heap_used() const override {
    return static_cast<uint64_t>(top - space_.begin()) * kWordSize + los_.committed_bytes();
  }
  uint64_t heap_size() const override { return space_.capacity_bytes() + los_.committed_bytes(); }

  // Nothing moves: an object's hash is its address's, with no word owed.
  uint64_t identity_hash(Word* header) override {
    *header = Header::with_hash_state(*header, HashState::kHashed);
    return address_hash(reservation_, header);
  }

  void describe_spaces(std::vector<observe::SpaceUsage>& out) const override {
    out.push_back({space_.name(), "every small object, never freed", space_.capacity_bytes(),
                   static_cast<uint64_t>(top - space_.begin()) * kWordSize});
    out.push_back(
        {"large objects", "large-object pages, never freed", los_.committed_bytes(), los_.committed_bytes()});
  }
  void describe_heap(verify::HeapShape& out) const override {
    out.linear_spaces.push_back({space_.name(), space_.begin(), top});
    out.large_space = {"large", los_.begin(), reservation_.end()};
    for (const LargeObjectSpace::Object& o : los_.objects()) out.large_objects.push_back(o.header);
  }

 private:
  // --- slow paths (BumpAllocator::Plan): none of them collects

  // --gc-stress is refused for a collector that never collects; had it
  // run, it would count as an ignored request.
  void collect_for_stress(uint64_t) override { events.collection_ignored(GcCause::kStress); }

  // The buffer ran out: the space takes kExpandBytes more, or what the
  // object needs, within the bound.
  bool collect_for_buffer(uint64_t words) override {
    mutator_.retire();
    uint64_t need = round_up_pages(space_.used_bytes() + words * kWordSize);
    uint64_t bound = round_down_pages(options_.max_heap_bytes - los_.committed_bytes());
    if (need > bound) return false;
    space_.set_capacity(std::min(bound, std::max(need, space_.capacity_bytes() + kExpandBytes)));
    mutator_.install(space_);
    note_heap_size();
    return true;
  }

  Word* try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) override {
    uint64_t bytes = LargeObjectSpace::pages_for(words) * kPageBytes;
    if (heap_size() + bytes > options_.max_heap_bytes) return nullptr;
    return los_.allocate(class_id, nrefs, raw_words).header;
  }

  // Room for a large object without a collection: the buffer's unused
  // pages go back to the bound.
  void collect_for_large(uint64_t) override {
    mutator_.retire();
    space_.set_capacity(round_up_pages(space_.used_bytes()));
    mutator_.install(space_);
  }

  // Nothing to compact: the large object is out of memory.
  bool collect_leaving_no_gaps(GcCause, uint64_t) override { return false; }

  CardTable cards_;
  CopySpace space_;
  LargeObjectSpace los_;
};

}  // namespace

std::unique_ptr<Collector> create_none(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<NoneCollector>(roots, options);
}

}  // namespace gc
