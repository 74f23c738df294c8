// pSemispaces (Flood, Detlefs, Shavit and Zhang 2001, section 4): one GC
// thread's part of a parallel copying collection. The collector's phase
// (SemispaceCollector::scavenge_in_parallel, psemispaces.cpp) runs
// ParallelScavenger::run on every GC thread at once. The loop (root groups,
// local work, overflow, stealing, termination, chunked large arrays) is the
// shared parallel tracer's (gc/parallel/tracer.h); this class is its copy
// policy, what the scavenge does to a slot and to an object:
//
//   trace_slot     a from-space target is forwarded (copied if it was not
//                  yet), a large-object target is marked
//     copy         speculative LAB allocation, CAS of the forwarding
//                  pointer, and on losing, the winner's pointer and the
//                  undo of the allocation (section 4, L158-160)
//
// The per-object path (trace_slot, forward, copy, defer) is inlined into
// the tracer's loop, with no call, no lock and no allocation; counters are
// plain fields of the thread's own WorkerStats. Copying keeps the
// tri-colour invariant (tracer.h): a forwarded object is grey until the
// task deferred for its copy is scanned.
//
// The same copy policy (CopyScavenger) collects the young generation of
// markcompact (section 4, L162-164), composed there with promotion as a
// hook (PromotingScavenger); semispace's ParallelScavenger has no
// promotion to decide.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "gc/alloc/lab.h"
#include "gc/alloc/promotion_lab.h"
#include "gc/collector.h"
#include "gc/heap/identity_hash.h"
#include "gc/observe/recorder.h"
#include "gc/parallel/overflow_set.h"
#include "gc/parallel/task.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/termination.h"
#include "gc/parallel/tracer.h"
#include "gc/parallel/worker_pool.h"
#include "gc/parallel/worker_stats.h"
#include "gc/spaces/copy_space.h"
#include "gc/spaces/offset_table.h"
#include "gc/spaces/old_space.h"

namespace gc {

// The collector's parallel machinery, kept for every collection.
struct ScavengeShared {
  std::vector<std::unique_ptr<parallel::TaskDeque>>& deques;
  parallel::OverflowSet& overflow;
  parallel::Termination& termination;
  observe::Recorder& events;
  const Reservation& reservation;  // identity hashes of moved objects
  // From-space's chunk owners and the threads' inboxes, for a scavenger
  // that forwards by ownership (kOwnedForwarding); else nullptr.
  parallel::ChunkOwners* owners = nullptr;
  parallel::Inbox* inboxes = nullptr;
};

// One collection's spaces.
struct ScavengeSpaces {
  const Word* from_begin = nullptr;  // evacuated: [from_begin, from_end)
  const Word* from_end = nullptr;
  const Word* los_begin = nullptr;  // large objects marked in place; empty:
  const Word* los_end = nullptr;    // not traced (a young collection)
  CopySpace* to = nullptr;
  // Promotion (markcompact's young collections): objects whose age is at
  // least tenure_age go to `old`, whose cards are dirtied through card_base
  // where a promoted slot still refers to to-space, and whose offset table
  // records every object and filler written there.
  OldSpace* old = nullptr;
  OffsetTable* offsets = nullptr;
  uint8_t* card_base = nullptr;
  uint32_t tenure_age = Header::kMaxAge + 1;
  // Survivor overflow: once this many bytes of survivors are kept young,
  // the rest are promoted whatever their age (promotion_lab.h).
  uint64_t keep_limit_bytes = UINT64_MAX;
};

class PromotingScavenger;

// What every GC thread shares in one collection.
// The units of the counters the scavengers report (CopyScavenger::report,
// PromotingScavenger's and the serial scavenger's): once, at construction.
void describe_copy_counters(observe::Recorder& events);

struct ParallelScavengePhase {
  parallel::RootClaim roots;
  // More roots, claimed by the threads after the root groups (markcompact:
  // the card table's strides); nullptr: none.
  void (*extra_roots)(void* context, PromotingScavenger& s) = nullptr;
  void* extra_context = nullptr;
  const char* extra_roots_phase = nullptr;  // the phase they run in, on each thread (with extra_roots)
};

// The copy policy of the shared tracer, for a scavenger `Derived` that
// says where a survivor goes (its hooks, resolved at compile time):
//
//   Word* allocate_copy(Word h, uint64_t words, Word& new_header)
//   void undo_copy(Word* p, uint64_t words)     the CAS was lost
//   void copied(Word* p, uint64_t words)        the CAS was won
template <class Derived>
class CopyScavenger : public parallel::Tracer<Derived> {
 public:
  // The next object scanned is the one just copied (tracer.h).
  static constexpr bool kPrefetchTargets = false;
  // Whether the scavenger can forward by ownership of from-space chunks
  // (forward_owned) where the collector asks for it; else every race is
  // decided by the CAS of section 4.
  static constexpr bool kOwnedForwarding = false;

