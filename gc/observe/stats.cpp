#include "gc/observe/stats.h"

#include <algorithm>
#include <cmath>

#include "gc/observe/json.h"

namespace gc::observe {

namespace {

double ns_to_ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// Percentile from the always-on histogram: the geometric middle of the
// bucket holding the rank, clamped to the largest pause.
double histogram_percentile(const AlwaysOnSummary& s, double p) {
  if (s.collections == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(s.collections)));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (size_t b = 0; b < s.pause_buckets.size(); ++b) {
    seen += s.pause_buckets[b];
    if (seen >= rank) {
      double ns = std::exp2((static_cast<double>(b) + 0.5) / AlwaysOnSummary::kBucketsPerOctave);
      return std::min(ns / 1e6, s.pause_max_ms);
    }
  }
  return s.pause_max_ms;
}

std::string bytes_text(uint64_t b) {
  char buf[64];
  double v = static_cast<double>(b);
  if (b < (1u << 10))
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  else if (b < (1u << 20))
    std::snprintf(buf, sizeof buf, "%.1f KiB", v / 1024);
  else if (b < (1ull << 30))
    std::snprintf(buf, sizeof buf, "%.1f MiB", v / (1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / (1 << 30));
  return buf;
}

}  // namespace

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

namespace {

// Collections, pauses, allocation and the heap's size: known from the
// always-on summary and the collector's statistics, with or without history.
void summarize_run(Collector& heap, Summary& s) {
  const Recorder& r = heap.events;
  const AlwaysOnSummary& a = r.summary();
  const GcStats& st = heap.stats();
  s.collector = heap.name();
  s.variant = variant_of(heap);
  const CollectorInfo* info = find_collector(s.collector);
  s.gc_threads = info && !info->uses_gc_threads ? 0 : heap.gc_threads_in_use();
  s.run_time_ms = ns_to_ms(r.now_ns());
  s.collections = a.collections;
  s.young = a.young;
  s.full = a.full;
  s.increments = a.increments;
  s.ignored_requests = a.ignored_requests;
  for (size_t c = 0; c < a.by_cause.size(); ++c)
    if (a.by_cause[c]) s.by_cause.emplace_back(cause_name(static_cast<GcCause>(c)), a.by_cause[c]);
  s.pause_total_ms = a.pause_total_ms;
  s.pause_max_ms = a.pause_max_ms;
  s.pause_mean_ms = a.collections ? a.pause_total_ms / static_cast<double>(a.collections) : 0;
  s.simulated_collections = a.simulated;
  s.host_pause_total_ms = a.host_total_ms;
  s.gc_share = s.run_time_ms > 0 ? std::min(1.0, a.host_total_ms / s.run_time_ms) : 0;
  CpuTimes cpu = r.cpu_times();
  s.mutator_cpu_ms = ns_to_ms(cpu.mutator_ns);
  s.collecting_thread_cpu_ms = ns_to_ms(cpu.collecting_thread_ns);
  s.gc_threads_cpu_ms = ns_to_ms(cpu.gc_threads_ns);
  s.other_threads_cpu_ms = ns_to_ms(cpu.other_threads_ns);
  s.process_cpu_ms = ns_to_ms(cpu.process_ns);
  s.bytes_allocated = st.bytes_allocated;
  s.allocation_rate_mb_s =
      s.run_time_ms > 0 ? static_cast<double>(st.bytes_allocated) / (1 << 20) / (s.run_time_ms / 1e3) : 0;
  s.bytes_copied = st.bytes_copied;
  s.heap_size = heap.heap_size();
  s.heap_used = heap.heap_used();
  s.peak_heap = std::max({a.peak_heap, st.peak_heap_bytes, s.heap_size});
  s.peak_live = a.peak_live;
}

// Exact from every pause when all were kept, else from the histogram.
void summarize_pause_percentiles(const Recorder& r, Summary& s) {
  std::vector<double> pauses;
  for (const CollectionRecord& c : r.records()) pauses.push_back(c.pause_ms());
  auto at = [&](double p) {
    return s.detailed ? percentile(pauses, p) : histogram_percentile(r.summary(), p);
  };
  s.pause_p50_ms = at(50);
  s.pause_p90_ms = at(90);
  s.pause_p99_ms = at(99);
  s.percentiles_exact = s.detailed;
}

// Adds to share[e] the part of [from, to) that each labelled span (entry
// e) runs in it: an instant split equally among the entries running then.
void split_time(std::vector<std::pair<int64_t, int64_t>> spans, const std::vector<int>& entries, int64_t from,
                int64_t to, std::vector<double>& share) {
  std::vector<std::pair<int64_t, int>> edges;  // (time, +entry + 1 at a start, -(entry + 1) at an end)
  for (size_t k = 0; k < spans.size(); ++k) {
    int64_t s = std::max(spans[k].first, from), e = std::min(spans[k].second, to);
    if (e <= s) continue;
    edges.push_back({s, entries[k] + 1});
    edges.push_back({e, -(entries[k] + 1)});
  }
  std::sort(edges.begin(), edges.end());
  std::vector<int> running(share.size(), 0);
  std::vector<int> active;  // entries with running > 0
  int64_t last = 0;
  for (const auto& [t, edge] : edges) {
    if (!active.empty() && t > last)
      for (int e : active)
        share[static_cast<size_t>(e)] += static_cast<double>(t - last) / static_cast<double>(active.size());
    last = t;
    int e = std::abs(edge) - 1;
    int& n = running[static_cast<size_t>(e)];
    if (edge > 0 && n++ == 0) active.push_back(e);
    if (edge < 0 && --n == 0) active.erase(std::find(active.begin(), active.end(), e));
  }
}

// Per phase at its place in the nesting, collection by collection: work
// summed over the workers, wall time the union of the phase's spans on all
// of them, and its part of the pause (PhaseTotal::pause_ms).
void summarize_phases(const Recorder& r, Summary& s) {
  std::vector<PhaseTotal> found;  // in order of first appearance
  std::vector<uint32_t> phase_of;
  auto entry = [&](int parent, uint32_t phase) {
    for (size_t e = 0; e < found.size(); ++e)
      if (found[e].parent == parent && phase_of[e] == phase) return static_cast<int>(e);
    PhaseTotal t;
    t.name = r.phase_names()[phase];
    t.parent = parent;
    t.depth = parent < 0 ? 0 : found[static_cast<size_t>(parent)].depth + 1;
    found.push_back(t);
    phase_of.push_back(phase);
    return static_cast<int>(found.size() - 1);
  };
  for (size_t i = 0; i < r.records().size(); ++i) {
    const CollectionRecord& c = r.records()[i];
    auto phases = r.phases_of(i);
    const size_t base = static_cast<size_t>(phases.begin() - r.phases().data());
    // Parents come before their children (Recorder::merge_phases).
    std::vector<int> entry_of;
    for (const PhaseRecord& p : phases)
      entry_of.push_back(entry(p.parent == PhaseRecord::kNoParent ? -1 : entry_of[p.parent - base], p.phase));
    std::vector<std::vector<std::pair<int64_t, int64_t>>> spans(found.size());
    std::vector<double> work(found.size(), 0), share(found.size(), 0);
    for (size_t k = 0; k < entry_of.size(); ++k) {
      const PhaseRecord& p = phases.begin()[k];
      spans[static_cast<size_t>(entry_of[k])].push_back({p.start_ns, p.end_ns});
      work[static_cast<size_t>(entry_of[k])] += ns_to_ms(p.end_ns - p.start_ns);
    }
    // Siblings (one parent entry, -1 for the top level) share their time.
    for (int parent = -1; parent < static_cast<int>(found.size()); ++parent) {
      std::vector<std::pair<int64_t, int64_t>> sibling_spans;
      std::vector<int> sibling_entries;
      for (size_t e = 0; e < found.size(); ++e)
        if (found[e].parent == parent)
          for (const auto& span : spans[e]) {
            sibling_spans.push_back(span);
            sibling_entries.push_back(static_cast<int>(e));
          }
      if (!sibling_spans.empty()) split_time(sibling_spans, sibling_entries, c.start_ns, c.end_ns, share);
    }
    for (size_t e = 0; e < found.size(); ++e) {
      if (spans[e].empty()) continue;
      PhaseTotal& t = found[e];
      double wall = ns_to_ms(union_length(spans[e]));
      t.collections++;
      t.work_ms += work[e];
      t.wall_ms += wall;
      t.max_wall_ms = std::max(t.max_wall_ms, wall);
      t.pause_ms += share[e] / 1e6;
    }
  }
  // Tree order: each entry followed by its children, in order of first appearance.
  std::vector<int> moved_to(found.size(), -1);
  auto place = [&](auto& self, int parent) -> void {
    for (size_t e = 0; e < found.size(); ++e) {
      if (found[e].parent != parent) continue;
      moved_to[e] = static_cast<int>(s.phases.size());
      s.phases.push_back(found[e]);
      s.phases.back().parent = parent < 0 ? -1 : moved_to[static_cast<size_t>(parent)];
      self(self, static_cast<int>(e));
    }
  };
  place(place, -1);
}

// Per counter: the total over the run, and its mean and maximum per collection.
void summarize_counters(const Recorder& r, Summary& s) {
  s.counters.resize(r.counter_names().size());
  for (size_t k = 0; k < s.counters.size(); ++k) {
    s.counters[k].name = r.counter_names()[k];
    const Counter& declared = r.counter_declaration(static_cast<uint32_t>(k));
    s.counters[k].unit = unit_name(declared.unit);
    s.counters[k].kind = declared.kind;
  }
  std::vector<uint64_t> per_collection(s.counters.size()), sum(s.counters.size());
  for (size_t i = 0; i < r.records().size(); ++i) {
    std::fill(per_collection.begin(), per_collection.end(), 0);
    for (const CounterRecord& k : r.counters_of(i)) per_collection[k.counter] += k.value;
    for (size_t k = 0; k < s.counters.size(); ++k) {
      sum[k] += per_collection[k];
      s.counters[k].max_per_collection = std::max(s.counters[k].max_per_collection, per_collection[k]);
    }
  }
  for (size_t k = 0; k < s.counters.size(); ++k) {
    CounterTotal& t = s.counters[k];
    t.total = t.kind == CounterKind::kPeak ? t.max_per_collection : sum[k];
    t.mean_per_collection =
        r.records().empty() ? 0 : static_cast<double>(sum[k]) / static_cast<double>(r.records().size());
  }
}

// Per worker that ran a phase or counted something: busy time (the union of
// its phases), idle time (the rest of each pause), counters; then balance.
void summarize_workers(const Recorder& r, Summary& s) {
  const auto& records = r.records();
  std::vector<double> busy_ns(r.workers(), 0), idle_ms(r.workers(), 0);
  std::vector<bool> seen(r.workers(), false);
  std::vector<std::vector<uint64_t>> counters(r.workers(),
                                              std::vector<uint64_t>(r.counter_names().size(), 0));
  std::vector<std::vector<uint64_t>> in_collection = counters;
  std::vector<std::pair<uint32_t, uint32_t>> touched;
  std::vector<bool> is_peak;
  for (uint32_t k = 0; k < r.counter_names().size(); ++k)
    is_peak.push_back(r.counter_declaration(k).kind == CounterKind::kPeak);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> spans(r.workers());
  for (size_t i = 0; i < records.size(); ++i) {
    for (auto& sp : spans) sp.clear();
    for (const PhaseRecord& p : r.phases_of(i))
      if (p.worker < spans.size()) spans[p.worker].push_back({p.start_ns, p.end_ns});
    for (size_t w = 0; w < spans.size(); ++w) {
      if (spans[w].empty()) continue;
      seen[w] = true;
      double b = static_cast<double>(union_length(spans[w]));
      busy_ns[w] += b;
      idle_ms[w] += std::max(0.0, records[i].pause_ms() - b / 1e6);
    }
    // A worker's peak counter is its largest in one collection, as the
    // counter table's total is: its values within a collection add up
    // first.
    touched.clear();
    for (const CounterRecord& k : r.counters_of(i)) {
      if (k.worker >= counters.size()) continue;
      uint64_t& value = in_collection[k.worker][k.counter];
      if (value == 0) touched.push_back({k.worker, k.counter});
      value += k.value;
      seen[k.worker] = true;
    }
    for (auto [w, k] : touched) {
      uint64_t& total = counters[w][k];
      uint64_t& value = in_collection[w][k];
      total = is_peak[k] ? std::max(total, value) : total + value;
      value = 0;
    }
  }
  double busy_sum = 0, busy_max = 0;
  for (unsigned w = 0; w < r.workers(); ++w) {
    if (!seen[w]) continue;
    WorkerTotal t;
    t.worker = w;
    t.busy_ms = busy_ns[w] / 1e6;
    t.idle_ms = idle_ms[w];
    for (size_t k = 0; k < counters[w].size(); ++k)
      if (counters[w][k]) t.counters.emplace_back(r.counter_names()[k], counters[w][k]);
    busy_sum += t.busy_ms;
    busy_max = std::max(busy_max, t.busy_ms);
    s.workers.push_back(std::move(t));
  }
  s.balance = busy_sum > 0 ? busy_max / (busy_sum / static_cast<double>(s.workers.size())) : 1;
}

// Per sequence: how many collections recorded it, its length and values.
void summarize_sequences(const Recorder& r, Summary& s) {
  s.sequences.resize(r.sequence_names().size());
  std::vector<uint64_t> entries(s.sequences.size()), sums(s.sequences.size());
  for (size_t q = 0; q < s.sequences.size(); ++q) s.sequences[q].name = r.sequence_names()[q];
  for (const SequenceRecord& q : r.sequences()) {
    SequenceTotal& t = s.sequences[q.name];
    t.collections++;
    t.max_length = std::max(t.max_length, q.count);
    entries[q.name] += q.count;
    for (uint64_t i = 0; i < q.count; ++i) {
      uint64_t v = r.sequence_values()[q.first + i];
      sums[q.name] += v;
      t.max_value = std::max(t.max_value, v);
    }
  }
  for (size_t q = 0; q < s.sequences.size(); ++q) {
    SequenceTotal& t = s.sequences[q];
    if (t.collections) t.mean_length = static_cast<double>(entries[q]) / static_cast<double>(t.collections);
    if (entries[q]) t.mean_value = static_cast<double>(sums[q]) / static_cast<double>(entries[q]);
  }
}

// Per ratio: the totals' quotient, and the smallest and largest of the
// collections' own.
void summarize_ratios(const Recorder& r, Summary& s) {
  const std::vector<std::string>& names = r.counter_names();
  auto index = [&](const Counter* counter) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), counter->name) - names.begin());
  };
  std::vector<uint64_t> per_collection(names.size() + 1);  // the last: a counter never counted
  for (const RatioSpec& spec : r.ratios()) {
    RatioTotal t{spec.name, spec.numerator->name, spec.denominator->name};
    size_t num = index(spec.numerator), den = index(spec.denominator);
    uint64_t num_total = 0, den_total = 0;
    for (size_t i = 0; i < r.records().size(); ++i) {
      std::fill(per_collection.begin(), per_collection.end(), 0);
      for (const CounterRecord& k : r.counters_of(i)) per_collection[k.counter] += k.value;
      if (per_collection[den] == 0) continue;
      double q = static_cast<double>(per_collection[num]) / static_cast<double>(per_collection[den]);
      t.min_per_collection = t.collections ? std::min(t.min_per_collection, q) : q;
      t.max_per_collection = std::max(t.max_per_collection, q);
      t.collections++;
      num_total += per_collection[num];
      den_total += per_collection[den];
    }
    if (den_total) t.run = static_cast<double>(num_total) / static_cast<double>(den_total);
    s.ratios.push_back(std::move(t));
  }
}

}  // namespace

