// Unit tests for the heap, the spaces, the semispace collector and the
// verifier, with a fake root set standing in for the VM.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/semispace/semispace.h"
#include "gc/heap/reservation.h"
#include "gc/mutator.h"
#include "gc/spaces/large_object_space.h"
#include "gc/verify/verifier.h"

using namespace gc;

namespace {

constexpr uint32_t kNode = kFirstUserClass + 1;

// Roots as the VM hands them over: a few small groups (group_size slots
// each), plus weak references the collector must resolve.
struct TestRoots final : RootSet {
  std::vector<Value> roots;
  std::vector<Word*> weak;
  size_t group_size = 3;
  int prepared = 0;

  void prepare_for_collection() override { ++prepared; }
  void root_groups(std::vector<RootGroup>& out) override {
    for (size_t i = 0; i < roots.size(); i += group_size)
      out.push_back({roots.data() + i, std::min(group_size, roots.size() - i)});
  }
  void process_weak(WeakResolver& r) override {
    for (Word*& w : weak)
      if (w) w = r.resolve(w);
  }
};

struct Heap {
  TestRoots roots;
  std::unique_ptr<Collector> owner;
  SemispaceCollector* c;

  explicit Heap(HeapOptions o = {}, size_t nroots = 16) {
    if (o.max_heap_bytes == 0) o.max_heap_bytes = 64ull << 20;
    roots.roots.assign(nroots, Value::nil());
    const CollectorInfo* info = find_collector("semispace");
    REQUIRE(info != nullptr);
    owner = info->create(roots, o);
    c = static_cast<SemispaceCollector*>(owner.get());
  }
  Value& root(size_t i) { return roots.roots[i]; }
  Word* obj(size_t i) { return roots.roots[i].as_ref(); }
  Word* alloc(uint64_t nrefs, uint64_t raw, uint32_t cls = kNode) {
    return gc::allocate(*c, cls, nrefs, raw);
  }
  void collect() { c->collect(GcCause::kExplicit); }
};

Value& slot(Word* h, uint64_t i) { return ref_slot(h, i); }
uint64_t& raw(Word* h, uint64_t i) { return h[1 + i]; }

// A list of n nodes (1 ref: next, 1 raw: index) rooted at root(r), built so
// that a collection during any allocation keeps it intact.
void build_list(Heap& h, size_t r, uint64_t n) {
  h.root(r) = Value::nil();
  for (uint64_t i = 0; i < n; ++i) {
    Word* node = h.alloc(1, 1);
    REQUIRE(node != nullptr);
    slot(node, 0) = h.root(r);
    raw(node, 0) = n - 1 - i;
    h.root(r) = Value::ref(node);
  }
}

void check_list(Heap& h, size_t r, uint64_t n) {
  Value v = h.root(r);
  for (uint64_t i = 0; i < n; ++i) {
    REQUIRE(v.is_ref());
    Word* node = v.as_ref();
    CHECK(Header::class_id(*node) == kNode);
    CHECK(raw(node, 0) == i);
    v = slot(node, 0);
  }
  CHECK(v.is_nil());
}

std::optional<verify::Failure> check(Heap& h) {
  verify::HeapShape shape;
  h.c->describe_heap(shape);
  return verify::check_heap(shape, h.roots, h.c->stats().collections);
}

}  // namespace

TEST_CASE("registry and causes") {
  REQUIRE(find_collector("semispace") != nullptr);
  CHECK(find_collector("nonesuch") == nullptr);
  CHECK(std::string(cause_name(GcCause::kStress)) == "GC Stress");
  CHECK(physical_memory_bytes() > 0);
  Heap h;
  CHECK(std::string(h.c->name()) == "semispace");
  CHECK(h.c->card_base != nullptr);
  CHECK(h.c->max_heap() == 64ull << 20);
  // No --heap: a quarter of physical memory, as the JDK does.
  TestRoots roots;
  auto dflt = find_collector("semispace")->create(roots, HeapOptions{});
  CHECK(dflt->max_heap() == (physical_memory_bytes() / 4 + kPageBytes - 1) / kPageBytes * kPageBytes);
  CHECK(dflt->heap_size() <= dflt->max_heap());
}

TEST_CASE("a list survives collections and moves") {
  Heap h;
  build_list(h, 0, 1000);
  Word* before = h.obj(0);
  h.collect();
  CHECK(h.obj(0) != before);
  CHECK(h.c->in_current_space(h.obj(0)));
  check_list(h, 0, 1000);
  h.collect();
  check_list(h, 0, 1000);
  CHECK(h.c->stats().collections == 2);
  CHECK(h.roots.prepared == 2);
  CHECK(h.c->stats().bytes_copied >= 2 * 1000 * 4 * kWordSize);
  CHECK(!check(h));
}

