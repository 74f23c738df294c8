#include "gc/collectors/semispace/semispace.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gc/alloc/lab.h"
#include "gc/collectors/semispace/psemispaces.h"
#include "gc/collectors/semispace/semispace_options.h"
#include "gc/heap/identity_hash.h"

namespace gc {

namespace {

// Small enough that a short script touches little memory; large enough that
// starting the VM (prelude, class table, interned strings) does not collect.
constexpr uint64_t kInitialSemispaceBytes = 4ull << 20;

// The smallest --heap honoured: room for a few pages in each semispace, so
// that tests of out-of-memory behaviour can use tiny heaps.
constexpr uint64_t kMinHeapBytes = 64ull << 10;

// Live data above this fraction of a semispace after a collection doubles
// it: a copying collector's cost is proportional to live data and its
// frequency inversely proportional to free space, so keeping at least half
// free bounds the collection cost per allocated byte.
constexpr uint64_t kGrowWhenLiveExceedsOneIn = 2;

}  // namespace

[[noreturn]] void semispace_to_space_overflow() {
  std::fprintf(stderr, "gc: internal error: to-space overflow during a collection\n");
  std::abort();
}

// The serial scavenger's state for one collection. The per-object path is
// inline, with no virtual call and no allocation per object (the
// large-object mark stack is kept between collections).

class Scavenger {
 public:
  explicit Scavenger(SemispaceCollector& c)
      : c_(c),
        to_(*c.current_),
        from_begin_(reinterpret_cast<uintptr_t>(c.other_->begin())),
        from_bytes_(c.other_->used_bytes()),
        los_begin_(reinterpret_cast<uintptr_t>(c.los_.begin())),
        los_bytes_(reinterpret_cast<uintptr_t>(c.los_.frontier()) - los_begin_),
        los_stack_(c.large_mark_stack_),
        scan_(to_.begin()) {
    lab_.top = lab_.end = to_.begin();
  }

  // Roots and slots alike, as CopyScavenger::trace_slot (psemispaces.h).
  void scavenge_slot(Value* slot) {
    uint64_t bits = slot->bits;
    if ((bits & Value::kTagMask) != Value::kRefTag) return;
    uintptr_t addr = static_cast<uintptr_t>(bits & ~Value::kTagMask);
    if (addr - from_begin_ < from_bytes_) {
      slot->bits = Value::kRefTag | reinterpret_cast<uintptr_t>(forward(reinterpret_cast<Word*>(addr)));
    } else if (addr - los_begin_ < los_bytes_) {
      mark_large(reinterpret_cast<Word*>(addr));
    }
  }

  // Cheney's scan: the objects between the scan pointer and the copy
  // pointer (the LAB's top) are grey; scanning one may copy more.
  void scan_to_space() {
    while (scan_ < lab_.top) {
      Word* h = header_from_start(scan_);
      Word header = *h;
      scan_slots(h, Header::nrefs(header));
      scan_ = h + 1 + Header::raw_words(header);
    }
  }

  bool has_large_work() const { return !los_stack_.empty(); }

  // Large objects are grey while on the mark stack; scanning them is the
  // same slot loop, in place.
  void trace_large_objects() {
    while (!los_stack_.empty()) {
      Word* h = los_stack_.back();
      los_stack_.pop_back();
      scan_slots(h, Header::nrefs(*h));
    }
  }

  // Ends the collection's copying: the space's top is the copy pointer.
  void finish() {
    to_.retire_lab(lab_);
    c_.stats_.bytes_copied += copied_words_ * kWordSize;
    c_.events.count(0, "bytes copied", copied_words_ * kWordSize);
  }

 private:
  void scan_slots(Word* h, uint64_t n) {
    Value* slots = ref_slots_begin(h, n);
    for (uint64_t i = 0; i < n; ++i) scavenge_slot(slots + i);
  }

