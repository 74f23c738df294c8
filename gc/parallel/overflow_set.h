// The global overflow set (Flood et al. 2001, section 3.4, L131-144).
//
// When a thread's fixed-size deque is full, the bottom half of it (the
// tasks pushed most recently) moves here; a thread that runs out of local
// work takes tasks from here before it tries to steal, and puts at most half
// a deque's worth back into its empty deque. Since refilled tasks occupy at
// most the top half, and overflow moves only the bottom half, a task is
// never moved to the overflow set twice: there is no thrashing.
//
// What gclab chose instead of the paper's storage. The paper (Figure 1,
// Ole Agesen's design) keeps no per-object storage: it chains each class's
// overflowed objects through their class pointers, with the list head in the
// class, which works because every instance of a class has the same size
// and shape. gclab's header word encodes each object's own sizes (arrays
// of one class differ), a task may be a range of a large array's slots,
// and the header must stay readable by other threads (they test it for a
// forwarding pointer), so overwriting it is not possible. The set is a
// side stack of tasks under a lock, kept between collections: it allocates
// only when one collection overflows more than any before it, and the
// overflow counters say how often that happens.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "gc/parallel/task.h"
#include "gc/parallel/task_deque.h"

namespace gc::parallel {

class OverflowSet {
 public:
  explicit OverflowSet(size_t initial_capacity = 0) { tasks_.reserve(initial_capacity); }

  // Owner of `deque`, which is full: pops its bottom half into the set.
  // Returns the number of tasks moved.
  uint64_t take_bottom_half(TaskDeque& deque);

  // Into `deque` (its owner's, empty), at most max_tasks (half its
  // capacity). Returns the number moved.
  uint64_t refill(TaskDeque& deque, uint64_t max_tasks);

  // Racy, for peeking (termination) before taking the lock.
  bool looks_empty() const { return size_.load(std::memory_order_acquire) == 0; }
  uint64_t size() const { return size_.load(std::memory_order_acquire); }

 private:
  std::mutex lock_;
  std::vector<Task> tasks_;
  std::atomic<uint64_t> size_{0};
};

}  // namespace gc::parallel