TEST_CASE("garbage is not copied") {
  Heap h;
  build_list(h, 0, 100);
  build_list(h, 1, 5000);
  h.root(1) = Value::nil();
  h.collect();
  check_list(h, 0, 100);
  CHECK(h.c->stats().last_live_bytes == 100 * 4 * kWordSize);
}

TEST_CASE("shared objects are copied once: a DAG stays a DAG") {
  Heap h;
  Word* d = h.alloc(0, 1);
  raw(d, 0) = 42;
  h.root(0) = Value::ref(d);
  Word* b = h.alloc(1, 0);
  Word* c = h.alloc(1, 0);
  slot(b, 0) = h.root(0);
  slot(c, 0) = h.root(0);
  Word* a = h.alloc(2, 0);
  slot(a, 0) = Value::ref(b);
  slot(a, 1) = Value::ref(c);
  h.root(0) = Value::ref(a);
  h.root(4) = Value::ref(c);  // c is reachable twice: once from a root of another group
  h.collect();
  Word* a2 = h.obj(0);
  Word* b2 = slot(a2, 0).as_ref();
  Word* c2 = slot(a2, 1).as_ref();
  CHECK(c2 == h.obj(4));
  CHECK(slot(b2, 0) == slot(c2, 0));
  CHECK(raw(slot(b2, 0).as_ref(), 0) == 42);
  CHECK(h.c->stats().last_live_bytes == (1 + 1) * kWordSize + 2 * 3 * kWordSize + 4 * kWordSize);
}

TEST_CASE("cycles and self-references") {
  Heap h;
  Word* a = h.alloc(2, 0);
  Word* b = h.alloc(1, 0);
  slot(a, 0) = Value::ref(b);
  slot(a, 1) = Value::ref(a);
  slot(b, 0) = Value::ref(a);
  h.root(2) = Value::ref(b);
  for (int i = 0; i < 3; ++i) h.collect();
  Word* b2 = h.obj(2);
  Word* a2 = slot(b2, 0).as_ref();
  CHECK(slot(a2, 0).as_ref() == b2);
  CHECK(slot(a2, 1).as_ref() == a2);
  CHECK(!check(h));
}

TEST_CASE("non-reference values are left alone") {
  Heap h;
  Word* a = h.alloc(4, 0);
  slot(a, 0) = Value::num(3.5);
  slot(a, 1) = Value::boolean(true);
  slot(a, 2) = Value::undefined();
  h.root(0) = Value::ref(a);
  h.root(1) = Value::num(-1);
  h.collect();
  Word* a2 = h.obj(0);
  CHECK(slot(a2, 0).as_num() == 3.5);
  CHECK(slot(a2, 1) == Value::boolean(true));
  CHECK(slot(a2, 2).is_undefined());
  CHECK(slot(a2, 3).is_nil());
  CHECK(h.root(1).as_num() == -1);
}

TEST_CASE("large objects do not move and are freed when unreachable") {
  Heap h;
  uint64_t big_raw = kLargeObjectBytes / kWordSize;  // over the threshold with its header
  Word* big = h.alloc(0, big_raw);
  REQUIRE(big != nullptr);
  CHECK(h.c->in_large_space(big));
  raw(big, big_raw - 1) = 7;
  h.root(0) = Value::ref(big);
  // A large array of references to small objects.
  Word* arr = h.alloc(3000, 0);
  REQUIRE(arr != nullptr);
  h.root(1) = Value::ref(arr);
  for (uint64_t i = 0; i < 3000; ++i) {
    Word* n = h.alloc(0, 1);
    raw(n, 0) = i;
    slot(h.obj(1), i) = Value::ref(n);
  }
  h.collect();
  h.collect();
  CHECK(h.obj(0) == big);
  CHECK(h.obj(1) == arr);
  CHECK(raw(big, big_raw - 1) == 7);
  CHECK(!Header::is_marked(*big));
  for (uint64_t i = 0; i < 3000; ++i) {
    Word* n = slot(arr, i).as_ref();
    CHECK(h.c->in_current_space(n));
    if (raw(n, 0) != i) FAIL("element " << i);
  }
  CHECK(h.c->large_objects().object_count() == 2);
  uint64_t committed = h.c->large_objects().committed_bytes();
  h.root(0) = Value::nil();
  h.collect();
  CHECK(h.c->large_objects().object_count() == 1);
  CHECK(h.c->large_objects().committed_bytes() < committed);
  h.root(1) = Value::nil();
  h.collect();
  CHECK(h.c->large_objects().object_count() == 0);
  CHECK(h.c->large_objects().committed_bytes() == 0);
}

