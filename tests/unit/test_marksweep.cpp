// Unit tests for marksweep: the free-list fast path, block reuse across size
// classes, the sweep, the parallel and serial markers and their entry points
// for other plans on the space, and the verifier on a block heap, with a fake root
// set standing in for the VM.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/marksweep/marksweep.h"
#include "gc/mutator.h"
#include "gc/verify/verifier.h"
#include "tests/unit/vector_roots.h"

using namespace gc;
using marksweep::kBlockBytes;
using marksweep::kSizeClassOfWords;

namespace {

constexpr uint32_t kNode = kFirstUserClass + 1;

using MsRoots = test::VectorRoots;

HeapOptions options(unsigned threads = 1, uint64_t heap = 64ull << 20) {
  HeapOptions o;
  o.max_heap_bytes = heap;
  o.gc_threads = threads;
  return o;
}

// Plans on the mark-sweep space, composed as gpu and accel compose it: the
// space through MarkSweepHeap, a CPU marker of their own.
class TestPlan : public MarkSweepHeap {
 public:
  TestPlan(RootSet& roots, const HeapOptions& options)
      : MarkSweepHeap(roots, options), cpu_(options_, pool(), worker_totals(), events) {}
  const char* name() const override { return "test plan"; }

 protected:
  CpuMarker cpu_;
};

// A marker that forgets one object: it runs the CPU marker, then clears the
// mark of `victim` (a reachable object) so that the sweep frees it.
class ForgetfulPlan final : public TestPlan {
 public:
  using TestPlan::TestPlan;
  Word* victim = nullptr;

 private:
  void mark() override {
    cpu_.mark_from_roots(gather_roots());
    if (victim) MarkSweepSpace::clear_mark(victim);
  }
};

// A marker in two steps, as an accelerator with a CPU fallback does: it
// marks the roots' targets itself and hands them to the CPU marker as grey.
class TwoStepPlan final : public TestPlan {
 public:
  using TestPlan::TestPlan;
  size_t grey_handed_over = 0;

 private:
  void mark() override {
    std::vector<Word*> grey;
    for (const RootGroup& g : gather_roots())
      for (size_t i = 0; i < g.count; ++i)
        if (g.slots[i].is_ref() && MarkSweepSpace::set_mark(g.slots[i].as_ref()))
          grey.push_back(g.slots[i].as_ref());
    grey_handed_over += grey.size();
    cpu_.mark_from_gray(grey);
  }
};

template <class C = MarkSweep>
struct Heap {
  MsRoots roots;
  std::unique_ptr<C> c;
  explicit Heap(HeapOptions o = options(), size_t nroots = 16) {
    roots.roots.assign(nroots, Value::nil());
    c = std::make_unique<C>(roots, o);
  }
  Value& root(size_t i) { return roots.roots[i]; }
  Word* alloc(uint64_t nrefs, uint64_t raw) { return gc::allocate(*c, kNode, nrefs, raw); }
  void collect() { c->collect(GcCause::kExplicit); }
  std::optional<verify::Failure> check() {
    verify::HeapShape shape;
    c->describe_heap(shape);
    return verify::check_heap(shape, roots, c->stats().collections);
  }
};

Value& slot(Word* h, uint64_t i) { return ref_slot(h, i); }
uint64_t& raw(Word* h, uint64_t i) { return h[1 + i]; }
bool is_free_cell(const Word* cell) { return (*cell & Header::kTagMask) == 0; }

template <class H>
void build_list(H& h, size_t r, uint64_t n) {
  h.root(r) = Value::nil();
  for (uint64_t i = 0; i < n; ++i) {
    Word* node = h.alloc(1, 1);
    REQUIRE(node != nullptr);
    slot(node, 0) = h.root(r);
    raw(node, 0) = n - 1 - i;
    h.root(r) = Value::ref(node);
  }
}

template <class H>
void check_list(H& h, size_t r, uint64_t n) {
  Value v = h.root(r);
  for (uint64_t i = 0; i < n; ++i) {
    REQUIRE(v.is_ref());
    CHECK(raw(v.as_ref(), 0) == i);
    v = slot(v.as_ref(), 0);
  }
  CHECK(v.is_nil());
}

}  // namespace

