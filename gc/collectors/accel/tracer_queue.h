// The tracer queue between the marker and the tracer (Figure 7, L158-162):
// objects the marker has newly marked and that have references, waiting
// for the tracer to copy their reference sections. It decouples the two:
// while the tracer walks a long object, the marker goes on until this
// queue is full.
#pragma once

#include <algorithm>
#include <cstdint>

#include "gc/collectors/accel/mark_queue.h"
#include "gc/layout.h"

namespace gc::accel {

struct TracerEntry {
  Word* header;
  uint64_t nrefs;
};

class TracerQueue {
 public:
  explicit TracerQueue(unsigned capacity) : capacity_(capacity) {}

  bool full() const { return entries_.size() >= capacity_; }
  bool empty() const { return entries_.empty(); }
  void push(TracerEntry e) {
    entries_.push_back(e);
    peak_ = std::max<uint64_t>(peak_, entries_.size());
  }
  TracerEntry pop() { return entries_.pop_front(); }
  uint64_t peak() const { return peak_; }

 private:
  unsigned capacity_;
  Ring<TracerEntry> entries_;
  uint64_t peak_ = 0;
};

}  // namespace gc::accel
