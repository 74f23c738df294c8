// gc/observe: the Recorder (cost when disabled, per-worker buffers under
// concurrent workers, no caps: a million collections), and the outputs'
// content on known programs: the --gc-stats JSON validated against
// docs/gc-stats.schema.json, and the trace's tracks and flows. JSON is read
// by the small parser below, and the schema checked by a validator of the
// JSON Schema keywords that schema uses.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "gc/observe/log.h"
#include "gc/observe/outputs.h"
#include "gc/observe/stats.h"
#include "vm/vm.h"

namespace {

// --- a small JSON parser --------------------------------------------------

struct Json {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject } type = kNull;
  bool b = false;
  double n = 0;
  bool integer = false;
  std::string s;
  std::vector<Json> a;
  std::vector<std::pair<std::string, Json>> o;
  const Json* get(const std::string& k) const {
    for (const auto& [key, v] : o)
      if (key == k) return &v;
    return nullptr;
  }
  const Json& operator[](const std::string& k) const {
    const Json* v = get(k);
    REQUIRE_MESSAGE(v != nullptr, "missing key " << k);
    return *v;
  }
};

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}
  Json parse() {
    Json v = value();
    ws();
    if (i_ != t_.size()) fail("trailing text");
    return v;
  }
  std::string error;

 private:
  void fail(const char* what) {
    if (error.empty()) error = std::string(what) + " at offset " + std::to_string(i_);
    i_ = t_.size();
  }
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < t_.size() && t_[i_] == c) return ++i_, true;
    return false;
  }
  Json value() {
    ws();
    Json v;
    if (i_ >= t_.size()) return fail("unexpected end"), v;
    char c = t_[i_];
    if (c == '{') {
      ++i_;
      v.type = Json::kObject;
      if (eat('}')) return v;
      do {
        ws();
        Json k = string();
        if (!eat(':')) return fail("expected :"), v;
        v.o.emplace_back(k.s, value());
      } while (eat(','));
      if (!eat('}')) fail("expected }");
    } else if (c == '[') {
      ++i_;
      v.type = Json::kArray;
      if (eat(']')) return v;
      do v.a.push_back(value());
      while (eat(','));
      if (!eat(']')) fail("expected ]");
    } else if (c == '"') {
      v = string();
    } else if (t_.compare(i_, 4, "true") == 0) {
      v.type = Json::kBool, v.b = true, i_ += 4;
    } else if (t_.compare(i_, 5, "false") == 0) {
      v.type = Json::kBool, i_ += 5;
    } else if (t_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else {
      size_t start = i_;
      if (t_[i_] == '-') ++i_;
      bool digits = false, frac = false;
      while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.' ||
                                t_[i_] == 'e' || t_[i_] == 'E' || t_[i_] == '+' || t_[i_] == '-')) {
        digits |= std::isdigit(static_cast<unsigned char>(t_[i_])) != 0;
        frac |= t_[i_] == '.' || t_[i_] == 'e' || t_[i_] == 'E';
        ++i_;
      }
      if (!digits) return fail("bad value"), v;
      v.type = Json::kNumber;
      v.n = std::stod(t_.substr(start, i_ - start));
      v.integer = !frac;
    }
    return v;
  }
  Json string() {
    Json v;
    v.type = Json::kString;
    if (i_ >= t_.size() || t_[i_] != '"') return fail("expected string"), v;
    ++i_;
    while (i_ < t_.size() && t_[i_] != '"') {
      char c = t_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string"), v;
      if (c != '\\') {
        v.s += c;
        continue;
      }
      if (i_ >= t_.size()) break;
      char e = t_[i_++];
      switch (e) {
        case 'n':
          v.s += '\n';
          break;
        case 't':
          v.s += '\t';
          break;
        case 'r':
          v.s += '\r';
          break;
        case 'b':
          v.s += '\b';
          break;
        case 'f':
          v.s += '\f';
          break;
        case 'u': {
          unsigned cp = std::stoul(t_.substr(i_, 4), nullptr, 16);
          i_ += 4;
          v.s += cp < 0x80 ? static_cast<char>(cp) : '?';
          break;
        }
        default:
          v.s += e;
      }
    }
    if (i_ >= t_.size()) return fail("unterminated string"), v;
    ++i_;
    return v;
  }
  const std::string& t_;
  size_t i_ = 0;
};

