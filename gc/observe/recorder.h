// The observability interface (docs/observability.md, "For collector writers:
// the event interface").
//
// Every collector feeds one Recorder (Collector::events) with a few events:
//
//   collection_start(kind, cause, heap)   on the mutator thread, first thing
//   phase(worker, "name", body)          on the worker's own thread
//   count(worker, kCounter, delta)        on the worker's own thread
//   collection_end(heap)                  on the mutator thread, after every
//                                         worker has finished
//   collection_ignored(cause)             a request a collector that never
//                                         collects (none) did not carry out
//   simulated_phase(worker, "name", ns)   a phase of a modelled pause (accel)
//   sequence(worker, kSequence, values)   numbers for this collection (e.g.
//                                         the GPU's queue width per iteration)
//   add_panel, add_sequence_panel         once, at construction: pictures of
//                                         the collector's own for --gc-report
//   describe_ratio                        once, at construction: a ratio of
//                                         two counters the summaries show
//
// and everything a user sees (--gc-log, --gc-stats, --gc-trace,
// --gc-report, gc_stats(), the REPL) is made from what it keeps.
//
// Cost when nothing is enabled: phase and counter events are one inlined
// test of enabled(); collection start and end keep an always-on summary
// without allocating (counts by kind and cause, pause total and maximum,
// peak sizes, a log-scale pause histogram for percentiles). When enabled,
// each worker appends to its own cache-line-aligned buffer, without a lock,
// and collection_end merges the buffers into per-collection records. Names
// are string literals and declared counters (counter.h), interned only at
// the merge.
//
// Rules for collectors: phases on one worker nest or follow each other
// (never interleave), and a nested phase is its parent's part (PhaseRecord);
// counters in per-object loops are accumulated in a
// local and reported once per phase.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gc/observe/counter.h"

namespace gc {
enum class GcCause;
class Collector;
}  // namespace gc

