#include <algorithm>
#include <cstdio>

#include "gc/observe/json.h"
#include "gc/observe/outputs.h"
#include "gc/observe/stats.h"

namespace gc::observe {

// The page of --gc-report: gc/observe/report/page.html, with its CSS and
// script inlined at build time (cmake/embed.cmake). The script draws every
// panel as inline SVG from the data that report_html puts in place of
// GCLAB_DATA, nothing fetched from the network, and marks its success or
// errors in the page for tests/observe/report_test.sh (page.js).
extern const char* const kReportPage;
extern const char* const kRunScript;
extern const char* const kCompareScript;

namespace {

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// Columns of numbers: one array per field keeps a page with a million
// collections compact and fast to read.
template <class T, class F>
void column(JsonWriter& j, const char* name, const std::vector<T>& rows, F get, int decimals = -2) {
  j.key(name).begin_array();
  for (const T& row : rows) {
    if constexpr (std::is_floating_point_v<decltype(get(row))>)
      j.value(static_cast<double>(get(row)), decimals < -1 ? 4 : decimals);
    else
      j.value(static_cast<uint64_t>(get(row)));
  }
  j.end_array();
}

}  // namespace

std::string report_data_json(Collector& heap) {
  const Recorder& r = heap.events;
  Summary summary = summarize(heap);
  std::string out;
  JsonWriter j(out);
  j.begin_object();
  j.field("collector", heap.name());
  j.key("summary").raw(stats_json(summary));
  j.key("phase_names").begin_array();
  for (const std::string& n : r.phase_names()) j.value(n);
  j.end_array();
  j.key("counter_names").begin_array();
  for (const std::string& n : r.counter_names()) j.value(n);
  j.end_array();
  j.key("counter_units").begin_array();
  for (uint32_t k = 0; k < r.counter_names().size(); ++k) j.value(unit_name(r.counter_declaration(k).unit));
  j.end_array();
  j.key("space_names").begin_array();
  for (const std::string& n : r.space_names()) j.value(n);
  j.end_array();
  j.key("cause_names").begin_array();
  for (size_t c = 0; c < r.summary().by_cause.size(); ++c) j.value(cause_name(static_cast<GcCause>(c)));
  j.end_array();

  const auto& c = r.records();
  j.key("collections").begin_object();
  column(j, "id", c, [](const CollectionRecord& x) { return x.id; });
  column(j, "kind", c, [](const CollectionRecord& x) { return static_cast<unsigned>(x.kind); });
  column(j, "cause", c, [](const CollectionRecord& x) { return static_cast<unsigned>(x.cause); });
  column(j, "start_ms", c, [](const CollectionRecord& x) { return ms(x.start_ns); });
  column(j, "pause_ms", c, [](const CollectionRecord& x) { return ms(x.pause_ns()); });
  column(j, "simulated", c, [](const CollectionRecord& x) { return x.simulated() ? 1u : 0u; });
  column(j, "used_before", c, [](const CollectionRecord& x) { return x.used_before; });
  column(j, "size_before", c, [](const CollectionRecord& x) { return x.size_before; });
  column(j, "used_after", c, [](const CollectionRecord& x) { return x.used_after; });
  column(j, "size_after", c, [](const CollectionRecord& x) { return x.size_after; });
  column(j, "live_after", c, [](const CollectionRecord& x) { return x.live_after; });
  j.end_object();

  // The parts of a cycle each pause entered (CollectionRecord::cycle_events).
  std::vector<std::pair<size_t, CyclePart>> cycle;
  for (size_t i = 0; i < c.size(); ++i)
    for (const CycleEvent& e : c[i].cycle_events) cycle.emplace_back(i, e.entered);
  j.key("cycle_events").begin_object();
  column(j, "c", cycle, [](const std::pair<size_t, CyclePart>& e) { return e.first; });
  column(j, "part", cycle,
         [](const std::pair<size_t, CyclePart>& e) { return static_cast<unsigned>(e.second); });
  j.end_object();

  // Phases, counters and spaces carry the index of their collection.
  std::vector<size_t> pc, kc, sc;
  for (size_t i = 0; i < c.size(); ++i) {
    for ([[maybe_unused]] const PhaseRecord& p : r.phases_of(i)) pc.push_back(i);
    for ([[maybe_unused]] const CounterRecord& k : r.counters_of(i)) kc.push_back(i);
    for ([[maybe_unused]] const SpaceRecord& s : r.spaces_of(i)) sc.push_back(i);
  }
  j.key("phases").begin_object();
  column(j, "c", pc, [](size_t i) { return i; });
  column(j, "phase", r.phases(), [](const PhaseRecord& p) { return p.phase; });
  column(j, "worker", r.phases(), [](const PhaseRecord& p) { return p.worker; });
  column(j, "start_ms", r.phases(), [](const PhaseRecord& p) { return ms(p.start_ns); });
  column(j, "dur_ms", r.phases(), [](const PhaseRecord& p) { return ms(p.end_ns - p.start_ns); });
  // The enclosing phase's row (PhaseRecord::parent), -1 at the top level.
  column(
      j, "parent", r.phases(),
      [](const PhaseRecord& p) {
        return p.parent == PhaseRecord::kNoParent ? -1.0 : static_cast<double>(p.parent);
      },
      0);
  j.end_object();
  j.key("counters").begin_object();
  column(j, "c", kc, [](size_t i) { return i; });
  column(j, "counter", r.counters(), [](const CounterRecord& k) { return k.counter; });
  column(j, "worker", r.counters(), [](const CounterRecord& k) { return k.worker; });
  column(j, "value", r.counters(), [](const CounterRecord& k) { return k.value; });
  j.end_object();
  j.key("spaces").begin_object();
  column(j, "c", sc, [](size_t i) { return i; });
  column(j, "name", r.spaces(), [](const SpaceRecord& s) { return s.name; });
  column(j, "role", r.spaces(), [](const SpaceRecord& s) { return s.role; });
  column(j, "capacity", r.spaces(), [](const SpaceRecord& s) { return s.capacity_bytes; });
  column(j, "used", r.spaces(), [](const SpaceRecord& s) { return s.used_bytes; });
  j.end_object();

  std::vector<size_t> qc;
  for (size_t i = 0; i < c.size(); ++i)
    for ([[maybe_unused]] const SequenceRecord& q : r.sequences_of(i)) qc.push_back(i);
  j.key("sequence_names").begin_array();
  for (const std::string& n : r.sequence_names()) j.value(n);
  j.end_array();
  j.key("sequences").begin_object();
  column(j, "c", qc, [](size_t i) { return i; });
  column(j, "name", r.sequences(), [](const SequenceRecord& q) { return q.name; });
  column(j, "first", r.sequences(), [](const SequenceRecord& q) { return q.first; });
  column(j, "count", r.sequences(), [](const SequenceRecord& q) { return q.count; });
  column(j, "values", r.sequence_values(), [](uint64_t v) { return v; });
  j.end_object();

  j.key("panels").begin_array();
  for (const PanelSpec& p : r.panels()) {
    j.begin_object().field("title", p.title).field("y_label", p.y_label).field("description", p.description);
    j.key("series").begin_array();
    for (const PanelSeries& s : p.series)
      j.begin_object()
          .field("label", s.label)
          .field("counter", s.counter->name)
          .field("per_counter", s.per_counter ? s.per_counter->name : "")
          .field("scale", s.scale)
          .end_object();
    j.end_array().end_object();
  }
  j.end_array();
  j.key("sequence_panels").begin_array();
  for (const SequencePanelSpec& p : r.sequence_panels()) {
    j.begin_object().field("title", p.title).field("y_label", p.y_label).field("description", p.description);
    j.field("sequence", p.sequence->name).field("x_label", p.x_label);
    j.field("x_step_counter", p.x_step_counter ? p.x_step_counter->name : "");
    j.key("x_ticks").begin_array();
    for (const std::string& t : p.x_ticks) j.value(t);
    j.end_array().end_object();
  }
  j.end_array();
  j.end_object();
  return out;
}

namespace {

// The page with one of its scripts, the data that script draws, and a
// title (escaped: a program's name may be "<stdin>").
std::string page_with(const char* script, const std::string& data, const std::string& title) {
  std::string page = kReportPage;
  const std::string script_marker = "/*GCLAB_SCRIPT*/";
  page.replace(page.find(script_marker), script_marker.size(), script);
  const std::string data_marker = "/*GCLAB_DATA*/null";
  page.replace(page.find(data_marker), data_marker.size(), data);
  std::string escaped;
  for (char ch : title)
    escaped += ch == '<' ? std::string("&lt;") : ch == '&' ? std::string("&amp;") : std::string(1, ch);
  size_t t = page.find("<title></title>");
  if (t != std::string::npos) page.replace(t, 15, "<title>" + escaped + "</title>");
  return page;
}

}  // namespace

std::string report_html(Collector& heap) {
  return page_with(kRunScript, report_data_json(heap), std::string("gclab GC report: ") + heap.name());
}

std::string compare_report_html(const std::string& program, const std::vector<ComparedRun>& runs,
                                const std::string& lower_bounds, const std::string& heap_sweep) {
  std::string data;
  JsonWriter j(data);
  j.begin_object().field("program", program).key("runs").begin_array();
  for (const ComparedRun& r : runs) {
    j.begin_object().field("collector", r.collector).field("exit_status", r.exit_status);
    j.field("disagreement", r.disagreement).key("data");
    if (r.data)
      j.raw(*r.data);
    else
      j.null();
    j.end_object();
  }
  j.end_array().key("lower_bound").raw(lower_bounds).key("heaps").raw(heap_sweep).end_object();
  return page_with(kCompareScript, data, "gclab comparison: " + program);
}

std::string text_heap_map(const Collector& heap, int width) {
  std::vector<SpaceUsage> spaces;
  heap.describe_spaces(spaces);
  uint64_t largest = 1;
  for (const SpaceUsage& s : spaces) largest = std::max(largest, s.capacity_bytes);
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "heap map (%s): # used, . free; bar lengths are to scale, one column = %.1f KiB\n",
                heap.name(), static_cast<double>(largest) / width / 1024);
  out += buf;
  size_t name_width = 0;
  for (const SpaceUsage& s : spaces) name_width = std::max(name_width, s.name.size());
  for (const SpaceUsage& s : spaces) {
    int cols = s.capacity_bytes ? std::max(1, static_cast<int>(static_cast<double>(s.capacity_bytes) /
                                                                   static_cast<double>(largest) * width +
                                                               0.5))
                                : 0;
    int used =
        s.capacity_bytes
            ? static_cast<int>(
                  static_cast<double>(s.used_bytes) / static_cast<double>(s.capacity_bytes) * cols + 0.5)
            : 0;
    if (s.used_bytes > 0 && used == 0) used = 1;
    std::string bar = "[" + std::string(static_cast<size_t>(used), '#') +
                      std::string(static_cast<size_t>(cols - used), '.') + "]";
    std::snprintf(buf, sizeof buf, "  %-*s %-*s %8.1f KiB of %8.1f KiB (%3.0f%%)  %s\n",
                  static_cast<int>(name_width), s.name.c_str(), width + 2, bar.c_str(),
                  static_cast<double>(s.used_bytes) / 1024, static_cast<double>(s.capacity_bytes) / 1024,
                  s.capacity_bytes
                      ? 100.0 * static_cast<double>(s.used_bytes) / static_cast<double>(s.capacity_bytes)
                      : 0.0,
                  s.role.c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "  heap: %.1f KiB used of %.1f KiB (maximum %.1f MiB)\n",
                static_cast<double>(heap.heap_used()) / 1024, static_cast<double>(heap.heap_size()) / 1024,
                static_cast<double>(heap.max_heap()) / (1 << 20));
  out += buf;
  return out;
}

}  // namespace gc::observe
