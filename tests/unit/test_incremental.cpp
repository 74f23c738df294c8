// Unit tests for incremental (docs/collectors/incremental.md): the pacing
// (when a cycle starts, the threshold it leaves), each barrier against a
// program that hides a white object behind a black one mid-cycle (kept by
// every real barrier, lost without one), and a full collection in the
// middle of a cycle, with a fake root set standing in for the VM.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "gc/collector.h"
#include "gc/collectors/incremental/incremental.h"
#include "gc/mutator.h"
#include "gc/verify/verifier.h"
#include "tests/unit/vector_roots.h"

using namespace gc;

namespace {

constexpr uint32_t kNode = kFirstUserClass + 1;

struct IncHeap {
  test::VectorRoots roots;
  std::unique_ptr<Collector> owner;
  Incremental* c;

  explicit IncHeap(OptionValues values, uint64_t stress = 0) {
    HeapOptions o;
    o.max_heap_bytes = 256ull << 20;
    o.stress_interval = stress;
    o.collector_options = std::move(values);
    roots.roots.assign(4, Value::nil());
    const CollectorInfo* info = find_collector("incremental");
    REQUIRE(info != nullptr);
    owner = info->create(roots, o);
    c = static_cast<Incremental*>(owner.get());
  }
  Word* alloc(uint64_t nrefs, uint64_t raw) {
    Word* h = gc::allocate(*c, kNode, nrefs, raw);
    REQUIRE(h != nullptr);
    return h;
  }
  bool heap_ok() {
    verify::HeapShape shape;
    c->describe_heap(shape);
    return !verify::check_heap(shape, roots, 0).has_value();
  }
};

// The hidden object: roots[0] -> a chain of 2000 nodes -> X (raw word 42),
// roots[1] -> B. Under --gc-stress=1 a cycle starts at the first allocation
// after gc() and each allocation marks 16 units, B (the last root) first:
// after a few, B is black and X white; X then moves into B and out of the
// chain through the barrier. Returns X.
Word* hide_object(IncHeap& h) {
  Word* head = h.alloc(1, 0);
  h.roots.roots[0] = Value::ref(head);
  Word* p = head;
  for (int i = 0; i < 2000; ++i) {
    Word* n = h.alloc(1, 0);
    write_ref(*h.c, p, &ref_slot(p, 0), Value::ref(n));
    p = n;
  }
  Word* x = h.alloc(0, 1);
  x[1] = 42;
  write_ref(*h.c, p, &ref_slot(p, 0), Value::ref(x));
  h.roots.roots[1] = Value::ref(h.alloc(1, 0));
  h.c->collect(GcCause::kExplicit);
  REQUIRE(h.c->phase() == Incremental::Phase::kIdle);
  for (int i = 0; i < 5; ++i) h.alloc(0, 0);
  REQUIRE(h.c->phase() == Incremental::Phase::kMark);
  Word* b = h.roots.roots[1].as_ref();
  REQUIRE(Header::is_marked(*b));
  REQUIRE(!Header::is_marked(*x));
  write_ref(*h.c, b, &ref_slot(b, 0), Value::ref(x));
  write_ref(*h.c, p, &ref_slot(p, 0), Value::nil());
  // Through marking, the atomic phase and the sweep, to the cycle's end.
  uint64_t cycles = h.c->cycles_completed();
  while (h.c->cycles_completed() == cycles) h.alloc(0, 0);
  return x;
}

}  // namespace

TEST_CASE(
    "incremental: registered, idle below the first threshold, a cycle past it, the next threshold from "
    "pause") {
  for (const char* pause : {"200", "400"}) {
    IncHeap h(OptionValues{{"inc-pause", pause}});
    CHECK(std::string(h.c->name()) == "incremental");
    CHECK(h.c->threshold_bytes() == (8ull << 20));
    // A live list of 20000 nodes (about 0.6 MB) and garbage beside it.
    Word* prev = nullptr;
    for (int i = 0; i < 20000; ++i) {
      Word* n = h.alloc(1, 0);
      if (prev) write_ref(*h.c, n, &ref_slot(n, 0), Value::ref(prev));
      prev = n;
      h.roots.roots[0] = Value::ref(n);
    }
    while (h.c->heap_used() < (7ull << 20)) h.alloc(2, 0);
    CHECK(h.c->phase() == Incremental::Phase::kIdle);
    CHECK(h.c->cycles_completed() == 0);
    while (h.c->cycles_completed() == 0) h.alloc(2, 0);
    CHECK(h.c->stats().collections == 1);
    // At the end: what was in use times the pause, at least the first threshold.
    uint64_t in_use = h.c->heap_used();
    uint64_t expected = std::max<uint64_t>(8ull << 20, in_use / 100 * std::stoull(pause));
    CHECK(h.c->threshold_bytes() == expected);
    // The list survived whole.
    uint64_t n = 0;
    for (Value v = h.roots.roots[0]; v.is_ref(); v = ref_slot(v.as_ref(), 0)) ++n;
    CHECK(n == 20000);
    CHECK(h.heap_ok());
  }
}

TEST_CASE("incremental: every real barrier keeps an object hidden behind a black one mid-cycle") {
  for (const char* barrier : {"dijkstra", "yuasa", "backward"}) {
    CAPTURE(barrier);
    IncHeap h(OptionValues{{"barrier", barrier}}, 1);
    Word* x = hide_object(h);
    Word* b = h.roots.roots[1].as_ref();
    REQUIRE(ref_slot(b, 0).is_ref());
    CHECK(ref_slot(b, 0).as_ref() == x);
    CHECK(Header::class_id(*x) == kNode);
    CHECK(x[1] == 42);
    if (std::string(barrier) == "backward") {
      CHECK(h.c->barrier_regreyed() >= 1);
    } else {
      CHECK(h.c->barrier_shaded() >= 1);
    }
    CHECK(h.heap_ok());
  }
}

TEST_CASE("incremental: --barrier=none loses the hidden object: the sweep frees its cell") {
  IncHeap h(OptionValues{{"barrier", "none"}}, 1);
  Word* x = hide_object(h);
  // A free cell's first word is a free-list link (tag 00), or it was
  // allocated again since, to an object that is not the hidden one.
  bool freed = (*x & Header::kTagMask) == 0 || x[1] != 42;
  CHECK(freed);
  CHECK(h.c->barrier_shaded() == 0);
  CHECK(h.c->barrier_regreyed() == 0);
}

TEST_CASE("incremental: gc() in the middle of a cycle finishes it, then collects in full") {
  IncHeap h(OptionValues{}, 1);
  Word* keep = h.alloc(1, 0);
  h.roots.roots[0] = Value::ref(keep);
  for (int i = 0; i < 1000; ++i) h.alloc(1, 0);
  REQUIRE(h.c->phase() != Incremental::Phase::kIdle);
  uint64_t cycles = h.c->cycles_completed();
  uint64_t collections = h.c->stats().collections;
  h.c->collect(GcCause::kExplicit);
  CHECK(h.c->phase() == Incremental::Phase::kIdle);
  CHECK(h.c->cycles_completed() == cycles + 1);
  CHECK(h.c->stats().collections == collections + 2);
  CHECK(!h.c->write_barrier);
  CHECK(h.heap_ok());
  CHECK(h.roots.roots[0].as_ref() == keep);
}