TEST_CASE("pinned objects never move, whatever their size") {
  Heap h;
  Word* p = h.c->allocate_pinned(kNode, 2, 1);
  REQUIRE(p != nullptr);
  h.root(0) = Value::ref(p);
  Word* small = h.alloc(0, 1);
  raw(small, 0) = 9;
  slot(p, 0) = Value::ref(small);
  slot(p, 1) = Value::ref(p);
  h.collect();
  CHECK(h.obj(0) == p);
  CHECK(raw(slot(p, 0).as_ref(), 0) == 9);
  CHECK(slot(p, 1).as_ref() == p);
}

TEST_CASE("large-object space reuses and coalesces free runs") {
  Heap h;
  // Three objects of 5 pages each; free the first two; a 9-page object
  // fits the coalesced run of 10 pages at the old address.
  Word* objs[3];
  for (int i = 0; i < 3; ++i) {
    objs[i] = h.alloc(0, 5 * 512 - 1);
    REQUIRE(objs[i] != nullptr);
    h.root(i) = Value::ref(objs[i]);
  }
  h.root(0) = h.root(1) = Value::nil();
  h.collect();
  CHECK(h.c->large_objects().committed_bytes() == 5 * kPageBytes);
  Word* nine = h.alloc(0, 9 * 512 - 1);
  CHECK(nine == objs[0]);
  // A 2-page pinned object does not fit the 1-page hole left; a 1-page one does.
  Word* two = h.c->allocate_pinned(kNode, 0, 2 * 512 - 1);
  CHECK(two > objs[2]);
  Word* one = h.c->allocate_pinned(kNode, 0, 10);
  CHECK(one == objs[0] + 9 * 512);
  // Freeing everything returns the space to empty: runs that reach the
  // frontier rejoin it.
  h.root(2) = Value::nil();
  h.collect();
  CHECK(h.c->large_objects().committed_bytes() == 0);
  CHECK(h.c->large_objects().frontier() == h.c->large_objects().begin());
}

// Freed pages stay mapped for the next cycle's large objects, up to half
// again what the last cycle allocated (32 MiB at least); only what is past
// that goes back, from the top.
TEST_CASE("large-object space keeps a cycle's pages and releases only past its bound") {
  constexpr uint64_t kPages = 64 * 1024;  // a 256 MiB region
  constexpr uint64_t kObjectPages = 256;
  Reservation res(kPages * kPageBytes);
  LargeObjectSpace los(res.base(), res.end());
  // A cycle: `objects` large objects, the first `survivors` of them marked,
  // then a sweep.
  auto cycle = [&](int objects, int survivors) {
    for (int i = 0; i < objects; ++i) {
      Word* h = los.allocate(kFirstUserClass, 0, kObjectPages * kPageBytes / kWordSize - 1).header;
      REQUIRE(h != nullptr);
      if (i < survivors) *h |= Header::kMarkBit;
    }
    los.sweep(false);
  };
  auto pages = [](uint64_t bytes) { return bytes / kPageBytes; };
  cycle(101, 1);  // 100 objects freed, one kept
  CHECK(pages(los.retained_bytes()) == 100 * kObjectPages);
  // The next cycle frees a little more than it allocated (last cycle's
  // survivor too): every page stays.
  cycle(100, 0);
  CHECK(pages(los.retained_bytes()) == 101 * kObjectPages);
  CHECK(los.committed_bytes() == 0);
  Word* high = los.high_water();
  CHECK(high == res.base() + 101 * kObjectPages * kPageBytes / kWordSize);
  // A quiet cycle (10 objects) keeps 32 MiB and gives back the rest, from
  // the top.
  cycle(10, 0);
  CHECK(pages(los.retained_bytes()) == (32ull << 20) / kPageBytes);
  CHECK(los.high_water() == res.base() + (32ull << 20) / kWordSize);
  // Pages past the high-water mark are handed out again as fresh ones.
  cycle(101, 0);
  CHECK(los.high_water() == high);
}

