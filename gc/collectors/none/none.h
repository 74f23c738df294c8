// none: a collector that never collects (OpenJDK's Epsilon, JEP 318;
// MMTk's NoGC). The mutator bumps through one space until --heap is
// exhausted, then the program is out of memory; gc() is ignored, and the
// log says so. It is the baseline that lower-bound overhead is measured
// against (docs/collectors/none.md).
#pragma once

#include <memory>

#include "gc/collector.h"

namespace gc {

std::unique_ptr<Collector> create_none(RootSet& roots, const HeapOptions& options);

}  // namespace gc
