#include "gc/collectors/semispace/semispace_options.h"

namespace gc {

namespace {
constexpr OptionSpec kOptions[] = {kGcLabOption};
}  // namespace

SemispaceOptions semispace_options(const HeapOptions& heap) {
  SemispaceOptions o;
  o.gc_lab_bytes = option_size(heap.collector_options, kGcLabOption.name).value_or(0);
  return o;
}

std::span<const OptionSpec> semispace_option_table() { return kOptions; }

}  // namespace gc
