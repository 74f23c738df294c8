// pSemispaces: the parallel phase of a semispace collection (Flood et al.
// 2001, sections 3 and 4). See psemispaces.h for the per-thread steps and
// semispace.h for the heap they work on.
#include "gc/collectors/semispace/psemispaces.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "gc/collectors/semispace/semispace.h"
#include "gc/collectors/semispace/semispace_options.h"
#include "gc/parallel/clock.h"

namespace gc {

// The collector's side: one parallel phase per collection.

// LAB size for this collection: --gc-lab, shrunk when the heap is so small
// that the LABs of all threads would eat into to-space's headroom. To-space
// holds the survivors (at most survivor_bound_words_, which the sizing policy
// keeps within the first half of the region) plus the waste of parallel
// copying: retired LAB tails (each under 1/8 of its LAB, so under 1/7 of
// what was copied), the threads' last LAB tails (at most one LAB each), and
// the rare retracted copy that another thread's claim made impossible to
// give back. Limiting the LABs to a quarter of the headroom divided among
// the threads keeps all of that well inside the region.
uint64_t SemispaceCollector::lab_words_for_collection() const {
  uint64_t region = current_->region_bytes() / kWordSize;
  uint64_t headroom = region - std::min(region, survivor_bound_words_);
  return lab_words_within(lab_words_, headroom, options_.gc_threads);
}

void SemispaceCollector::scavenge_in_parallel() {
  unsigned threads = options_.gc_threads;
  if (threads_.scavengers.empty()) {
    threads_.make_scavengers(events, reservation_, semispace_options(options_).forwarding_by_owner);
    describe_copy_counters(events);
  }

  root_groups_.clear();
  roots_.root_groups(root_groups_);
  ParallelScavengePhase phase{{root_groups_}};
  ScavengeSpaces spaces;
  spaces.from_begin = other_->begin();
  spaces.from_end = other_->top();
  spaces.los_begin = los_.begin();
  spaces.los_end = los_.frontier();
  spaces.to = current_;
  threads_.run(spaces, lab_words_for_collection(), phase);
  for (unsigned w = 0; w < threads; ++w) {
    const parallel::WorkerStats& s = threads_.scavengers[w]->stats();
    worker_totals_[w].add(s);
    stats_.bytes_copied += s.bytes_copied;
    waste_words_ += s.lab_waste_bytes / kWordSize;
  }
}

// One GC thread

template <class Derived>
void CopyScavenger<Derived>::prepare(const ScavengeSpaces& spaces, uint64_t lab_words) {
  from_begin_ = reinterpret_cast<uintptr_t>(spaces.from_begin);
  from_bytes_ = static_cast<uint64_t>(spaces.from_end - spaces.from_begin) * kWordSize;
  los_begin_ = reinterpret_cast<uintptr_t>(spaces.los_begin);
  los_bytes_ = static_cast<uint64_t>(spaces.los_end - spaces.los_begin) * kWordSize;
  to_ = spaces.to;
  to_begin_ = reinterpret_cast<uintptr_t>(to_->begin());
  to_bytes_ = to_->region_bytes();
  lab_words_ = lab_words;
  lab_.top = lab_.end = nullptr;
  alone_ = shared_.deques.size() == 1;
  by_owner_ = shared_.owners != nullptr;
  if (by_owner_) chunks_ = shared_.owners->view(this->id());
  this->begin_trace();
}

template <class Derived>
void CopyScavenger<Derived>::run(ParallelScavengePhase& phase) {
  uint64_t start = parallel::now_ns();
  observe::Recorder& events = shared_.events;
  unsigned w = this->id();
  events.phase(w, "scavenge roots", [&] { this->claim_roots(phase.roots); });
  if (phase.extra_roots_phase)
    events.phase(w, phase.extra_roots_phase, [&] { derived().scavenge_extra_roots(phase); });
  events.phase(w, "trace", [&] { this->trace(); });
  this->stats_.busy_ns = parallel::now_ns() - start;
  report(events);
}

void describe_copy_counters(observe::Recorder& events) {
  for (const char* c : {"objects copied", "CAS forwardings", "CAS failures", "undone allocations",
                        "direct copies", "large objects marked"})
    events.describe_counter(c, "objects");
  for (const char* c : {"bytes copied", "LAB waste bytes", "bytes promoted"})
    events.describe_counter(c, "bytes");
  events.describe_counter("root groups", "groups");
  events.describe_counter("LABs taken", "buffers");
  events.describe_counter("survivor overflows", "threads");
  parallel::describe_work_sharing(events);
}

// Once per collection, on this thread (the Recorder's rule).
template <class Derived>
void CopyScavenger<Derived>::report(observe::Recorder& events) const {
  if (!events.enabled()) return;
  const parallel::WorkerStats& s = this->stats_;
  unsigned w = this->id();
  events.count(w, "objects copied", s.objects_copied);
  events.count(w, "bytes copied", s.bytes_copied);
  events.count(w, "root groups", s.root_groups_claimed);
  this->report_work_sharing(events);
  events.count(w, "CAS forwardings", s.cas_forwardings);
  events.count(w, "CAS failures", s.cas_failures);
  events.count(w, "undone allocations", s.undone_allocations);
  events.count(w, "LABs taken", s.labs_taken);
  events.count(w, "direct copies", s.direct_allocations);
  events.count(w, "LAB waste bytes", s.lab_waste_bytes);
  events.count(w, "large objects marked", s.large_objects_marked);
  static_cast<const Derived&>(*this).report_extra(events);
}

// A LAB has no room for `words`: big objects are copied directly into
// to-space; for smaller ones the LAB's tail is retired and a new LAB claimed
// with one atomic bump of to-space's top (L156).
template <class Derived>
Word* CopyScavenger<Derived>::allocate_slow(uint64_t words) {
  uint64_t got = 0;
  if (words * kLabWasteFraction > lab_words_) {
    Word* p = to_->claim_shared(words, words, &got);
    if (!p) to_space_overflow();
    this->stats_.direct_allocations++;
    return p;
  }
  retire_lab_tail();
  Word* p = to_->claim_shared(words, lab_words_, &got);
  if (!p) to_space_overflow();
  this->stats_.labs_taken++;
  lab_.top = p;
  lab_.end = p + got;
  return lab_.bump(words);
}

// The loser of a forwarding race retracts its speculative copy. It was the
// LAB's most recent allocation, unless it was a direct one: then to-space's
// top is moved back if no thread has claimed since, else it is filler.
template <class Derived>
void CopyScavenger<Derived>::undo_allocation(Word* p, uint64_t words) {
  this->stats_.undone_allocations++;
  if (lab_.undo(p, words)) return;
  if (to_->unclaim_shared(p, words)) return;
  fill_dead_space(p, p + words);
  this->stats_.lab_waste_bytes += words * kWordSize;
}

template <class Derived>
void CopyScavenger<Derived>::install_hash(Word* old, Word* moved, Word h) {
  *moved = grow_hash_word(moved, h, address_hash(shared_.reservation, old));
}

template <class Derived>
void CopyScavenger<Derived>::retire_lab_tail() {
  if (lab_.top < lab_.end && !to_->unclaim_shared(lab_.top, static_cast<uint64_t>(lab_.end - lab_.top))) {
    fill_dead_space(lab_.top, lab_.end);
    this->stats_.lab_waste_bytes += static_cast<uint64_t>(lab_.end - lab_.top) * kWordSize;
  }
  lab_.top = lab_.end = nullptr;
}

// Its waste is this collection's too: reported from the mutator's thread,
// which is worker 0 (the phase is over, so no worker writes its buffer).
template <class Derived>
void CopyScavenger<Derived>::retire_lab_at_end() {
  uint64_t before = this->stats_.lab_waste_bytes;
  retire_lab_tail();
  shared_.events.count(0, "LAB waste bytes", this->stats_.lab_waste_bytes - before);
}

template class CopyScavenger<ParallelScavenger>;
template class CopyScavenger<PromotingScavenger>;

// Promotion (markcompact's young collections)

void PromotingScavenger::prepare(const ScavengeSpaces& spaces, uint64_t lab_words) {
  CopyScavenger::prepare(spaces, lab_words);
  card_base_ = spaces.card_base;
  tenure_age_ = spaces.tenure_age;
  keep_limit_ = spaces.keep_limit_bytes;
  old_begin_ = reinterpret_cast<uintptr_t>(spaces.old->begin());
  old_bytes_ = static_cast<uint64_t>(spaces.old->region_end() - spaces.old->begin()) * kWordSize;
  plab_.begin(*spaces.old, *spaces.offsets, lab_words, stats_);
}

void PromotingScavenger::report_extra(observe::Recorder& events) const {
  events.count(id(), "bytes promoted", plab_.bytes_promoted());
  events.count(id(), "survivor overflows", stats_.survivor_overflows);
}

void PromotingScavenger::retire_promotion_lab_at_end() {
  uint64_t before = stats_.lab_waste_bytes;
  plab_.retire();
  shared_.events.count(0, "LAB waste bytes", stats_.lab_waste_bytes - before);
}

}  // namespace gc