namespace {

// What filled a window: each instant of its pauses goes to the top-level
// phases running then on any worker, in equal parts (as % pause does),
// each phase moved onto the timeline with its collection's pause.
void attribute_window(const Recorder& r, const PauseTimeline& timeline, int64_t start_ns, int64_t window_ns,
                      Summary::Utilisation& u) {
  const int64_t end_ns = start_ns + window_ns;
  std::vector<double> share_ns;
  int64_t paused_ns = 0;
  for (size_t i : timeline.pauses_in(start_ns, window_ns)) {
    const CollectionRecord& c = r.records()[i];
    u.worst_collections.push_back(c.id);
    auto [pause_start, pause_end] = timeline.pause(i);
    int64_t from = std::max(pause_start, start_ns), to = std::min(pause_end, end_ns);
    paused_ns += std::max<int64_t>(0, to - from);
    std::vector<std::pair<int64_t, int64_t>> spans;
    std::vector<int> entries;
    for (const PhaseRecord& p : r.phases_of(i)) {
      if (p.parent != PhaseRecord::kNoParent) continue;
      const std::string& name = r.phase_names()[p.phase];
      auto known = std::find_if(u.worst_phases_ms.begin(), u.worst_phases_ms.end(),
                                [&](const auto& named) { return named.first == name; });
      if (known == u.worst_phases_ms.end()) {
        u.worst_phases_ms.emplace_back(name, 0);
        known = u.worst_phases_ms.end() - 1;
      }
      spans.push_back({pause_start + p.start_ns - c.start_ns, pause_start + p.end_ns - c.start_ns});
      entries.push_back(static_cast<int>(known - u.worst_phases_ms.begin()));
    }
    share_ns.resize(u.worst_phases_ms.size(), 0);
    split_time(std::move(spans), entries, from, to, share_ns);
  }
  double phased_ns = 0;
  for (size_t k = 0; k < share_ns.size(); ++k) {
    u.worst_phases_ms[k].second = share_ns[k] / 1e6;
    phased_ns += share_ns[k];
  }
  // A phase that ran only outside the window's part of its pause has no share there.
  std::erase_if(u.worst_phases_ms, [](const auto& named) { return named.second <= 0; });
  u.worst_outside_phases_ms = std::max(0.0, (static_cast<double>(paused_ns) - phased_ns) / 1e6);
}

// MMU at the fixed windows the run is as long as, and the curve.
void summarize_utilisation(const Recorder& r, Summary& s) {
  PauseTimeline timeline = PauseTimeline::of(r.records(), r.now_ns());
  for (double window_ms : kMmuWindowsMs) {
    auto window_ns = static_cast<int64_t>(window_ms * 1e6);
    if (window_ns > timeline.run_ns()) break;
    PauseTimeline::Window worst = timeline.minimum_utilisation(window_ns);
    Summary::Utilisation u;
    u.window_ms = window_ms;
    u.mmu = worst.utilisation;
    u.worst_start_ms = ns_to_ms(worst.start_ns);
    attribute_window(r, timeline, worst.start_ns, window_ns, u);
    s.mmu.push_back(std::move(u));
  }
  s.mmu_curve = utilisation_curve(timeline, kMmuCurvePoints);
}

}  // namespace

