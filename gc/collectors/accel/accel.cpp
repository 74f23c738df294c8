#include "gc/collectors/accel/accel.h"

#include <cstdio>
#include <cstdlib>

#include "gc/collectors/accel/cpu_baseline.h"
#include "gc/collectors/accel/reclamation_unit.h"
#include "gc/collectors/accel/traversal_unit.h"
#include "gc/verify/verifier.h"

namespace gc {

namespace {

constexpr observe::Counter kAccelMarkCycles{"accel mark cycles", observe::Unit::kCycles};
constexpr observe::Counter kAccelSweepCycles{"accel sweep cycles", observe::Unit::kCycles};
// Mark and sweep together, for the overall speedup.
constexpr observe::Counter kAccelCycles{"accel cycles", observe::Unit::kCycles};
constexpr observe::Counter kCpuMarkCycles{"cpu mark cycles", observe::Unit::kCycles};
constexpr observe::Counter kCpuSweepCycles{"cpu sweep cycles", observe::Unit::kCycles};
// Mark and sweep together, for the overall speedup.
constexpr observe::Counter kCpuCycles{"cpu cycles", observe::Unit::kCycles};
constexpr observe::Counter kAccelBytesMoved{"accel bytes moved", observe::Unit::kBytes};
constexpr observe::Counter kAccelSpilledBytes{"accel spilled bytes", observe::Unit::kBytes};
constexpr observe::Counter kAccelSpillPeak{"accel spill peak", observe::Unit::kBytes,
                                           observe::CounterKind::kPeak};
constexpr observe::Counter kAccelSpillBeyondRegion{"accel spill beyond region", observe::Unit::kBytes,
                                                   observe::CounterKind::kPeak};
// The simulation's own cost on this machine, each part apart.
constexpr observe::Counter kHostNsCpuMark{"host ns: cpu mark", observe::Unit::kNs};
constexpr observe::Counter kHostNsAccelMark{"host ns: accel mark", observe::Unit::kNs};
constexpr observe::Counter kHostNsCpuSweep{"host ns: cpu sweep", observe::Unit::kNs};
constexpr observe::Counter kHostNsAccelSweep{"host ns: accel sweep", observe::Unit::kNs};
constexpr observe::Counter kAccelObjectsMarked{"accel objects marked", observe::Unit::kObjects};
constexpr observe::Counter kAccelMarkCacheHits{"accel mark-cache hits", observe::Unit::kObjects};
constexpr observe::Counter kAccelAlreadyMarked{"accel already marked", observe::Unit::kObjects};
constexpr observe::Counter kAccelTlbMisses{"accel TLB misses", observe::Unit::kLookups};
constexpr observe::Counter kAccelPageWalks{"accel page walks", observe::Unit::kLookups};
constexpr observe::Counter kAccelWalkerCacheHits{"accel walker cache hits", observe::Unit::kLookups};
constexpr observe::Counter kAccelDramRowHits{"accel DRAM row hits", observe::Unit::kCommands};
constexpr observe::Counter kAccelDramActivations{"accel DRAM activations", observe::Unit::kCommands};
constexpr observe::Counter kAccelQueuePeak{"accel queue peak", observe::Unit::kEntries,
                                           observe::CounterKind::kPeak};
constexpr observe::Counter kAccelTracerThrottledCycles{"accel tracer throttled cycles",
                                                       observe::Unit::kCycles};
constexpr observe::Counter kAccelPortBusyCycles{"accel port busy cycles", observe::Unit::kCycles};
constexpr observe::Counter kAccelSampleCycles{"accel sample cycles", observe::Unit::kCycles,
                                              observe::CounterKind::kPeak};  // an interval
constexpr observe::Sequence kAccelMarkBandwidth{"accel mark bandwidth"};
constexpr observe::Sequence kAccelQueueOccupancy{"accel queue occupancy"};

// The spill region's simulated physical address: above user space, apart
// from the page table and the block list.
constexpr uint64_t kSpillBase = uint64_t{9} << 44;

constexpr observe::Counter kRequestCounters[accel::kSourceCount] = {
    {"accel requests: marker", observe::Unit::kRequests},
    {"accel requests: tracer", observe::Unit::kRequests},
    {"accel requests: spill", observe::Unit::kRequests},
    {"accel requests: sweeper", observe::Unit::kRequests},
    {"accel requests: page walker", observe::Unit::kRequests},
    {"cpu requests", observe::Unit::kRequests}};
constexpr const observe::Counter& kCpuRequests = kRequestCounters[static_cast<unsigned>(accel::Source::kCpu)];

}  // namespace

AccelCollector::AccelCollector(RootSet& roots, const HeapOptions& options)
    : MarkSweepHeap(roots, options), knobs_(accel_options(options_)), cpu_(knobs_.cpu) {
  knobs_.traversal.queue.spill_base = kSpillBase;
  knobs_.reclamation.record_links = options_.verify;
  describe_events();
}

void AccelCollector::describe_events() {
  events.describe_ratio({"mark speedup", &kCpuMarkCycles, &kAccelMarkCycles});
  events.describe_ratio({"sweep speedup", &kCpuSweepCycles, &kAccelSweepCycles});
  events.describe_ratio({"speedup", &kCpuCycles, &kAccelCycles});
  add_panels();
}

// The report's accel panels: the speedups, where the requests came from,
// and one collection's mark as it went (bandwidth, queue occupancy).
void AccelCollector::add_panels() {
  using observe::PanelSeries;
  events.add_panel({"Speedup over the in-order CPU",
                    "CPU cycles / unit cycles",
                    "Each collection's simulated CPU cycles over the unit's, for the mark and the sweep "
                    "(the paper: 4.2x and 1.9x with DRAM). Bars at 0: the CPU's replay was off "
                    "(--accel-baseline).",
                    {PanelSeries{"mark", &kCpuMarkCycles, &kAccelMarkCycles, 1},
                     PanelSeries{"sweep", &kCpuSweepCycles, &kAccelSweepCycles, 1}}});
  std::vector<PanelSeries> sources;
  for (unsigned src = 0; src + 1 < accel::kSourceCount; ++src)
    sources.push_back(
        PanelSeries{accel::source_name(static_cast<accel::Source>(src)), &kRequestCounters[src], nullptr, 1});
  events.add_panel({"Memory requests by source", "requests",
                    "The unit's requests in each collection, by who sent them: the marker's header reads "
                    "and write-backs, the tracer's reference reads (and the root reader's), the mark "
                    "queue's spills, the sweepers' and the page-table walker's.",
                    std::move(sources)});
  events.add_sequence_panel({"Memory bandwidth over the mark",
                             "64-byte lines per 1,000 cycles",
                             "The traversal unit's memory requests (each at most one line) over one "
                             "collection's mark. DDR3-2000's data bus carries at most 250 lines per 1,000 "
                             "cycles; a mark that stays far below it is latency bound.",
                             &kAccelMarkBandwidth,
                             "cycle of the mark",
                             {},
                             &kAccelSampleCycles});
  events.add_sequence_panel({"Mark queue occupancy over the mark",
                             "entries in Q",
                             "How full the mark queue was over one collection's mark. At the top (its "
                             "size, --accel-queue), references spill to memory through outQ.",
                             &kAccelQueueOccupancy,
                             "cycle of the mark",
                             {},
                             &kAccelSampleCycles});
}

std::unique_ptr<accel::MemoryModel> AccelCollector::memory() const {
  if (knobs_.ideal_memory) return std::make_unique<accel::IdealPipe>(knobs_.pipe);
  return std::make_unique<accel::DramModel>(knobs_.dram);
}

// The roots go to the hwgc-space; the CPU's mark is timed and undone; the
// traversal unit marks.
void AccelCollector::mark() {
  hwgc_space_.clear();
  for (const RootGroup& g : gather_roots())
    for (size_t i = 0; i < g.count; ++i)
      if (g.slots[i].is_ref()) hwgc_space_.push_back(g.slots[i].as_ref());
  std::span<Word* const> roots(hwgc_space_);
  if (knobs_.baseline) {
    int64_t host_start = events.now_ns();
    auto memory_model = memory();
    cpu_.start(*memory_model);
    std::vector<Word*> marked;
    accel::Cycle cycles = cpu_.mark(roots, marked);
    events.count(0, kCpuMarkCycles, cycles);
    events.count(0, kCpuCycles, cycles);
    events.count(0, kCpuRequests, memory_model->submitted());
    for (Word* h : marked) MarkSweepSpace::clear_mark(h);
    events.count(0, kHostNsCpuMark, static_cast<uint64_t>(events.now_ns() - host_start));
  }
  int64_t host_start = events.now_ns();
  auto memory_model = memory();
  accel::TraversalUnit unit(knobs_.traversal, *memory_model);
  unit.run(roots, 0);
  events.count(0, kHostNsAccelMark, static_cast<uint64_t>(events.now_ns() - host_start));
  events.simulated_phase(0, "mark", accel::simulated_ns(unit.stats().cycles));
  report_mark(unit.stats(), *memory_model);
}

void AccelCollector::report_mark(const accel::TraversalStats& s, const accel::MemoryModel& m) {
  events.count(0, kAccelMarkCycles, s.cycles);
  events.count(0, kAccelCycles, s.cycles);
  const accel::MemoryStats& ms = m.stats();
  for (unsigned src = 0; src + 1 < accel::kSourceCount; ++src)
    if (ms.requests[src]) events.count(0, kRequestCounters[src], ms.requests[src]);
  uint64_t bytes = 0;
  for (uint64_t b : ms.bytes) bytes += b;
  events.count(0, kAccelBytesMoved, bytes);
  events.count(0, kAccelSpilledBytes, s.queue.spilled_entries * (knobs_.traversal.queue.compressed ? 4 : 8));
  events.count(0, kAccelObjectsMarked, s.marker.objects_marked);
  events.count(0, kAccelAlreadyMarked, s.marker.already_marked);
  events.count(0, kAccelMarkCacheHits, s.marker.mark_cache_hits);
  events.count(0, kAccelTlbMisses, s.translation.l1_misses[0] + s.translation.l1_misses[1]);
  events.count(0, kAccelPageWalks, s.translation.walks);
  events.count(0, kAccelWalkerCacheHits, s.translation.walker_cache_hits);
  events.count(0, kAccelDramRowHits, ms.row_hits);
  events.count(0, kAccelDramActivations, ms.activations());
  events.count(0, kAccelQueuePeak, s.queue.peak_occupancy);
  events.count(0, kAccelSpillPeak, s.queue.spill_peak_bytes);
  // The paper's static region (L279); a mark that needs more goes on, as a
  // full implementation would, and says by how much.
  uint64_t region = knobs_.traversal.queue.spill_bytes;
  events.count(0, kAccelSpillBeyondRegion,
               s.queue.spill_peak_bytes > region ? s.queue.spill_peak_bytes - region : 0);
  events.count(0, kAccelTracerThrottledCycles, s.tracer.throttled_cycles);
  events.count(0, kAccelPortBusyCycles, s.port_busy_cycles);
  events.count(0, kAccelSampleCycles, s.sample_interval);
  events.sequence(0, kAccelMarkBandwidth, s.bandwidth);
  events.sequence(0, kAccelQueueOccupancy, s.occupancy);
}

// A collection at the heap's limit may be unable to make room, and then its
// simulation would only delay the out-of-memory answer (by minutes on a heap
// of gigabytes). Whether it can follows from the reachable objects alone,
// whatever the units' timing: the sweep frees every cell they do not hold
// and empties every block in which they hold none. A cell then fits in a
// free cell of its class, an empty block, or a block more under --heap; a
// large object's pages fit beside the blocks and pages still in use.
uint64_t AccelCollector::live_bytes_if_no_room(uint64_t request_bytes, bool large) {
  const MarkSweepSpace& s = space();
  // While the heap may grow by what the allocation needs, the collection is
  // the trigger's.
  uint64_t growth = large ? request_bytes : marksweep::kBlockBytes;
  if (s.size_bytes() + growth <= s.max_heap_bytes()) return 0;
  uint64_t large_bytes = mark_reachable();
  unsigned size_class =
      large ? marksweep::kSizeClasses : marksweep::kSizeClassOfWords[request_bytes / kWordSize];
  BlocksAfterSweep blocks = blocks_after_sweep(size_class);
  clear_reachable_marks();
  uint64_t in_use = blocks.in_use * marksweep::kBlockBytes + large_bytes;
  bool room =
      in_use + growth <= s.max_heap_bytes() || (!large && (blocks.emptied || blocks.free_cell_of_class));
  if (room) return 0;
  events.ergonomics("not simulated: the reachable objects leave no room for the allocation under --heap");
  return blocks.live_cell_bytes + large_bytes;
}

// Marks every object reachable from the roots, depth first; returns the
// pages of the large objects among them, in bytes.
uint64_t AccelCollector::mark_reachable() {
  const MarkSweepSpace& s = space();
  uint64_t large_bytes = 0;
  traverse_reachable([&](Word* h) {
    if (!MarkSweepSpace::set_mark(h)) return false;
    if (!s.block_containing(h)) large_bytes += LargeObjectSpace::pages_for(object_words(*h)) * kPageBytes;
    return true;
  });
  return large_bytes;
}

// The same traversal, unmarking: the heap is as it was, and no list of the
// marked (as long as the heap) was kept.
void AccelCollector::clear_reachable_marks() {
  traverse_reachable([](Word* h) {
    if (!MarkSweepSpace::is_marked(h)) return false;
    MarkSweepSpace::clear_mark(h);
    return true;
  });
}

// From the roots, depth first, into the objects for which visit is true.
template <class Visit>
void AccelCollector::traverse_reachable(Visit&& visit) {
  std::vector<Word*> grey;
  auto reach = [&](Value v) {
    if (v.is_ref() && visit(v.as_ref()) && Header::nrefs(*v.as_ref())) grey.push_back(v.as_ref());
  };
  for (const RootGroup& g : gather_roots())
    for (size_t i = 0; i < g.count; ++i) reach(g.slots[i]);
  while (!grey.empty()) {
    Word* h = grey.back();
    grey.pop_back();
    for (uint64_t i = 0, n = Header::nrefs(*h); i < n; ++i) reach(ref_slot(h, i));
  }
}

// The blocks as the sweep will leave them, from the marks alone.
AccelCollector::BlocksAfterSweep AccelCollector::blocks_after_sweep(unsigned size_class) const {
  BlocksAfterSweep out;
  for (const MarkSweepSpace::Block& b : space().blocks()) {
    if (!b.committed) continue;
    uint64_t live = 0;
    if (!b.empty())
      for (Word* cell = b.begin; cell < b.cells_end(); cell += b.cell_words)
        if ((*cell & Header::kTagMask) != 0 && MarkSweepSpace::is_marked(header_from_start(cell))) live++;
    if (live == 0) out.emptied = true;
    if (live) out.in_use++;
    if (b.size_class == size_class && live < b.cells) out.free_cell_of_class = true;
    out.live_cell_bytes += live * b.cell_words * kWordSize;
  }
  return out;
}

// The CPU's sweep is timed on the heap as marked; then the reclamation
// unit sweeps, and each block it finishes is freed by the space's own step.
void AccelCollector::sweep() {
  MarkSweepSpace& space = mutable_space();
  std::vector<accel::SweepBlock> blocks;
  std::vector<size_t> index;
  const std::vector<MarkSweepSpace::Block>& all = space.blocks();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].empty()) continue;
    blocks.push_back(accel::SweepBlock{all[i].begin, all[i].cell_words, all[i].cells});
    index.push_back(i);
  }
  if (knobs_.baseline) {
    int64_t host_start = events.now_ns();
    auto memory_model = memory();
    cpu_.start(*memory_model);
    accel::Cycle cycles = cpu_.sweep(blocks);
    events.count(0, kCpuSweepCycles, cycles);
    events.count(0, kCpuCycles, cycles);
    events.count(0, kCpuRequests, memory_model->submitted());
    events.count(0, kHostNsCpuSweep, static_cast<uint64_t>(events.now_ns() - host_start));
  }
  int64_t host_start = events.now_ns();
  auto memory_model = memory();
  accel::ReclamationUnit unit(knobs_.reclamation, *memory_model);
  std::vector<MarkSweepSpace::SweepTally> tallies(1);
  // The unit's block sweepers free what the software sweep frees, and a
  // recorded collection (--gc-animate) sees them as the device's steps.
  tallies[0].worker = observe::Recording::kDevice;
  tallies[0].recording = observe::Recording::active();
  unit.run(blocks, 0, [&](size_t i, std::span<const uint32_t> linked) {
    space.sweep_block(index[i], tallies[0]);
    if (options_.verify) check_sweep(blocks[i], all[index[i]], linked);
  });
  events.count(0, kHostNsAccelSweep, static_cast<uint64_t>(events.now_ns() - host_start));
  events.simulated_phase(0, "sweep", accel::simulated_ns(unit.stats().cycles));
  events.count(0, kAccelSweepCycles, unit.stats().cycles);
  events.count(0, kAccelCycles, unit.stats().cycles);
  events.count(0, kRequestCounters[static_cast<unsigned>(accel::Source::kSweeper)],
               memory_model->submitted());
  events.count(0, kBlocksSwept, tallies[0].blocks);
  events.count(0, kCellsFreed, tallies[0].freed_cells);
  space.sweep_large_objects();
  space.account_sweep(tallies);
}

// --gc-verify: the unit's timing model must have freed what the software
// sweep freed, or its cycles time a different sweep.
void AccelCollector::check_sweep(const accel::SweepBlock& swept, const MarkSweepSpace::Block& after,
                                 std::span<const uint32_t> linked) const {
  std::string why = accel::sweep_disagreement(swept, linked, after.free_list, after.empty());
  if (why.empty()) return;
  std::fprintf(stderr,
               "vm: --gc-verify: GC(%llu): the reclamation unit and the software sweep disagree on the "
               "block at %p: %s\n",
               static_cast<unsigned long long>(events.current_collection()), static_cast<void*>(swept.begin),
               why.c_str());
  std::fflush(stderr);
  std::_Exit(kExitVerifyFailure);
}

std::unique_ptr<Collector> create_accel(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<AccelCollector>(roots, options);
}

}  // namespace gc
