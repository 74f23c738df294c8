// The CPU marker of the mark-sweep space: marksweep's mark phase, and the
// fallback of the plans that mark elsewhere (`gpu`'s narrow tail, `accel`).
// Each GC thread's part is a Marker (marker.h): in parallel a policy of the
// shared tracer (gc/parallel/tracer.h), with --gc-threads=0 or 1 a serial
// mark stack. A plan calls one of its two entry points, for all the work
// or the rest of it.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "gc/collector.h"
#include "gc/parallel/overflow_set.h"
#include "gc/parallel/task.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/termination.h"
#include "gc/parallel/worker_pool.h"
#include "gc/parallel/worker_stats.h"

namespace gc {

template <bool kParallel>
class Marker;

class CpuMarker {
 public:
  // Marks on pool's threads (options.gc_threads of them; 0 or 1: serial),
  // adds each thread's statistics to totals and reports to events.
  CpuMarker(const HeapOptions& options, parallel::WorkerPool& pool,
            std::vector<parallel::WorkerStats>& totals, observe::Recorder& events);
  ~CpuMarker();

  // From the roots: marks their targets and everything reachable.
  void mark_from_roots(std::span<const RootGroup> roots);
  // From grey objects (marked, slots not yet scanned): marks everything
  // reachable from them; objects marked before keep the tri-colour
  // invariant (tracer.h). Returns how many objects it marked.
  uint64_t mark_from_gray(std::span<Word* const> grey);

 private:
  template <bool kParallel>
  friend class Marker;

  // The mark on every GC thread, from roots and grey objects; returns the
  // objects it marked.
  uint64_t run(std::span<const RootGroup> roots, std::span<Word* const> grey);

  bool serial_;
  parallel::WorkerPool& pool_;
  std::vector<parallel::WorkerStats>& totals_;
  // The plan's Collector::events, under the name the Markers read it by.
  observe::Recorder& events;
  // The markers' shared machinery, allocated once.
  std::vector<std::unique_ptr<parallel::TaskDeque>> deques_;
  parallel::OverflowSet overflow_;
  parallel::Termination termination_;
  std::vector<parallel::Task> serial_stack_;
};

}  // namespace gc