// Large objects count toward collections in the copying plans: the space
// hands out the heap's live data in pages (4 MiB at least) and then asks
// for one, so dead objects' pages are reused rather than fresh ones faulted
// in.
TEST_CASE("large-object space asks for a collection past its growth budget") {
  constexpr uint64_t kBudgetPages = LargeObjectSpace::kMinGrowthPages;
  Reservation res(8 * kBudgetPages * kPageBytes);
  LargeObjectSpace los(res.base(), res.end());
  // Without a budget the space hands out what its region has.
  for (uint64_t i = 0; i < 2 * kBudgetPages; ++i) REQUIRE(los.allocate_pages(1) != nullptr);
  los.sweep(false);
  los.set_growth_budget(0);
  for (uint64_t i = 0; i < kBudgetPages; ++i) REQUIRE(los.allocate_pages(1) != nullptr);
  CHECK(los.allocate_pages(1) == nullptr);
  // After the collection, the first object gets its pages whatever its
  // size; the next waits for another collection.
  los.set_growth_budget(kPageBytes);
  CHECK(los.allocate_pages(kBudgetPages + 1) != nullptr);
  CHECK(los.allocate_pages(1) == nullptr);
  // A budget of the heap's live data, when that is more.
  los.set_growth_budget(2 * kBudgetPages * kPageBytes);
  for (uint64_t i = 0; i < 2 * kBudgetPages - 1; ++i) REQUIRE(los.allocate_pages(1) != nullptr);
}

TEST_CASE("short-lived pinned objects reuse the same pages, collected as they go") {
  Heap h;
  const LargeObjectSpace& los = h.c->large_objects();
  constexpr int kObjects = 5000;  // one page each: about 20 MiB, 5 budgets
  for (int i = 0; i < kObjects; ++i) REQUIRE(h.c->allocate_pinned(kNode, 0, 10) != nullptr);
  CHECK(h.c->stats().collections >= 4);
  CHECK(los.high_water() <= los.begin() + (LargeObjectSpace::kMinGrowthPages + 1) * kPageBytes / kWordSize);
}

TEST_CASE("identity hash is stable across moves") {
  Heap h;
  Word* a = h.alloc(1, 2);
  raw(a, 0) = 11;
  raw(a, 1) = 22;
  h.root(0) = Value::ref(a);
  uint64_t hash = h.c->identity_hash(a);
  CHECK(Header::hash_state(*a) == HashState::kHashed);
  CHECK(h.c->identity_hash(a) == hash);
  Word* unhashed = h.alloc(0, 1);
  h.root(1) = Value::ref(unhashed);
  for (int i = 0; i < 4; ++i) {
    h.collect();
    Word* now = h.obj(0);
    CHECK(h.c->identity_hash(now) == hash);
    CHECK(Header::hash_state(*now) == HashState::kHashedAndMoved);
    CHECK(Header::raw_words(*now) == 3);
    CHECK(raw(now, 0) == 11);
    CHECK(raw(now, 1) == 22);
    CHECK(Header::hash_state(*h.obj(1)) == HashState::kUnhashed);
    CHECK(Header::raw_words(*h.obj(1)) == 1);
  }
  // Objects at different addresses get different hashes (almost surely).
  CHECK(h.c->identity_hash(h.obj(1)) != hash);
  // Large objects keep kHashed: they never move.
  Word* big = h.alloc(0, 4096);
  h.root(2) = Value::ref(big);
  uint64_t big_hash = h.c->identity_hash(big);
  h.collect();
  CHECK(Header::hash_state(*big) == HashState::kHashed);
  CHECK(h.c->identity_hash(big) == big_hash);
  CHECK(!check(h));
}

TEST_CASE("many hashed objects fill the heap without overflowing to-space") {
  HeapOptions o;
  o.max_heap_bytes = 256 << 10;
  o.verify = true;
  Heap h(o, 1);
  // Header-only objects double in size when their hash moves with them.
  for (int i = 0; i < 20000; ++i) {
    Word* n = h.alloc(1, 0);
    if (!n) break;
    slot(n, 0) = h.root(0);
    h.root(0) = Value::ref(n);
    h.c->identity_hash(n);
  }
  CHECK(h.c->heap_size() <= o.max_heap_bytes);
  CHECK(!check(h));
}

