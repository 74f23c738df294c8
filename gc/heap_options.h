// What the VM asks of a collector before it exists: the heap's bound, the
// GC threads, the debug switches and outputs, and the collector's own
// options; and why a collection runs.
#pragma once

#include <cstdint>

#include "gc/options.h"

namespace gc {

namespace observe {
class Log;
class Recording;
}  // namespace observe
namespace snapshot {
class Request;
}

// Why a collection ran; shown in logs. The last four start and pace an
// incremental collector's cycle: the heap grew past the collector's
// threshold, allocation paid for a step of work, marking on GC threads
// finished a round, and allocation outran that marking, so the program
// marked beside it.
enum class GcCause {
  kAllocationFailure,
  kExplicit,
  kStress,
  kLargeAllocation,
  kHeapThreshold,
  kAllocationDebt,
  kMarkingDone,
  kMarkAssist
};
const char* cause_name(GcCause cause);

struct HeapOptions {
  uint64_t max_heap_bytes = 0;  // 0: a quarter of physical memory
  // GC worker threads for parallel collectors; 0 selects a collector's
  // serial form where it has one (semispace: the serial Cheney collector).
  unsigned gc_threads = 1;
  // Capacity of each GC thread's work-stealing deque in tasks (--gc-deque,
  // a power of two); 0: the collector's default.
  uint64_t gc_deque_tasks = 0;
  uint64_t stress_interval = 0;  // collect every N allocations; 0 = off
  // --gc-stress-full: every stressed collection a full one.
  bool stress_full = false;
  bool verify = false;
  // Observability (gc/observe/recorder.h), set before the collector exists:
  // record events; keep every collection's record; the --gc-log sink.
  bool record_events = false;
  bool keep_event_history = false;
  observe::Log* log = nullptr;
  // --heap-snapshot: asked at every collection's start and end.
  snapshot::Request* heap_snapshot = nullptr;
  // --gc-animate: asked at every collection's start, active until its end.
  observe::Recording* recording = nullptr;
  // --gc-overhead-limit (Collector::overhead_limit_exceeded).
  bool gc_overhead_limit = true;
  // The selected collector's own options as given (its registry entry's
  // table says which); the collector reads them into its own struct.
  OptionValues collector_options;

  // The debug policy, decided here for every collector (as clox decides it
  // in reallocate; the --gc-stress countdown is Collector's
  // stress_collection_due). Freed and evacuated memory is poisoned while
  // verifying or stressed, so that a stale reference reads Header::kPoison.
  bool poison_freed_memory() const { return verify || stress_interval > 0; }
  // Under --gc-stress the fast path gets no buffer: every allocation
  // reaches a slow path, where the countdown counts it.
  bool hide_buffer() const { return stress_interval > 0; }
};

// Physical memory in bytes.
uint64_t physical_memory_bytes();
// The heap limit without --heap: a quarter of physical memory, as the JDK
// chooses (a collector may name its own: CollectorInfo::default_heap_bytes).
uint64_t usual_max_heap_bytes();

// The options as a collector honours them: --heap defaulted, rounded up to
// pages and at least min_heap_bytes.
HeapOptions resolved_heap_options(const HeapOptions& in, uint64_t min_heap_bytes);

}  // namespace gc