  CopyScavenger(const ScavengeShared& shared, unsigned id)
      : parallel::Tracer<Derived>(
            parallel::TraceShared{shared.deques, shared.overflow, shared.termination, shared.inboxes}, id),
        shared_(shared) {}

  // Before each collection, on the mutator thread.
  void prepare(const ScavengeSpaces& spaces, uint64_t lab_words);
  // The whole phase on this thread.
  void run(ParallelScavengePhase& phase);
  // After the phase: the LAB's unused tail, given back or filled.
  void retire_lab_at_end();

  const Lab& lab() const { return lab_; }

  // True if v refers to an object in to-space (a young object after the
  // collection).
  bool refers_to_young(Value v) const {
    return v.is_ref() && reinterpret_cast<uintptr_t>(v.as_ref()) - to_begin_ < to_bytes_;
  }

  // The tracer's hooks for ownership: chunks another thread asked for are
  // shared at a safe point (no slot half traced), and the asking is work
  // for an idle thread.
  [[gnu::always_inline]] void safe_point() {
    if constexpr (Derived::kOwnedForwarding) {
      if (by_owner_) chunks_.share_asked();
    }
  }
  // The tracer's blocks in long runs cost time of their own
  // (docs/collectors/semispace.md): only ownership needs their safe points.
  bool long_runs_need_safe_points() const { return by_owner_; }
  bool asked_to_share() const {
    if constexpr (Derived::kOwnedForwarding) return by_owner_ && chunks_.asked();
    return false;
  }

  // Roots and slots alike: copy (or find the copy of) a from-space target
  // and redirect the slot, or send the slot to the owner of the target's
  // chunk; mark a large-object target in place.
  [[gnu::always_inline]] void trace_slot(Value* slot) {
    uint64_t bits = slot->bits;
    if ((bits & Value::kTagMask) != Value::kRefTag) return;
    uintptr_t addr = static_cast<uintptr_t>(bits & ~Value::kTagMask);
    if (addr - from_begin_ < from_bytes_) {
      Word* old = reinterpret_cast<Word*>(addr);
      if constexpr (Derived::kOwnedForwarding) {
        if (by_owner_) {
          forward_owned(slot, old);
          return;
        }
      }
      slot->bits = Value::kRefTag | reinterpret_cast<uintptr_t>(forward(old));
    } else if (addr - los_begin_ < los_bytes_) {
      mark_large(reinterpret_cast<Word*>(addr));
    }
  }

 protected:
  Derived& derived() { return static_cast<Derived&>(*this); }

  // The default hooks: no extra roots, no extra counters.
  void scavenge_extra_roots(ParallelScavengePhase&) {}
  void report_extra(observe::Recorder&) const {}

  Word* allocate(uint64_t words) {
    if (lab_.fits(words)) [[likely]]
      return lab_.bump(words);
    return allocate_slow(words);
  }
  [[gnu::noinline]] void undo_allocation(Word* p, uint64_t words);

  // Survivors kept young so far, as far as this thread's last LAB reaches
  // into to-space (other threads' LABs may reach further).
  uint64_t kept_young_bytes() const {
    return lab_.end ? static_cast<uint64_t>(reinterpret_cast<uintptr_t>(lab_.end) - to_begin_) : 0;
  }

  const ScavengeShared& shared_;
  uint64_t lab_words_ = 0;

 private:
  friend class parallel::Tracer<Derived>;

  void report(observe::Recorder& events) const;

