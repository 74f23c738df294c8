#include "gc/collectors/markcompact/markcompact.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>

#include "gc/heap/identity_hash.h"
#include "gc/observe/common_counters.h"
#include "gc/plan/gc_lab.h"

namespace gc {

namespace {

constexpr observe::Counter kDirtyCardsFound{"dirty cards found", observe::Unit::kCards};
constexpr observe::Counter kDirtyCardsKept{"dirty cards kept", observe::Unit::kCards};
constexpr observe::Counter kYoungPauseUs{"young pause us", observe::Unit::kUs};
constexpr observe::Counter kPredictedPauseUs{"predicted pause us", observe::Unit::kUs};
constexpr observe::Counter kYoungBytes{"young bytes", observe::Unit::kBytes,
                                       observe::CounterKind::kPeak};  // a level: kept and new
constexpr observe::Counter kCardTasks{"card tasks", observe::Unit::kTasks};
constexpr observe::Counter kCardSlotsScanned{"card slots scanned", observe::Unit::kSlots};
constexpr observe::Counter kBusiestCardTask{"busiest card task", observe::Unit::kSlots,
                                            observe::CounterKind::kPeak};
constexpr observe::Counter kPauseGoalUs{"pause goal us", observe::Unit::kUs, observe::CounterKind::kPeak};
constexpr observe::Counter kYoungSemispaceBytes{"young semispace bytes", observe::Unit::kBytes,
                                                observe::CounterKind::kPeak};
constexpr observe::Counter kOverflowPromotions{"overflow promotions", observe::Unit::kCollections};

constexpr uint64_t kMinYoungSemispaceBytes = 4 * kPageBytes;

// The old generation's first capacity; later, twice its live data after a
// full collection, and at least room to promote a whole young semispace.
constexpr uint64_t kInitialOldBytes = 4ull << 20;

constexpr uint64_t kMinHeapBytes = 256ull << 10;

uint64_t young_semispace_for(const HeapOptions& o) {
  uint64_t given = markcompact_options(o).young_bytes;
  uint64_t young = given ? given : kDefaultYoungBytes;
  uint64_t cap = given ? o.max_heap_bytes / 2 : o.max_heap_bytes / kYoungHeapFraction;
  return std::max(round_down_pages(std::min(young, cap) / 2), kMinYoungSemispaceBytes);
}

// The young generation sized by young_sizing.h (under --pause-goal, and
// without --young) starts at most here and stays above there, in
// semispace bytes (within what --young or the default reserve).
constexpr uint64_t kInitialAdaptiveYoungBytes = 1ull << 20;
constexpr uint64_t kMinAdaptiveYoungBytes = 64ull << 10;

// A goal sizes the young generation throughout; without one it is grown
// from the first collections' survival to its size, unless --young fixes
// it (as HotSpot's -Xmn does).
std::unique_ptr<YoungSizing> young_sizing_for(const MarkCompactOptions& knobs, uint64_t max_bytes) {
  if (knobs.pause_goal_ms == 0 && knobs.young_bytes != 0) return nullptr;
  uint64_t min = std::min(kMinAdaptiveYoungBytes, max_bytes);
  return std::make_unique<YoungSizing>(knobs.pause_goal_ms, min, max_bytes,
                                       std::min(kInitialAdaptiveYoungBytes, max_bytes), knobs.tenure_age);
}

uint64_t reservation_bytes(const HeapOptions& o) { return 4 * young_semispace_for(o) + 6 * o.max_heap_bytes; }

uint64_t words_between(const Word* a, const Word* b) { return static_cast<uint64_t>(b - a); }

void set_cards(uint8_t* card_base, const Word* begin, const Word* end, uint8_t value) {
  if (end <= begin) return;
  uintptr_t first = reinterpret_cast<uintptr_t>(begin) >> kCardShift;
  uintptr_t last = reinterpret_cast<uintptr_t>(end - 1) >> kCardShift;
  std::memset(card_base + first, value, last - first + 1);
}

}  // namespace

// process_weak's answer after a young collection: a from-space object is
// alive if it was forwarded; everything else (old, large, to-space) is
// alive until a full collection says otherwise.
class MarkCompactWeakResolver final : public WeakResolver {
 public:
  explicit MarkCompactWeakResolver(MarkCompactCollector& c) : c_(c) {}
  Word* resolve(Word* h) override {
    if (c_.young_other_->in_region(h))
      return Header::is_forwarded(*h) ? reinterpret_cast<Word*>(*h) : nullptr;
    return h;
  }