  Word* forward(Word* old) {
    Word h = *old;
    if (Header::is_forwarded(h)) return reinterpret_cast<Word*>(h);
    return copy(old, h);
  }

  // The whole object (count word, slots, header, raw words) moves with one
  // memcpy; the old header word becomes the forwarding pointer.
  Word* copy(Word* old, Word h) {
    if (Header::hash_state(h) == HashState::kHashed) [[unlikely]]
      return copy_hashed(old, h);
    uint64_t below = words_below(Header::nrefs(h));
    uint64_t words = below + 1 + Header::raw_words(h);
    Word* dst = to_allocate(words);
    std::memcpy(dst, old - below, words * kWordSize);
    Word* moved = dst + below;
    *old = reinterpret_cast<Word>(moved);
    copied_words_ += words;
    return moved;
  }

  // An object hashed at its current address keeps that hash in a new last
  // raw word and changes state to kHashedAndMoved (layout.h, HashState).
  [[gnu::noinline]] Word* copy_hashed(Word* old, Word h) {
    uint64_t below = words_below(Header::nrefs(h));
    uint64_t raw = Header::raw_words(h);
    uint64_t new_raw = rounded_raw(raw + 1);
    uint64_t words = below + 1 + new_raw;
    Word* dst = to_allocate(words);
    std::memcpy(dst, old - below, (below + 1 + raw) * kWordSize);
    Word* moved = dst + below;
    std::fill(moved + 1 + raw, moved + 1 + new_raw, Word{0});
    moved[new_raw] = c_.hash_of_address(old);
    *moved = Header::with_hash_state(Header::with_raw_words(h, new_raw), HashState::kHashedAndMoved);
    *old = reinterpret_cast<Word>(moved);
    copied_words_ += words;
    return moved;
  }

  void mark_large(Word* h) {
    Word w = *h;
    if (Header::is_marked(w)) return;
    *h = w | Header::kMarkBit;
    los_stack_.push_back(h);
  }

  Word* to_allocate(uint64_t words) {
    if (!lab_.fits(words)) [[unlikely]]
      refill_lab(words);
    return lab_.bump(words);
  }

  [[gnu::noinline]] void refill_lab(uint64_t words) {
    if (!to_.claim_lab(lab_, words, kDefaultGcLabWords)) semispace_to_space_overflow();
  }

  SemispaceCollector& c_;
  CopySpace& to_;
  uintptr_t from_begin_;
  uint64_t from_bytes_;
  uintptr_t los_begin_;
  uint64_t los_bytes_;
  std::vector<Word*>& los_stack_;
  Lab lab_;
  Word* scan_;
  uint64_t copied_words_ = 0;
};

// process_weak's answer: forwarded -> the copy; a marked large object ->
// itself; anything else in the heap died.
class SemispaceWeakResolver final : public WeakResolver {
 public:
  explicit SemispaceWeakResolver(SemispaceCollector& c) : c_(c) {}
  Word* resolve(Word* h) override {
    if (c_.other_->contains(h)) return Header::is_forwarded(*h) ? reinterpret_cast<Word*>(*h) : nullptr;
    if (c_.los_.contains(h)) return Header::is_marked(*h) ? h : nullptr;
    if (h >= c_.current_->begin() && h < c_.current_->top()) return h;  // already resolved
    return c_.in_heap(h) ? nullptr : h;
  }