Json parse_json(const std::string& text) {
  Parser p(text);
  Json v = p.parse();
  INFO(text.substr(0, 400));
  REQUIRE_MESSAGE(p.error.empty(), "JSON: " << p.error);
  return v;
}

// --- JSON Schema: the keywords docs/gc-stats.schema.json uses ---------------

void validate(const Json& v, const Json& schema, const std::string& path, std::vector<std::string>& errors) {
  auto err = [&](const std::string& what) { errors.push_back(path + ": " + what); };
  if (const Json* c = schema.get("const")) {
    if (c->type != v.type || (c->type == Json::kString && c->s != v.s)) err("not the constant");
  }
  if (const Json* e = schema.get("enum")) {
    bool found = false;
    for (const Json& x : e->a) found |= x.type == v.type && (x.type != Json::kString || x.s == v.s);
    if (!found) err("not one of the enum's values");
  }
  if (const Json* t = schema.get("type")) {
    auto is = [&](const std::string& type) {
      return (type == "object" && v.type == Json::kObject) || (type == "array" && v.type == Json::kArray) ||
             (type == "string" && v.type == Json::kString) || (type == "boolean" && v.type == Json::kBool) ||
             (type == "number" && v.type == Json::kNumber) || (type == "null" && v.type == Json::kNull) ||
             (type == "integer" && v.type == Json::kNumber && v.n == std::floor(v.n));
    };
    // A type is one name, or a list of names any of which will do.
    bool ok = t->type == Json::kString
                  ? is(t->s)
                  : std::any_of(t->a.begin(), t->a.end(), [&](const Json& name) { return is(name.s); });
    if (!ok) return err("not of the schema's type");
  }
  if (v.type == Json::kNumber) {
    if (const Json* m = schema.get("minimum"); m && v.n < m->n) err("below minimum");
    if (const Json* m = schema.get("maximum"); m && v.n > m->n) err("above maximum");
  }
  if (v.type == Json::kObject) {
    if (const Json* req = schema.get("required"))
      for (const Json& k : req->a)
        if (!v.get(k.s)) err("missing required " + k.s);
    const Json* props = schema.get("properties");
    const Json* extra = schema.get("additionalProperties");
    for (const auto& [k, child] : v.o) {
      const Json* sub = props ? props->get(k) : nullptr;
      if (sub)
        validate(child, *sub, path + "." + k, errors);
      else if (extra && extra->type == Json::kBool && !extra->b)
        err("unexpected property " + k);
      else if (extra && extra->type == Json::kObject)
        validate(child, *extra, path + "." + k, errors);
    }
  }
  if (v.type == Json::kArray)
    if (const Json* items = schema.get("items"))
      for (size_t i = 0; i < v.a.size(); ++i)
        validate(v.a[i], *items, path + "[" + std::to_string(i) + "]", errors);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_against_schema(const std::string& stats_json) {
  Json schema = parse_json(read_text(std::string(GCLAB_SOURCE_DIR) + "/docs/gc-stats.schema.json"));
  Json stats = parse_json(stats_json);
  std::vector<std::string> errors;
  validate(stats, schema, "$", errors);
  std::string all;
  for (const std::string& e : errors) all += e + "\n";
  CHECK_MESSAGE(errors.empty(), all);
}

vm::VMOptions recording_options(unsigned threads) {
  vm::VMOptions o;
  o.collector = "semispace";
  o.heap.max_heap_bytes = 64ull << 20;
  o.heap.gc_threads = threads;
  o.heap.record_events = true;
  o.heap.keep_event_history = true;
  return o;
}

// Five explicit collections and enough allocation for a few more.
const char* const kProgram = R"(
let keep = [];
for (let i = 0; i < 5; i += 1) { gc(); }
for (let i = 0; i < 300000; i += 1) {
  let a = [i, i + 1, i + 2];
  if (i % 100 == 0) { push(keep, a); }
}
print(len(keep));
)";

// A collector that does nothing, for driving a Recorder directly.
constexpr gc::observe::Counter kTestObjects{"objects", gc::observe::Unit::kObjects};
constexpr gc::observe::Counter kTestSteals{"steals", gc::observe::Unit::kTasks};

