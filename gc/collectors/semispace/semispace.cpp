#include "gc/collectors/semispace/semispace.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gc/collectors/semispace/psemispaces.h"
#include "gc/collectors/semispace/semispace_options.h"
#include "gc/heap/identity_hash.h"
#include "gc/heap/lab.h"
#include "gc/observe/common_counters.h"
#include "gc/plan/cheney.h"
#include "gc/plan/gc_lab.h"

namespace gc {

namespace {

constexpr observe::Counter kFromSpaceBytes{"from-space bytes", observe::Unit::kBytes,
                                           observe::CounterKind::kPeak};

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

// The serial Cheney scavenger (gc/plan/cheney.h) for semispace: large objects are
// marked in place and scanned from a mark stack (kept between collections).
class SerialScavenger final : public CheneyScavenger<SerialScavenger> {
 public:
  explicit SerialScavenger(SemispaceCollector& c)
      : CheneyScavenger(c.reservation_, *c.current_, c.other_->begin(), c.other_->top(), kDefaultGcLabWords),
        los_begin_(reinterpret_cast<uintptr_t>(c.los_.begin())),
        los_bytes_(reinterpret_cast<uintptr_t>(c.los_.frontier()) - los_begin_),
        los_stack_(c.large_mark_stack_) {}

 private:
  friend class CheneyScavenger<SerialScavenger>;

  void target_outside_from_space(uintptr_t addr) {
    if (addr - los_begin_ >= los_bytes_) return;
    Word* h = reinterpret_cast<Word*>(addr);
    Word w = *h;
    if (Header::is_marked(w)) return;
    *h = w | Header::kMarkBit;
    if (recording_) recording_->grey(0, h);
    los_stack_.push_back(h);
  }

  // Large objects are grey while on the mark stack; scanning them is the
  // same slot loop, in place.
  bool scan_other_grey() {
    if (los_stack_.empty()) return false;
    while (!los_stack_.empty()) {
      Word* h = los_stack_.back();
      los_stack_.pop_back();
      if (recording_) recording_->scan(0, h);
      scan_slots(h, Header::nrefs(*h));
    }
    return true;
  }

  uintptr_t los_begin_;
  uint64_t los_bytes_;
  std::vector<Word*>& los_stack_;
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

// This collector's own panels in --gc-report.
void SemispaceCollector::describe_events() {
  events.add_panel({"Bytes copied per collection",
                    "copied (KiB)",
                    "A copying collector's work is proportional to what survives, not to the heap: "
                    "each bar is the live data copied from from-space to to-space.",
                    {{"copied", &observe::kBytesCopied, nullptr, 1.0 / 1024}}});
  events.add_panel(
      {"Survival rate",
       "survivors (% of from-space)",
       "Bytes copied over bytes in from-space at the flip: low bars mean most objects died young, "
       "which is when copying is cheap.",
       {{"survival", &observe::kBytesCopied, &kFromSpaceBytes, 100}}});
}

SemispaceCollector::~SemispaceCollector() = default;

std::unique_ptr<Collector> create_semispace(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<SemispaceCollector>(roots, options);
}

// One collection

void SemispaceCollector::collect(GcCause cause) { collect_making_room(cause, 0); }

void SemispaceCollector::collect_making_room(GcCause cause, uint64_t pending_large_bytes, Leaving leaving) {
  mutator_.retire();
  pending_large_bytes_ = pending_large_bytes;
  run_collection(observe::CollectionKind::kFull, cause, [this, leaving] { return collection(leaving); });
}

bool SemispaceCollector::collection(Leaving leaving) {
  // Survivors need at most from-space's bytes plus the hash words it owes;
  // the sizing policy makes the first half of the region hold that, so this
  // only guards it. The second half is the parallel copy's headroom.
  survivor_bound_words_ = current_->used_bytes() / kWordSize + mutator_.hash_reserve_words();
  if (survivor_bound_words_ > other_->region_bytes() / kWordSize / 2) {
    live_at_exhaustion_ = heap_used();
    return false;
  }

  events.count(0, kFromSpaceBytes, current_->used_bytes());
  events.phase(0, "flip", [&] { flip(); });
  if (options_.gc_threads == 0 || leaving == Leaving::kNoGaps) {
    scavenge_serially();
  } else {
    scavenge_in_parallel();
  }
  events.phase(0, "weak references", [&] { process_weak(); });
  events.phase(0, "sweep large objects", [&] { los_.sweep(options_.poison_freed_memory()); });
  events.phase(0, "resize and release", [&] {
    resize_semispaces();
    release_from_space();
    mutator_.install(*current_);
  });
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

// The serial Cheney collector (--gc-threads=0): the root groups in order
// (the parallel version claims them), then the closure.
void SemispaceCollector::scavenge_serially() {
  SerialScavenger scavenger(*this);
  events.phase(0, "scavenge roots", [&] {
    root_groups_.clear();
    roots_.root_groups(root_groups_);
    for (const RootGroup& group : root_groups_)
      for (size_t i = 0; i < group.count; ++i) scavenger.scavenge_slot(group.slots + i);
  });
  events.count(0, observe::kRootGroups, root_groups_.size());
  events.phase(0, "trace", [&] {
    scavenger.trace();
    scavenger.finish();
    stats_.bytes_copied += scavenger.stats().bytes_copied;
    events.count(0, observe::kBytesCopied, scavenger.stats().bytes_copied);
  });
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
  if (options_.poison_freed_memory()) other_->poison_contents();
  if (other_->capacity_bytes() > semispace_bytes_)
    Reservation::release_pages(other_->begin() + semispace_bytes_ / kWordSize, other_->end());
  other_->reset(semispace_bytes_);
}

// Slow paths: the mutator's allocator (gc/alloc/bump_allocator.h) calls
// these.

void SemispaceCollector::collect_for_stress(uint64_t) { collect_making_room(GcCause::kStress, 0); }

bool SemispaceCollector::collect_for_buffer(uint64_t words) {
  collect_making_room(GcCause::kAllocationFailure, 0);
  if (mutator_.fits(words) || try_grow_current_space(words)) return true;
  // The parallel copy's filler may be what is in the way: retry once with a
  // collection that leaves none.
  if (!collect_leaving_no_gaps(GcCause::kAllocationFailure, 0)) return false;
  return mutator_.fits(words) || try_grow_current_space(words);
}

void SemispaceCollector::collect_for_large(uint64_t pending_large_bytes) {
  collect_making_room(GcCause::kLargeAllocation, pending_large_bytes);
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
// thread scheduling, and keeps the semispaces from shrinking to make room
// for a large object; the serial Cheney scavenger leaves none. False when
// there is none.
bool SemispaceCollector::collect_leaving_no_gaps(GcCause cause, uint64_t pending_large_bytes) {
  if (waste_words_ == 0) return false;
  collect_making_room(cause, pending_large_bytes, Leaving::kNoGaps);
  retries_leaving_no_gaps_++;
  return true;
}

Word* SemispaceCollector::try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words,
                                             uint64_t words) {
  uint64_t pages = LargeObjectSpace::pages_for(words);
  uint64_t bytes = pages * kPageBytes;
  if (2 * semispace_bytes_ + los_.committed_bytes() + bytes > options_.max_heap_bytes) return nullptr;
  LargeObjectSpace::Object o = los_.allocate(class_id, nrefs, raw_words);
  if (!o.header) return nullptr;
  cards_.clean(o.start, o.end());
  return o.header;
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
