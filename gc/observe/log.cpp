#include "gc/observe/log.h"

#include <algorithm>
#include <map>

#include "gc/collector.h"

namespace gc::observe {

Log::~Log() {
  if (owns_ && out_)
    std::fclose(out_);
  else if (out_)
    std::fflush(out_);
}

std::string uptime(int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "[%.3fs]", static_cast<double>(ns) / 1e9);
  return buf;
}

namespace {

int log_shift(uint64_t largest) { return largest < (10ull << 20) ? 10 : largest < (10ull << 30) ? 20 : 30; }

}  // namespace

std::string log_size(uint64_t bytes) {
  int shift = log_shift(bytes);
  return std::to_string(bytes >> shift) + (shift == 10 ? "K" : shift == 20 ? "M" : "G");
}

std::string heap_transition(uint64_t before, uint64_t after, uint64_t size) {
  int shift = log_shift(std::max({before, after, size}));
  char unit = shift == 10 ? 'K' : shift == 20 ? 'M' : 'G';
  char buf[96];
  std::snprintf(buf, sizeof buf, "%llu%c->%llu%c(%llu%c)", static_cast<unsigned long long>(before >> shift),
                unit, static_cast<unsigned long long>(after >> shift), unit,
                static_cast<unsigned long long>(size >> shift), unit);
  return buf;
}

namespace {

// After a modelled pause: what it is, and the host's time.
std::string simulated_note(const CollectionRecord& c) {
  if (!c.simulated()) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, " simulated (host %.3fms)", static_cast<double>(c.host_ns()) / 1e6);
  return buf;
}

}  // namespace

std::string pause_line(const Recorder& r, size_t i) {
  const CollectionRecord& c = r.records()[i];
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s[gc] GC(%llu) Pause %s (%s) %s %.3fms", uptime(c.end_ns).c_str(),
                static_cast<unsigned long long>(c.id), kind_name(c.kind), cause_name(c.cause),
                heap_transition(c.used_before, c.used_after, c.size_after).c_str(), c.pause_ms());
  return buf + simulated_note(c);
}

