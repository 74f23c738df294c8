#include "gc/collectors/marksweep/marksweep.h"

namespace gc {

MarkSweep::MarkSweep(RootSet& roots, const HeapOptions& options)
    : MarkSweepHeap(roots, options), cpu_(options_, pool(), worker_totals(), events) {}

void MarkSweep::mark() { cpu_.mark_from_roots(gather_roots()); }

Variant marksweep_variant(const HeapOptions&) {
  return {"the CPU mark-sweep of Maas et al. 2012 and 2018", {}};
}

OptionValues marksweep_paper_configuration(const HeapOptions&) { return {}; }

std::unique_ptr<Collector> create_marksweep(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<MarkSweep>(roots, options);
}

}  // namespace gc