Summary summarize(Collector& heap) {
  const Recorder& r = heap.events;
  Summary s;
  summarize_run(heap, s);
  // Phases, workers, counters and sequences need every collection's record.
  s.detailed = r.keeps_history() && r.records().size() == r.summary().collections;
  summarize_pause_percentiles(r, s);
  if (!s.detailed) return s;
  summarize_phases(r, s);
  summarize_counters(r, s);
  summarize_workers(r, s);
  summarize_sequences(r, s);
  summarize_ratios(r, s);
  summarize_utilisation(r, s);
  return s;
}

// The table

namespace {

// A modelled pause is the model's time, so the share of the run (the
// host's) is the host's time for those collections.
std::string pause_total_line(const Summary& s) {
  char buf[256];
  if (s.simulated_collections == 0)
    std::snprintf(buf, sizeof buf, "  pause total        %.3f ms (%.1f%% of run time)\n", s.pause_total_ms,
                  s.gc_share * 100);
  else
    std::snprintf(buf, sizeof buf,
                  "  pause total        %.3f ms simulated, in %llu of %llu collections (the host took "
                  "%.3f ms, %.1f%% of run time)\n",
                  s.pause_total_ms, static_cast<unsigned long long>(s.simulated_collections),
                  static_cast<unsigned long long>(s.collections), s.host_pause_total_ms, s.gc_share * 100);
  return buf;
}

// Where a window's MMU was lost: its collections (the first and last of
// many) and the phases that filled it.
std::string worst_window_line(const Summary::Utilisation& u) {
  const std::vector<uint64_t>& ids = u.worst_collections;
  std::string collections;
  if (ids.size() <= 4) {
    for (uint64_t id : ids) collections += (collections.empty() ? "GC(" : ", GC(") + std::to_string(id) + ")";
  } else {
    collections = "GC(" + std::to_string(ids.front()) + ") to GC(" + std::to_string(ids.back()) + "), " +
                  std::to_string(ids.size()) + " collections";
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "    worst %g ms at %.3f ms: ", u.window_ms, u.worst_start_ms);
  std::string out = buf + collections + ";";
  for (const auto& [name, ms] : u.worst_phases_ms) {
    std::snprintf(buf, sizeof buf, " %.3f,", ms);
    out += " " + name + buf;
  }
  std::snprintf(buf, sizeof buf, " outside phases %.3f ms\n", u.worst_outside_phases_ms);
  return out + buf;
}

// A table's name column: as wide as its longest name, so that a long
// counter's name does not push its row's figures out of their columns.
template <class Row>
int name_width(const std::vector<Row>& rows) {
  size_t width = 24;
  for (const Row& r : rows) width = std::max(width, r.name.size());
  return static_cast<int>(width);
}

}  // namespace

