#include "gc/observe/recorder.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "gc/collector.h"
#include "gc/observe/log.h"
#include "gc/observe/recording.h"
#include "gc/parallel/clock.h"
#include "gc/parallel/thread_cpu.h"

namespace gc::observe {

namespace {

// Pauses up to 2^48 ns (about three days) get their own bucket; longer
// ones share the last.
constexpr int kOctaves = 48;

// Room for the causes gclab has and a few more; grows if a collector
// reports a cause beyond it.
constexpr size_t kInitialCauses = 8;

size_t bucket_of(int64_t ns) {
  if (ns <= 1) return 0;
  double b = std::log2(static_cast<double>(ns)) * AlwaysOnSummary::kBucketsPerOctave;
  return std::min(static_cast<size_t>(b),
                  static_cast<size_t>(kOctaves * AlwaysOnSummary::kBucketsPerOctave - 1));
}

}  // namespace

const char* kind_name(CollectionKind kind) {
  switch (kind) {
    case CollectionKind::kYoung:
      return "Young";
    case CollectionKind::kFull:
      return "Full";
    case CollectionKind::kIncrement:
      return "Increment";
  }
  return "?";
}

Recorder::Recorder()
    : start_ns_(parallel::now_ns()),
      start_thread_cpu_ns_(parallel::thread_cpu_ns()),
      start_process_cpu_ns_(parallel::process_cpu_ns()),
      start_gc_threads_cpu_ns_(parallel::gc_threads_cpu_ns()) {
  summary_.by_cause.assign(kInitialCauses, 0);
  summary_.pause_buckets.assign(kOctaves * AlwaysOnSummary::kBucketsPerOctave, 0);
  buffers_.resize(1);
}

Recorder::~Recorder() = default;

void Recorder::set_workers(unsigned n) { buffers_.resize(std::max(1u, n)); }

void Recorder::enable(bool keep_history) {
  enabled_ = true;
  keep_history_ = keep_history_ || keep_history;
}

int64_t Recorder::now_ns() const { return static_cast<int64_t>(parallel::now_ns() - start_ns_); }

CpuTimes Recorder::cpu_times() const {
  CpuTimes t;
  int64_t program_thread = parallel::thread_cpu_ns() - start_thread_cpu_ns_;
  t.collecting_thread_ns = summary_.collecting_thread_cpu_ns;
  t.mutator_ns = std::max<int64_t>(0, program_thread - t.collecting_thread_ns);
  t.gc_threads_ns = parallel::gc_threads_cpu_ns() - start_gc_threads_cpu_ns_;
  // The process's clock leaves out what a thread running elsewhere has run
  // since its last scheduler tick, which that thread's own clock holds.
  t.process_ns =
      std::max(parallel::process_cpu_ns() - start_process_cpu_ns_, program_thread + t.gc_threads_ns);
  t.other_threads_ns = t.process_ns - program_thread - t.gc_threads_ns;
  return t;
}

const char* counter_kind_name(CounterKind kind) { return kind == CounterKind::kPeak ? "peak" : "sum"; }

// Collections

void Recorder::collection_start(CollectionKind kind, GcCause cause, Collector& heap) {
  in_collection_ = true;
  current_ = CollectionRecord{};
  current_.id = next_id_++;
  current_.kind = kind;
  current_.cause = cause;
  current_.used_before = heap.heap_used();
  current_.size_before = heap.heap_size();
  current_.allocated_before = heap.stats_as_recorded().bytes_allocated;
  for (WorkerBuffer& b : buffers_) b.simulated_end = 0;
  if (enabled_ && !keep_history_) {
    records_.clear();
    phases_.clear();
    counters_.clear();
    spaces_.clear();
    sequences_.clear();
    sequence_values_.clear();
  }
  collection_thread_cpu_start_ns_ = parallel::thread_cpu_ns();
  // Last, so that the reads above are not part of the pause.
  current_.start_ns = now_ns();
}

void Recorder::collection_ignored(GcCause cause) {
  summary_.ignored_requests++;
  if (log_) log_->collection_ignored(now_ns(), cause);
}

void Recorder::collection_end(Collector& heap) {
  if (!in_collection_) return;
  in_collection_ = false;
  current_.end_ns = now_ns();
  summary_.collecting_thread_cpu_ns += parallel::thread_cpu_ns() - collection_thread_cpu_start_ns_;
  current_.used_after = heap.heap_used();
  current_.size_after = heap.heap_size();
  current_.live_after = heap.stats_as_recorded().last_live_bytes;
  update_summary(current_, current_.live_after);
  if (!enabled_) return;
  current_.first_phase = phases_.size();
  current_.first_counter = counters_.size();
  current_.first_space = spaces_.size();
  current_.first_sequence = sequences_.size();
  merge_worker_buffers(heap);
  records_.push_back(current_);
  if (log_) log_->collection(*this, records_.size() - 1);
}

void Recorder::update_summary(const CollectionRecord& r, uint64_t live) {
  AlwaysOnSummary& s = summary_;
  s.collections++;
  (r.kind == CollectionKind::kYoung ? s.young : r.kind == CollectionKind::kFull ? s.full : s.increments)++;
  size_t cause = static_cast<size_t>(r.cause);
  if (cause >= s.by_cause.size()) s.by_cause.resize(cause + 1, 0);
  s.by_cause[cause]++;
  double ms = r.pause_ms();
  s.pause_total_ms += ms;
  s.pause_max_ms = std::max(s.pause_max_ms, ms);
  s.host_total_ms += static_cast<double>(r.host_ns()) / 1e6;
  if (r.simulated()) s.simulated++;
  s.peak_heap = std::max({s.peak_heap, r.size_before, r.size_after});
  s.peak_live = std::max(s.peak_live, live);
  s.pause_buckets[bucket_of(r.pause_ns())]++;
}

// Workers have all finished (collection_end is called after they join):
// their buffers are read and cleared on this thread.
void Recorder::merge_worker_buffers(Collector& heap) {
  merge_phases();
  for (size_t w = 0; w < buffers_.size(); ++w) {
    WorkerBuffer& b = buffers_[w];
    for (const auto& [counter, value] : b.counts)
      counters_.push_back({intern_counter(*counter), static_cast<uint32_t>(w), value});
    for (const auto& [sequence, values] : b.sequences) {
      sequences_.push_back({intern(sequence_names_, sequence->name), sequence_values_.size(), values.size()});
      sequence_values_.insert(sequence_values_.end(), values.begin(), values.end());
    }
    b.counts.clear();
    b.sequences.clear();
  }
  space_scratch_.clear();
  heap.describe_spaces(space_scratch_);
  for (const SpaceUsage& s : space_scratch_)
    spaces_.push_back({intern(space_names_, s.name.c_str()), intern(space_names_, s.role.c_str()),
                       s.capacity_bytes, s.used_bytes});
}

// The workers' phases into phases_, each with its parent (PhaseRecord),
// sorted by start with a parent before the children that start with it, so
// that consumers may draw them in order and nest them as they come.
void Recorder::merge_phases() {
  const size_t first = current_.first_phase;
  for (size_t w = 0; w < buffers_.size(); ++w) {
    WorkerBuffer& b = buffers_[w];
    if (current_.simulated()) {
      // A modelled pause's phases are the simulated ones, end to end from
      // the collection's start; the measured ones are the host's.
      for (const RawPhase& p : b.simulated)
        phases_.push_back({intern(phase_names_, p.name), static_cast<uint32_t>(w),
                           current_.start_ns + p.start_ns, current_.start_ns + p.end_ns,
                           PhaseRecord::kNoParent});
    } else {
      std::vector<uint64_t> index_of(b.started, PhaseRecord::kNoParent);
      for (size_t i = 0; i < b.done.size(); ++i) index_of[b.done[i].number] = phases_.size() + i;
      for (const RawPhase& p : b.done) {
        // A parent left open (an early return) is dropped, and its children with it become top-level.
        uint64_t parent = p.parent == kNoOpenParent ? PhaseRecord::kNoParent : index_of[p.parent];
        phases_.push_back(
            {intern(phase_names_, p.name), static_cast<uint32_t>(w), p.start_ns, p.end_ns, parent});
      }
    }
    b.done.clear();
    b.simulated.clear();
    b.open.clear();
    b.started = 0;
  }
  // The same phase on other workers, inside the parent's span, is its child too.
  std::vector<size_t> nested;
  for (size_t i = first; i < phases_.size(); ++i)
    if (phases_[i].parent != PhaseRecord::kNoParent) nested.push_back(i);
  for (size_t i = first; i < phases_.size() && !nested.empty(); ++i) {
    PhaseRecord& p = phases_[i];
    if (p.parent != PhaseRecord::kNoParent) continue;
    for (size_t n : nested) {
      const PhaseRecord& sibling = phases_[n];
      const PhaseRecord& parent = phases_[sibling.parent];
      if (sibling.phase == p.phase && sibling.worker != p.worker && parent.worker != p.worker &&
          parent.start_ns <= p.start_ns && p.end_ns <= parent.end_ns) {
        p.parent = sibling.parent;
        break;
      }
    }
  }
  std::vector<uint32_t> depth(phases_.size() - first, 0);
  auto depth_of = [&](size_t i) {
    uint32_t d = 0;
    for (uint64_t q = phases_[i].parent; q != PhaseRecord::kNoParent; q = phases_[q].parent) ++d;
    return d;
  };
  for (size_t i = first; i < phases_.size(); ++i) depth[i - first] = depth_of(i);
  std::vector<size_t> order(phases_.size() - first);
  for (size_t k = 0; k < order.size(); ++k) order[k] = first + k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const PhaseRecord& x = phases_[a];
    const PhaseRecord& y = phases_[b];
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (depth[a - first] != depth[b - first]) return depth[a - first] < depth[b - first];
    if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
    return x.worker != y.worker ? x.worker < y.worker : a < b;
  });
  std::vector<uint64_t> moved_to(order.size());
  for (size_t k = 0; k < order.size(); ++k) moved_to[order[k] - first] = first + k;
  std::vector<PhaseRecord> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) {
    PhaseRecord p = phases_[i];
    if (p.parent != PhaseRecord::kNoParent) p.parent = moved_to[p.parent - first];
    sorted.push_back(p);
  }
  std::copy(sorted.begin(), sorted.end(), phases_.begin() + static_cast<ptrdiff_t>(first));
}

