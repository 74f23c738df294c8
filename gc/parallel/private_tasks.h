// The newest tasks of one GC thread, kept out of its work-stealing deque
// until another thread could take them: the private part of a split deque
// (Dinan et al., SC'09; van Dijk and van de Pol's Lace, 2014), pushed and
// popped with a plain store and load where the deque's pop needs a fence.
// The owner moves its oldest private tasks to the deque when some thread
// is idle and when this stack is full, so thieves still find the oldest
// work; a thread holding private tasks is active for termination.
#pragma once

#include <cstring>

#include "gc/parallel/task.h"

namespace gc::parallel {

class PrivateTasks {
 public:
  // 256 tasks (4 KB): deeper than the depth-first stack of any tree or
  // list, so a thread alone never touches its deque on such heaps.
  static constexpr unsigned kCapacity = 256;

  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == kCapacity; }
  unsigned size() const { return size_; }
  void clear() { size_ = 0; }

  void push(Task t) { tasks_[size_++] = t; }  // not full
  Task pop() { return tasks_[--size_]; }      // not empty

  // Hands the oldest n tasks to `sink`, oldest first, and keeps the rest.
  template <class Sink>
  void release_oldest(unsigned n, Sink&& sink) {
    for (unsigned i = 0; i < n; ++i) sink(tasks_[i]);
    std::memmove(tasks_, tasks_ + n, (size_ - n) * sizeof(Task));
    size_ -= n;
  }

 private:
  Task tasks_[kCapacity];
  unsigned size_ = 0;
};

}  // namespace gc::parallel
