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
  o.gc_lab_bytes = option_size(heap.collector_options, kGcLabOption);
  o.forwarding_by_owner = option_choice(heap.collector_options, kForwardingOption) == "owner";
  return o;
}

std::span<const OptionSpec> semispace_option_table() { return kOptions; }

Variant semispace_variant(const HeapOptions& heap) {
  // --gc-threads=0 is the paper's "seq" column; one thread has no race to
  // decide, so only two or more can forward by ownership.
  if (heap.gc_threads == 0) return {"Cheney's serial collector (the paper's seq)", {}};
  Variant v{"pSemispaces", {}};
  if (heap.gc_threads >= 2 && semispace_options(heap).forwarding_by_owner)
    v.departures.push_back("forwarding by from-space chunk ownership (the paper: a CAS per object)");
  return v;
}

OptionValues semispace_paper_configuration(const HeapOptions&) { return {{kForwardingOption.name, "cas"}}; }

}  // namespace gc