uint32_t Recorder::intern(std::vector<std::string>& names, const char* name) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<uint32_t>(i);
  names.emplace_back(name);
  return static_cast<uint32_t>(names.size() - 1);
}

// Two declarations of one name are one counter (a collector's and a shared
// part's); they must then agree, or its figures would mix units.
uint32_t Recorder::intern_counter(const Counter& counter) {
  for (size_t i = 0; i < counter_names_.size(); ++i)
    if (counter_declarations_[i] == &counter || counter_names_[i] == counter.name) {
      assert(counter_declarations_[i]->unit == counter.unit &&
             counter_declarations_[i]->kind == counter.kind &&
             "two counters of one name must declare the same unit and kind");
      return static_cast<uint32_t>(i);
    }
  counter_names_.emplace_back(counter.name);
  counter_declarations_.push_back(&counter);
  return static_cast<uint32_t>(counter_names_.size() - 1);
}

// Phases and counters: on the worker's own thread, into its own buffer.

int64_t union_length(std::vector<std::pair<int64_t, int64_t>>& spans) {
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, reach = INT64_MIN;
  for (auto [s, e] : spans) {
    s = std::max(s, reach);
    if (e > s) total += e - s;
    reach = std::max(reach, e);
  }
  return total;
}

void Recorder::phase_event(unsigned worker, const char* phase, bool start) {
  if (Recording* r = Recording::active()) r->phase(worker, phase, start);
  if (worker >= buffers_.size()) return;  // not a worker the collector declared
  WorkerBuffer& b = buffers_[worker];
  int64_t t = now_ns();
  if (start) {
    b.open.push_back({phase, t, b.started++, b.open.empty() ? kNoOpenParent : b.open.back().number});
    return;
  }
  // The innermost open phase of that name ends (phases nest).
  for (size_t i = b.open.size(); i-- > 0;) {
    if (b.open[i].name == phase || std::strcmp(b.open[i].name, phase) == 0) {
      const OpenPhase& o = b.open[i];
      b.done.push_back({phase, o.start_ns, t, o.number, o.parent});
      b.open.erase(b.open.begin() + static_cast<ptrdiff_t>(i));
      return;
    }
  }
}

