// pSemispaces (Flood, Detlefs, Shavit and Zhang 2001, section 4): one GC
// thread's part of a parallel copying collection. The collector's phase
// (SemispaceCollector::scavenge_in_parallel, psemispaces.cpp) runs
// ParallelScavenger::run on every GC thread at once; this class reads as
// the paper's steps, in order:
//
//   scavenge_roots   claim root groups until none is left (section 3.1)
//   trace            pop the local deque; when empty, refill from the
//                    overflow set, else steal, else offer termination
//                    (sections 3.2-3.4)
//     process        scan one object, or one chunk of a large array
//     scavenge_slot  a from-space target is forwarded (copied if it was
//                    not yet), a large-object target is marked
//     copy           speculative LAB allocation, CAS of the forwarding
//                    pointer, and on losing, the winner's pointer and the
//                    undo of the allocation (section 4, L158-160)
//
// The per-object path (process, scan_slots, scavenge_slot, forward, copy,
// defer) is inlined into trace's loop, with no call, no lock and no
// allocation; counters are plain fields of
// the thread's own WorkerStats.
#pragma once

#include <atomic>
#include <cstring>

#include "gc/alloc/lab.h"
#include "gc/collectors/semispace/semispace.h"
#include "gc/parallel/private_tasks.h"
#include "gc/parallel/task.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/worker_stats.h"

namespace gc {

// What every GC thread shares in one collection.
struct ParallelScavengePhase {
  const std::vector<RootGroup>& root_groups;
  std::atomic<size_t> next_root_group{0};  // the claim counter of static overpartitioning
};

class ParallelScavenger {
 public:
  // Large arrays are scanned as tasks of at most this many slots (footnote
  // 2, L119, suggests chunking and the paper did not implement it). 2048
  // slots are 16 KB, kLargeObjectBytes: the smallest large object is one
  // chunk, so only large-object-space arrays are split, and a chunk is
  // long enough that pushing it costs little next to scanning it.
  static constexpr uint32_t kChunkSlots = 2048;
  // An object that does not fit the rest of the LAB is copied outside it
  // (one CAS on to-space's top for itself) when it is larger than 1/8 of a
  // LAB; smaller ones retire the LAB's tail as filler and take a new LAB.
  // So a retired tail wastes less than 1/8 of its LAB (HotSpot's
  // ParallelGCBufferWastePct is 10%, the same idea).
  static constexpr uint64_t kLabWasteFraction = 8;
  // Objects with at most this many reference slots have their targets
  // prefetched before they are scanned (scan_slots).
  static constexpr uint64_t kPrefetchSlots = 8;

  ParallelScavenger(SemispaceCollector& c, unsigned id) : c_(c), id_(id), deque_(*c.deques_[id]) {}

  // Before each collection, on the mutator thread.
  void prepare(uint64_t lab_words);
  // The whole phase on this thread.
  void run(ParallelScavengePhase& phase);
  // After the phase: the LAB's unused tail, given back or filled.
  void retire_lab_at_end();

  const parallel::WorkerStats& stats() const { return stats_; }
  const Lab& lab() const { return lab_; }

 private:
  // --- the paper's steps
  void scavenge_roots(ParallelScavengePhase& phase);
  void trace();
  void process(parallel::Task t);
  bool refill_from_overflow();
  bool steal(parallel::Task& out);
  bool work_visible() const;
  void report(observe::Recorder& events) const;

  [[gnu::always_inline]] void scan_slots(Word* h, uint64_t begin, uint64_t end) {
    Value* lo = reinterpret_cast<Value*>(h - end);
    Value* hi = reinterpret_cast<Value*>(h - begin);
    // A small object's targets are fetched before the first is forwarded:
    // their from-space headers' cache misses overlap instead of following
    // one another (depth-first order finds the first child in cache only
    // when it was allocated next to its parent).
    if (end - begin <= kPrefetchSlots) {
      for (Value* slot = lo; slot < hi; ++slot) {
        uint64_t bits = slot->bits;
        if ((bits & Value::kTagMask) == Value::kRefTag)
          __builtin_prefetch(reinterpret_cast<const void*>(bits & ~Value::kTagMask), 1);
      }
    }
    for (Value* slot = lo; slot < hi; ++slot) scavenge_slot(slot);
  }

  static void copy_words(Word* dst, const Word* src, uint64_t n) {
    if (n <= 8) [[likely]] {
      for (uint64_t i = 0; i < n; ++i) dst[i] = src[i];
    } else {
      std::memcpy(dst, src, n * kWordSize);
    }
  }

  // Roots and slots alike: copy (or find the copy of) a from-space target
  // and redirect the slot; mark a large-object target in place.
  [[gnu::always_inline]] void scavenge_slot(Value* slot) {
    uint64_t bits = slot->bits;
    if ((bits & Value::kTagMask) != Value::kRefTag) return;
    uintptr_t addr = static_cast<uintptr_t>(bits & ~Value::kTagMask);
    if (addr - from_begin_ < from_bytes_) {
      slot->bits = Value::kRefTag | reinterpret_cast<uintptr_t>(forward(reinterpret_cast<Word*>(addr)));
    } else if (addr - los_begin_ < los_bytes_) {
      mark_large(reinterpret_cast<Word*>(addr));
    }
  }