TEST_CASE("weak references resolve to the copy or to nullptr") {
  Heap h;
  Word* live = h.alloc(0, 1);
  raw(live, 0) = 5;
  h.root(0) = Value::ref(live);
  Word* dead = h.alloc(0, 1);
  Word* big_live = h.alloc(0, 4096);
  h.root(1) = Value::ref(big_live);
  Word* big_dead = h.alloc(0, 4096);
  h.roots.weak = {live, dead, big_live, big_dead, nullptr};
  h.collect();
  CHECK(h.roots.weak[0] == h.obj(0));
  CHECK(h.roots.weak[0] != live);
  CHECK(raw(h.roots.weak[0], 0) == 5);
  CHECK(h.roots.weak[1] == nullptr);
  CHECK(h.roots.weak[2] == big_live);
  CHECK(h.roots.weak[3] == nullptr);
  CHECK(h.roots.weak[4] == nullptr);
}

TEST_CASE("stress mode collects every N allocations, with verification") {
  HeapOptions o;
  o.stress_interval = 3;
  o.verify = true;
  Heap h(o);
  CHECK(h.c->limit == h.c->top);
  build_list(h, 0, 300);
  CHECK(h.c->stats().collections == 100);
  CHECK(h.c->limit == h.c->top);
  check_list(h, 0, 300);
  o.stress_interval = 1;
  Heap h1(o);
  build_list(h1, 0, 50);
  Word* big = h1.alloc(0, 4096);
  CHECK(big != nullptr);
  CHECK(h1.c->stats().collections == 51);
  check_list(h1, 0, 50);
}

TEST_CASE("the heap grows with live data, within --heap") {
  HeapOptions o;
  o.max_heap_bytes = 64ull << 20;
  Heap h(o);
  uint64_t initial = h.c->semispace_bytes();
  build_list(h, 0, 400000);  // 12.8 MB live
  check_list(h, 0, 400000);
  CHECK(h.c->semispace_bytes() > initial);
  CHECK(h.c->heap_size() <= o.max_heap_bytes);
  CHECK(h.c->stats().peak_heap_bytes <= o.max_heap_bytes);
  CHECK(h.c->stats().collections > 0);
  CHECK(!check(h));
}

TEST_CASE("out of memory returns nullptr and leaves a sound heap") {
  HeapOptions o;
  o.max_heap_bytes = 128 << 10;
  o.verify = true;
  Heap h(o);
  uint64_t n = 0;
  for (;;) {
    Word* node = h.alloc(1, 1);
    if (!node) break;
    slot(node, 0) = h.root(0);
    h.root(0) = Value::ref(node);
    ++n;
  }
  CHECK(n > 1000);
  CHECK(h.c->live_at_exhaustion() > 0);
  CHECK(h.c->live_at_exhaustion() <= o.max_heap_bytes);
  CHECK(h.c->heap_size() <= o.max_heap_bytes);
  // A large object cannot fit either.
  CHECK(h.alloc(0, 64 << 10) == nullptr);
  // Dropping the list makes room again.
  h.root(0) = Value::nil();
  CHECK(h.alloc(1, 1) != nullptr);
  CHECK(h.alloc(0, 4096) != nullptr);
}

TEST_CASE("bytes allocated counts the fast path") {
  Heap h;
  uint64_t before = h.c->stats().bytes_allocated;
  for (int i = 0; i < 100; ++i) h.alloc(0, 1);
  h.c->flush_stats();
  CHECK(h.c->stats().bytes_allocated - before == 100 * 2 * kWordSize);
  h.alloc(0, 4096);
  h.c->flush_stats();
  CHECK(h.c->stats().bytes_allocated - before == 100 * 2 * kWordSize + 4097 * kWordSize);
}

TEST_CASE("the verifier accepts a sound heap and reports a broken slot") {
  Heap h;
  build_list(h, 0, 10);
  Word* big = h.alloc(2, 4096);
  h.root(1) = Value::ref(big);
  CHECK(!check(h));
  h.collect();
  CHECK(!check(h));

  SUBCASE("a slot pointing into the middle of an object") {
    Word* second = slot(h.obj(0), 0).as_ref();
    slot(big, 1) = Value::ref(second + 1);
    auto f = check(h);
    REQUIRE(f);
    CHECK(f->what == "reference to no live object");
    CHECK(f->object == reinterpret_cast<uintptr_t>(big));
    CHECK(f->slot == 1);
    CHECK(f->space == "large");
    CHECK(f->message().rfind("gc-verify: reference to no live object (object 0x", 0) == 0);
  }
  SUBCASE("a slot still pointing into from-space") {
    Word* stale = h.alloc(0, 1);
    h.root(2) = Value::ref(stale);
    h.collect();
    slot(h.obj(0), 0) = Value::ref(stale);
    auto f = check(h);
    REQUIRE(f);
    CHECK(f->what.rfind("reference into evacuated space", 0) == 0);
    CHECK(f->slot == 0);
  }
  SUBCASE("a corrupt header") {
    Word* first = h.obj(0);
    *first = Header::kPoison;
    auto f = check(h);
    REQUIRE(f);
    CHECK(f->what == "poisoned header");
  }
}