  // The from-space header is read and replaced by several threads at once:
  // an atomic word (relaxed: a loser never reads the winner's copy, it only
  // stores its address).
  [[gnu::always_inline]] Word* forward(Word* old) {
    Word h = std::atomic_ref<Word>(*old).load(std::memory_order_relaxed);
    if (Header::is_forwarded(h)) return reinterpret_cast<Word*>(h);
    return copy(old, h, alone_);
  }

  // Forwarding by ownership: only the owner of an object's from-space chunk
  // copies it, so its forwarding pointer is a plain store, and a slot whose
  // target is another thread's and not yet forwarded goes to that thread as
  // a one-slot task (docs/collectors/semispace.md, "Forwarding by
  // ownership"). The header is read first: a target already forwarded needs
  // no owner.
  [[gnu::always_inline]] void forward_owned(Value* slot, Word* old) {
    Word h = std::atomic_ref<Word>(*old).load(std::memory_order_relaxed);
    if (!Header::is_forwarded(h)) [[likely]] {
      unsigned owner = 0;
      switch (chunks_.access(old, owner)) {
        case parallel::ChunkOwners::Access::kOwn:
          h = reinterpret_cast<Word>(copy(old, h, true));
          break;
        case parallel::ChunkOwners::Access::kShare:
          h = reinterpret_cast<Word>(copy(old, h, false));
          break;
        case parallel::ChunkOwners::Access::kSend:
          this->send(owner, parallel::Task::slot(slot));
          return;
      }
    }
    slot->bits = Value::kRefTag | h;
  }

  // Section 4, L158-160: "each thread speculatively allocate[s] space for
  // the object in its LAB, and then use[s] a CAS to update the from-space
  // object's forwarding pointer to point to the speculative new address. If
  // the CAS succeeds, the thread proceeds to copy the object. If the CAS
  // fails, [it] returns the updated forwarding pointer. The thread uses this
  // value to update its reference, and then locally retracts its
  // speculative allocation." An object hashed at its address (kHashed)
  // grows a hash word when it moves, so the speculative allocation is the
  // grown size and the undo retracts that size. Where the copy goes is the
  // scavenger's hook (allocate_copy), and so is what a copy leaves behind.
  [[gnu::always_inline]] Word* copy(Word* old, Word h, bool exclusive) {
    uint64_t nrefs = Header::nrefs(h);
    uint64_t below = words_below(nrefs);
    uint64_t raw = Header::raw_words(h);
    uint64_t words = below + 1 + raw_words_when_moved(h);
    Word new_header = h;
    Word* dst = derived().allocate_copy(h, words, new_header);
    Word* moved = dst + below;
    Word seen = h;
    if (!install_forwarding(old, seen, moved, exclusive)) [[unlikely]] {
      // Only forwarding changes a from-space header during a collection,
      // so the value that beat us is the winner's forwarding pointer.
      this->stats_.cas_failures++;
      derived().undo_copy(dst, words);
      return reinterpret_cast<Word*>(seen);
    }
    // The words below the header and the raw words, each as a plain word
    // loop for the small objects that dominate, memcpy beyond. The header
    // word itself is never read plainly: other threads may be reading it
    // atomically as a forwarding pointer.
    copy_words(dst, old - below, below);
    copy_words(moved + 1, old + 1, raw);
    if (grows_when_moved(h)) [[unlikely]] {
      install_hash(old, moved, new_header);
    } else {
      *moved = new_header;
    }
    this->stats_.objects_copied++;
    this->stats_.bytes_copied += words * kWordSize;
    derived().copied(dst, words);
    // Objects with no reference slots (strings, number arrays) have nothing
    // to scan: they never become tasks.
    if (nrefs) this->defer(parallel::Task::whole(moved, nrefs));
    return moved;
  }

  // The CAS that decides a forwarding race. A thread alone, or the owner of
  // the object's chunk, has no race to decide (`exclusive`): it stores the
  // pointer, and saves the locked instruction, which would wait for every
  // store of the copies before it to leave the store buffer.
  [[gnu::always_inline]] bool install_forwarding(Word* old, Word& seen, Word* moved, bool exclusive) {
    std::atomic_ref<Word> header(*old);
    if (exclusive) {
      header.store(reinterpret_cast<Word>(moved), std::memory_order_relaxed);
      return true;
    }
    this->stats_.cas_forwardings++;
    return header.compare_exchange_strong(seen, reinterpret_cast<Word>(moved), std::memory_order_relaxed);
  }