TEST_CASE("marksweep: registered; the fast path pops the size class's free list") {
  REQUIRE(find_collector("marksweep") != nullptr);
  Heap h;
  CHECK(std::string(h.c->name()) == "marksweep");
  REQUIRE(h.c->size_class_of != nullptr);
  CHECK(h.c->top == h.c->limit);
  Word* first = h.alloc(0, 3);  // 4 words: the first allocation installs a block
  REQUIRE(first != nullptr);
  unsigned cls = kSizeClassOfWords[4];
  Word* head = h.c->free_lists[cls];
  REQUIRE(head != nullptr);
  Word* next = reinterpret_cast<Word*>(*head);
  CHECK(h.alloc(0, 3) == head);
  CHECK(h.c->free_lists[cls] == next);
  // Consecutive cells of one block, in address order.
  CHECK(head == first + 4);
  const MarkSweepSpace::Block* b = h.c->space().block_containing(first);
  REQUIRE(b != nullptr);
  CHECK(b->cell_words == 4);
  CHECK(b->size_class == cls);
  // Stress mode hides the lists: every allocation takes the slow path.
  HeapOptions o = options();
  o.stress_interval = 1000;
  Heap stressed(o);
  CHECK(stressed.c->size_class_of == nullptr);
  CHECK(stressed.alloc(0, 3) != nullptr);
}

TEST_CASE("marksweep: freed cells are reused by the same size class, nothing moves") {
  Heap h;
  std::vector<Word*> objs;
  for (int i = 0; i < 1000; ++i) {
    Word* o = h.alloc(1, 2);  // 5 words
    REQUIRE(o);
    raw(o, 0) = i;
    objs.push_back(o);
  }
  // Keep the even ones, chained through their slot, from root 0.
  h.root(0) = Value::nil();
  for (int i = 998; i >= 0; i -= 2) {
    slot(objs[i], 0) = h.root(0);
    h.root(0) = Value::ref(objs[i]);
  }
  uint64_t size_before = h.c->heap_size();
  h.collect();
  CHECK(!h.check());
  std::set<Word*> freed_starts;
  for (int i = 1; i < 1000; i += 2) {
    Word* start = objs[i] - 2;  // count word, slot, header
    CHECK(is_free_cell(start));
    freed_starts.insert(start);
  }
  // The survivors stayed where they were, with their contents.
  Value v = h.root(0);
  for (int i = 0; i < 1000; i += 2) {
    REQUIRE(v.as_ref() == objs[i]);
    CHECK(raw(objs[i], 0) == static_cast<uint64_t>(i));
    CHECK(!Header::is_marked(*objs[i]));
    v = slot(objs[i], 0);
  }
  // 500 new objects of the class fill exactly the freed cells.
  for (int i = 0; i < 500; ++i) {
    Word* o = h.alloc(1, 2);
    REQUIRE(o);
    CHECK(freed_starts.count(o - 2) == 1);
  }
  CHECK(h.c->heap_size() == size_before);
  CHECK(!h.check());
}

TEST_CASE("marksweep: an emptied block is reused by another size class") {
  Heap h;
  // One block's worth of 2-word objects (0 refs, 1 raw word), all garbage.
  uint64_t per_block = kBlockBytes / (2 * kWordSize);
  Word* first = h.alloc(0, 1);
  const MarkSweepSpace::Block* b = h.c->space().block_containing(first);
  REQUIRE(b != nullptr);
  Word* block_begin = b->begin;
  for (uint64_t i = 1; i < per_block; ++i) REQUIRE(h.alloc(0, 1));
  CHECK(h.c->free_lists[kSizeClassOfWords[2]] == nullptr);
  h.collect();
  CHECK(h.c->space().empty_block_count() >= 1);
  CHECK(h.c->space().block_containing(block_begin)->empty());
  // Objects of 40 words come from an empty block: the one just emptied is
  // the only one.
  Word* big = h.alloc(38, 0);
  REQUIRE(big);
  const MarkSweepSpace::Block* again = h.c->space().block_containing(big);
  CHECK(again->begin == block_begin);
  CHECK(again->cell_words == 40);
  CHECK(again->size_class == kSizeClassOfWords[40]);
  CHECK(h.c->space().empty_block_count() == 0);
}

