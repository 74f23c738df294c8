#include "gc/collector.h"

#include <algorithm>

#include "gc/heap/reservation.h"
#include "gc/observe/recording.h"
#include "gc/snapshot/snapshot.h"
#include "gc/verify/verifier.h"

namespace gc {

void Collector::run_collection(observe::CollectionKind kind, GcCause cause,
                               const std::function<bool()>& body) {
  events.collection_start(kind, cause, *this);
  roots_.prepare_for_collection();
  if (options_.verify)
    events.phase(0, "verify before",
                 [&] { verify::verify_heap_or_exit(*this, roots_, stats_.collections, "before"); });
  // After verification, so that a snapshot never holds a heap it failed.
  if (options_.heap_snapshot)
    events.phase(0, "heap snapshot",
                 [&] { options_.heap_snapshot->at_collection_start(events.current_collection(), roots_); });
  // Last, so that what it records is the collection's own work.
  bool recording = start_recording(kind);
  bool collected = body();
  if (recording) finish_recording();
  if (!collected) {
    events.collection_end(*this);
    if (options_.heap_snapshot) options_.heap_snapshot->at_collection_end(stats_.last_live_bytes);
    return;
  }
  if (options_.verify)
    events.phase(0, "verify after",
                 [&] { verify::verify_heap_or_exit(*this, roots_, stats_.collections, "after"); });
  stats_.collections++;
  note_heap_size();
  events.collection_end(*this);
  note_overhead(kind, cause);
  if (options_.heap_snapshot) options_.heap_snapshot->at_collection_end(stats_.last_live_bytes);
}

bool Collector::start_recording(observe::CollectionKind kind, bool cycle_start) {
  observe::Recording* recording = options_.recording;
  bool full = kind == observe::CollectionKind::kFull;
  if (!recording || !recording->wants(events.current_collection(), full, cycle_start)) return false;
  verify::HeapShape shape;
  describe_heap(shape);
  recording->start(events.current_collection(), full, name(), shape, roots_, events.workers());
  return true;
}

void Collector::finish_recording() {
  if (!options_.recording || !options_.recording->in_progress()) return;
  verify::HeapShape shape;
  describe_heap(shape);
  options_.recording->finish(shape);
}

// The time share is taken from the end of the previous full collection,
// counting young collections as collection time: in a generational heap a
// full collection follows young ones, which are the cost of the heap
// filling up too.
void Collector::note_overhead(observe::CollectionKind kind, GcCause cause) {
  const observe::CollectionRecord& c = events.current();
  gc_ns_since_full_ += c.end_ns - c.start_ns;
  if (kind != observe::CollectionKind::kFull) return;
  int64_t interval = c.end_ns - last_full_collection_end_ns_;
  int64_t gc_ns = gc_ns_since_full_;
  last_full_collection_end_ns_ = c.end_ns;
  gc_ns_since_full_ = 0;
  // Under --gc-stress collections take nearly all the time by design.
  if (!options_.gc_overhead_limit || options_.stress_interval) return;
  if (cause != GcCause::kAllocationFailure && cause != GcCause::kLargeAllocation) return;
  uint64_t capacity = live_capacity();
  uint64_t free = capacity > c.live_after ? capacity - c.live_after : 0;
  bool costly = gc_ns * 100 > interval * static_cast<int64_t>(kGcTimeLimitPercent) &&
                free * 100 < capacity * kHeapFreeLimitPercent;
  costly_collections_ = costly ? costly_collections_ + 1 : 0;
  if (costly_collections_ >= kOverheadLimitCollections) overhead_limit_exceeded_ = true;
}

}  // namespace gc