  // Large objects never move: the mark bit in the header is set with an
  // atomic fetch-or, and the thread whose fetch-or set it owns the scan.
  void mark_large(Word* h) {
    std::atomic_ref<Word> header(*h);
    if (Header::is_marked(header.load(std::memory_order_relaxed))) return;
    Word before = header.fetch_or(Header::kMarkBit, std::memory_order_relaxed);
    if (Header::is_marked(before)) return;
    this->stats_.large_objects_marked++;
    if (uint64_t n = Header::nrefs(before)) this->defer(parallel::Task::whole(h, n));
  }

  [[gnu::noinline]] Word* allocate_slow(uint64_t words);
  [[gnu::noinline]] void install_hash(Word* old, Word* moved, Word h);
  void retire_lab_tail();

  // This collection's geometry (prepare).
  uintptr_t from_begin_ = 0;
  uint64_t from_bytes_ = 0;
  uintptr_t los_begin_ = 0;
  uint64_t los_bytes_ = 0;
  uintptr_t to_begin_ = 0;
  uint64_t to_bytes_ = 0;
  CopySpace* to_ = nullptr;
  Lab lab_;
  bool alone_ = false;                  // one GC thread: no forwarding races
  bool by_owner_ = false;               // forwarding by ownership (forward_owned)
  parallel::ChunkOwners::View chunks_;  // from-space's owners, when by_owner_
};

// pSemispaces for semispace: every survivor is copied into to-space.
class ParallelScavenger final : public CopyScavenger<ParallelScavenger> {
 public:
  using CopyScavenger::CopyScavenger;
  static constexpr bool kOwnedForwarding = true;

 private:
  friend class CopyScavenger<ParallelScavenger>;

  [[gnu::always_inline]] Word* allocate_copy(Word, uint64_t words, Word&) { return allocate(words); }
  void undo_copy(Word* p, uint64_t words) { undo_allocation(p, words); }
  void copied(Word*, uint64_t) {}
};

// pSemispaces for markcompact's young generation, composed with promotion
// through promotion LABs (section 4, L162-164), the card invariant
// (card_scan.h), and the dirty cards as extra roots.
class PromotingScavenger final : public CopyScavenger<PromotingScavenger> {
 public:
  using CopyScavenger::CopyScavenger;

  // Before each collection, on the mutator thread.
  void prepare(const ScavengeSpaces& spaces, uint64_t lab_words);
  // After the phase: the promotion LAB's unused tail, given back or filled.
  void retire_promotion_lab_at_end();

  const Lab& promotion_lab() const { return plab_.lab(); }
  uint64_t bytes_promoted() const { return plab_.bytes_promoted(); }

  // A slot of an old object (a dirty card's, or a promoted object's):
  // scavenged, and true if it still refers to a young object.
  bool scavenge_old_slot(Value* slot) {
    trace_slot(slot);
    return refers_to_young(*slot);
  }

 private:
  friend class CopyScavenger<PromotingScavenger>;
  friend class parallel::Tracer<PromotingScavenger>;

  // Tenuring: an object old enough is promoted; every other copy is one
  // collection older. Survivor overflow may lower the threshold first.
  [[gnu::always_inline]] Word* allocate_copy(Word h, uint64_t words, Word& new_header) {
    if (!lab().fits(words)) [[unlikely]]
      overflow_survivors(kept_young_bytes(), keep_limit_, tenure_age_, stats_);
    return promotes(h, tenure_age_, new_header) ? plab_.allocate(words) : allocate(words);
  }
  void undo_copy(Word* p, uint64_t words) {
    if (in_old(p)) {
      plab_.undo(p, words);
    } else {
      undo_allocation(p, words);
    }
  }
  void copied(Word* p, uint64_t words) {
    if (in_old(p)) plab_.promoted(p, words);
  }