 private:
  MarkCompactCollector& c_;
};

// Construction

MarkCompactCollector::MarkCompactCollector(RootSet& roots, const HeapOptions& options)
    : BumpAllocatingCollector(roots, resolved_heap_options(options, kMinHeapBytes), reservation_bytes),
      cards_(reservation_),
      young_a_("young-A", reservation_.base(),
               reservation_.base() + 2 * young_semispace_for(options_) / kWordSize),
      young_b_("young-B", young_a_.region_end(),
               young_a_.region_end() + 2 * young_semispace_for(options_) / kWordSize),
      offsets_(young_b_.region_end(), young_b_.region_end() + 2 * options_.max_heap_bytes / kWordSize),
      old_(young_b_.region_end(), young_b_.region_end() + 2 * options_.max_heap_bytes / kWordSize, offsets_),
      los_(old_.region_end(), reservation_.end()),
      young_(&young_a_),
      young_other_(&young_b_),
      knobs_(markcompact_options(options_)),
      young_bytes_(young_semispace_for(options_)),
      young_max_bytes_(young_bytes_),
      sizing_(young_sizing_for(knobs_, young_max_bytes_)),
      old_target_bytes_(kInitialOldBytes),
      tenure_age_(knobs_.tenure_age),
      lab_words_(gc_lab_words(knobs_.gc_lab_bytes)),
      threads_(std::max(1u, options_.gc_threads), options_.gc_deque_tasks),
      cards_scan_(knobs_.card_tasks, knobs_.card_blocks),
      serial_(events, knobs_) {
  card_base = cards_.biased_base();
  if (sizing_) young_bytes_ = sizing_->young_bytes();
  young_->reset(young_bytes_);
  young_other_->reset(young_bytes_);
  old_.grow_to(std::min(kInitialOldBytes, old_bound_bytes(0)));
  los_.set_growth_budget(0);  // large objects count toward collections (LargeObjectSpace)
  // Under a pause goal the first young collection's to-space is faulted in
  // now, as the old generation's pages are after each collection
  // (ready_promotion_area), so that no first touch of a page falls in a pause.
  if (knobs_.pause_goal_ms > 0) Reservation::populate(young_other_->begin(), young_other_->end());
  cards_.clean(old_.begin(), old_.end());
  threads_.make_scavengers(events, reservation_);
  if (options_.gc_threads > 0)
    engine_ = std::make_unique<ParallelMarkCompact>(*threads_.pool, events, knobs_);
  mutator_.install(*young_);
  ready_promotion_area();
  note_heap_size();
  describe_events();
}

void MarkCompactCollector::describe_events() {
  events.add_panel({"Promotion per young collection",
                    "KiB",
                    "Bytes copied within the young generation and bytes promoted into the old one: "
                    "a survivor is promoted once it has survived --tenure young collections.",
                    {{"copied", &observe::kBytesCopied, nullptr, 1.0 / 1024},
                     {"promoted", &kBytesPromoted, nullptr, 1.0 / 1024}}});
  // The sizing policy predicts pauses only to meet a goal.
  if (knobs_.pause_goal_ms > 0)
    events.add_panel({"Young pause against the goal",
                      "ms",
                      "Each young collection's pause, what the sizing policy predicted for the next one, and "
                      "--pause-goal: pauses over the goal make the young generation shrink at once, short "
                      "ones with little survival let it grow.",
                      {{"pause", &kYoungPauseUs, nullptr, 1e-3},
                       {"predicted next", &kPredictedPauseUs, nullptr, 1e-3},
                       {"goal", &kPauseGoalUs, nullptr, 1e-3}}});
  events.add_panel({"Young generation size",
                    "MiB",
                    "A young semispace's capacity as the sizing policy sets it after each young collection: "
                    "room for new objects and the survivors kept young. Without a goal (and without "
                    "--young) it starts small and grows to its size as the first collections' survival "
                    "falls.",
                    {{"semispace", &kYoungSemispaceBytes, nullptr, 1.0 / (1 << 20)}}});
  events.add_panel({"Dirty cards per young collection",
                    "cards",
                    "Dirty cards of the old generation and of large objects scanned as roots, and those kept "
                    "dirty because they still hold an old-to-young reference.",
                    {{"found", &kDirtyCardsFound, nullptr, 1}, {"kept", &kDirtyCardsKept, nullptr, 1}}});
}

MarkCompactCollector::~MarkCompactCollector() = default;

std::unique_ptr<Collector> create_markcompact(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<MarkCompactCollector>(roots, options);
}

// Young collections

// Sized for the goal, the young generation promotes structures that a
// young generation of full size would have seen die (binary_trees' 4 MB
// trees, built over several small collections), and with an old
// generation sized as without a goal they filled it: 9-14 full
// collections against 4 (docs/collectors/markcompact.md).
uint64_t MarkCompactCollector::old_limit_bytes() const {
  if (knobs_.pause_goal_ms == 0) return old_target_bytes_;
  return old_target_bytes_ + 2 * (young_max_bytes_ - std::min(young_max_bytes_, young_bytes_));
}

void MarkCompactCollector::collect_young(GcCause cause) {
  if (promotion_guaranteed(old_limit_bytes())) {
    young_collection(cause, false);
  } else {
    full_collection(cause, 0);
  }
}

// What promoting young_words of objects may take of the old generation:
// the objects, the hash words they owe, retired promotion-LAB tails (each
// under 1/8 of its LAB, so under 1/7 of what is promoted) and each
// thread's last LABs of lab_words.
uint64_t MarkCompactCollector::promotion_words(uint64_t young_words, uint64_t lab_words) const {
  return young_words + young_words / 7 + mutator_.hash_reserve_words() +
         2 * lab_words * threads_.pool->size();
}

// Everything the young generation holds, were it all promoted.
uint64_t MarkCompactCollector::young_worst_case_words() const {
  uint64_t used = words_between(young_->begin(), top);
  uint64_t region = young_->region_bytes() / kWordSize;
  return promotion_words(used, lab_words_for(region - std::min(used, region)));
}

// The promotion guarantee: before a young collection, the old generation
// has room for every young object (young_worst_case_words), growing up to
// capacity_limit (and the heap bound) if it must, so that a promotion never
// fails halfway through a collection.
bool MarkCompactCollector::promotion_guaranteed(uint64_t capacity_limit) {
  uint64_t need = young_worst_case_words() * kWordSize;
  if (old_.free_bytes() >= need) return true;
  uint64_t want = round_up_pages(old_.capacity_bytes() + need - old_.free_bytes());
  if (want > std::min(capacity_limit, old_bound_bytes(0))) return false;
  Word* before = old_.end();
  old_.grow_to(want);
  cards_.clean(before, old_.end());
  note_heap_size();
  return old_.free_bytes() >= need;
}

void MarkCompactCollector::young_collection(GcCause cause, bool promote_all) {
  mutator_.retire();
  run_collection(observe::CollectionKind::kYoung, cause, [this, promote_all] {
    if (promote_all) events.count(0, kOverflowPromotions, 1);
    uint32_t tenure = sizing_ ? sizing_->tenure_age() : tenure_age_;
    // Survivor overflow only here: a full collection's scavenge keeps
    // survivors young when the old generation has no room for them.
    Scavenged s =
        scavenge_young(promote_all ? 0 : tenure, sizing_ ? sizing_->keep_limit_bytes() : UINT64_MAX);
    resize_young(s);
    young_collections_++;
    stats_.last_live_bytes = heap_used();
    return true;
  });
  ready_promotion_area();
}

// Under a pause goal, once a collection's pause is over, the old
// generation is readied for the next young collection's promotion, on the
// program's time:
//
// - Its pages that the collection may promote into (its capacity and room
//   to promote a whole young semispace beyond it) are faulted in: a page's
//   first touch inside a young pause costs microseconds, and a huge page's,
//   which may compact memory first, milliseconds
//   (docs/collectors/markcompact.md, "Sizing the young generation", has the
//   times). Pages faulted in stay so until a compaction shrinks the space.
// - The free space it is expected to promote into first (the sizing
//   policy's expected survivors) is touched, so that its cache lines wait
//   in the caches instead of each copy's stores waiting on memory: free
//   space reused after a compaction is long out of the caches, and on
//   binary_trees the collections that promoted into it were among those
//   over the goal (docs/collectors/markcompact.md, "The promotion area
//   touched").
void MarkCompactCollector::ready_promotion_area() {
  if (knobs_.pause_goal_ms == 0) return;
  uint64_t room_words = promotion_words(young_bytes_ / kWordSize, lab_words_);
  Word* want = old_.end() + std::min(room_words, words_between(old_.end(), old_.region_end()));
  Word* from = std::max(old_populated_end_, old_.begin());
  if (want > from) {
    Reservation::populate(from, want);
    old_populated_end_ = want;
  }
  old_.touch_next_claims(std::min(sizing_->expected_survivor_bytes(), room_words * kWordSize));
}

// pSemispaces on the young generation, the card tasks as extra roots; under
// --gc-threads=0, the serial Cheney scavenger it parallelises.
MarkCompactCollector::Scavenged MarkCompactCollector::scavenge_young(uint32_t tenure_age,
                                                                     uint64_t keep_limit_bytes) {
  Scavenged result;
  result.young_bytes = young_->used_bytes();
  events.count(0, kYoungBytes, result.young_bytes);
  events.phase(0, "flip", [&] {
    std::swap(young_, young_other_);
    young_->reset(young_bytes_);
    mutator_.forget_hash_reserve();
    root_groups_.clear();
    roots_.root_groups(root_groups_);
    runs_.clear();
    old_.occupied_runs(runs_);
    cards_scan_.prepare(runs_, los_, offsets_, cards_.biased_base());
  });

  PromotionSpaces spaces;
  spaces.from_begin = young_other_->begin();
  spaces.from_end = young_other_->top();
  spaces.to = young_;
  spaces.old = &old_;
  spaces.offsets = &offsets_;
  spaces.card_base = cards_.biased_base();
  spaces.cards = &cards_scan_;
  spaces.tenure_age = tenure_age;
  spaces.keep_limit_bytes = keep_limit_bytes;
  uint64_t headroom = young_->region_bytes() / kWordSize - young_other_->used_bytes() / kWordSize;
  uint64_t lab = lab_words_for(headroom);
  uint64_t promoted = 0;
  if (options_.gc_threads == 0) {
    SerialPromotingScavenger s(reservation_, spaces, lab, grey_promoted_);
    scavenge_serially(s);
    result.copied_bytes = s.stats().bytes_copied;
    promoted = s.bytes_promoted();
  } else {
    ParallelScavengePhase phase{root_groups_};
    threads_.run(spaces, lab, phase);
    threads_.retire_highest_first([](const PromotingScavenger& s) -> const Lab& { return s.promotion_lab(); },
                                  [](PromotingScavenger& s) { s.retire_promotion_lab_at_end(); });
    for (auto& s : threads_.scavengers) {
      result.copied_bytes += s->stats().bytes_copied;
      promoted += s->bytes_promoted();
    }
  }
  stats_.bytes_copied += result.copied_bytes;
  bytes_promoted_ += promoted;
  result.promoted_bytes = promoted;
  result.dirty_cards = count_card_scan();

  events.phase(0, "weak references", [&] {
    MarkCompactWeakResolver resolver(*this);
    roots_.process_weak(resolver);
  });
  release_from_space();
  mutator_.install(*young_);
  return result;
}

// The card scan's counts, each on the worker whose tasks found them (the
// workers have finished: their buffers are this thread's until the
// collection ends); returns the dirty cards found.
uint64_t MarkCompactCollector::count_card_scan() {
  uint64_t found = 0;
  const CardScan::TaskStats* busiest = nullptr;
  for (const CardScan::TaskStats& t : cards_scan_.last_tasks()) {
    found += t.dirty;
    events.count(t.worker, kDirtyCardsFound, t.dirty);
    events.count(t.worker, kDirtyCardsKept, t.kept);
    events.count(t.worker, kCardSlotsScanned, t.slots);
    events.count(t.worker, kCardTasks, 1);
    if (!busiest || t.slots > busiest->slots) busiest = &t;
  }
  if (busiest) events.count(busiest->worker, kBusiestCardTask, busiest->slots);
  return found;
}

// One thread, in the parallel phase's order: root groups, dirty cards, the
// closure. Counted as worker 0's work, as the parallel scavengers count
// theirs.
void MarkCompactCollector::scavenge_serially(SerialPromotingScavenger& s) {
  events.phase(0, "scavenge roots", [&] {
    for (const RootGroup& group : root_groups_)
      for (size_t i = 0; i < group.count; ++i) s.scavenge_slot(group.slots + i);
  });
  events.phase(0, "scan cards", [&] { cards_scan_.run(s); });
  events.phase(0, "trace", [&] {
    s.trace();
    s.finish();
  });
  const parallel::WorkerStats& st = s.stats();
  events.count(0, kObjectsCopied, st.objects_copied);
  events.count(0, observe::kBytesCopied, st.bytes_copied);
  events.count(0, kBytesPromoted, s.bytes_promoted());
  events.count(0, kSurvivorOverflows, st.survivor_overflows);
  events.count(0, observe::kRootGroups, root_groups_.size());
  events.count(0, kLabsTaken, st.labs_taken);
  events.count(0, kDirectCopies, st.direct_allocations);
  events.count(0, kLabWasteBytes, st.lab_waste_bytes);
}

// The sizing policy's decision for the next young collections (pause
// measured up to here: the collection's work, without --gc-verify's check
// after it). The mutator's room is the decided size; the semispace holds
// it and the survivors left young, within the reservation and --heap.
void MarkCompactCollector::resize_young(const Scavenged& s) {
  if (!sizing_) return;
  uint64_t kept = young_->used_bytes();
  YoungSizing::Sample sample;
  sample.pause_ms = static_cast<double>(events.now_ns() - events.current().start_ns) / 1e6;
  sample.young_bytes = s.young_bytes;
  sample.survived_bytes = s.copied_bytes;
  sample.promoted_bytes = s.promoted_bytes;
  sample.dirty_cards = s.dirty_cards;
  sample.kept_bytes = kept;
  if (last_young_end_ns_)
    sample.interval_ms = static_cast<double>(events.current().start_ns - last_young_end_ns_) / 1e6;
  // Y within the reservation and within --heap beside the old generation
  // and large objects as they are now (2 * Y + O + L).
  uint64_t others = old_.capacity_bytes() + los_.committed_bytes();
  uint64_t within_heap = options_.max_heap_bytes > others ? (options_.max_heap_bytes - others) / 2 : 0;
  uint64_t most = std::min(young_max_bytes_, round_down_pages(within_heap));
  sample.limit_bytes = most > kept ? most - kept : 0;
  uint64_t before = young_bytes_;
  YoungSizing::Decision d = sizing_->after_young(sample);
  young_bytes_ = round_up_pages(kept + d.young_bytes);
  young_->set_capacity(young_bytes_);
  young_other_->reset(young_bytes_);
  mutator_.install(*young_);
  events.count(0, kYoungPauseUs, static_cast<uint64_t>(sample.pause_ms * 1000));
  events.count(0, kYoungSemispaceBytes, young_bytes_);
  // Without a goal nothing is predicted (the policy only grows the young generation).
  bool goal = sizing_->goal_ms() > 0;
  if (goal) {
    events.count(0, kPredictedPauseUs, static_cast<uint64_t>(d.predicted_pause_ms * 1000));
    events.count(0, kPauseGoalUs, static_cast<uint64_t>(sizing_->goal_ms() * 1000));
  }
  if (events.enabled()) {
    char buf[256];
    int n =
        std::snprintf(buf, sizeof buf, "young semispace %.2fM -> %.2fM (%s), tenure %u: pause %.3f ms",
                      static_cast<double>(before) / (1 << 20), static_cast<double>(young_bytes_) / (1 << 20),
                      d.why, sizing_->tenure_age(), sample.pause_ms);
    if (goal && n > 0 && static_cast<size_t>(n) < sizeof buf)
      std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), ", next predicted %.3f ms",
                    d.predicted_pause_ms);
    events.ergonomics(buf + std::string("; ") + sizing_->describe());
  }
  last_young_end_ns_ = events.now_ns();
}