 private:
  SemispaceCollector& c_;
};

// Construction

namespace {

// Each semispace region is twice as large as the whole heap: S is at most
// half of it, and copying may add one hash word per object, so survivors
// (at most S plus S words) fit the first half; the second half is headroom
// for parallel LAB waste (semispace.h). Large objects never move, so their
// region is several times the heap: the byte bound is enforced on pages in
// use, and the spare address space keeps a fragmented region from refusing
// a request the bound allows.
constexpr uint64_t kLargeObjectAddressFactor = 4;

uint64_t reservation_bytes(const HeapOptions& o) {
  return (4 + kLargeObjectAddressFactor) * o.max_heap_bytes;
}

}  // namespace

SemispaceCollector::SemispaceCollector(RootSet& roots, const HeapOptions& options)
    : BumpAllocatingCollector(roots, resolved_heap_options(options, kMinHeapBytes), reservation_bytes),
      cards_(reservation_),
      space_a_("semispace-A", reservation_.base(),
               reservation_.base() + 2 * options_.max_heap_bytes / kWordSize),
      space_b_("semispace-B", space_a_.region_end(),
               space_a_.region_end() + 2 * options_.max_heap_bytes / kWordSize),
      los_(space_b_.region_end(), reservation_.end()),
      current_(&space_a_),
      other_(&space_b_),
      semispace_bytes_(std::min(kInitialSemispaceBytes, round_down_pages(options_.max_heap_bytes / 2))),
      lab_words_(gc_lab_words(semispace_options(options_).gc_lab_bytes)),
      threads_(options_.gc_threads, options_.gc_deque_tasks) {
  card_base = cards_.biased_base();
  current_->reset(semispace_bytes_);
  other_->reset(semispace_bytes_);
  cards_.clean(current_->begin(), current_->end());
  large_mark_stack_.reserve(256);
  los_.set_growth_budget(0);  // large objects count toward collections (LargeObjectSpace)
  worker_totals_.resize(options_.gc_threads);
  mutator_.install(*current_);
  note_heap_size();
  describe_events();
}

// Units of this collector's counters, and its own panels in --gc-report.
void SemispaceCollector::describe_events() {
  events.describe_counter("bytes copied", "bytes");
  events.describe_counter("from-space bytes", "bytes");
  events.describe_counter("root groups", "groups");
  events.add_panel({"Bytes copied per collection",
                    "copied (KiB)",
                    "A copying collector's work is proportional to what survives, not to the heap: "
                    "each bar is the live data copied from from-space to to-space.",
                    {{"copied", "bytes copied", "", 1.0 / 1024}}});
  events.add_panel(
      {"Survival rate",
       "survivors (% of from-space)",
       "Bytes copied over bytes in from-space at the flip: low bars mean most objects died young, "
       "which is when copying is cheap.",
       {{"survival", "bytes copied", "from-space bytes", 100}}});
}

SemispaceCollector::~SemispaceCollector() = default;

std::unique_ptr<Collector> create_semispace(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<SemispaceCollector>(roots, options);
}

// One collection

void SemispaceCollector::collect(GcCause cause) { collect_for(cause, 0); }

void SemispaceCollector::collect_for(GcCause cause, uint64_t pending_large_bytes) {
  mutator_.retire();
  pending_large_bytes_ = pending_large_bytes;
  run_collection(observe::CollectionKind::kFull, cause, [this] { return collection(); });
}

bool SemispaceCollector::collection() {
  // Survivors need at most from-space's bytes plus the hash words it owes;
  // the sizing policy makes the first half of the region hold that, so this
  // only guards it. The second half is the parallel copy's headroom.
  survivor_bound_words_ = current_->used_bytes() / kWordSize + mutator_.hash_reserve_words();
  if (survivor_bound_words_ > other_->region_bytes() / kWordSize / 2) {
    live_at_exhaustion_ = heap_used();
    return false;
  }

  events.count(0, "from-space bytes", current_->used_bytes());
  events.phase(0, "flip", [&] { flip(); });
  if (options_.gc_threads == 0 || compact_serially_) {
    scavenge_serially();
  } else {
    scavenge_in_parallel();
  }
  events.phase(0, "weak references", [&] { process_weak(); });
  events.phase(0, "sweep large objects", [&] { los_.sweep(debug_poisoning()); });
  events.phase_start(0, "resize and release");
  resize_semispaces();
  release_from_space();
  mutator_.install(*current_);
  events.phase_end(0, "resize and release");
  return true;
}

// The mutator's space becomes from-space, the empty one to-space.
void SemispaceCollector::flip() {
  std::swap(current_, other_);
  current_->reset(semispace_bytes_);
  cards_.clean(current_->begin(), current_->end());
  // Every kHashed object in from-space gets its hash word as it is copied.
  mutator_.forget_hash_reserve();
  waste_words_ = 0;
}

// The serial Cheney collector (--gc-threads=0).
void SemispaceCollector::scavenge_serially() {
  Scavenger scavenger(*this);
  events.phase(0, "scavenge roots", [&] { scavenge_roots(scavenger); });
  events.count(0, "root groups", root_groups_.size());
  events.phase_start(0, "trace");
  trace_transitive_closure(scavenger);
  scavenger.finish();
  events.phase_end(0, "trace");
}

// One root group at a time, in order (the parallel version claims them).
void SemispaceCollector::scavenge_roots(Scavenger& s) {
  root_groups_.clear();
  roots_.root_groups(root_groups_);
  for (const RootGroup& group : root_groups_)
    for (size_t i = 0; i < group.count; ++i) s.scavenge_slot(group.slots + i);
}

// Scanning to-space may mark large objects; scanning those may copy more
// objects into to-space. Alternate until both are empty.
void SemispaceCollector::trace_transitive_closure(Scavenger& s) {
  for (;;) {
    s.scan_to_space();
    if (!s.has_large_work()) break;
    s.trace_large_objects();
  }
}

void SemispaceCollector::process_weak() {
  SemispaceWeakResolver resolver(*this);
  roots_.process_weak(resolver);
}

// The sizing policy (semispace.h): grow S while live data exceeds half of
// it, keep 2 * S + L within the heap bound, never below what is live.
void SemispaceCollector::resize_semispaces() {
  uint64_t live = current_->used_bytes() - waste_words_ * kWordSize;
  uint64_t bound = semispace_bound(pending_large_bytes_);
  uint64_t target = semispace_bytes_;
  while (live > target / kGrowWhenLiveExceedsOneIn && target < bound) target *= 2;
  target = std::min(target, bound);
  // Never below what the space holds: live data, and the filler a
  // parallel copy left among it.
  target = std::max({target, round_up_pages(current_->used_bytes()), static_cast<uint64_t>(kPageBytes)});
  if (target < semispace_bytes_) {
    Reservation::release_pages(current_->begin() + target / kWordSize, current_->end());
  } else if (target > semispace_bytes_) {
    cards_.clean(current_->end(), current_->begin() + target / kWordSize);
  }
  semispace_bytes_ = target;
  current_->set_capacity(target);
  stats_.last_live_bytes = live + los_.committed_bytes();
  los_.set_growth_budget(stats_.last_live_bytes);
}

// From-space is empty now (poisoned in stress and verify modes).
void SemispaceCollector::release_from_space() {
  if (debug_poisoning()) other_->poison_contents();
  if (other_->capacity_bytes() > semispace_bytes_)
    Reservation::release_pages(other_->begin() + semispace_bytes_ / kWordSize, other_->end());
  other_->reset(semispace_bytes_);
}

// Slow paths: the mutator's allocator (gc/alloc/bump_allocator.h) calls
// these.

void SemispaceCollector::collect_for_stress(uint64_t) { collect_for(GcCause::kStress, 0); }

bool SemispaceCollector::collect_for_buffer(uint64_t words) {
  collect_for(GcCause::kAllocationFailure, 0);
  if (mutator_.fits(words) || try_grow_current_space(words)) return true;
  // The parallel copy's filler may be what is in the way: retry once with a
  // collection that leaves none.
  if (!collect_without_waste(GcCause::kAllocationFailure, 0)) return false;
  return mutator_.fits(words) || try_grow_current_space(words);
}

void SemispaceCollector::collect_for_large(uint64_t pending_large_bytes) {
  collect_for(GcCause::kLargeAllocation, pending_large_bytes);
}

// Filler left by the parallel copy keeps the semispaces from shrinking to
// make room for a large object.
bool SemispaceCollector::collect_leaving_no_gaps(uint64_t pending_large_bytes) {
  return collect_without_waste(GcCause::kLargeAllocation, pending_large_bytes);
}

// Right after a collection that left too little room: take more of the
// region if the heap bound allows.
bool SemispaceCollector::try_grow_current_space(uint64_t words) {
  current_->set_top(top);
  uint64_t need = current_->used_bytes() + (words + mutator_.hash_reserve_words()) * kWordSize;
  uint64_t target = std::max(round_up_pages(need), semispace_bytes_ * 2);
  target = std::min(target, semispace_bound(0));
  if (target < need) return false;
  cards_.clean(current_->end(), current_->begin() + target / kWordSize);
  semispace_bytes_ = target;
  current_->set_capacity(target);
  mutator_.install(*current_);
  note_heap_size();
  return true;
}

// The parallel copy's filler (LAB tails, retracted copies) depends on
// thread scheduling; the serial Cheney scavenger leaves none
// (BumpAllocator::Plan::collect_leaving_no_gaps). False when there is none.
bool SemispaceCollector::collect_without_waste(GcCause cause, uint64_t pending_large_bytes) {
  if (waste_words_ == 0) return false;
  compact_serially_ = true;
  collect_for(cause, pending_large_bytes);
  compact_serially_ = false;
  waste_free_retries_++;
  return true;
}

Word* SemispaceCollector::try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words,
                                             uint64_t words) {
  uint64_t pages = LargeObjectSpace::pages_for(words);
  uint64_t bytes = pages * kPageBytes;
  if (2 * semispace_bytes_ + los_.committed_bytes() + bytes > options_.max_heap_bytes) return nullptr;
  Word* start = los_.allocate_pages(pages);
  if (!start) return nullptr;
  cards_.clean(start, start + bytes / kWordSize);
  Word* h = format_object(start, class_id, nrefs, raw_words);
  los_.add_object(h, start, pages);
  return h;
}

