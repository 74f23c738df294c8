// template: the smallest correct mark-sweep collector, the course's starting
// point (docs/course/write-a-collector.md). Everything is in template.cpp.
#pragma once

#include <memory>

#include "gc/collector.h"

namespace gc {

std::unique_ptr<Collector> create_template(RootSet& roots, const HeapOptions& options);

}  // namespace gc