uint64_t MarkCompactCollector::lab_words_for(uint64_t headroom_words) const {
  return lab_words_within(lab_words_, headroom_words, threads_.pool->size());
}

void MarkCompactCollector::release_from_space() {
  if (options_.poison_freed_memory()) young_other_->poison_contents();
  if (young_other_->top() > young_other_->end())
    Reservation::release_pages(young_other_->end(), young_other_->region_end());
  young_other_->reset(young_bytes_);
}

// Full collections

void MarkCompactCollector::collect(GcCause cause) { full_collection(cause, 0); }

void MarkCompactCollector::full_collection(GcCause cause, uint64_t pending_large_bytes, Leaving leaving) {
  mutator_.retire();
  run_collection(observe::CollectionKind::kFull, cause, [this, pending_large_bytes, leaving] {
    // Promote every young survivor when the old generation can take them
    // all (it may grow to the heap bound for this); otherwise keep them
    // young, compact, and promote them once compaction has made the room.
    bool promote_all = promotion_guaranteed(old_bound_bytes(pending_large_bytes));
    scavenge_young(promote_all ? 0 : Header::kMaxAge + 1);
    uint64_t old_used = old_.used_bytes();
    compact_old_generation(pending_large_bytes, leaving);
    uint64_t old_live = old_.used_bytes();
    if (!promote_all && young_->used_bytes() && promotion_guaranteed(old_bound_bytes(pending_large_bytes)))
      scavenge_young(0);
    if (sizing_) sizing_->after_full(young_->used_bytes(), old_used, old_live);
    full_collections_++;
    stats_.last_live_bytes = heap_used();
    los_.set_growth_budget(stats_.last_live_bytes);
    return true;
  });
  // A compaction that shrank the space gave its pages back.
  old_populated_end_ = std::min(old_populated_end_, old_.end());
  ready_promotion_area();
}