struct NoRoots final : gc::RootSet {
  void root_groups(std::vector<gc::RootGroup>&) override {}
  void process_weak(gc::WeakResolver&) override {}
};
class FakeCollector final : public gc::Collector {
 public:
  // A collection's work between its start and end: by default one phase
  // and one counter.
  using Work = std::function<void(gc::observe::Recorder&)>;
  FakeCollector(gc::RootSet& r, const gc::HeapOptions& o, Work work = {},
                gc::observe::CollectionKind kind = gc::observe::CollectionKind::kYoung)
      : Collector(r, o), work_(std::move(work)), kind_(kind) {}
  gc::Word* allocate_slow(uint32_t, uint64_t, uint64_t) override { return nullptr; }
  gc::Word* allocate_pinned(uint32_t, uint64_t, uint64_t) override { return nullptr; }
  void collect(gc::GcCause cause) override {
    events.collection_start(kind_, cause, *this);
    if (work_) {
      work_(events);
    } else {
      events.phase(0, "work", [&] { events.count(0, kTestObjects, 3); });
    }
    events.collection_end(*this);
  }
  const char* name() const override { return "fake"; }
  void describe_heap(gc::verify::HeapShape&) const override {}  // it holds no objects
  uint64_t heap_used() const override { return 1000; }
  uint64_t heap_size() const override { return 4000; }
  bool in_heap(const void*) const override { return false; }
  uint64_t identity_hash(gc::Word*) override { return 0; }

 private:
  Work work_;
  gc::observe::CollectionKind kind_;
};

}  // namespace

TEST_CASE("observe: a disabled recorder records no phases or counters, but counts collections") {
  NoRoots roots;
  gc::HeapOptions o;
  FakeCollector c(roots, o);
  for (int i = 0; i < 10; ++i) c.collect(gc::GcCause::kExplicit);
  CHECK_FALSE(c.events.enabled());
  CHECK(c.events.records().empty());
  CHECK(c.events.phases().empty());
  CHECK(c.events.summary().collections == 10);
  CHECK(c.events.summary().young == 10);
  gc::observe::Summary s = gc::observe::summarize(c);
  CHECK(s.collections == 10);
  CHECK_FALSE(s.detailed);
  CHECK_FALSE(s.percentiles_exact);
  CHECK(s.pause_p99_ms <= s.pause_max_ms);
  check_against_schema(gc::observe::stats_json(s));
}

TEST_CASE("observe: with no collection, peak live is unknown, not 0, in the JSON and the table") {
  NoRoots roots;
  gc::HeapOptions o;
  FakeCollector c(roots, o);
  gc::observe::Summary s = gc::observe::summarize(c);
  REQUIRE(s.collections == 0);
  std::string json = gc::observe::stats_json(s);
  check_against_schema(json);
  CHECK(parse_json(json)["heap"]["peak_live_bytes"].type == Json::kNull);
  CHECK(gc::observe::stats_table(s).find("peak live          - (measured after a collection; none ran)") !=
        std::string::npos);
}

