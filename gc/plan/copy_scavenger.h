// The copy policy of the shared tracer (gc/parallel/tracer.h) for
// pSemispaces (Flood, Detlefs, Shavit and Zhang 2001, section 4): one GC
// thread's part of a parallel copying collection, shared by the plans that
// copy in parallel (semispace, and markcompact's young generation). A plan
// runs CopyScavenger::run on every GC thread at once (ScavengeThreads,
// scavenge_threads.h). The loop (root groups, local work, overflow,
// stealing, termination, chunked large arrays) is the tracer's; this class
// says what the scavenge does to a slot and to an object:
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
// Where a survivor goes is the derived scavenger's: semispace's
// ParallelScavenger copies every survivor into to-space; markcompact's
// PromotingScavenger (section 4, L162-164) promotes old enough ones and
// scans the dirty cards as extra roots. The out-of-line members are in
// copy_scavenger_impl.h, which the file that instantiates a scavenger
// includes.
#pragma once

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "gc/collector.h"
#include "gc/heap/identity_hash.h"
#include "gc/heap/lab.h"
#include "gc/observe/recorder.h"
#include "gc/parallel/overflow_set.h"
#include "gc/parallel/task.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/termination.h"
#include "gc/parallel/tracer.h"
#include "gc/parallel/worker_pool.h"
#include "gc/parallel/worker_stats.h"
#include "gc/spaces/copy_space.h"

namespace gc {

// The copy scavenger's counters, which markcompact's promotion reports too.
inline constexpr observe::Counter kObjectsCopied{"objects copied", observe::Unit::kObjects};
inline constexpr observe::Counter kCasForwardings{"CAS forwardings", observe::Unit::kObjects};
inline constexpr observe::Counter kCasFailures{"CAS failures", observe::Unit::kObjects};
inline constexpr observe::Counter kUndoneAllocations{"undone allocations", observe::Unit::kObjects};
inline constexpr observe::Counter kDirectCopies{"direct copies", observe::Unit::kObjects};
inline constexpr observe::Counter kLabWasteBytes{"LAB waste bytes", observe::Unit::kBytes};
inline constexpr observe::Counter kBytesPromoted{"bytes promoted", observe::Unit::kBytes};
inline constexpr observe::Counter kLabsTaken{"LABs taken", observe::Unit::kBuffers};
inline constexpr observe::Counter kSurvivorOverflows{"survivor overflows", observe::Unit::kThreads};

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

// One collection's spaces. A scavenger with more to know (markcompact's
// promotion) takes a struct derived from this one.
struct ScavengeSpaces {
  const Word* from_begin = nullptr;  // evacuated: [from_begin, from_end)
  const Word* from_end = nullptr;
  const Word* los_begin = nullptr;  // large objects marked in place; empty:
  const Word* los_end = nullptr;    // not traced (a young collection)
  CopySpace* to = nullptr;
};

// What every GC thread shares in one collection.
struct ParallelScavengePhase {
  parallel::RootClaim roots;
};

// The copy policy of the shared tracer, for a scavenger `Derived` that
// says where a survivor goes (its hooks, resolved at compile time):
//
//   Word* allocate_copy(Word h, uint64_t words, Word& new_header)
//   void undo_copy(Word* p, uint64_t words)     the CAS was lost
//   void copied(Word* p, uint64_t words)        the CAS was won
//
// and, if it has roots besides the root groups, the phase they run in on
// each thread (kExtraRootsPhase) and void scavenge_extra_roots(), which
// claims them; report_extra adds counters of its own.
template <class Derived>
class CopyScavenger : public parallel::Tracer<Derived> {
 public:
  // The next object scanned is the one just copied (tracer.h).
  static constexpr bool kPrefetchTargets = false;
  // Whether the scavenger can forward by ownership of from-space chunks
  // (forward_owned) where the collector asks for it; else every race is
  // decided by the CAS of section 4.
  static constexpr bool kOwnedForwarding = false;
  // The phase of the roots beyond the root groups; nullptr: none.
  static constexpr const char* kExtraRootsPhase = nullptr;

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
  void scavenge_extra_roots() {}
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
    if (this->recording_) [[unlikely]]
      this->recording_->copy(this->id(), old, moved);
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
    if (this->recording_) [[unlikely]]
      this->recording_->grey(this->id(), h);
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

}  // namespace gc