TEST_CASE("--gc-verify exits with status 71 on a broken heap") {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Silence the expected message in the test output.
    FILE* devnull = freopen("/dev/null", "w", stderr);
    (void)devnull;
    HeapOptions o;
    o.verify = true;
    Heap h(o);
    build_list(h, 0, 10);
    slot(h.obj(0), 0) = Value::ref(h.obj(0) + 1);
    h.collect();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == kExitVerifyFailure);
}

TEST_CASE("random graphs match a shadow model across collections") {
  for (uint64_t stress : {0u, 7u}) {
    HeapOptions o;
    o.max_heap_bytes = 8ull << 20;
    o.stress_interval = stress;
    o.verify = stress != 0;
    Heap h(o, 32);
    // Each object: raw word 0 is its id; shadow[id] lists its slots' ids
    // (-1 for nil) and hashes[id] its identity hash once taken.
    std::vector<std::vector<int64_t>> shadow;
    std::vector<uint64_t> hashes;
    uint64_t rng = 12345 + stress;
    auto next = [&rng](uint64_t n) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      return (rng >> 33) % n;
    };
    auto id_of = [](Word* w) { return static_cast<int64_t>(w[1]); };
    for (int step = 0; step < 20000; ++step) {
      size_t r = next(32);
      switch (next(6)) {
        case 0:
        case 1: {  // allocate, sometimes large, into a root
          uint64_t nrefs = 1 + next(4);
          uint64_t rawn = next(50) == 0 ? 2100 + next(100) : 1 + next(3);
          Word* w = h.alloc(nrefs, rawn);
          REQUIRE(w != nullptr);
          w[1] = shadow.size();
          shadow.emplace_back(nrefs, -1);
          hashes.push_back(0);
          if (nrefs && h.root(r).is_ref()) {  // chain to what the root held, so graphs grow
            gc::write_ref(*h.c, w, &slot(w, 0), h.root(r));
            shadow.back()[0] = id_of(h.obj(r));
          }
          h.root(r) = Value::ref(w);
          break;
        }
        case 2: {  // store root a into a slot of root b
          size_t b = next(32);
          if (!h.root(b).is_ref()) break;
          Word* w = h.obj(b);
          uint64_t n = Header::nrefs(*w);
          if (!n) break;
          uint64_t i = next(n);
          gc::write_ref(*h.c, w, &slot(w, i), h.root(r));
          shadow[id_of(w)][i] = h.root(r).is_ref() ? id_of(h.obj(r)) : -1;
          break;
        }
        case 3: {  // load a slot into a root (rarely: it drops what the root held)
          size_t b = next(32);
          if (!h.root(b).is_ref()) break;
          Word* w = h.obj(b);
          uint64_t n = Header::nrefs(*w);
          if (n && next(8) == 0) h.root(r) = slot(w, next(n));
          break;
        }
        case 4:
          if (next(40) == 0)
            h.root(r) = Value::nil();
          else if (h.root(r).is_ref()) {
            Word* w = h.obj(r);
            uint64_t hash = h.c->identity_hash(w);
            if (hashes[id_of(w)]) CHECK(hashes[id_of(w)] == hash);
            hashes[id_of(w)] = hash;
          }
          break;
        case 5:
          if (next(50) == 0) h.collect();
          break;
      }
    }
    h.collect();
    // Walk everything reachable and compare with the shadow.
    std::vector<Word*> stack;
    std::vector<bool> seen(shadow.size());
    for (Value v : h.roots.roots)
      if (v.is_ref()) stack.push_back(v.as_ref());
    size_t checked = 0;
    while (!stack.empty()) {
      Word* w = stack.back();
      stack.pop_back();
      int64_t id = id_of(w);
      if (seen[id]) continue;
      seen[id] = true;
      ++checked;
      if (hashes[id]) CHECK(h.c->identity_hash(w) == hashes[id]);
      for (uint64_t i = 0; i < shadow[id].size(); ++i) {
        Value v = slot(w, i);
        CHECK((v.is_ref() ? id_of(v.as_ref()) : -1) == shadow[id][i]);
        if (v.is_ref()) stack.push_back(v.as_ref());
      }
    }
    CHECK(checked > 0);
    CHECK(!check(h));
  }
}