std::string debug_lines(const Recorder& r, size_t i) {
  const CollectionRecord& c = r.records()[i];
  std::string out;
  std::string head_phases = uptime(c.end_ns) + "[gc,phases] GC(" + std::to_string(c.id) + ")   ";
  std::string head_workers = uptime(c.end_ns) + "[gc,workers] GC(" + std::to_string(c.id) + ")   ";
  char buf[256];

  // Phases in the order they first started, a nested one (PhaseRecord)
  // indented under its parent; per worker sums, then min, average and max
  // over the workers that ran the phase.
  struct PhaseTimes {
    uint32_t parent_phase = UINT32_MAX;  // the enclosing phase's name, or none
    unsigned depth = 0;
    std::vector<double> per_worker_ms;  // indexed by worker
    std::vector<std::pair<int64_t, int64_t>> spans;
  };
  std::vector<std::pair<uint32_t, PhaseTimes>> phases;
  unsigned max_worker = 0;
  for (const PhaseRecord& p : r.phases_of(i)) {
    PhaseTimes key;
    for (uint64_t q = p.parent; q != PhaseRecord::kNoParent; q = r.phases()[q].parent) ++key.depth;
    if (p.parent != PhaseRecord::kNoParent) key.parent_phase = r.phases()[p.parent].phase;
    auto it = std::find_if(phases.begin(), phases.end(), [&](const auto& e) {
      return e.first == p.phase && e.second.parent_phase == key.parent_phase && e.second.depth == key.depth;
    });
    if (it == phases.end()) it = phases.insert(phases.end(), {p.phase, key});
    PhaseTimes& t = it->second;
    if (t.per_worker_ms.size() <= p.worker) t.per_worker_ms.resize(p.worker + 1, -1);
    double& w = t.per_worker_ms[p.worker];
    w = std::max(w, 0.0) + static_cast<double>(p.end_ns - p.start_ns) / 1e6;
    t.spans.push_back({p.start_ns, p.end_ns});
    max_worker = std::max(max_worker, p.worker);
  }
  for (auto& [id, t] : phases) {
    double wall = static_cast<double>(union_length(t.spans)) / 1e6;
    double mn = 1e300, mx = 0, sum = 0;
    int n = 0;
    for (double w : t.per_worker_ms) {
      if (w < 0) continue;
      mn = std::min(mn, w), mx = std::max(mx, w), sum += w, ++n;
    }
    if (n > 1)
      std::snprintf(buf, sizeof buf, "%s: %.3fms (workers %d: min %.3f, avg %.3f, max %.3f, sum %.3fms)",
                    r.phase_names()[id].c_str(), wall, n, mn, sum / n, mx, sum);
    else
      std::snprintf(buf, sizeof buf, "%s: %.3fms%s", r.phase_names()[id].c_str(), wall,
                    c.simulated() ? " simulated" : "");
    out += head_phases + std::string(2 * t.depth, ' ') + buf + "\n";
  }

  // Workers: busy is the union of the worker's phases, idle the rest of the
  // pause; then the worker's counters.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> spans(max_worker + 1);
  for (const PhaseRecord& p : r.phases_of(i)) spans[p.worker].push_back({p.start_ns, p.end_ns});
  for (const CounterRecord& k : r.counters_of(i))
    if (k.worker >= spans.size()) spans.resize(k.worker + 1);
  for (unsigned w = 0; w < spans.size(); ++w) {
    bool has_counters = false;
    for (const CounterRecord& k : r.counters_of(i)) has_counters |= k.worker == w;
    if (spans[w].empty() && !has_counters) continue;
    double busy_ms = static_cast<double>(union_length(spans[w])) / 1e6;
    std::snprintf(buf, sizeof buf, "worker %u: busy %.3fms, idle %.3fms", w, busy_ms,
                  std::max(0.0, c.pause_ms() - busy_ms));
    std::string line = buf;
    for (const CounterRecord& k : r.counters_of(i))
      if (k.worker == w) line += ", " + r.counter_names()[k.counter] + " " + std::to_string(k.value);
    out += head_workers + line + "\n";
  }

  // Ratios the collector described, from this collection's counters.
  std::string head_ratios = uptime(c.end_ns) + "[gc,ratios] GC(" + std::to_string(c.id) + ")   ";
  for (const RatioSpec& q : r.ratios()) {
    uint64_t num = 0, den = 0;
    for (const CounterRecord& k : r.counters_of(i)) {
      const std::string& name = r.counter_names()[k.counter];
      if (name == q.numerator->name) num += k.value;
      if (name == q.denominator->name) den += k.value;
    }
    if (den == 0) continue;
    std::snprintf(buf, sizeof buf, "%s: %.2f (%s / %s)", q.name.c_str(),
                  static_cast<double>(num) / static_cast<double>(den), q.numerator->name,
                  q.denominator->name);
    out += head_ratios + buf + "\n";
  }
  if (!c.ergonomics.empty())
    out += uptime(c.end_ns) + "[gc,ergo] GC(" + std::to_string(c.id) + ")   " + c.ergonomics + "\n";
  return out;
}

void Log::using_collector(const std::string& name, const std::string& variant) {
  std::fprintf(out_, "%s[gc] Using %s (%s)\n", uptime(0).c_str(), name.c_str(), variant.c_str());
  std::fflush(out_);
}

std::string cycle_lines(const Recorder& r, size_t i) {
  const CollectionRecord& c = r.records()[i];
  std::string out;
  for (const CycleEvent& e : c.cycle_events)
    out += uptime(c.end_ns) + "[gc,cycle] GC(" + std::to_string(c.id) + ") " + e.text + "\n";
  return out;
}

void Log::collection(const Recorder& r, size_t i) {
  std::string text = debug_ ? debug_lines(r, i) : std::string();
  text += cycle_lines(r, i);
  text += pause_line(r, i);
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

void Log::collection_ignored(int64_t ns, GcCause cause) {
  std::fprintf(out_, "%s[gc] GC request for \"%s\" is ignored\n", uptime(ns).c_str(), cause_name(cause));
  std::fflush(out_);
}

}  // namespace gc::observe
