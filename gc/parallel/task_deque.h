// A work-stealing deque after Arora, Blumofe and Plaxton (1998), as Flood et
// al. 2001 use it (section 2.1, L99-123): the owner pushes and pops at the
// bottom with no synchronisation except when it takes the last element;
// thieves pop at the top with one compare-and-swap.
//
// Fixed capacity, allocated once (section 3.4, L131-137: "to avoid
// allocation during GC we allocate fixed-size work-stealing queues at
// startup"): push() reports a full deque and the caller overflows.
//
// The array is circular, as in HotSpot's GenericTaskQueue and Chase and Lev
// (2005), not ABP's linear one: top and bottom are 64-bit counters that
// never wrap, so top needs no ABA tag and stolen cells are reused without
// emptying first. Memory orders follow Lê, Pop, Cohen and Zappa Nardelli
// (PPoPP 2013), with the fences folded into seq_cst operations so that
// ThreadSanitizer (which ignores fences) checks it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "gc/parallel/task.h"

namespace gc::parallel {

class TaskDeque {
 public:
  enum class Steal { kSuccess, kEmpty, kAbort };  // kAbort: lost a race, retry elsewhere

  // capacity must be a power of two.
  explicit TaskDeque(uint64_t capacity) : mask_(capacity - 1), cells_(std::make_unique<Cell[]>(capacity)) {}
  TaskDeque(const TaskDeque&) = delete;
  TaskDeque& operator=(const TaskDeque&) = delete;

  uint64_t capacity() const { return mask_ + 1; }

  // Owner only. False when the deque is full (nothing is pushed).
  bool push(Task t) {
    int64_t b = bottom_.load(std::memory_order_relaxed);
    int64_t top = top_.load(std::memory_order_acquire);
    if (static_cast<uint64_t>(b - top) > mask_) return false;
    cells_[b & mask_].store(t);
    // Release: a thief that sees the new bottom sees the cell and whatever
    // the owner wrote before pushing (the copied object's contents).
    bottom_.store(b + 1, std::memory_order_release);
    return true;
  }

  // Owner only. False when empty.
  bool pop(Task& out) {
    int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    // seq_cst store then seq_cst load: the store-load order ABP's PopBottom
    // needs between publishing the smaller bottom and reading top.
    bottom_.store(b, std::memory_order_seq_cst);
    int64_t t = top_.load(std::memory_order_seq_cst);
    if (t > b) {  // was empty
      bottom_.store(b + 1, std::memory_order_relaxed);
      return false;
    }
    out = cells_[b & mask_].load();
    if (t == b) {
      // The last element: thieves may want it too; one CAS decides.
      bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
      bottom_.store(b + 1, std::memory_order_relaxed);
      return won;
    }
    return true;
  }

  // Any thread.
  Steal steal(Task& out) {
    int64_t t = top_.load(std::memory_order_seq_cst);
    int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return Steal::kEmpty;
    Task task = cells_[t & mask_].load();
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return Steal::kAbort;
    out = task;
    return Steal::kSuccess;
  }

  // A racy estimate, for thieves peeking before they steal (section 3.3)
  // and for the owner's overflow arithmetic.
  uint64_t size() const {
    int64_t b = bottom_.load(std::memory_order_relaxed);
    int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? static_cast<uint64_t>(b - t) : 0;
  }
  bool looks_empty() const { return size() == 0; }

 private:
  // A cell is read by a thief while the owner may overwrite it after the
  // element was taken (the thief's CAS then fails and the value is
  // dropped), so its words are atomics, relaxed: plain moves on x86.
  struct Cell {
    std::atomic<Word*> object{nullptr};
    std::atomic<uint64_t> range{0};
    void store(Task t) {
      object.store(t.object, std::memory_order_relaxed);
      range.store((static_cast<uint64_t>(t.begin) << 32) | t.end, std::memory_order_relaxed);
    }
    Task load() const {
      uint64_t r = range.load(std::memory_order_relaxed);
      return Task{object.load(std::memory_order_relaxed), static_cast<uint32_t>(r >> 32),
                  static_cast<uint32_t>(r)};
    }
  };

  // Owner and thieves touch different ends; keep them on different lines.
  alignas(64) std::atomic<int64_t> top_{0};
  alignas(64) std::atomic<int64_t> bottom_{0};
  uint64_t mask_;
  std::unique_ptr<Cell[]> cells_;
};

}  // namespace gc::parallel
