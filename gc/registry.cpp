// The registry: one line per collector (docs/architecture.md, "Adding a
// collector": a new collector is one folder under gc/collectors/ plus one
// line here).
#include "gc/collector.h"
#include "gc/collectors/accel/accel.h"
#include "gc/collectors/accel/accel_options.h"
#include "gc/collectors/cacheaware/cacheaware.h"
#include "gc/collectors/cacheaware/cacheaware_options.h"
#include "gc/collectors/gpu/registration.h"
#include "gc/collectors/markcompact/markcompact.h"
#include "gc/collectors/markcompact/markcompact_options.h"
#include "gc/collectors/marksweep/marksweep.h"
#include "gc/collectors/semispace/semispace.h"
#include "gc/collectors/semispace/semispace_options.h"
#include "gc/collectors/template/template.h"

namespace gc {

const std::vector<CollectorInfo>& registered_collectors() {
  static const std::vector<CollectorInfo> collectors = {
      {"semispace",
       "parallel copying, pSemispaces (Flood et al. 2001); --gc-threads=0 runs its serial form, Cheney's "
       "collector",
       create_semispace, nullptr, semispace_option_table},
      {"markcompact",
       "generational: pSemispaces young generation, mark-compact old generation, strided card scanning "
       "(Flood et al. 2001)",
       create_markcompact, nullptr, markcompact_option_table},
      {"marksweep", "non-moving mark-sweep in size-class blocks (Maas et al. 2012's CPU baseline)",
       create_marksweep},
      {.name = "gpu",
       .description = "marksweep with the mark phase on an OpenCL device (Maas et al. 2012)",
       .create = create_gpu,
       .unavailable = gpu_unavailable,
       .options = gpu_option_table,
       .check_configuration = gpu_check_configuration},
      {.name = "accel",
       .description = "marksweep marked and swept by a simulated GC accelerator against an in-order CPU "
                      "(Maas et al. 2018)",
       .create = create_accel,
       .options = accel_option_table,
       .uses_gc_threads = false},
      {.name = "cacheaware",
       .description =
           "mark-compact over partitions hosted by the cores of a mesh, marking by message passing "
           "(Zhou and Demsky)",
       .create = create_cacheaware,
       .options = cacheaware::cacheaware_option_table,
       .check_configuration = cacheaware::cacheaware_check_configuration},
      {.name = "template",
       .description = "the course's smallest mark-sweep: a starting point to change",
       .create = create_template,
       .uses_gc_threads = false},
  };
  return collectors;
}

const CollectorInfo* find_collector(const std::string& name) {
  for (const CollectorInfo& info : registered_collectors())
    if (name == info.name) return &info;
  return nullptr;
}

}  // namespace gc