namespace gc::observe {

// kIncrement: a pause that does part of a collection cycle the program runs
// between (a step of incremental marking or sweeping, or the cycle's atomic
// phase); the cycle itself is no pause of its own.
enum class CollectionKind : uint8_t { kYoung, kFull, kIncrement };
// "Young", "Full" (the JDK's words), "Increment"
const char* kind_name(CollectionKind kind);

// The parts of a cycle that spans many pauses.
enum class CyclePart : uint8_t { kMarking, kSweeping, kIdle };
struct CycleEvent {
  CyclePart entered;
  std::string text;
};

// One space of the heap as the heap map shows it (Collector::describe_spaces).
struct SpaceUsage {
  std::string name;             // e.g. "semispace-A"
  std::string role;             // e.g. "to-space (allocation)", "from-space (empty)"
  uint64_t capacity_bytes = 0;  // the part the sizing policy lets be used
  uint64_t used_bytes = 0;      // bytes in objects
};

// A collector's own picture in --gc-report: one bar per collection of
// counter / per_counter * scale (no per_counter: counter * scale).
struct PanelSeries {
  std::string label;
  const Counter* counter;
  const Counter* per_counter = nullptr;
  double scale = 1;
};
struct PanelSpec {
  std::string title;
  std::string y_label;      // the axis label, with its unit
  std::string description;  // one or two sentences under the title: what to look for
  std::vector<PanelSeries> series;
};
// A ratio of two counters that a collector names (accel: the in-order
// CPU's cycles over the unit's, the paper's speedup). Summaries give it
// over the run (total over total) and per collection (smallest, largest);
// collections where the denominator is 0 are left out.
struct RatioSpec {
  std::string name;
  const Counter* numerator;
  const Counter* denominator;
};
// A picture of one collection's sequence (chosen with a slider): one bar
// per value, x_ticks naming the values (empty: their index).
struct SequencePanelSpec {
  std::string title;
  std::string y_label;
  std::string description;
  const Sequence* sequence;
  std::string x_label;
  std::vector<std::string> x_ticks;
  // The counter whose value in the same collection is the x distance
  // between values (e.g. cycles per sample); none: 1.
  const Counter* x_step_counter = nullptr;
};

// --- what the Recorder keeps when enabled (times in ns since the recorder
// started, which is when the VM started).
// A phase started while another is open on the same worker is its child;
// so is the same phase on another worker, inside that parent's span (the
// workers a parent phase fans its work out to: markcompact's "old
// generation" runs "mark" on every worker).
struct PhaseRecord {
  static constexpr uint64_t kNoParent = UINT64_MAX;
  uint32_t phase;  // index into Recorder::phase_names()
  uint32_t worker;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t parent;  // index into Recorder::phases() of the enclosing phase, or kNoParent
};

// The length of the union of [start, end) spans (sorts them): a worker's
// busy time over its phases, or a phase's wall time over its workers (a
// phase may run more than once in a collection: markcompact's full
// collections process weak references after the young and the old part).
int64_t union_length(std::vector<std::pair<int64_t, int64_t>>& spans);
struct CounterRecord {
  uint32_t counter;  // index into Recorder::counter_names()
  uint32_t worker;
  uint64_t value;
};
struct SpaceRecord {
  uint32_t name;  // index into Recorder::space_names()
  uint32_t role;  // index into Recorder::space_names() too
  uint64_t capacity_bytes;
  uint64_t used_bytes;
};
struct SequenceRecord {
  uint32_t name;   // index into Recorder::sequence_names()
  uint64_t first;  // into Recorder::sequence_values()
  uint64_t count;
};
struct CollectionRecord {
  uint64_t id;  // GC(id) in the log: 0, 1, 2, ...
  CollectionKind kind;
  GcCause cause;
  int64_t start_ns;
  int64_t end_ns;
  uint64_t used_before, size_before;
  uint64_t used_after, size_after;
  uint64_t live_after;        // the collector's live bytes after this collection
  uint64_t allocated_before;  // bytes allocated since the start, at this collection's start
  // Ranges in the flat vectors: [first_x, next record's first_x).
  uint64_t first_phase, first_counter, first_space, first_sequence;
  // A sizing decision taken in this collection, in words (HotSpot's
  // gc+ergo): --gc-log=debug prints it; empty: none.
  std::string ergonomics;
  // What this pause did to a cycle that spans many pauses (an incremental
  // collector's start, atomic phase, end): the part of the cycle it
  // entered, in words; --gc-log prints each, the report draws the parts.
  std::vector<CycleEvent> cycle_events;
  // A collection whose pause is modelled (Recorder::simulated_phase): the
  // simulated duration, which is its pause; -1: the pause is measured.
  // start_ns and end_ns are the host's either way.
  int64_t simulated_ns = -1;
  bool simulated() const { return simulated_ns >= 0; }
  int64_t host_ns() const { return end_ns - start_ns; }
  int64_t pause_ns() const { return simulated() ? simulated_ns : host_ns(); }
  double pause_ms() const { return static_cast<double>(pause_ns()) / 1e6; }
};

// Always kept, without allocation after construction.
struct AlwaysOnSummary {
  uint64_t collections = 0;
  uint64_t young = 0;
  uint64_t full = 0;
  uint64_t increments = 0;
  std::vector<uint64_t> by_cause;  // indexed by GcCause; sized at construction
  double pause_total_ms = 0;
  double pause_max_ms = 0;
  uint64_t peak_heap = 0;
  uint64_t peak_live = 0;
  // Pause histogram: bucket b holds pauses in [2^(b/16), 2^((b+1)/16)) ns,
  // so a percentile read from it is within 4.4% of the exact one.
  static constexpr int kBucketsPerOctave = 16;
  std::vector<uint64_t> pause_buckets;  // sized at construction (48 octaves)
  // Collections whose pause was modelled, and the host's time for every
  // collection (pause_total_ms when none was modelled).
  uint64_t simulated = 0;
  double host_total_ms = 0;
  // The collecting thread's CPU time inside collections.
  int64_t collecting_thread_cpu_ns = 0;
  // Collections asked for and not made (Recorder::collection_ignored).
  uint64_t ignored_requests = 0;
};

// CPU time since the recorder started (gc/parallel/thread_cpu.h), in ns:
// the mutator's (the program's thread outside collections), the
// collector's on the program's thread and on its pool threads, and every
// other thread's (a device runtime's, for instance).
struct CpuTimes {
  int64_t mutator_ns = 0;
  int64_t collecting_thread_ns = 0;
  int64_t gc_threads_ns = 0;
  int64_t other_threads_ns = 0;
  int64_t process_ns = 0;
};

class Log;

class Recorder {
 public:
  Recorder();
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // --- configuration, by the VM before the program runs
  // Worker ids 0..n-1 may record (a collector's own threads).
  void set_workers(unsigned n);
  // Record phases, counters and per-collection records. With keep_history
  // false only the current collection's are kept (enough for the log).
  void enable(bool keep_history);
  void set_log(Log* log) { log_ = log; }
  bool enabled() const { return enabled_; }
  bool keeps_history() const { return keep_history_; }

