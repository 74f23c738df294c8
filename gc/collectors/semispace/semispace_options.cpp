#include "gc/collectors/semispace/semispace_options.h"

namespace gc {

namespace {
constexpr OptionSpec kForwardingOption = choice_option(
    "forwarding", "owner|cas", "owner",
    "with 2 or more GC threads, which one copies an object: the owner of its from-space chunk, with "
    "a plain store, or whichever wins a CAS on its header (the paper's protocol)",
    "forwarding protocol", "owner or cas");
constexpr OptionSpec kOptions[] = {kGcLabOption, kForwardingOption};
}  // namespace

SemispaceOptions semispace_options(const HeapOptions& heap) {
  SemispaceOptions o;
  o.gc_lab_bytes = option_size(heap.collector_options, kGcLabOption.name).value_or(0);
  const std::string* forwarding = option_text(heap.collector_options, kForwardingOption.name);
  o.forwarding_by_owner = !forwarding || *forwarding == "owner";
  return o;
}

std::span<const OptionSpec> semispace_option_table() { return kOptions; }

}  // namespace gc