  // The tracer's hook for a grey object: a promoted one also dirties the
  // cards of its slots that keep young targets.
  [[gnu::always_inline]] void scan_object(Word* h, uint64_t n) {
    if (in_old(h)) [[unlikely]] {
      scavenge_promoted_slots(*this, card_base_, h, n);
    } else {
      scan_slots(h, 0, n);
    }
  }

  void scavenge_extra_roots(ParallelScavengePhase& phase) {
    if (phase.extra_roots) phase.extra_roots(phase.extra_context, *this);
  }
  void report_extra(observe::Recorder& events) const;

  bool in_old(const Word* p) const { return reinterpret_cast<uintptr_t>(p) - old_begin_ < old_bytes_; }

  uintptr_t old_begin_ = 0;
  uint64_t old_bytes_ = 0;
  uint8_t* card_base_ = nullptr;
  uint32_t tenure_age_ = Header::kMaxAge + 1;
  uint64_t keep_limit_ = UINT64_MAX;
  PromotionLab plab_;
};

// The GC threads both plans scavenge with (semispace's collection and
// markcompact's young collection), allocated once: the pool, one deque per
// thread, the overflow set, the termination protocol and the scavengers.
template <class Scavenger>
struct ScavengeThreads {
  ScavengeThreads(unsigned threads, uint64_t deque_tasks) : overflow(parallel::deque_capacity(deque_tasks)) {
    if (threads == 0) return;
    pool = std::make_unique<parallel::WorkerPool>(threads);
    for (unsigned w = 0; w < threads; ++w)
      deques.push_back(std::make_unique<parallel::TaskDeque>(parallel::deque_capacity(deque_tasks)));
  }

  // by_owner: forwarding by ownership, for a scavenger that can.
  void make_scavengers(observe::Recorder& events, const Reservation& reservation, bool by_owner = false) {
    shared =
        std::make_unique<ScavengeShared>(ScavengeShared{deques, overflow, termination, events, reservation});
    if (Scavenger::kOwnedForwarding && by_owner && pool->size() > 1 &&
        pool->size() <= parallel::ChunkOwners::kMaxThreads) {
      inboxes = std::make_unique<parallel::Inbox[]>(pool->size());
      shared->owners = &owners;
      shared->inboxes = inboxes.get();
    }
    for (unsigned w = 0; w < pool->size(); ++w) scavengers.push_back(std::make_unique<Scavenger>(*shared, w));
  }

  // The GC threads that are awake run their scavengers over the phase (an
  // open phase: a small collection does not wait for a thread to wake),
  // then, on the program's thread, the threads' last LABs are retired,
  // highest first, so that tails adjacent at a space's top all return to it
  // and the others become filler.
  void run(const ScavengeSpaces& spaces, uint64_t lab_words, ParallelScavengePhase& phase) {
    if (shared->owners) owners.reset(spaces.from_begin, spaces.from_end, pool->size());
    for (auto& s : scavengers) s->prepare(spaces, lab_words);
    parallel::trace_open(*pool, termination, [&](unsigned worker) { scavengers[worker]->run(phase); });
    std::vector<Scavenger*> order;
    order.reserve(scavengers.size());
    for (auto& s : scavengers) order.push_back(s.get());
    std::sort(order.begin(), order.end(),
              [](Scavenger* a, Scavenger* b) { return a->lab().end > b->lab().end; });
    for (Scavenger* s : order) s->retire_lab_at_end();
    if constexpr (requires(Scavenger * s) { s->promotion_lab(); }) {
      std::sort(order.begin(), order.end(),
                [](Scavenger* a, Scavenger* b) { return a->promotion_lab().end > b->promotion_lab().end; });
      for (Scavenger* s : order) s->retire_promotion_lab_at_end();
    }
  }

  std::unique_ptr<parallel::WorkerPool> pool;  // none under --gc-threads=0
  std::vector<std::unique_ptr<parallel::TaskDeque>> deques;
  parallel::OverflowSet overflow;
  parallel::Termination termination;
  parallel::ChunkOwners owners;
  std::unique_ptr<parallel::Inbox[]> inboxes;
  std::unique_ptr<ScavengeShared> shared;
  std::vector<std::unique_ptr<Scavenger>> scavengers;
};

}  // namespace gc