  // The from-space header is read and replaced by several threads at once:
  // an atomic word (relaxed: a loser never reads the winner's copy, it only
  // stores its address).
  [[gnu::always_inline]] Word* forward(Word* old) {
    Word h = std::atomic_ref<Word>(*old).load(std::memory_order_relaxed);
    if (Header::is_forwarded(h)) return reinterpret_cast<Word*>(h);
    return copy(old, h);
  }

  // Section 4, L158-160: "each thread speculatively allocate[s] space for
  // the object in its LAB, and then use[s] a CAS to update the from-space
  // object's forwarding pointer to point to the speculative new address. If
  // the CAS succeeds, the thread proceeds to copy the object. If the CAS
  // fails, [it] returns the updated forwarding pointer. The thread uses this
  // value to update its reference, and then locally retracts its
  // speculative allocation." An object hashed at its address (kHashed)
  // grows a hash word when it moves, so the speculative allocation is the
  // grown size and the undo retracts that size.
  [[gnu::always_inline]] Word* copy(Word* old, Word h) {
    uint64_t nrefs = Header::nrefs(h);
    uint64_t below = words_below(nrefs);
    uint64_t raw = Header::raw_words(h);
    bool hashed = Header::hash_state(h) == HashState::kHashed;
    uint64_t new_raw = hashed ? rounded_raw(raw + 1) : raw;
    uint64_t words = below + 1 + new_raw;
    Word* dst = allocate(words);
    Word* moved = dst + below;
    Word seen = h;
    if (!std::atomic_ref<Word>(*old).compare_exchange_strong(seen, reinterpret_cast<Word>(moved),
                                                             std::memory_order_relaxed)) [[unlikely]] {
      // Only forwarding changes a from-space header during a collection,
      // so the value that beat us is the winner's forwarding pointer.
      stats_.cas_failures++;
      undo_allocation(dst, words);
      return reinterpret_cast<Word*>(seen);
    }
    // The words below the header and the raw words, each as a plain word
    // loop for the small objects that dominate, memcpy beyond. The header
    // word itself is never read plainly: other threads may be reading it
    // atomically as a forwarding pointer.
    copy_words(dst, old - below, below);
    copy_words(moved + 1, old + 1, raw);
    if (hashed) [[unlikely]] {
      install_hash(old, moved, h, raw, new_raw);
    } else {
      *moved = h;
    }
    stats_.objects_copied++;
    stats_.bytes_copied += words * kWordSize;
    // Objects with no reference slots (strings, number arrays) have nothing
    // to scan: they never become tasks.
    if (nrefs) defer(parallel::Task::whole(moved));
    return moved;
  }

  // Large objects never move: the mark bit in the header is set with an
  // atomic fetch-or, and the thread whose fetch-or set it owns the scan.
  void mark_large(Word* h) {
    std::atomic_ref<Word> header(*h);
    if (Header::is_marked(header.load(std::memory_order_relaxed))) return;
    Word before = header.fetch_or(Header::kMarkBit, std::memory_order_relaxed);
    if (Header::is_marked(before)) return;
    stats_.large_objects_marked++;
    if (Header::nrefs(before)) defer(parallel::Task::whole(h));
  }

  // A task found while scanning goes to the private stack in front of the
  // deque (private_tasks.h); the oldest half moves to the deque when the
  // stack is full.
  void defer(parallel::Task t) {
    if (private_.full()) [[unlikely]]
      publish(parallel::PrivateTasks::kCapacity / 2);
    private_.push(t);
  }

  // Some thread has offered termination: it can only find work that sits
  // in a deque. One relaxed load of a line written only when a thread goes
  // idle or comes back.
  bool others_idle() const { return c_.termination_.active() < c_.deques_.size(); }

  void push(parallel::Task t) {
    if (!deque_.push(t)) [[unlikely]]
      overflow_and_push(t);
  }

  Word* allocate(uint64_t words) {
    if (lab_.fits(words)) [[likely]]
      return lab_.bump(words);
    return allocate_slow(words);
  }

  [[gnu::noinline]] void publish(unsigned n);
  [[gnu::noinline]] void overflow_and_push(parallel::Task t);
  [[gnu::noinline]] Word* allocate_slow(uint64_t words);
  [[gnu::noinline]] void undo_allocation(Word* p, uint64_t words);
  [[gnu::noinline]] void install_hash(Word* old, Word* moved, Word h, uint64_t raw, uint64_t new_raw);
  void scan_large(Word* h, uint64_t begin, uint64_t end);
  void retire_lab_tail();

  SemispaceCollector& c_;
  unsigned id_;
  parallel::TaskDeque& deque_;
  // This collection's geometry (prepare).
  uintptr_t from_begin_ = 0;
  uint64_t from_bytes_ = 0;
  uintptr_t los_begin_ = 0;
  uint64_t los_bytes_ = 0;
  CopySpace* to_ = nullptr;
  uint64_t lab_words_ = 0;
  Lab lab_;
  parallel::PrivateTasks private_;
  uint64_t steal_seed_;
  parallel::WorkerStats stats_;  // this collection's
};

}  // namespace gc
