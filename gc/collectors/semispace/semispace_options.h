// semispace's options (docs/collectors/semispace.md), read from the
// command line's values through its registry entry's table.
#pragma once

#include <cstdint>
#include <span>

#include "gc/collector.h"
#include "gc/options.h"
#include "gc/plan/gc_lab.h"

namespace gc {

struct SemispaceOptions {
  uint64_t gc_lab_bytes = kGcLabOption.default_value;
  // --forwarding: which thread copies an object in a parallel collection,
  // the owner of its from-space chunk (gc/parallel/ownership.h), or any,
  // the race decided by a CAS (Flood et al. 2001, section 4).
  bool forwarding_by_owner = true;
};

SemispaceOptions semispace_options(const HeapOptions& heap);
std::span<const OptionSpec> semispace_option_table();
// The variant the options select, and the options of the paper's
// (Flood et al. 2001) configuration: its CAS per copied object.
Variant semispace_variant(const HeapOptions& heap);
OptionValues semispace_paper_configuration(const HeapOptions& heap);

}  // namespace gc
