#include "gc/heap_options.h"

#include <unistd.h>

#include <algorithm>

#include "gc/heap/reservation.h"

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
    case GcCause::kHeapThreshold:
      return "Heap Threshold";
    case GcCause::kAllocationDebt:
      return "Allocation Debt";
    case GcCause::kMarkingDone:
      return "Marking Done";
    case GcCause::kMarkAssist:
      return "Mark Assist";
  }
  return "Unknown";
}

uint64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  // A machine that will not say gets the JDK's fallback assumption of 1 GB.
  if (pages <= 0 || page_size <= 0) return 1ull << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

uint64_t usual_max_heap_bytes() { return physical_memory_bytes() / 4; }

HeapOptions resolved_heap_options(const HeapOptions& in, uint64_t min_heap_bytes) {
  HeapOptions o = in;
  if (o.max_heap_bytes == 0) o.max_heap_bytes = usual_max_heap_bytes();
  o.max_heap_bytes = std::max(round_up_pages(o.max_heap_bytes), min_heap_bytes);
  return o;
}

}  // namespace gc
