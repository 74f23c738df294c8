// The global overflow set (Flood et al. 2001, section 3.4, L131-144).
//
// When a thread's fixed-size deque is full, its bottom half (the tasks
// pushed most recently) moves here; a thread out of local work takes tasks
// from here before it steals, at most half a deque's worth. Refilled tasks
// occupy at most the top half and overflow moves only the bottom half, so a
// task never overflows twice: there is no thrashing.
//
// The paper (Figure 1, Ole Agesen's design) chains each class's overflowed
// objects through their class pointers, which works because every instance
// of a class has one shape. gclab's objects of one class differ in size, a
// task may be a range of a large array's slots, and other threads read the
// header concurrently, so the set is a side stack of tasks under a lock,
// kept between collections: it allocates only when a collection overflows
// more than any before it.
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