// pMarkcompact on the old generation, then its capacity for the next
// young collections.
void MarkCompactCollector::compact_old_generation(uint64_t pending_large_bytes, Leaving leaving) {
  events.phase(0, "old generation", [&] {
    ParallelMarkCompact::Result result = mark_compact_old(old_.fill_free_areas(), leaving);
    std::vector<OldSpace::Run> occupied;
    for (const WordRange& r : result.occupied) occupied.push_back({r.begin, r.end});
    resize_old_generation(result.old_live_bytes + result.prefix_dead_bytes + result.dense_end_dead_bytes,
                          pending_large_bytes);
    old_.reset_after_compaction(occupied, old_target_bytes_);
    // Cards past the last object start clean; the card the last object ends
    // in is the compactor's (it may hold a young reference).
    Word* last = occupied.empty() ? old_.begin() : occupied.back().end;
    Word* past = old_.begin() + (words_between(old_.begin(), last) + OffsetTable::kCardWords - 1) /
                                    OffsetTable::kCardWords * OffsetTable::kCardWords;
    cards_.clean(past, old_.end());
  });
}

// The old generation's mark-compact, the young semispace's objects live and
// unmoved: pMarkcompact on the GC threads, or the serial mark-compact it
// parallelises under --gc-threads=0 (the same input and result).
ParallelMarkCompact::Result MarkCompactCollector::mark_compact_old(Word* old_top, Leaving leaving) {
  WordRange young{young_->begin(), young_->top()};
  ParallelMarkCompact::Input in{
      .roots = roots_,
      .old_space = {old_.begin(), old_top},
      .young_spaces = std::span<const WordRange>(&young, 1),
      .large = los_,
      .hash_of_address = [this](const Word* h) { return address_hash(reservation_, h); },
      .card_base = cards_.biased_base(),
      .on_occupied_run = [this](unsigned, Word* begin, Word* end) { offsets_.rebuild(begin, end); },
  };
  return engine_ && leaving == Leaving::kAnyGaps ? engine_->collect(in) : serial_.collect(in);
}

