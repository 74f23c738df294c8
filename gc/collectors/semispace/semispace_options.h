// semispace's options (docs/collectors/semispace.md), read from the
// command line's values through its registry entry's table.
#pragma once

#include <cstdint>
#include <span>

#include "gc/collector.h"
#include "gc/options.h"

namespace gc {

// --gc-lab: each GC thread's to-space allocation buffer. Every collector
// that copies with pSemispaces lists this one definition in its table.
inline constexpr OptionSpec kGcLabOption{
    .name = "gc-lab",
    .kind = OptionKind::kSize,
    .value_name = "SIZE",
    .default_text = "32K",
    .help = "each GC thread's to-space allocation buffer for parallel copying",
    .what = "LAB size",
    .hint = "64 to 1G, e.g. 32K",
    .min = 64,
    .max = 1ull << 30,
};

struct SemispaceOptions {
  uint64_t gc_lab_bytes = 0;  // 0: the collector's default
};

SemispaceOptions semispace_options(const HeapOptions& heap);
std::span<const OptionSpec> semispace_option_table();

}  // namespace gc