void Recorder::count_event(unsigned worker, const Counter& counter, uint64_t delta) {
  if (worker >= buffers_.size()) return;
  WorkerBuffer& b = buffers_[worker];
  for (auto& [declared, value] : b.counts)
    if (declared == &counter || std::strcmp(declared->name, counter.name) == 0) {
      value += delta;
      return;
    }
  b.counts.emplace_back(&counter, delta);
}

// Kept without recording too: the always-on summary's pauses need it.
void Recorder::simulated_phase(unsigned worker, const char* phase, int64_t ns) {
  if (!in_collection_ || worker >= buffers_.size()) return;
  WorkerBuffer& b = buffers_[worker];
  int64_t start = b.simulated_end;
  b.simulated_end += ns;
  current_.simulated_ns = std::max(current_.simulated_ns, b.simulated_end);
  if (enabled_) b.simulated.push_back({phase, start, b.simulated_end, 0, kNoOpenParent});
}

void Recorder::sequence_event(unsigned worker, const Sequence& name, const std::vector<uint64_t>& values) {
  if (worker >= buffers_.size()) return;
  buffers_[worker].sequences.emplace_back(&name, values);
}

// Ranges

template <class T>
Recorder::Range<T> Recorder::slice(const std::vector<T>& all, uint64_t CollectionRecord::*first,
                                   size_t i) const {
  size_t e = i + 1 < records_.size() ? records_[i + 1].*first : all.size();
  return {all.data() + records_[i].*first, all.data() + e};
}

Recorder::Range<PhaseRecord> Recorder::phases_of(size_t i) const {
  return slice(phases_, &CollectionRecord::first_phase, i);
}

Recorder::Range<CounterRecord> Recorder::counters_of(size_t i) const {
  return slice(counters_, &CollectionRecord::first_counter, i);
}

Recorder::Range<SequenceRecord> Recorder::sequences_of(size_t i) const {
  return slice(sequences_, &CollectionRecord::first_sequence, i);
}

Recorder::Range<SpaceRecord> Recorder::spaces_of(size_t i) const {
  return slice(spaces_, &CollectionRecord::first_space, i);
}

}  // namespace gc::observe
