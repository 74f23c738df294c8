// accel: Maas, Asanović and Kubiatowicz's hardware GC accelerator (ISCA
// 2018), as a cycle-approximate simulation that really collects
// (docs/collectors/accel.md). The plan composes the mark-sweep space
// (through MarkSweepHeap, as marksweep and gpu do) with the two units of
// the paper's Figure 5: the traversal unit marks the heap and the
// reclamation unit sweeps it, each over a memory model that times every
// request. Beside them, a model of the paper's in-order CPU replays the
// software mark and sweep on the same heap through the same kind of
// memory, so that every collection reports the unit's speedup as the paper
// does.
//
// A collection, in order (the paper's section IV-C, L222-231):
//   roots      the root set's references written to the hwgc-space
//   mark       the CPU's software mark (timed, its marks then cleared),
//              then the traversal unit's, which leaves the heap marked
//   sweep      the CPU's software sweep (timed, reading what the unit will
//              read), then the reclamation unit's, whose blocks the space's
//              sweep step frees as each one is done; large objects are the
//              runtime's
// unless, at the heap's limit, what is reachable already leaves no room for
// the allocation: then no unit runs and the allocation fails at once.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "gc/collectors/accel/accel_options.h"
#include "gc/collectors/accel/cpu_baseline.h"
#include "gc/collectors/accel/reclamation_unit.h"
#include "gc/plan/marksweep_heap.h"

namespace gc {

class AccelCollector final : public MarkSweepHeap {
 public:
  AccelCollector(RootSet& roots, const HeapOptions& options);
  const char* name() const override { return "accel"; }

 private:
  void mark() override;
  void sweep() override;
  uint64_t live_bytes_if_no_room(uint64_t request_bytes, bool large) override;
  // live_bytes_if_no_room's steps: the reachable objects' marks, set and
  // cleared again, and what they leave of the blocks.
  uint64_t mark_reachable();
  void clear_reachable_marks();
  template <class Visit>
  void traverse_reachable(Visit&& visit);
  struct BlocksAfterSweep {
    uint64_t in_use = 0;  // blocks holding a reachable cell
    uint64_t live_cell_bytes = 0;
    bool emptied = false;  // a committed block that will hold none
    bool free_cell_of_class = false;
  };
  BlocksAfterSweep blocks_after_sweep(unsigned size_class) const;
  std::unique_ptr<accel::MemoryModel> memory() const;
  void report_mark(const accel::TraversalStats& unit, const accel::MemoryModel& memory);
  void check_sweep(const accel::SweepBlock& swept, const MarkSweepSpace::Block& after,
                   std::span<const uint32_t> linked) const;
  void describe_events();
  void add_panels();

  AccelOptions knobs_;
  accel::CpuBaseline cpu_;         // kept: its caches are emptied, not rebuilt, for each run
  std::vector<Word*> hwgc_space_;  // this collection's roots, as the unit reads them
};

std::unique_ptr<Collector> create_accel(RootSet& roots, const HeapOptions& options);

}  // namespace gc
