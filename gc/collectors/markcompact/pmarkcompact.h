// pMarkcompact (Flood, Detlefs, Shavit and Zhang 2001, section 5): the
// parallel mark-compact collector of the old generation. The plan
// (markcompact.h) calls ParallelMarkCompact::collect for every full
// collection; the engine runs the paper's four phases, each on every GC
// thread of the plan's WorkerPool, in the paper's order:
//
//   mark       the shared parallel tracer (tracer.h; sections 3.1-3.4,
//              5.1); mark bits set without synchronisation (L194, footnote
//              5); young and large objects are marked and traced, not moved.
//   sweep      pass A of section 5.2 (L198-200): the old space is divided
//              into m = units_per_thread * n units whose boundaries are
//              object starts; threads claim units, count their live words
//              and coalesce each run of dead objects into one filler that a
//              walk skips in constant time.
//   (serial)   the dense prefix (below), then n regions of equal live data,
//              unit aligned (L200-204), and each unit's destination: the live
//              words of the earlier units of its region, in the region's
//              compaction order.
//   forward    pass B (L204): threads claim units and install a forwarding
//              address in every live object that moves.
//   redirect   section 5.3: root groups, the old space by units, the young
//              spaces in several chunks (the paper scanned the young
//              generation as one task), large objects; every reference to a
//              moved object is updated from its forwarding address.
//   compact    section 5.4: one region per thread; even regions slide down,
//              odd regions slide up, leaving floor((n + 1) / 2) free areas
//              (L188, Figure 2).
//
// The dense prefix, which the paper's parallel collector lacked (L259):
// the leading units each at least dense_prefix_min_live live stay where
// they are, and so does each region's dense end, the dense units at the end
// it slides towards.
//
// The header word has no room for the forwarding address (layout.h): a
// moving object's header waits in its count word or, without references,
// in a per-unit side list. A hashed object grows a word when it moves, so
// pass A summarises each unit's effect on the gap as a function
// g -> max(g + a, b) (GapFn). Both are explained in
// docs/collectors/markcompact.md, "Sweep and forwarding".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/markcompact/markcompact_options.h"
#include "gc/layout.h"
#include "gc/observe/recorder.h"
#include "gc/parallel/overflow_set.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/termination.h"
#include "gc/parallel/tracer.h"
#include "gc/parallel/worker_pool.h"
#include "gc/parallel/worker_stats.h"
#include "gc/spaces/large_object_space.h"

namespace gc {

// The old generation's counters, the serial and the parallel compactor's
// alike; the peaks are the old generation as compaction leaves it, levels,
// not amounts that add up.
inline constexpr observe::Counter kLargeBytesFreed{"large bytes freed", observe::Unit::kBytes};
inline constexpr observe::Counter kOldLiveBytes{"old live bytes", observe::Unit::kBytes,
                                                observe::CounterKind::kPeak};
inline constexpr observe::Counter kDensePrefixDeadBytes{"dense prefix dead bytes", observe::Unit::kBytes,
                                                        observe::CounterKind::kPeak};
inline constexpr observe::Counter kFreeAreas{"free areas", observe::Unit::kAreas,
                                             observe::CounterKind::kPeak};

struct WordRange {
  Word* begin = nullptr;
  Word* end = nullptr;
  uint64_t words() const { return static_cast<uint64_t>(end - begin); }
  bool empty() const { return begin == end; }
};

class ParallelMarkCompact {
 public:
  struct Input {
    RootSet& roots;
    // The old space: objects end to end (walkable) from begin to top.
    WordRange old_space;
    // Young spaces, each walkable from begin to end: their objects are
    // marked, traced and redirected, never moved.
    std::span<const WordRange> young_spaces;
    LargeObjectSpace& large;
    // The identity hash of an object hashed at its address (kHashed), for
    // the word it grows when it moves.
    std::function<uint64_t(const Word* header)> hash_of_address;
    // The biased card table (Collector::card_base), or nullptr. When set,
    // the old space's cards are rebuilt: cleaned, then dirtied where a
    // moved slot holds a young reference. Large objects' are left alone.
    uint8_t* card_base = nullptr;
    // Called in parallel, on the GC thread that finished it, for each
    // walkable occupied run of the old space after compaction (the plan
    // rebuilds its card offset table here).
    std::function<void(unsigned worker, Word* begin, Word* end)> on_occupied_run;
  };