// After a full collection the old generation's capacity is twice what
// occupies it (the dense parts' dead words included, or the promotion
// guarantee falls short by them), and at least room to promote a whole
// young semispace of --young's full size, within the heap bound. Of its
// full size, not its size now: while the default policy grows it, or a
// goal keeps it small, a target sized for the small one runs out as soon
// as it grows (docs/collectors/markcompact.md, "Sizing the young
// generation", has the full collections it saves).
void MarkCompactCollector::resize_old_generation(uint64_t occupied_bytes, uint64_t pending_large_bytes) {
  uint64_t target =
      std::max({kInitialOldBytes, 2 * occupied_bytes,
                occupied_bytes + promotion_words(young_max_bytes_ / kWordSize, lab_words_) * kWordSize});
  old_target_bytes_ =
      round_up_pages(std::min(target, std::max(old_bound_bytes(pending_large_bytes), occupied_bytes)));
}

// Slow paths: the mutator's allocator (gc/alloc/bump_allocator.h) calls
// these.

// --gc-stress: young and full collections alternate (--gc-stress-full: all
// full).
void MarkCompactCollector::collect_for_stress(uint64_t ordinal) {
  if (options_.stress_full || ordinal % 2 == 0) {
    full_collection(GcCause::kStress, 0);
  } else {
    collect_young(GcCause::kStress);
  }
}