  // --- events, by collectors
  void collection_start(CollectionKind kind, GcCause cause, Collector& heap);
  void collection_end(Collector& heap);
  // A collection asked for and not made: no record, no pause; the log says
  // so, and summary().ignored_requests counts it.
  void collection_ignored(GcCause cause);
  // The one way to record a phase: body() runs as `phase` on `worker`
  // (the calling thread), and phase() returns what body() returns.
  template <class Body>
  decltype(auto) phase(unsigned worker, const char* phase, Body&& body) {
    struct End {
      Recorder& r;
      unsigned worker;
      const char* phase;
      ~End() {
        if (r.enabled_) [[unlikely]]
          r.phase_event(worker, phase, false);
      }
    };
    if (enabled_) [[unlikely]]
      phase_event(worker, phase, true);
    End end{*this, worker, phase};
    return body();
  }
  void count(unsigned worker, const Counter& counter, uint64_t delta) {
    if (enabled_) [[unlikely]]
      count_event(worker, counter, delta);
  }
  // A phase whose duration is modelled, not measured (a simulated
  // collector's hardware), on the collecting thread: ns of simulated time,
  // laid after the worker's previous simulated phase in this collection.
  // A collection with one is simulated: its pause is its longest worker's
  // simulated time, its phases only the simulated ones (the host's phases
  // time the simulation, not the collector), and its host time is kept
  // beside (CollectionRecord::host_ns).
  void simulated_phase(unsigned worker, const char* phase, int64_t ns);
  void sequence(unsigned worker, const Sequence& name, const std::vector<uint64_t>& values) {
    if (enabled_) [[unlikely]]
      sequence_event(worker, name, values);
  }
  void add_panel(PanelSpec panel) { panels_.push_back(std::move(panel)); }
  void add_sequence_panel(SequencePanelSpec panel) { sequence_panels_.push_back(std::move(panel)); }
  void describe_ratio(RatioSpec ratio) { ratios_.push_back(std::move(ratio)); }
  // The collection under way's sizing decision (CollectionRecord::ergonomics).
  void ergonomics(std::string text) {
    if (enabled_) current_.ergonomics = std::move(text);
  }
  // A step of a cycle that spans many pauses (CollectionRecord::cycle_events).
  void cycle_event(CyclePart entered, std::string text) {
    if (enabled_) current_.cycle_events.push_back({entered, std::move(text)});
  }

  // --- what consumers read
  int64_t now_ns() const;
  // On the thread that constructed the recorder, which runs the program.
  CpuTimes cpu_times() const;
  const AlwaysOnSummary& summary() const { return summary_; }
  // GC(N) of the collection under way (or the last one).
  uint64_t current_collection() const { return current_.id; }
  // The id the next collection will have.
  uint64_t next_collection() const { return next_id_; }
  // The collection under way, or the last one once it ended: its times
  // and heap sizes are kept whether or not recording is enabled.
  const CollectionRecord& current() const { return current_; }
  const std::vector<CollectionRecord>& records() const { return records_; }
  const std::vector<PhaseRecord>& phases() const { return phases_; }
  const std::vector<CounterRecord>& counters() const { return counters_; }
  const std::vector<SpaceRecord>& spaces() const { return spaces_; }
  const std::vector<SequenceRecord>& sequences() const { return sequences_; }
  const std::vector<uint64_t>& sequence_values() const { return sequence_values_; }
  const std::vector<std::string>& sequence_names() const { return sequence_names_; }
  const std::vector<std::string>& phase_names() const { return phase_names_; }
  const std::vector<std::string>& counter_names() const { return counter_names_; }
  const std::vector<std::string>& space_names() const { return space_names_; }
  const std::vector<PanelSpec>& panels() const { return panels_; }
  const std::vector<SequencePanelSpec>& sequence_panels() const { return sequence_panels_; }
  const std::vector<RatioSpec>& ratios() const { return ratios_; }
  // The declaration of counter_names()[index].
  const Counter& counter_declaration(uint32_t index) const { return *counter_declarations_[index]; }
  unsigned workers() const { return static_cast<unsigned>(buffers_.size()); }
  // Ranges of one record (index into records()).
  template <class T>
  struct Range {
    const T* b;
    const T* e;
    const T* begin() const { return b; }
    const T* end() const { return e; }
  };
  Range<PhaseRecord> phases_of(size_t record) const;
  Range<CounterRecord> counters_of(size_t record) const;
  Range<SpaceRecord> spaces_of(size_t record) const;
  Range<SequenceRecord> sequences_of(size_t record) const;

