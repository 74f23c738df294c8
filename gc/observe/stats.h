// The end-of-run summary (--gc-stats, gc_stats(), the REPL's :stats) and
// its two forms, a table and JSON (schema: docs/gc-stats.schema.json).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/observe/mmu.h"

namespace gc::observe {

// One phase at one place in the nesting (PhaseRecord): a phase run both
// at the top level and inside another has an entry for each.
struct PhaseTotal {
  std::string name;
  int parent = -1;           // index into Summary::phases of the enclosing phase; -1: top level
  unsigned depth = 0;        // 0: top level
  uint64_t collections = 0;  // collections in which the phase ran
  double work_ms = 0;        // summed over workers
  double wall_ms = 0;        // per collection the union of its spans on all workers, summed
  double max_wall_ms = 0;    // the longest in one collection
  // Its part of the pauses: each instant of a pause goes to the phases
  // running then beside it under the same parent (on any worker), in equal
  // parts, so that the top-level phases add up to at most the pause total
  // and a nested phase's part is within its parent's wall time.
  double pause_ms = 0;
};

struct WorkerTotal {
  unsigned worker = 0;
  double busy_ms = 0;  // union of the worker's phases
  double idle_ms = 0;  // pause time the worker spent outside any phase
  std::vector<std::pair<std::string, uint64_t>> counters;
};

struct CounterTotal {
  std::string name;
  std::string unit;
  CounterKind kind = CounterKind::kSum;
  uint64_t total = 0;  // over the run: the sum, or for a peak the largest collection's (CounterKind)
  double mean_per_collection = 0;
  uint64_t max_per_collection = 0;
};

// A sequence (Recorder::sequence) over the run.
struct SequenceTotal {
  std::string name;
  uint64_t collections = 0;  // collections that recorded it
  double mean_length = 0;
  uint64_t max_length = 0;
  double mean_value = 0;
  uint64_t max_value = 0;
};

// A ratio the collector described (Recorder::describe_ratio).
struct RatioTotal {
  std::string name;
  std::string numerator;
  std::string denominator;
  uint64_t collections = 0;  // collections with a nonzero denominator
  double run = 0;            // the numerator's total over the denominator's
  double min_per_collection = 0;
  double max_per_collection = 0;
};

struct Summary {
  std::string collector;
  std::optional<Variant> variant;  // none: the collector implements no paper
  unsigned gc_threads = 0;         // the GC threads in use; 0: serial, on the collecting thread
  bool detailed = false;           // phases, workers and counters are known
  bool percentiles_exact = false;  // else from the log-scale histogram (within 4.4%)
  double run_time_ms = 0;
  uint64_t collections = 0;
  uint64_t young = 0;
  uint64_t full = 0;
  uint64_t increments = 0;  // pauses of incremental work (CollectionKind::kIncrement)
  std::vector<std::pair<std::string, uint64_t>> by_cause;
  uint64_t ignored_requests = 0;  // collections asked for and not made (none)
  double pause_total_ms = 0, pause_mean_ms = 0, pause_p50_ms = 0, pause_p90_ms = 0, pause_p99_ms = 0,
         pause_max_ms = 0;
  double gc_share = 0;  // the collections' host time / run time, 0..1
  // Collections whose pause was modelled (Recorder::simulated_phase): the
  // pause figures are then simulated time, and host_pause_total_ms is the
  // host's time for every collection.
  uint64_t simulated_collections = 0;
  double host_pause_total_ms = 0;
  // CPU time in ms (Recorder::cpu_times): the mutator's, the collector's
  // on the program's thread and on its GC threads, the other threads'.
  double mutator_cpu_ms = 0, collecting_thread_cpu_ms = 0, gc_threads_cpu_ms = 0, other_threads_cpu_ms = 0,
         process_cpu_ms = 0;
  double collector_cpu_ms() const { return collecting_thread_cpu_ms + gc_threads_cpu_ms; }
  uint64_t bytes_allocated = 0;
  double allocation_rate_mb_s = 0;  // MiB per second of run time
  uint64_t bytes_copied = 0;
  uint64_t peak_heap = 0;
  uint64_t peak_live = 0;
  uint64_t heap_size = 0;
  uint64_t heap_used = 0;
  std::vector<PhaseTotal> phases;  // in tree order: each phase followed by those nested in it
  std::vector<WorkerTotal> workers;
  double balance = 1;  // max busy / mean busy over the workers (1: perfect)
  std::vector<CounterTotal> counters;
  std::vector<SequenceTotal> sequences;
  std::vector<RatioTotal> ratios;
  // Minimum mutator utilisation (mmu.h) at the windows kMmuWindowsMs that
  // the run is as long as, each with the collections its worst window
  // holds; and the curve, for the report. Known when detailed.
  struct Utilisation {
    double window_ms = 0;
    double mmu = 1;
    double worst_start_ms = 0;
    std::vector<uint64_t> worst_collections;  // their GC(id)s
    // What filled the worst window: the top-level phases, each its share
    // of the window's paused time (as % pause shares it), in the order they
    // first ran, and the paused time there outside any phase.
    std::vector<std::pair<std::string, double>> worst_phases_ms;
    double worst_outside_phases_ms = 0;
  };
  std::vector<Utilisation> mmu;
  std::vector<UtilisationPoint> mmu_curve;
  // --heap=Nx: the limit as a multiple of a reference collector's minimum
  // heap, which the VM found before the run (the collector knows only the
  // limit; the VM sets this).
  struct HeapLimit {
    uint64_t bytes = 0;
    double multiple = 0;
    std::string reference;
    uint64_t reference_min_bytes = 0;
  };
  std::optional<HeapLimit> heap_limit;
};

// The windows --gc-stats gives MMU at.
constexpr double kMmuWindowsMs[] = {1, 10, 100};
// The points of the MMU curve, log-spaced from the shortest pause to the run.
constexpr unsigned kMmuCurvePoints = 40;

Summary summarize(Collector& heap);
// A percentile (0..100) of the recorded pauses, nearest rank.
double percentile(std::vector<double> sorted_values, double p);

std::string stats_table(const Summary& s);
std::string stats_json(const Summary& s);

}  // namespace gc::observe
