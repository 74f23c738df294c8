// The out-of-line members of CopyScavenger (copy_scavenger.h), for the
// file that instantiates a scavenger: `template class
// CopyScavenger<ItsScavenger>;` after including this header.
#pragma once

#include "gc/observe/common_counters.h"
#include "gc/plan/copy_scavenger.h"

namespace gc {

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
  observe::Recorder& events = shared_.events;
  unsigned w = this->id();
  events.phase(w, "scavenge roots", [&] { this->claim_roots(phase.roots); });
  if constexpr (Derived::kExtraRootsPhase != nullptr)
    events.phase(w, Derived::kExtraRootsPhase, [&] { derived().scavenge_extra_roots(); });
  events.phase(w, "trace", [&] { this->trace(); });
  report(events);
}

// Once per collection, on this thread (the Recorder's rule).
template <class Derived>
void CopyScavenger<Derived>::report(observe::Recorder& events) const {
  if (!events.enabled()) return;
  const parallel::WorkerStats& s = this->stats_;
  unsigned w = this->id();
  events.count(w, kObjectsCopied, s.objects_copied);
  events.count(w, observe::kBytesCopied, s.bytes_copied);
  events.count(w, observe::kRootGroups, s.root_groups_claimed);
  this->report_work_sharing(events);
  events.count(w, kCasForwardings, s.cas_forwardings);
  events.count(w, kCasFailures, s.cas_failures);
  events.count(w, kUndoneAllocations, s.undone_allocations);
  events.count(w, kLabsTaken, s.labs_taken);
  events.count(w, kDirectCopies, s.direct_allocations);
  events.count(w, kLabWasteBytes, s.lab_waste_bytes);
  events.count(w, observe::kLargeObjectsMarked, s.large_objects_marked);
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
  shared_.events.count(0, kLabWasteBytes, this->stats_.lab_waste_bytes - before);
}

}  // namespace gc