 private:
  template <class T>
  Range<T> slice(const std::vector<T>& all, uint64_t CollectionRecord::*first, size_t record) const;
  // Phases are numbered per worker as they start, so that a child names
  // its parent before either has ended.
  static constexpr uint32_t kNoOpenParent = UINT32_MAX;
  struct OpenPhase {
    const char* name;
    int64_t start_ns;
    uint32_t number;
    uint32_t parent;  // the enclosing open phase's number, or kNoOpenParent
  };
  struct RawPhase {
    const char* name;
    int64_t start_ns;
    int64_t end_ns;
    uint32_t number;
    uint32_t parent;
  };
  // One per worker id, each on its own cache lines: a worker writes only
  // its own.
  struct alignas(64) WorkerBuffer {
    std::vector<OpenPhase> open;
    std::vector<RawPhase> done;
    uint32_t started = 0;  // phases started in this collection
    std::vector<std::pair<const Counter*, uint64_t>> counts;
    std::vector<std::pair<const Sequence*, std::vector<uint64_t>>> sequences;
    std::vector<RawPhase> simulated;  // from the collection's start, in simulated ns
    int64_t simulated_end = 0;
  };

  [[gnu::noinline]] void phase_event(unsigned worker, const char* phase, bool start);
  [[gnu::noinline]] void count_event(unsigned worker, const Counter& counter, uint64_t delta);
  [[gnu::noinline]] void sequence_event(unsigned worker, const Sequence& name,
                                        const std::vector<uint64_t>& values);
  void merge_worker_buffers(Collector& heap);
  void merge_phases();
  void update_summary(const CollectionRecord& r, uint64_t live);
  static uint32_t intern(std::vector<std::string>& names, const char* name);
  uint32_t intern_counter(const Counter& counter);

  bool enabled_ = false;
  bool keep_history_ = false;
  bool in_collection_ = false;
  Log* log_ = nullptr;
  uint64_t start_ns_;  // on the one clock, parallel::now_ns()
  int64_t start_thread_cpu_ns_, start_process_cpu_ns_, start_gc_threads_cpu_ns_;
  int64_t collection_thread_cpu_start_ns_ = 0;
  std::vector<WorkerBuffer> buffers_;
  AlwaysOnSummary summary_;
  uint64_t next_id_ = 0;
  // The collection in progress, for the always-on summary.
  CollectionRecord current_{};

  std::vector<CollectionRecord> records_;
  std::vector<PhaseRecord> phases_;
  std::vector<CounterRecord> counters_;
  std::vector<SpaceRecord> spaces_;
  std::vector<SequenceRecord> sequences_;
  std::vector<uint64_t> sequence_values_;
  std::vector<std::string> phase_names_;
  std::vector<std::string> counter_names_;
  std::vector<std::string> space_names_;
  std::vector<std::string> sequence_names_;
  std::vector<const Counter*> counter_declarations_;  // beside counter_names_
  std::vector<PanelSpec> panels_;
  std::vector<SequencePanelSpec> sequence_panels_;
  std::vector<RatioSpec> ratios_;
  std::vector<SpaceUsage> space_scratch_;
};

}  // namespace gc::observe
