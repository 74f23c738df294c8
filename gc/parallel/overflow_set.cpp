#include "gc/parallel/overflow_set.h"

namespace gc::parallel {

uint64_t OverflowSet::take_bottom_half(TaskDeque& deque) {
  uint64_t half = deque.capacity() / 2;
  std::lock_guard<std::mutex> guard(lock_);
  uint64_t moved = 0;
  Task t;
  while (moved < half && deque.pop(t)) {
    tasks_.push_back(t);
    ++moved;
  }
  size_.store(tasks_.size(), std::memory_order_release);
  return moved;
}

uint64_t OverflowSet::refill(TaskDeque& deque, uint64_t max_tasks) {
  if (looks_empty()) return 0;
  std::lock_guard<std::mutex> guard(lock_);
  uint64_t moved = 0;
  // From the end of the stack: the tasks overflowed last, the ones nearest
  // the part of the graph being traced now.
  while (moved < max_tasks && !tasks_.empty()) {
    if (!deque.push(tasks_.back())) break;
    tasks_.pop_back();
    ++moved;
  }
  size_.store(tasks_.size(), std::memory_order_release);
  return moved;
}

}  // namespace gc::parallel