TEST_CASE("marksweep: the sweep frees exactly the unreachable cells, poisons them, and clears marks") {
  for (unsigned threads : {0u, 2u}) {
    CAPTURE(threads);
    HeapOptions o = options(threads);
    o.stress_interval = 1u << 30;  // poisoning on, no stressed collection in this test
    Heap h(o, 64);
    std::mt19937_64 rng(7);
    std::vector<Word*> all;
    for (int i = 0; i < 20000; ++i) {
      uint64_t nrefs = rng() % 4, rawn = rng() % 6;
      Word* obj = h.alloc(nrefs, rawn);
      REQUIRE(obj);
      for (uint64_t k = 0; k < nrefs && !all.empty(); ++k) slot(obj, k) = Value::ref(all[rng() % all.size()]);
      for (uint64_t k = 0; k < rawn; ++k) raw(obj, k) = 0x1234'0000 + i;
      all.push_back(obj);
    }
    for (size_t r = 0; r < 64; ++r) h.root(r) = Value::ref(all[rng() % all.size()]);
    // Reachability computed independently of the collector.
    std::set<Word*> reachable;
    std::vector<Word*> stack;
    for (Value v : h.roots.roots)
      if (reachable.insert(v.as_ref()).second) stack.push_back(v.as_ref());
    while (!stack.empty()) {
      Word* o2 = stack.back();
      stack.pop_back();
      for (uint64_t k = 0; k < Header::nrefs(*o2); ++k) {
        Value v = slot(o2, k);
        if (v.is_ref() && reachable.insert(v.as_ref()).second) stack.push_back(v.as_ref());
      }
    }
    REQUIRE(reachable.size() < all.size());
    h.collect();
    CHECK(!h.check());
    size_t freed = 0;
    for (Word* obj : all) {
      if (reachable.count(obj)) {
        CHECK(Header::is_header(*obj));
        CHECK(!Header::is_marked(*obj));
      } else {
        // The header word was either the first word (now a link) or is poison.
        const MarkSweepSpace::Block* b = h.c->space().block_containing(obj);
        ++freed;
        if (b->empty()) continue;  // nothing in its block survived
        Word* cell = b->begin + (static_cast<uint64_t>(obj - b->begin) / b->cell_words) * b->cell_words;
        CHECK(is_free_cell(cell));
        for (Word* w = cell + 1; w < cell + b->cell_words; ++w) CHECK(*w == Header::kPoison);
      }
    }
    CHECK(freed == all.size() - reachable.size());
    CHECK(h.c->stats().last_live_bytes > 0);
  }
}

