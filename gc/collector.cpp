#include "gc/collector.h"

#include <unistd.h>

#include <algorithm>

#include "gc/heap/reservation.h"
#include "gc/snapshot/snapshot.h"
#include "gc/verify/verifier.h"

namespace gc {

const char* cause_name(GcCause cause) {
  switch (cause) {
    case GcCause::kAllocationFailure:
      return "Allocation Failure";
    case GcCause::kExplicit:
      return "System.gc()";
    case GcCause::kStress:
      return "GC Stress";
    case GcCause::kLargeAllocation:
      return "Large Object Allocation";
  }
  return "Unknown";
}

void Collector::run_collection(observe::CollectionKind kind, GcCause cause,
                               const std::function<bool()>& body) {
  events.collection_start(kind, cause, *this);
  roots_.prepare_for_collection();
  // Every collector that accepts --gc-verify describes its heap.
  const auto* heap = dynamic_cast<const verify::VerifiableHeap*>(this);
  if (options_.verify)
    events.phase(0, "verify before",
                 [&] { verify::verify_heap_or_exit(*heap, roots_, stats_.collections, "before"); });
  // After verification, so that a snapshot never holds a heap it failed.
  if (options_.heap_snapshot)
    events.phase(0, "heap snapshot",
                 [&] { options_.heap_snapshot->at_collection_start(events.current_collection(), roots_); });
  if (!body()) {
    events.collection_end(*this);
    if (options_.heap_snapshot) options_.heap_snapshot->at_collection_end(stats_.last_live_bytes);
    return;
  }
  if (options_.verify)
    events.phase(0, "verify after",
                 [&] { verify::verify_heap_or_exit(*heap, roots_, stats_.collections, "after"); });
  stats_.collections++;
  note_heap_size();
  events.collection_end(*this);
  if (options_.heap_snapshot) options_.heap_snapshot->at_collection_end(stats_.last_live_bytes);
}

uint64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  // A machine that will not say gets the JDK's fallback assumption of 1 GB.
  if (pages <= 0 || page_size <= 0) return 1ull << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

HeapOptions resolved_heap_options(const HeapOptions& in, uint64_t min_heap_bytes) {
  HeapOptions o = in;
  if (o.max_heap_bytes == 0) o.max_heap_bytes = physical_memory_bytes() / 4;
  o.max_heap_bytes = std::max(round_up_pages(o.max_heap_bytes), min_heap_bytes);
  return o;
}

}  // namespace gc