TEST_CASE(
    "observe: a modelled pause is the simulated time, its phases the simulated ones, the host's beside") {
  NoRoots roots;
  gc::HeapOptions o;
  o.record_events = true;
  o.keep_event_history = true;
  // A collector that models its pauses: a host phase of 2 ms around two
  // simulated ones of 30 and 70 us.
  FakeCollector c(
      roots, o,
      [](gc::observe::Recorder& events) {
        events.phase(0, "simulation", [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          events.simulated_phase(0, "mark", 30'000);
          events.simulated_phase(0, "sweep", 70'000);
        });
      },
      gc::observe::CollectionKind::kFull);
  for (int i = 0; i < 3; ++i) c.collect(gc::GcCause::kExplicit);
  const gc::observe::CollectionRecord& r = c.events.records().back();
  CHECK(r.simulated());
  CHECK(r.pause_ns() == 100'000);
  CHECK(r.host_ns() >= 2'000'000);
  auto phases = c.events.phases_of(2);
  REQUIRE(phases.end() - phases.begin() == 2);
  CHECK(c.events.phase_names()[phases.begin()->phase] == "mark");
  CHECK(phases.begin()->start_ns == r.start_ns);
  CHECK(phases.begin()[1].start_ns == r.start_ns + 30'000);
  CHECK(phases.begin()[1].end_ns == r.start_ns + 100'000);
  gc::observe::Summary s = gc::observe::summarize(c);
  CHECK(s.simulated_collections == 3);
  CHECK(s.pause_total_ms == doctest::Approx(0.3));
  CHECK(s.pause_max_ms == doctest::Approx(0.1));
  CHECK(s.host_pause_total_ms >= 6);
  std::string table = gc::observe::stats_table(s);
  CHECK(table.find("pause total        0.300 ms simulated, in 3 of 3 collections (the host took") !=
        std::string::npos);
  CHECK(gc::observe::pause_line(c.events, 2).find(" 0.100ms simulated (host ") != std::string::npos);
  check_against_schema(gc::observe::stats_json(s));
}

TEST_CASE("observe: a million collections are all kept and summarised") {
  NoRoots roots;
  gc::HeapOptions o;
  o.record_events = true;
  o.keep_event_history = true;
  FakeCollector c(roots, o);
  constexpr int kCollections = 1'000'000;
  for (int i = 0; i < kCollections; ++i) c.collect(gc::GcCause::kAllocationFailure);
  REQUIRE(c.events.records().size() == kCollections);
  CHECK(c.events.phases().size() == kCollections);
  CHECK(c.events.records().back().id == kCollections - 1);
  gc::observe::Summary s = gc::observe::summarize(c);
  CHECK(s.detailed);
  REQUIRE(s.counters.size() == 1);
  CHECK(s.counters[0].total == 3ull * kCollections);
  REQUIRE(s.phases.size() == 1);
  CHECK(s.phases[0].collections == kCollections);
}

TEST_CASE("observe: workers record phases concurrently into their own buffers") {
  NoRoots roots;
  gc::HeapOptions o;
  o.gc_threads = 4;
  o.record_events = true;
  o.keep_event_history = true;
  FakeCollector c(roots, o);
  for (int round = 0; round < 20; ++round) {
    c.events.collection_start(gc::observe::CollectionKind::kFull, gc::GcCause::kExplicit, c);
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < 4; ++w)
      workers.emplace_back([&c, w] {
        for (int i = 0; i < 50; ++i) {
          c.events.phase(w, "mark",
                         [&] { c.events.phase(w, "steal", [&] { c.events.count(w, kTestSteals, 1); }); });
        }
      });
    for (std::thread& t : workers) t.join();
    c.events.collection_end(c);
  }
  REQUIRE(c.events.records().size() == 20);
  CHECK(c.events.phases().size() == 20u * 4 * 50 * 2);
  gc::observe::Summary s = gc::observe::summarize(c);
  REQUIRE(s.workers.size() == 4);
  for (const gc::observe::WorkerTotal& w : s.workers) {
    REQUIRE(w.counters.size() == 1);
    CHECK(w.counters[0].second == 20u * 50);
  }
  std::string trace = gc::observe::trace_json(c);
  Json t = parse_json(trace);
  std::set<double> gc_tracks;
  for (const Json& e : t["traceEvents"].a)
    if (e["ph"].s == "M" && e["name"].s == "thread_name" && e["args"]["name"].s.rfind("GC worker", 0) == 0)
      gc_tracks.insert(e["tid"].n);
  CHECK(gc_tracks.size() == 4);
}

TEST_CASE("observe: a phase that runs twice in a collection is timed for its runs, not the time between") {
  NoRoots roots;
  gc::HeapOptions o;
  o.record_events = true;
  o.keep_event_history = true;
  FakeCollector c(roots, o);
  c.events.collection_start(gc::observe::CollectionKind::kFull, gc::GcCause::kExplicit, c);
  c.events.phase(0, "weak references", [&] {});
  c.events.phase(0, "mark", [&] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
  c.events.phase(0, "weak references", [&] {});
  c.events.collection_end(c);
  gc::observe::Summary s = gc::observe::summarize(c);
  const gc::observe::PhaseTotal* weak = nullptr;
  const gc::observe::PhaseTotal* mark = nullptr;
  for (const gc::observe::PhaseTotal& p : s.phases) (p.name == "mark" ? mark : weak) = &p;
  REQUIRE(weak != nullptr);
  REQUIRE(mark != nullptr);
  CHECK(mark->wall_ms >= 20);
  // One worker, disjoint runs: the wall time is their sum.
  CHECK(weak->wall_ms == doctest::Approx(weak->work_ms));
  CHECK(weak->wall_ms < mark->wall_ms);
  std::string log = gc::observe::debug_lines(c.events, 0);
  std::smatch m;
  REQUIRE(std::regex_search(log, m, std::regex("weak references: ([0-9.]+)ms")));
  CHECK(std::stod(m[1].str()) < 20);
}

TEST_CASE("observe: a phase started inside another is its child, on its worker and on those it fans out to") {
  NoRoots roots;
  gc::HeapOptions o;
  o.gc_threads = 2;
  o.record_events = true;
  o.keep_event_history = true;
  FakeCollector c(roots, o);
  using namespace std::chrono_literals;
  c.events.collection_start(gc::observe::CollectionKind::kFull, gc::GcCause::kExplicit, c);
  c.events.phase(0, "young part", [&] { std::this_thread::sleep_for(2ms); });
  c.events.phase(0, "old generation", [&] {
    std::thread helper([&c] { c.events.phase(1, "mark", [] { std::this_thread::sleep_for(5ms); }); });
    c.events.phase(0, "mark", [] { std::this_thread::sleep_for(4ms); });
    helper.join();
    c.events.phase(0, "compact", [] { std::this_thread::sleep_for(2ms); });
  });
  c.events.phase(0, "weak references", [] {});
  c.events.collection_end(c);

  const auto& phases = c.events.phases();
  REQUIRE(phases.size() == 6);
  auto name = [&](const gc::observe::PhaseRecord& p) { return c.events.phase_names()[p.phase]; };
  for (size_t i = 0; i < phases.size(); ++i) {
    CAPTURE(name(phases[i]));
    bool nested = name(phases[i]) == "mark" || name(phases[i]) == "compact";
    REQUIRE((phases[i].parent != gc::observe::PhaseRecord::kNoParent) == nested);
    if (!nested) continue;
    // Sorted by start, a parent before its children.
    CHECK(phases[i].parent < i);
    CHECK(name(phases[phases[i].parent]) == "old generation");
  }

  gc::observe::Summary s = gc::observe::summarize(c);
  std::vector<std::string> order;
  for (const gc::observe::PhaseTotal& p : s.phases) order.push_back(std::string(2 * p.depth, ' ') + p.name);
  CHECK(order ==
        std::vector<std::string>{"young part", "old generation", "  mark", "  compact", "weak references"});
  double top = 0;
  for (const gc::observe::PhaseTotal& p : s.phases) {
    if (p.parent < 0) {
      top += p.pause_ms;
      continue;
    }
    const gc::observe::PhaseTotal& parent = s.phases[static_cast<size_t>(p.parent)];
    CHECK(p.wall_ms <= parent.wall_ms);
    CHECK(p.pause_ms <= parent.wall_ms);
  }
  CHECK(top <= s.pause_total_ms);
  CHECK(s.phases[2].wall_ms >= 5);  // mark: the union over both workers
  std::string table = gc::observe::stats_table(s);
  CHECK(table.find("\n    mark ") != std::string::npos);
  check_against_schema(gc::observe::stats_json(s));

  // The trace: a child's slice within its parent's on the same track, after it.
  Json t = parse_json(gc::observe::trace_json(c));
  double parent_end = -1, child_end = -1, parent_ts = -1, child_ts = -1;
  for (const Json& e : t["traceEvents"].a) {
    if (e["ph"].s != "X" || e["tid"].n != 2) continue;
    if (e["name"].s == "old generation") parent_ts = e["ts"].n, parent_end = e["ts"].n + e["dur"].n;
    if (e["name"].s == "mark") {
      CHECK(parent_ts >= 0);  // the parent came first
      child_ts = e["ts"].n, child_end = e["ts"].n + e["dur"].n;
    }
  }
  CHECK(parent_ts <= child_ts);
  CHECK(child_end <= parent_end + 0.001);
  // The log indents it too.
  CHECK(gc::observe::debug_lines(c.events, 0).find("     mark: ") != std::string::npos);
}

TEST_CASE("observe: a counter's declaration gives its unit and kind; a peak's total is the largest") {
  std::set<std::string> names;
  for (const gc::observe::UnitName& u : gc::observe::kUnitNames) {
    CAPTURE(u.name);
    CHECK(std::string(u.name).find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos);
    CHECK(names.insert(u.name).second);
  }
  CHECK(std::string(gc::observe::unit_name(gc::observe::Unit::kEntries)) == "entries");
  NoRoots roots;
  gc::HeapOptions o;
  o.record_events = true;
  o.keep_event_history = true;
  FakeCollector c(roots, o);
  constexpr gc::observe::Counter kQueuePeak{"queue peak", gc::observe::Unit::kEntries,
                                            gc::observe::CounterKind::kPeak};
  // Declared again elsewhere under the same name: the same counter.
  constexpr gc::observe::Counter kSameObjects{"objects", gc::observe::Unit::kObjects};
  for (uint64_t peak : {5u, 9u, 2u}) {
    c.events.collection_start(gc::observe::CollectionKind::kYoung, gc::GcCause::kExplicit, c);
    c.events.count(0, kQueuePeak, peak);
    c.events.count(0, kTestObjects, peak - 1);
    c.events.count(0, kSameObjects, 1);
    c.events.collection_end(c);
  }
  gc::observe::Summary s = gc::observe::summarize(c);
  REQUIRE(s.counters.size() == 2);
  for (const gc::observe::CounterTotal& k : s.counters) {
    CAPTURE(k.name);
    CHECK(k.total == (k.name == "queue peak" ? 9u : 16u));
    CHECK(k.max_per_collection == 9);
    CHECK(k.unit == (k.name == "queue peak" ? "entries" : "objects"));
  }
  Json j = parse_json(gc::observe::stats_json(s));
  for (const Json& k : j["counters"].a) CHECK(k["kind"].s == (k["name"].s == "queue peak" ? "peak" : "sum"));
  check_against_schema(gc::observe::stats_json(s));
}

TEST_CASE("observe: stats, log, trace and report of a known program") {
  for (unsigned threads : {0u, 2u}) {
    CAPTURE(threads);
    vm::VM machine(recording_options(threads));
    REQUIRE(machine.run_source("<observe>", kProgram) == 0);
    gc::Collector& heap = machine.heap();
    const gc::observe::Recorder& r = heap.events;

    // Counts match what the program must have caused.
    gc::observe::Summary s = gc::observe::summarize(heap);
    CHECK(s.detailed);
    CHECK(s.collections == r.records().size());
    CHECK(s.full >= 5);
    uint64_t explicit_gcs = 0;
    for (const auto& [cause, n] : s.by_cause)
      if (cause == "System.gc()") explicit_gcs = n;
    CHECK(explicit_gcs == 5);
    CHECK(s.bytes_allocated > 300000ull * 4 * 8);
    CHECK(s.pause_p50_ms <= s.pause_p90_ms);
    CHECK(s.pause_p90_ms <= s.pause_p99_ms);
    CHECK(s.pause_p99_ms <= s.pause_max_ms);

    // The JSON form validates against the documented schema.
    std::string json = gc::observe::stats_json(s);
    check_against_schema(json);
    Json j = parse_json(json);
    CHECK(j["collections"]["by_cause"]["System.gc()"].n == 5);
    CHECK(j["collections"]["total"].n == static_cast<double>(s.collections));
    // The variant follows --gc-threads: the serial form is the paper's seq,
    // two threads forward by ownership, a departure.
    CHECK(j["variant"]["paper_configuration"].b == (threads == 0));
    CHECK(j["variant"]["name"].s ==
          (threads == 0 ? "Cheney's serial collector (the paper's seq)" : "pSemispaces"));
    CHECK(j["variant"]["departures"].a.size() == (threads == 0 ? 0u : 1u));
    CHECK(gc::observe::stats_table(s).find("; " + j["variant"]["text"].s + "\n") != std::string::npos);

    // Every log line has the JDK shape.
    std::regex shape(
        R"(^\[\d+\.\d{3}s\]\[gc\] GC\(\d+\) Pause (Young|Full) \((.+)\) \d+[KMG]->\d+[KMG]\(\d+[KMG]\) \d+\.\d{3}ms$)");
    for (size_t i = 0; i < r.records().size(); ++i) {
      std::string line = gc::observe::pause_line(r, i);
      CHECK_MESSAGE(std::regex_match(line, shape), line);
    }
    CHECK(gc::observe::pause_line(r, 0).find("GC(0) Pause Full (System.gc())") != std::string::npos);

    // The trace parses; one track per GC worker that ran a phase, plus the
    // mutator; every phase slice is on a named track; flows are closed.
    Json t = parse_json(gc::observe::trace_json(heap));
    std::map<double, std::string> names;
    std::set<double> phase_tids;
    int starts = 0, finishes = 0, pauses = 0;
    for (const Json& e : t["traceEvents"].a) {
      const std::string& ph = e["ph"].s;
      if (ph == "M" && e["name"].s == "thread_name") names[e["tid"].n] = e["args"]["name"].s;
      if (ph == "X" && e["cat"].s == "gc.phase") phase_tids.insert(e["tid"].n);
      if (ph == "X" && e["cat"].s == "gc") ++pauses;
      if (ph == "s") ++starts;
      if (ph == "f") ++finishes;
    }
    std::set<unsigned> workers;
    for (const gc::observe::PhaseRecord& p : r.phases()) workers.insert(p.worker);
    CHECK(phase_tids.size() == workers.size());
    size_t gc_tracks = 0;
    for (const auto& [tid, name] : names) gc_tracks += name.rfind("GC worker ", 0) == 0;
    CHECK(gc_tracks == workers.size());
    for (double tid : phase_tids) CHECK(names.count(tid) == 1);
    CHECK(std::count_if(names.begin(), names.end(), [](const auto& e) { return e.second == "mutator"; }) ==
          1);
    CHECK(pauses == static_cast<int>(s.collections));
    CHECK(starts == finishes);

    // The report embeds the data and parses as such.
    std::string html = gc::observe::report_html(heap);
    CHECK(html.find("/*GCLAB_DATA*/") == std::string::npos);
    CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // nothing fetched
    CHECK(html.find("https://") == std::string::npos);
    Json data = parse_json(gc::observe::report_data_json(heap));
    CHECK(data["collections"]["id"].a.size() == s.collections);

    // The text heap map names every space.
    std::string map = gc::observe::text_heap_map(heap);
    CHECK(map.find("semispace-A") != std::string::npos);
    CHECK(map.find("large objects") != std::string::npos);
  }
}

TEST_CASE("stats table: a worker's row holds every counter, however many, and ends its line") {
  gc::observe::Summary s;
  s.collector = "semispace";
  s.detailed = true;
  gc::observe::WorkerTotal w;
  for (int k = 0; k < 40; ++k)
    w.counters.push_back({"a counter with a long name " + std::to_string(k), 1000000 + k});
  s.workers.push_back(w);
  s.workers.push_back(gc::observe::WorkerTotal{.worker = 1, .busy_ms = 1, .idle_ms = 0, .counters = {}});
  std::string table = gc::observe::stats_table(s);
  CHECK(table.find("a counter with a long name 39 1000039\n") != std::string::npos);
  CHECK(table.find("\n  1 ") != std::string::npos);
  CHECK(table.find("\n  balance (max busy / mean busy)") != std::string::npos);
}

TEST_CASE("observe: a counter's name longer than the column keeps every row's figures in their columns") {
  NoRoots roots;
  gc::HeapOptions o;
  FakeCollector c(roots, o);
  gc::observe::Summary s = gc::observe::summarize(c);
  s.detailed = true;
  s.counters.push_back({"objects marked", "objects", gc::observe::CounterKind::kSum, 7, 7.0, 7});
  s.counters.push_back(
      {"unbarriered stores into marked objects", "events", gc::observe::CounterKind::kSum, 12345, 1.5, 9});
  std::string table = gc::observe::stats_table(s);
  auto line_of = [&](const std::string& start) {
    size_t at = table.find("\n  " + start);
    REQUIRE(at != std::string::npos);
    return table.substr(at + 1, table.find('\n', at + 1) - at - 1);
  };
  std::string header = line_of("counter ");
  std::string short_row = line_of("objects marked ");
  std::string long_row = line_of("unbarriered stores ");
  // The unit column starts where the header's does, and each row's total
  // ends where the header's "total" ends.
  CHECK(short_row.find("objects ", 20) == header.find("unit"));
  CHECK(long_row.find("events") == header.find("unit"));
  CHECK(short_row.find(" 7 ") + 2 == header.find("total") + 5);
  CHECK(long_row.find("12345") + 5 == header.find("total") + 5);
}
