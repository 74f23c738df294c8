// The registry: one line per collector (docs/architecture.md, "Adding a
// collector": a new collector is one folder under gc/collectors/ plus one
// line here).
#include "gc/collector.h"
#include "gc/collectors/accel/accel.h"
#include "gc/collectors/accel/accel_options.h"
#include "gc/collectors/cacheaware/cacheaware.h"
#include "gc/collectors/cacheaware/cacheaware_options.h"
#include "gc/collectors/gpu/registration.h"
#include "gc/collectors/incremental/incremental.h"
#include "gc/collectors/markcompact/markcompact.h"
#include "gc/collectors/markcompact/markcompact_options.h"
#include "gc/collectors/marksweep/marksweep.h"
#include "gc/collectors/none/none.h"
#include "gc/collectors/semispace/semispace.h"
#include "gc/collectors/semispace/semispace_options.h"
#include "gc/collectors/template/template.h"

namespace gc {

const std::vector<CollectorInfo>& registered_collectors() {
  static const std::vector<CollectorInfo> collectors = {
      {.name = "semispace",
       .description = "parallel copying, pSemispaces (Flood et al. 2001); --gc-threads=0 runs its serial "
                      "form, Cheney's collector",
       .create = create_semispace,
       .options = semispace_option_table,
       .variant = semispace_variant,
       .paper_configuration = semispace_paper_configuration},
      {.name = "markcompact",
       .description = "generational: pSemispaces young generation, mark-compact old generation, strided "
                      "card scanning (Flood et al. 2001)",
       .create = create_markcompact,
       .options = markcompact_option_table,
       .variant = markcompact_variant,
       .paper_configuration = markcompact_paper_configuration},
      {.name = "marksweep",
       .description = "non-moving mark-sweep in size-class blocks (Maas et al. 2012's CPU baseline)",
       .create = create_marksweep,
       .variant = marksweep_variant,
       .paper_configuration = marksweep_paper_configuration},
      {.name = "gpu",
       .description = "marksweep with the mark phase on an OpenCL device (Maas et al. 2012)",
       .create = create_gpu,
       .unavailable = gpu_unavailable,
       .options = gpu_option_table,
       .check_configuration = gpu_check_configuration,
       .variant = gpu_variant,
       .paper_configuration = gpu_paper_configuration},
      {.name = "accel",
       .description = "marksweep marked and swept by a simulated GC accelerator against an in-order CPU "
                      "(Maas et al. 2018)",
       .create = create_accel,
       .options = accel_option_table,
       .uses_gc_threads = false,
       .variant = accel_variant,
       .paper_configuration = accel_paper_configuration,
       .default_heap_bytes = kAccelPaperHeapBytes,
       .default_heap_reason = kAccelPaperHeapReason},
      {.name = "incremental",
       .description =
           "mark-sweep marked in steps between allocations or on GC threads beside the program, with a "
           "write barrier chosen by --barrier, and swept lazily (Dijkstra et al. 1978; paced as Lua 5.4)",
       .create = create_incremental,
       .options = incremental_option_table,
       .gc_threads_with = "--inc-mode=concurrent",
       .check_configuration = incremental_check_configuration,
       .variant = incremental_variant,
       .paper_configuration = incremental_paper_configuration},
      {.name = "cacheaware",
       .description =
           "mark-compact over partitions hosted by the cores of a mesh, marking by message passing "
           "(Zhou and Demsky)",
       .create = create_cacheaware,
       .options = cacheaware::cacheaware_option_table,
       .check_configuration = cacheaware::cacheaware_check_configuration,
       .variant = cacheaware::cacheaware_variant,
       .paper_configuration = cacheaware::cacheaware_paper_configuration},
      {.name = "none",
       .description = "never collects: bump allocation until the heap is exhausted, the baseline for "
                      "lower-bound overhead (OpenJDK's Epsilon, MMTk's NoGC)",
       .create = create_none,
       .uses_gc_threads = false,
       .collects = false},
      {.name = "template",
       .description = "the course's smallest mark-sweep: a starting point to change",
       .create = create_template,
       .uses_gc_threads = false},
  };
  return collectors;
}

uint64_t default_heap_bytes(const CollectorInfo& c) {
  return c.default_heap_bytes ? c.default_heap_bytes : usual_max_heap_bytes();
}

const CollectorInfo* find_collector(const std::string& name) {
  for (const CollectorInfo& info : registered_collectors())
    if (name == info.name) return &info;
  return nullptr;
}

std::optional<Variant> variant_of(const CollectorInfo& info, const HeapOptions& options) {
  if (!info.variant) return std::nullopt;
  return info.variant(options);
}

std::optional<Variant> variant_of(const Collector& heap) {
  const CollectorInfo* info = find_collector(heap.name());
  if (!info) return std::nullopt;
  return variant_of(*info, heap.options());
}

std::string variant_line(const std::optional<Variant>& variant) {
  if (!variant) return "implements no paper";
  if (variant->departures.empty()) return variant->name + ": the paper's configuration";
  std::string line = variant->name + ": departures from the paper: ";
  for (size_t k = 0; k < variant->departures.size(); ++k) line += (k ? "; " : "") + variant->departures[k];
  return line;
}

std::string options_text(const OptionValues& values) {
  if (values.empty()) return "the defaults";
  std::string text;
  for (const auto& [name, value] : values) text += (text.empty() ? "--" : " --") + name + "=" + value;
  return text;
}

}  // namespace gc