TEST_CASE("marksweep: serial and parallel marking, deep and wide graphs, large arrays, weak references") {
  for (unsigned threads : {0u, 1u, 2u, 8u}) {
    CAPTURE(threads);
    HeapOptions o = options(threads);
    o.gc_deque_tasks = 16;  // tiny deques: overflow and refill happen
    Heap h(o);
    build_list(h, 0, 30000);
    // A large array (large-object space) of 5000 small objects, each
    // holding a string-like leaf.
    Word* arr = h.alloc(5000, 0);
    REQUIRE(arr);
    h.root(1) = Value::ref(arr);
    for (uint64_t i = 0; i < 5000; ++i) {
      Word* leaf = h.alloc(0, 2);
      raw(leaf, 0) = i;
      Word* node = h.alloc(1, 0);
      slot(node, 0) = Value::ref(leaf);
      slot(h.root(1).as_ref(), i) = Value::ref(node);
    }
    Word* dead = h.alloc(0, 1);
    Word* kept = h.root(0).as_ref();
    h.roots.weak = {dead, kept};
    h.collect();
    CHECK(!h.check());
    check_list(h, 0, 30000);
    for (uint64_t i = 0; i < 5000; ++i) CHECK(raw(slot(slot(arr, i).as_ref(), 0).as_ref(), 0) == i);
    CHECK(h.roots.weak[0] == nullptr);
    CHECK(h.roots.weak[1] == kept);
    h.collect();
    check_list(h, 0, 30000);
    uint64_t tasks = 0;
    for (const parallel::WorkerStats& s : h.c->worker_stats()) tasks += s.tasks_processed;
    CHECK(tasks > 2 * 30000);
  }
}

TEST_CASE("marksweep: mark_from_gray continues from objects another marker marked") {
  for (unsigned threads : {1u, 2u}) {
    Heap<TwoStepPlan> h(options(threads));
    build_list(h, 0, 5000);
    build_list(h, 1, 100);
    build_list(h, 2, 100);
    h.root(2) = Value::nil();
    h.collect();
    CHECK(h.c->grey_handed_over == 2);
    CHECK(!h.check());
    check_list(h, 0, 5000);
    check_list(h, 1, 100);
  }
}

TEST_CASE("marksweep: a mark skipped on purpose frees a live object and the verifier says so") {
  Heap<ForgetfulPlan> h;
  build_list(h, 0, 10);
  Word* second = slot(h.root(0).as_ref(), 0).as_ref();
  h.c->victim = second;
  h.collect();
  std::optional<verify::Failure> f = h.check();
  REQUIRE(f);
  CHECK(f->what == "reference to no live object");
  CHECK(f->object == reinterpret_cast<uintptr_t>(h.root(0).as_ref()));
  CHECK(f->slot == 0);
  // Without the skipped mark the same heap verifies.
  Heap<ForgetfulPlan> good;
  build_list(good, 0, 10);
  good.collect();
  CHECK(!good.check());
}

TEST_CASE("marksweep: the heap stays within --heap; out of memory returns nullptr and leaves a sound heap") {
  Heap h(options(2, 2ull << 20));
  h.root(0) = Value::nil();
  uint64_t n = 0;
  for (;;) {
    Word* node = h.alloc(1, 6);
    if (!node) break;
    slot(node, 0) = h.root(0);
    h.root(0) = Value::ref(node);
    ++n;
    CHECK(h.c->heap_size() <= (2ull << 20));
  }
  CHECK(n > 10000);
  CHECK(h.c->live_at_exhaustion() > (1ull << 20));
  CHECK(!h.check());
  // Dropping the list makes room again, for a large object too.
  h.root(0) = Value::nil();
  CHECK(h.alloc(0, 100000) != nullptr);
  CHECK(h.c->heap_size() <= (2ull << 20));
}

TEST_CASE("marksweep: bytes allocated counts the fast path's cells; heap_used follows") {
  Heap h;
  uint64_t before = h.c->stats().bytes_allocated;
  for (int i = 0; i < 1000; ++i) REQUIRE(h.alloc(0, 4));  // 5 words, 40-byte cells
  CHECK(h.c->stats().bytes_allocated - before == 1000 * 40);
  CHECK(h.c->heap_used() >= 1000 * 40);
  h.collect();
  CHECK(h.c->heap_used() < 1000 * 40);
}

TEST_CASE("marksweep: identity hashes do not change across collections") {
  Heap h;
  build_list(h, 0, 100);
  Word* obj = h.root(0).as_ref();
  uint64_t hash = h.c->identity_hash(obj);
  h.collect();
  CHECK(h.c->identity_hash(obj) == hash);
  CHECK(h.c->identity_hash(slot(obj, 0).as_ref()) != hash);
  CHECK(!h.check());
}