  struct Result {
    // [old_space.begin, dense_prefix_end) was not moved.
    Word* dense_prefix_end = nullptr;
    // Ascending and disjoint, alternating over the whole old space; free
    // areas are formatted as fillers.
    std::vector<WordRange> occupied;
    std::vector<WordRange> free_areas;
    uint64_t old_live_bytes = 0;        // in the old space after compaction (grown hashes included)
    uint64_t prefix_dead_bytes = 0;     // fillers left in the dense prefix
    uint64_t dense_end_dead_bytes = 0;  // fillers left in the regions' dense ends
    uint64_t bytes_moved = 0;           // objects whose address changed
    uint64_t objects_moved = 0;
    uint64_t large_freed_bytes = 0;
  };

  // What the last collection measured (also sent to the Recorder).
  struct Report {
    unsigned threads = 0;
    std::vector<WordRange> units;             // object aligned
    std::vector<uint64_t> unit_live_bytes;    // before compaction
    std::vector<WordRange> regions;           // after the dense prefix
    std::vector<uint64_t> region_live_bytes;  // after compaction
    unsigned dense_prefix_units = 0;
    unsigned dense_end_units = 0;           // dense units at the ends regions slide towards
    uint64_t dense_prefix_decision_ns = 0;  // deciding the prefix and the regions
    // Per phase (kPhaseNames), per worker: time spent in the phase.
    std::vector<uint64_t> phase_ns[5];
  };
  static constexpr const char* kPhaseNames[5] = {"mark", "sweep", "forward", "redirect", "compact"};

  ParallelMarkCompact(parallel::WorkerPool& pool, observe::Recorder& events,
                      const MarkCompactOptions& options);
  ~ParallelMarkCompact();
  ParallelMarkCompact(const ParallelMarkCompact&) = delete;
  ParallelMarkCompact& operator=(const ParallelMarkCompact&) = delete;

  // One full collection of the old space, every space walkable (the
  // caller retired the allocation buffers), weak references and large
  // objects included. Returns the new shape of the old space.
  Result collect(const Input& in);

  const Report& last_report() const { return report_; }
  const MarkCompactOptions& options() const { return options_; }
  unsigned threads() const { return pool_.size(); }
  // Per GC thread, summed over all collections.
  const std::vector<parallel::WorkerStats>& worker_stats() const { return worker_totals_; }

 private:
  class Worker;
  struct Unit;
  struct Region;
  struct Space;
  friend class Worker;

  // --- one collection, in order
  void set_up(const Input& in);
  void combine_unit_starts();
  bool is_dense(const Unit& u) const;
  void choose_dense_prefix();
  void partition_regions();
  void compute_destinations();
  void process_weak(RootSet& roots);
  void build_redirect_tasks();
  void finish(Result& out);

  // --- finish, in order
  struct DenseParts {
    Word* prefix_end = nullptr;
    unsigned end_units = 0;  // dense units at the ends regions slide towards
    uint64_t end_words = 0;
    std::vector<uint64_t> region_dead_words;  // per region, in its dense end
  };
  DenseParts measure_dense_parts(Result& out) const;
  void lay_out_free_areas(Result& out) const;
  void add_worker_stats(Result& out);
  void record_report(const DenseParts& dense);
  void report_collection(const Result& out, const DenseParts& dense);
  void run_phase(unsigned index, void (Worker::*phase)());
  void report_counters();

  parallel::WorkerPool& pool_;
  observe::Recorder& events_;
  MarkCompactOptions options_;
  const Input* in_ = nullptr;

  std::vector<std::unique_ptr<parallel::TaskDeque>> deques_;
  parallel::OverflowSet overflow_;
  parallel::Termination termination_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<parallel::WorkerStats> worker_totals_;

  std::vector<RootGroup> root_groups_;
  parallel::RootClaim mark_roots_;  // root_groups_, claimed by the mark phase
  std::vector<Space> spaces_;       // old space first, then the young spaces
  std::vector<Unit> units_;         // old units, then young chunks
  unsigned old_units_ = 0;
  unsigned dense_prefix_units_ = 0;
  std::vector<Region> regions_;
  // Headers of moved objects without references, per unit in address order.
  std::vector<std::vector<Word>> side_headers_;
  std::vector<uint32_t> redirect_tasks_;  // encoded (kind, index)
  std::atomic<size_t> next_claim_{0};
  Report report_;
  // Numbered counters ("unit 3 live bytes"), made as units and regions
  // appear, each where the Recorder's pointer to it stays valid.
  struct NumberedCounter {
    std::string name;
    observe::Counter counter{};
  };
  std::vector<std::unique_ptr<NumberedCounter>> numbered_counters_;
};

}  // namespace gc
