// copying: the serial copying collector that docs/course/write-a-collector.md
// builds from the template. Everything is in copying.cpp.
#pragma once

#include <memory>

#include "gc/collector.h"

namespace gc {

std::unique_ptr<Collector> create_copying(RootSet& roots, const HeapOptions& options);

}  // namespace gc
