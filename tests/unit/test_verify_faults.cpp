// The verifier catches a broken collector (issue: correctness machinery).
// Every registered collector is broken on purpose from the outside, through
// the root set it is given, while the verifier checks the true roots:
//   - a skipped root: the collector never sees one root group, so what only
//     that root reaches is evacuated (moving collectors) or freed
//     (non-moving ones), and the true root is left dangling;
//   - a slot not forwarded: the collector updates a copy of a root slot and
//     the true slot keeps the object's old address.
// In both cases the verifier, run after the collection on the true roots,
// must report the dangling reference.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/mutator.h"
#include "gc/verify/verifier.h"

using namespace gc;

namespace {

constexpr uint32_t kNode = kFirstUserClass + 1;

// The true roots: 8 groups of 4 slots.
struct TrueRoots final : RootSet {
  std::vector<Value> slots = std::vector<Value>(32, Value::nil());
  void root_groups(std::vector<RootGroup>& out) override {
    for (size_t i = 0; i < slots.size(); i += 4) out.push_back({slots.data() + i, 4});
  }
  void process_weak(WeakResolver&) override {}
};

// What the collector is given: the true roots, less one group (skip_group)
// or with one slot replaced by a private copy (unforwarded_slot).
struct BrokenRoots final : RootSet {
  TrueRoots& truth;
  int skip_group = -1;
  int unforwarded_slot = -1;
  std::vector<Value> decoy;
  explicit BrokenRoots(TrueRoots& t) : truth(t) {}
  void root_groups(std::vector<RootGroup>& out) override {
    std::vector<RootGroup> all;
    truth.root_groups(all);
    for (size_t g = 0; g < all.size(); ++g) {
      if (static_cast<int>(g) == skip_group) continue;
      if (unforwarded_slot >= 0 && static_cast<size_t>(unforwarded_slot) / 4 == g) {
        // Made once: the collector's own verification, after the
        // collection, must see the copy it updated.
        if (decoy.empty()) decoy.assign(all[g].slots, all[g].slots + all[g].count);
        out.push_back({decoy.data(), decoy.size()});
        continue;
      }
      out.push_back(all[g]);
    }
  }
  void process_weak(WeakResolver&) override {}
};

struct Fixture {
  TrueRoots truth;
  BrokenRoots broken{truth};
  std::unique_ptr<Collector> c;

  bool create(const CollectorInfo& info) {
    // A collector that cannot run here (gpu without an OpenCL device) would
    // stop the process when created.
    if (info.unavailable && !info.unavailable().empty()) return false;
    HeapOptions o;
    o.max_heap_bytes = 32ull << 20;
    o.gc_threads = 2;
    o.verify = true;  // as under --gc-verify: freed and evacuated memory is poisoned
    c = info.create(broken, o);
    return c != nullptr;
  }

  // A list of n nodes (one reference slot, `raw` raw words) from slot r.
  void build_list(size_t r, uint64_t n, uint64_t raw = 1) {
    for (uint64_t i = 0; i < n; ++i) {
      Word* node = gc::allocate(*c, kNode, 1, raw);
      REQUIRE(node != nullptr);
      ref_slot(node, 0) = truth.slots[r];
      node[1] = i;
      truth.slots[r] = Value::ref(node);
    }
  }

  std::optional<verify::Failure> verify_truth() {
    verify::HeapShape shape;
    c->describe_heap(shape);
    return verify::check_heap(shape, truth, c->stats().collections);
  }
};

}  // namespace

// A collector's view of the true roots is consistent, so its own
// verification (o.verify) passes; the checks below use the true roots.
TEST_CASE("every collector that collects: the verifier reports a root the collector skipped") {
  for (const CollectorInfo& info : registered_collectors()) {
    const std::string name = info.name;
    CAPTURE(name);
    // A skipped root only shows once a collection frees what it held.
    if (!info.collects) continue;
    Fixture f;
    if (!f.create(info)) continue;
    // The lists of group 3 are built last, of bigger nodes than the rest:
    // once dead, their memory is neither reused by a sliding compaction at
    // an object boundary of the same shape nor mistaken for another list.
    for (size_t r = 0; r < f.truth.slots.size(); ++r)
      if (r / 4 != 3) f.build_list(r, 50);
    for (size_t r = 12; r < 16; ++r) f.build_list(r, 50, 3);
    f.c->collect(GcCause::kExplicit);
    REQUIRE_FALSE(f.verify_truth().has_value());
    f.broken.skip_group = 3;
    f.c->collect(GcCause::kExplicit);
    auto failure = f.verify_truth();
    REQUIRE(failure.has_value());
    CHECK(failure->collection == f.c->stats().collections);
    MESSAGE(name << ": " << failure->message());
  }
}

TEST_CASE("every collector that moves objects: the verifier reports a slot it left unforwarded") {
  for (const CollectorInfo& info : registered_collectors()) {
    const std::string name = info.name;
    CAPTURE(name);
    Fixture f;
    if (!f.create(info)) continue;
    for (size_t r = 0; r < f.truth.slots.size(); ++r) f.build_list(r, 50);
    Word* before = f.truth.slots[13].as_ref();
    f.broken.unforwarded_slot = 13;
    f.c->collect(GcCause::kExplicit);
    Word* after = f.broken.decoy[13 % 4].as_ref();
    if (after == before) continue;  // it did not move: nothing to forward
    auto failure = f.verify_truth();
    REQUIRE(failure.has_value());
    MESSAGE(name << ": " << failure->message());
  }
}