// A young collection; when its survivors fill the semispace (a growing
// live set), one that promotes them all, as HotSpot promotes what
// overflows its survivor space; a full one if that was not enough (and
// the young one was not already full); then one that leaves no gaps.
bool MarkCompactCollector::collect_for_buffer(uint64_t words) {
  uint64_t full_before = full_collections_;
  collect_young(GcCause::kAllocationFailure);
  if (!mutator_.fits(words) && full_collections_ == full_before && promotion_guaranteed(old_limit_bytes()))
    young_collection(GcCause::kAllocationFailure, true);
  if (!mutator_.fits(words) && full_collections_ == full_before)
    full_collection(GcCause::kAllocationFailure, 0);
  if (!mutator_.fits(words) && !collect_leaving_no_gaps(GcCause::kAllocationFailure, 0)) return false;
  return mutator_.fits(words);
}

void MarkCompactCollector::collect_for_large(uint64_t pending_large_bytes) {
  full_collection(GcCause::kLargeAllocation, pending_large_bytes);
}

// pMarkcompact's odd regions slide up, so the old generation cannot shrink
// below its highest objects, which depends on the thread count; the serial
// compactor slides everything down (BumpAllocator::Plan::
// collect_leaving_no_gaps). False when the full collection was serial.
bool MarkCompactCollector::collect_leaving_no_gaps(GcCause cause, uint64_t pending_large_bytes) {
  if (!engine_) return false;
  full_collection(cause, pending_large_bytes, Leaving::kNoGaps);
  return true;
}

