// The summary every collector keeps (Collector::stats), in a header of its
// own so that a space can count into it.
#pragma once

#include <cstdint>

namespace gc {

// Summary statistics every collector keeps. Pause times are the
// recorder's (Collector::events), which times every collection.
struct GcStats {
  uint64_t collections = 0;
  uint64_t bytes_allocated = 0;  // bytes handed to the mutator, ever
  uint64_t bytes_copied = 0;     // moving collectors
  uint64_t peak_heap_bytes = 0;
  uint64_t last_live_bytes = 0;  // live bytes after the last collection
};

}  // namespace gc
