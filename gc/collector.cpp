#include "gc/collector.h"

#include <unistd.h>

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

uint64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  // A machine that will not say gets the JDK's fallback assumption of 1 GB.
  if (pages <= 0 || page_size <= 0) return 1ull << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

}  // namespace gc