// A large object is old from the start. Its cards start dirty for the card
// invariant (card_scan.h): the VM fills a new object with initialising
// stores that do not pass the barrier, and the next young collection
// cleans the cards it can.
Word* MarkCompactCollector::try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words,
                                               uint64_t words) {
  uint64_t pages = LargeObjectSpace::pages_for(words);
  if (pages * kPageBytes > old_bound_bytes(0) - std::min(old_bound_bytes(0), old_.capacity_bytes()))
    return nullptr;
  LargeObjectSpace::Object o = los_.allocate(class_id, nrefs, raw_words);
  if (!o.header) return nullptr;
  set_cards(cards_.biased_base(), o.start, o.end(), kCardDirty);
  return o.header;
}

// The old generation's largest capacity now (the sizing policy, markcompact.h).
uint64_t MarkCompactCollector::old_bound_bytes(uint64_t pending_large_bytes) const {
  uint64_t taken = 2 * young_bytes_ + los_.committed_bytes() + pending_large_bytes;
  uint64_t max = options_.max_heap_bytes;
  return taken >= max ? 0 : round_down_pages(max - taken);
}

// Queries

uint64_t MarkCompactCollector::heap_used() const {
  return words_between(young_->begin(), top) * kWordSize + old_.used_bytes() + los_.committed_bytes();
}

