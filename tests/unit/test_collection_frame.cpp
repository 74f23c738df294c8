// Collector::run_collection: every collector's collections go through the
// same frame, so the recorder, the statistics and the roots agree on how
// many collections ran, whatever the collector.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/markcompact/markcompact.h"
#include "gc/mutator.h"

using namespace gc;

namespace {

struct CountingRoots final : RootSet {
  std::vector<Value> roots = std::vector<Value>(4, Value::nil());
  int prepared = 0;

  void prepare_for_collection() override { ++prepared; }
  void root_groups(std::vector<RootGroup>& out) override { out.push_back({roots.data(), roots.size()}); }
  void process_weak(WeakResolver&) override {}
};

}  // namespace

TEST_CASE("every collector's collections run in one frame") {
  for (const std::string name : {"semispace", "markcompact", "marksweep"}) {
    CAPTURE(name);
    CountingRoots roots;
    HeapOptions o;
    o.max_heap_bytes = 16ull << 20;
    o.verify = true;
    std::unique_ptr<Collector> c = find_collector(name)->create(roots, o);
    roots.roots[0] = Value::ref(gc::allocate(*c, kFirstUserClass, 1, 1));
    for (int i = 0; i < 3; ++i) c->collect(GcCause::kExplicit);
    if (auto* mc = dynamic_cast<MarkCompactCollector*>(c.get())) mc->collect_young(GcCause::kExplicit);
    uint64_t collections = name == "markcompact" ? 4 : 3;
    CHECK(c->stats().collections == collections);
    CHECK(c->events.summary().collections == collections);
    CHECK(roots.prepared == static_cast<int>(collections));
    CHECK(c->events.summary().pause_total_ms >= c->events.summary().pause_max_ms);
    CHECK(c->stats().peak_heap_bytes >= c->heap_size());
  }
}