std::string stats_table(const Summary& s) {
  std::string out;
  // Measured first: a worker's counters make a line of any length.
  auto line = [&](const char* fmt, auto... args) {
    int n = std::snprintf(nullptr, 0, fmt, args...);
    if (n <= 0) return;
    size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) + 1);
    std::snprintf(out.data() + at, static_cast<size_t>(n) + 1, fmt, args...);
    out.resize(at + static_cast<size_t>(n));
  };
  std::string threads = s.gc_threads == 0
                            ? "serial (no GC threads)"
                            : std::to_string(s.gc_threads) + " GC thread" + (s.gc_threads == 1 ? "" : "s");
  line("GC statistics: %s, %s, run %.3f s; %s\n", s.collector.c_str(), threads.c_str(), s.run_time_ms / 1e3,
       variant_line(s.variant).c_str());
  // Increments only where a collector makes them, so that the others' line stays as it was.
  std::string increments = s.increments ? ", Increment " + std::to_string(s.increments) : "";
  line("  collections        %llu (Young %llu, Full %llu%s)\n",
       static_cast<unsigned long long>(s.collections), static_cast<unsigned long long>(s.young),
       static_cast<unsigned long long>(s.full), increments.c_str());
  if (!s.by_cause.empty()) {
    std::string causes;
    for (const auto& [name, n] : s.by_cause)
      causes += (causes.empty() ? "" : ", ") + name + " " + std::to_string(n);
    line("    by cause         %s\n", causes.c_str());
  }
  if (s.ignored_requests)
    line("  requests ignored   %llu (asked for, not made: the collector never collects)\n",
         static_cast<unsigned long long>(s.ignored_requests));
  const char* sim = s.simulated_collections ? " simulated" : "";
  out += pause_total_line(s);
  line("  pause mean         %.3f ms%s\n", s.pause_mean_ms, sim);
  line("  pause p50 p90 p99  %.3f %.3f %.3f ms%s%s\n", s.pause_p50_ms, s.pause_p90_ms, s.pause_p99_ms, sim,
       s.percentiles_exact ? "" : " (from a histogram, within 4.4%)");
  line("  pause max          %.3f ms%s\n", s.pause_max_ms, sim);
  line(
      "  CPU time           mutator %.3f ms, collector %.3f ms (program's thread %.3f, GC threads %.3f), "
      "other threads %.3f ms\n",
      s.mutator_cpu_ms, s.collector_cpu_ms(), s.collecting_thread_cpu_ms, s.gc_threads_cpu_ms,
      s.other_threads_cpu_ms);
  line("  allocated          %s (%.1f MiB/s)\n", bytes_text(s.bytes_allocated).c_str(),
       s.allocation_rate_mb_s);
  if (s.bytes_copied) line("  copied             %s\n", bytes_text(s.bytes_copied).c_str());
  if (s.heap_limit)
    line("  heap limit         %s = %g x %s's minimum %s\n", bytes_text(s.heap_limit->bytes).c_str(),
         s.heap_limit->multiple, s.heap_limit->reference.c_str(),
         bytes_text(s.heap_limit->reference_min_bytes).c_str());
  line("  peak heap          %s\n", bytes_text(s.peak_heap).c_str());
  if (s.collections)
    line("  peak live          %s (after a collection)\n", bytes_text(s.peak_live).c_str());
  else
    line("  peak live          - (measured after a collection; none ran)\n");
  line("  heap now           %s used of %s\n", bytes_text(s.heap_used).c_str(),
       bytes_text(s.heap_size).c_str());
  if (!s.detailed) return out;
  if (!s.mmu.empty()) {
    std::string windows, shares;
    for (const Summary::Utilisation& u : s.mmu) {
      char buf[32];
      windows += (windows.empty() ? "" : " ") + std::to_string(static_cast<int>(u.window_ms));
      std::snprintf(buf, sizeof buf, "%s%.1f%%", shares.empty() ? "" : " ", 100 * u.mmu);
      shares += buf;
    }
    line("  MMU %s ms%*s%s (the least share of any window that the program ran)\n", windows.c_str(),
         std::max(0, 12 - static_cast<int>(windows.size())), "", shares.c_str());
    for (const Summary::Utilisation& u : s.mmu)
      if (!u.worst_collections.empty()) line("%s", worst_window_line(u).c_str());
  }

  if (!s.phases.empty()) {
    line("\n  %-28s %11s %11s %11s %11s %8s\n", "phase (nested: indented)", "collections", "work ms",
         "wall ms", "max ms", "% pause");
    for (const PhaseTotal& p : s.phases) {
      std::string name = std::string(2 * p.depth, ' ') + p.name;
      line("  %-28s %11llu %11.3f %11.3f %11.3f %7.1f%%\n", name.c_str(),
           static_cast<unsigned long long>(p.collections), p.work_ms, p.wall_ms, p.max_wall_ms,
           s.pause_total_ms > 0 ? 100 * p.pause_ms / s.pause_total_ms : 0.0);
    }
    line(
        "  %% pause: the phase's part of the pause total, an instant shared equally by the phases\n"
        "  running then under the same parent; the top-level phases add up to at most 100%%\n");
  }
  if (!s.workers.empty()) {
    double busy_sum = 0;
    for (const WorkerTotal& w : s.workers) busy_sum += w.busy_ms;
    line("\n  %-8s %11s %11s %8s  %s\n", "worker", "busy ms", "idle ms", "% work", "counters");
    for (const WorkerTotal& w : s.workers) {
      std::string counters;
      for (const auto& [name, v] : w.counters)
        counters += (counters.empty() ? "" : ", ") + name + " " + std::to_string(v);
      line("  %-8u %11.3f %11.3f %7.1f%%  %s\n", w.worker, w.busy_ms, w.idle_ms,
           busy_sum > 0 ? 100 * w.busy_ms / busy_sum : 0.0, counters.c_str());
    }
    line("  balance (max busy / mean busy): %.2f (1.00 is perfect)\n", s.balance);
  }
  if (!s.counters.empty()) {
    int width = name_width(s.counters);
    line("\n  %-*s %-8s %-5s %16s %14s %14s\n", width, "counter", "unit", "kind", "total", "mean/GC",
         "max/GC");
    for (const CounterTotal& k : s.counters)
      line("  %-*s %-8s %-5s %16llu %14.1f %14llu\n", width, k.name.c_str(), k.unit.c_str(),
           counter_kind_name(k.kind), static_cast<unsigned long long>(k.total), k.mean_per_collection,
           static_cast<unsigned long long>(k.max_per_collection));
    line("  total: a sum's over the run, a peak's the largest collection's\n");
  }
  if (!s.ratios.empty()) {
    int width = name_width(s.ratios);
    line("\n  %-*s %11s %11s %11s  %s\n", width, "ratio", "run", "min/GC", "max/GC", "of");
    for (const RatioTotal& q : s.ratios) {
      if (q.collections == 0) {  // no collection had a denominator: no ratio to show
        line("  %-*s %11s %11s %11s  %s / %s\n", width, q.name.c_str(), "-", "-", "-", q.numerator.c_str(),
             q.denominator.c_str());
        continue;
      }
      line("  %-*s %11.2f %11.2f %11.2f  %s / %s\n", width, q.name.c_str(), q.run, q.min_per_collection,
           q.max_per_collection, q.numerator.c_str(), q.denominator.c_str());
    }
  }
  if (!s.sequences.empty()) {
    int width = name_width(s.sequences);
    line("\n  %-*s %11s %11s %11s %11s %11s\n", width, "sequence", "collections", "mean len", "max len",
         "mean value", "max value");
    for (const SequenceTotal& q : s.sequences)
      line("  %-*s %11llu %11.1f %11llu %11.1f %11llu\n", width, q.name.c_str(),
           static_cast<unsigned long long>(q.collections), q.mean_length,
           static_cast<unsigned long long>(q.max_length), q.mean_value,
           static_cast<unsigned long long>(q.max_value));
  }
  return out;
}