uint64_t MarkCompactCollector::live_capacity() const {
  return options_.max_heap_bytes > 2 * young_bytes_ ? options_.max_heap_bytes - 2 * young_bytes_ : 0;
}

uint64_t MarkCompactCollector::heap_size() const {
  return 2 * young_bytes_ + old_.capacity_bytes() + los_.committed_bytes();
}

void MarkCompactCollector::set_write_barrier_for_testing(bool on) {
  if (on) {
    card_base = cards_.biased_base();
    return;
  }
  // A scratch table as large as the real one, biased the same way.
  uintptr_t first = reinterpret_cast<uintptr_t>(reservation_.base()) >> kCardShift;
  uintptr_t last = reinterpret_cast<uintptr_t>(reservation_.end()) >> kCardShift;
  scratch_cards_.assign(last - first + 1, kCardClean);
  card_base = reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(scratch_cards_.data()) - first);
}

void MarkCompactCollector::describe_spaces(std::vector<observe::SpaceUsage>& out) const {
  out.push_back({young_->name(), "young to-space: survivors, then new objects", young_bytes_,
                 words_between(young_->begin(), top) * kWordSize});
  out.push_back(
      {young_other_->name(), "young from-space: empty until the next young collection", young_bytes_, 0});
  out.push_back({"old", "old generation: promoted objects, compacted by full collections",
                 old_.capacity_bytes(), old_.used_bytes()});
  out.push_back({"large objects", "large-object pages: old, never move", los_.committed_bytes(),
                 los_.committed_bytes()});
}

void MarkCompactCollector::describe_heap(verify::HeapShape& out) const {
  out.linear_spaces.push_back({young_->name(), young_->begin(), top});
  std::vector<OldSpace::Run> runs;
  old_.occupied_runs(runs);
  for (const OldSpace::Run& r : runs) out.linear_spaces.push_back({"old", r.begin, r.end});
  out.evacuated_spaces.push_back({young_other_->name(), young_other_->begin(), young_other_->region_end()});
  out.large_space = {"large", los_.begin(), reservation_.end()};
  for (const LargeObjectSpace::Object& o : los_.objects()) out.large_objects.push_back(o.header);
  out.young_spaces.push_back({young_->name(), young_->begin(), top});
  out.card_base = cards_.biased_base();
}

}  // namespace gc