uint64_t SemispaceCollector::semispace_bound(uint64_t pending_large_bytes) const {
  uint64_t large = los_.committed_bytes() + pending_large_bytes;
  uint64_t max = options_.max_heap_bytes;
  return large >= max ? 0 : round_down_pages((max - large) / 2);
}

// Queries

uint64_t SemispaceCollector::heap_used() const {
  return static_cast<uint64_t>(top - current_->begin() - waste_words_) * kWordSize + los_.committed_bytes();
}

uint64_t SemispaceCollector::heap_size() const { return 2 * semispace_bytes_ + los_.committed_bytes(); }

uint64_t SemispaceCollector::hash_of_address(const Word* header) const {
  return address_hash(reservation_, header);
}

void SemispaceCollector::describe_spaces(std::vector<observe::SpaceUsage>& out) const {
  out.push_back({current_->name(), "to-space: survivors, then new objects", semispace_bytes_,
                 static_cast<uint64_t>(top - current_->begin()) * kWordSize});
  out.push_back({other_->name(), "from-space: empty until the next flip", semispace_bytes_, 0});
  out.push_back(
      {"large objects", "large-object pages: never move", los_.committed_bytes(), los_.committed_bytes()});
}

void SemispaceCollector::describe_heap(verify::HeapShape& out) const {
  out.linear_spaces.push_back({current_->name(), current_->begin(), top});
  out.evacuated_spaces.push_back({other_->name(), other_->begin(), other_->region_end()});
  out.large_space = {"large", space_b_.region_end(), reservation_.end()};
  for (const LargeObjectSpace::Object& o : los_.objects()) out.large_objects.push_back(o.header);
}

}  // namespace gc