// JSON (docs/gc-stats.schema.json)

std::string stats_json(const Summary& s) {
  std::string out;
  JsonWriter j(out);
  j.begin_object();
  j.field("schema", "gclab-gc-stats/1");
  j.field("collector", s.collector);
  j.key("variant").begin_object().field("text", variant_line(s.variant)).key("name");
  if (s.variant)
    j.value(s.variant->name);
  else
    j.null();
  j.field("paper_configuration", s.variant && s.variant->departures.empty());
  j.key("departures").begin_array();
  if (s.variant)
    for (const std::string& d : s.variant->departures) j.value(d);
  j.end_array().end_object();
  j.field("gc_threads", s.gc_threads);
  j.field("detailed", s.detailed);
  j.field("run_time_ms", s.run_time_ms, 3);
  j.key("collections").begin_object();
  j.field("total", s.collections);
  j.key("by_kind").begin_object().field("Young", s.young).field("Full", s.full);
  if (s.increments) j.field("Increment", s.increments);
  j.end_object();
  j.key("by_cause").begin_object();
  for (const auto& [name, n] : s.by_cause) j.field(name, n);
  j.end_object();
  j.end_object();
  j.key("pause_ms").begin_object();
  j.field("total", s.pause_total_ms, 3).field("mean", s.pause_mean_ms, 3).field("p50", s.pause_p50_ms, 3);
  j.field("p90", s.pause_p90_ms, 3).field("p99", s.pause_p99_ms, 3).field("max", s.pause_max_ms, 3);
  j.field("percentiles_exact", s.percentiles_exact);
  j.field("simulated_collections", s.simulated_collections).field("host_total", s.host_pause_total_ms, 3);
  j.end_object();
  j.field("gc_share", s.gc_share, 6);
  j.key("cpu_ms").begin_object();
  j.field("mutator", s.mutator_cpu_ms, 3).field("collector", s.collector_cpu_ms(), 3);
  j.field("collecting_thread", s.collecting_thread_cpu_ms, 3).field("gc_threads", s.gc_threads_cpu_ms, 3);
  j.field("other_threads", s.other_threads_cpu_ms, 3).field("process", s.process_cpu_ms, 3);
  j.end_object();
  j.key("mmu").begin_object();
  j.key("windows").begin_array();
  for (const Summary::Utilisation& u : s.mmu) {
    j.begin_object().field("window_ms", u.window_ms, 3).field("utilisation", u.mmu, 6);
    j.field("worst_start_ms", u.worst_start_ms, 3);
    j.key("worst_collections").begin_array();
    for (uint64_t id : u.worst_collections) j.value(id);
    j.end_array();
    j.key("worst_phases").begin_array();
    for (const auto& [name, ms] : u.worst_phases_ms)
      j.begin_object().field("phase", name).field("ms", ms, 3).end_object();
    j.end_array();
    j.field("worst_outside_phases_ms", u.worst_outside_phases_ms, 3).end_object();
  }
  j.end_array();
  j.key("curve").begin_array();
  for (const UtilisationPoint& p : s.mmu_curve)
    j.begin_object()
        .field("window_ms", p.window_ms, 6)
        .field("mmu", p.mmu, 6)
        .field("bmu", p.bmu, 6)
        .end_object();
  j.end_array();
  j.end_object();
  j.key("allocation").begin_object();
  j.field("bytes", s.bytes_allocated).field("rate_mib_per_s", s.allocation_rate_mb_s, 3);
  j.end_object();
  j.key("heap").begin_object();
  j.field("peak_size_bytes", s.peak_heap);
  if (s.collections)
    j.field("peak_live_bytes", s.peak_live);
  else
    j.key("peak_live_bytes").null();  // measured after a collection, and none ran
  j.field("size_bytes", s.heap_size).field("used_bytes", s.heap_used).field("copied_bytes", s.bytes_copied);
  j.end_object();
  if (s.heap_limit) {
    j.key("heap_limit").begin_object().field("bytes", s.heap_limit->bytes);
    j.field("multiple", s.heap_limit->multiple, 4).field("reference", s.heap_limit->reference);
    j.field("reference_min_bytes", s.heap_limit->reference_min_bytes).end_object();
  }
  j.key("phases").begin_array();
  for (const PhaseTotal& p : s.phases) {
    j.begin_object().field("name", p.name).field("collections", p.collections);
    if (p.parent >= 0) j.field("parent", p.parent);
    j.field("depth", p.depth);
    j.field("work_ms", p.work_ms, 3).field("wall_ms", p.wall_ms, 3).field("max_wall_ms", p.max_wall_ms, 3);
    j.field("pause_ms", p.pause_ms, 3);
    j.end_object();
  }
  j.end_array();
  j.key("workers").begin_array();
  for (const WorkerTotal& w : s.workers) {
    j.begin_object().field("worker", w.worker).field("busy_ms", w.busy_ms, 3).field("idle_ms", w.idle_ms, 3);
    j.key("counters").begin_object();
    for (const auto& [name, v] : w.counters) j.field(name, v);
    j.end_object().end_object();
  }
  j.end_array();
  j.field("balance", s.balance, 4);
  j.key("counters").begin_array();
  for (const CounterTotal& k : s.counters) {
    j.begin_object().field("name", k.name).field("unit", k.unit).field("kind", counter_kind_name(k.kind));
    j.field("total", k.total);
    j.field("mean_per_collection", k.mean_per_collection, 3)
        .field("max_per_collection", k.max_per_collection);
    j.end_object();
  }
  j.end_array();
  if (!s.sequences.empty()) {
    j.key("sequences").begin_array();
    for (const SequenceTotal& q : s.sequences) {
      j.begin_object().field("name", q.name).field("collections", q.collections);
      j.field("mean_length", q.mean_length, 3).field("max_length", q.max_length);
      j.field("mean_value", q.mean_value, 3).field("max_value", q.max_value);
      j.end_object();
    }
    j.end_array();
  }
  if (!s.ratios.empty()) {
    j.key("ratios").begin_array();
    for (const RatioTotal& q : s.ratios) {
      j.begin_object().field("name", q.name).field("numerator", q.numerator);
      j.field("denominator", q.denominator).field("collections", q.collections);
      j.field("run", q.run, 4).field("min_per_collection", q.min_per_collection, 4);
      j.field("max_per_collection", q.max_per_collection, 4);
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();
  out += '\n';
  return out;
}

}  // namespace gc::observe