// A mark-sweep space on its own, without a plan: the tests below drive its
// sweeps directly.
struct BareSpace {
  HeapOptions heap_options = MarkSweepSpace::resolved_options(options());
  GcStats stats;
  observe::Recorder events;
  MarkSweepSpace space{heap_options, stats, events};

  // n objects of `raw` raw words in cells of their class, appended to objs.
  void fill(unsigned n, uint64_t raw, std::vector<Word*>& objs) {
    for (unsigned i = 0; i < n; ++i) {
      Word* cell = space.take_cell(kSizeClassOfWords[object_words(0, raw)], space.max_heap_bytes());
      REQUIRE(cell);
      objs.push_back(format_object(cell, kNode, 0, raw));
    }
  }
};

TEST_CASE(
    "marksweep space: a plan's own block sweepers, through the sweep's steps, free what sweep() frees") {
  BareSpace bare;
  MarkSweepSpace& space = bare.space;
  GcStats& stats = bare.stats;
  std::vector<Word*> objs;
  bare.fill(5000, 2, objs);
  Word* large = space.allocate_large(kNode, 0, 3000, object_words(0, 3000), space.max_heap_bytes());
  REQUIRE(large);
  for (size_t i = 0; i < objs.size(); i += 3) MarkSweepSpace::set_mark(objs[i]);
  space.account_allocation_lists();
  space.retire_allocation_lists();
  // One sweeper, blocks in reverse order: the order is the plan's.
  std::vector<MarkSweepSpace::SweepTally> tallies(1);
  for (size_t b = space.blocks().size(); b-- > 0;)
    if (!space.blocks()[b].empty()) space.sweep_block(b, tallies[0]);
  space.sweep_large_objects();
  space.account_sweep(tallies);
  CHECK(tallies[0].freed_cells == objs.size() - (objs.size() + 2) / 3);
  CHECK(space.large_objects().object_count() == 0);
  for (size_t i = 0; i < objs.size(); ++i) {
    if (i % 3 == 0) {
      CHECK(!MarkSweepSpace::is_marked(objs[i]));
    } else {
      CHECK(is_free_cell(objs[i]));
    }
  }
  CHECK(space.used_bytes() == (objs.size() + 2) / 3 * 3 * kWordSize);
  CHECK(stats.last_live_bytes == (objs.size() + 2) / 3 * 3 * kWordSize);
}

TEST_CASE(
    "marksweep space: the lazy sweep sweeps the class whose list ran out before it takes an empty block") {
  BareSpace bare;
  MarkSweepSpace& space = bare.space;
  unsigned small = kSizeClassOfWords[3];
  unsigned wide = kSizeClassOfWords[12];
  REQUIRE(small < wide);
  std::vector<Word*> objs;
  bare.fill(3000, 2, objs);
  bare.fill(3000, 11, objs);
  for (size_t i = 0; i < objs.size(); i += 3) MarkSweepSpace::set_mark(objs[i]);
  size_t blocks = space.blocks().size();
  space.begin_lazy_sweep();
  // The steps sweep in class order, so wide's blocks come last.
  CHECK(space.awaits_sweep(wide));
  CHECK(!space.awaits_sweep(marksweep::kNoCellClass));
  CHECK(!space.sweep_some(0, wide));
  CHECK(!space.awaits_sweep(wide));
  CHECK(space.awaits_sweep(small));
  Word* cell = space.take_cell(wide, space.max_heap_bytes());
  REQUIRE(cell);
  CHECK(space.blocks().size() == blocks);
  const MarkSweepSpace::Block* b = space.block_containing(cell);
  REQUIRE(b);
  CHECK(b->size_class == wide);
  while (!space.sweep_some(1)) {
  }
  CHECK(space.blocks_to_sweep() == 0);
  CHECK(!space.awaits_sweep(small));
}
