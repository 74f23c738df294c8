// A test-only collector that never collects (like the JDK's Epsilon): it
// bumps through its heap and reports out of memory at the end. It exists to
// show that a collector is one folder plus one registry line
// (tests/throwaway/add_collector_test.sh drops this folder into
// gc/collectors/throwaway/).
#pragma once

#include <memory>
#include <span>

#include "gc/collector.h"
#include "gc/options.h"

namespace gc {

std::unique_ptr<Collector> create_throwaway(RootSet& roots, const HeapOptions& options);
std::span<const OptionSpec> throwaway_option_table();

}  // namespace gc
