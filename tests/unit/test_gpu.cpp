// The GPU mark kernel driven directly (gc/collectors/gpu/gpu_marker.h) on
// synthetic heaps, every kernel variant compared with a CPU reference mark
// set. Skipped, with a message, where there is no OpenCL device.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <unordered_set>
#include <vector>

#include "gc/collectors/gpu/gpu_marker.h"
#include "gc/verify/verifier.h"

using namespace gc;
using namespace gc::gpu;

namespace {

constexpr uint32_t kNode = kFirstUserClass + 1;

// Objects bump-allocated in the two page-aligned halves of one buffer, the
// dense and the sparse region; its reference stores go through a barrier
// that double-writes into the heap's reference mirror, which every
// --gpu-graph=double-write variant shares.
class SyntheticHeap final : public MarkableHeap {
 public:
  explicit SyntheticHeap(size_t words)
      : words_((words + 511) & ~size_t{511}),
        base_(static_cast<Word*>(std::aligned_alloc(4096, 2 * words_ * kWordSize))),
        mirror_(base_, 2 * words_) {
    top_ = base_;
    sparse_base_ = base_ + words_;
    sparse_top_ = sparse_base_;
    current = this;
  }
  ~SyntheticHeap() override {
    current = nullptr;
    std::free(base_);
  }
  // The heap the test is building (one at a time), for link and store.
  static inline SyntheticHeap* current = nullptr;
  SyntheticHeap(const SyntheticHeap&) = delete;
  SyntheticHeap& operator=(const SyntheticHeap&) = delete;

  Word* alloc(uint64_t nrefs, uint64_t raw = 1, bool sparse = false, uint32_t class_id = kNode) {
    uint64_t w = object_words(nrefs, raw);
    Word*& top = sparse ? sparse_top_ : top_;
    REQUIRE(static_cast<size_t>(top - (sparse ? sparse_base_ : base_)) + w <= words_);
    Word* h = format_object(top, class_id, nrefs, raw);
    top += w;
    objects_.push_back(h);
    return h;
  }
  void regions(Region* dense, Region* sparse) const override {
    *dense = {base_, top_};
    *sparse = {sparse_base_, sparse_top_};
  }
  void for_each_object(const std::function<void(Word*)>& f) const override {
    for (Word* h : objects_) f(h);
  }
  ReferenceMirror* reference_mirror() const override { return &mirror_; }
  // A reference store with the write barrier's double-write.
  void store(Word* from, uint64_t i, Value v) {
    ref_slot(from, i) = v;
    mirror_store(mirror_.biased(), mirror_.origin_bits(), &ref_slot(from, i), v);
  }
  const std::vector<Word*>& objects() const { return objects_; }
  void clear_marks() {
    for (Word* h : objects_) *h &= ~Header::kMarkBit;
  }

 private:
  size_t words_;
  Word* base_;
  Word* top_;
  Word* sparse_base_;
  Word* sparse_top_;
  std::vector<Word*> objects_;
  mutable ReferenceMirror mirror_;
};

void link(Word* from, uint64_t i, Word* to) { SyntheticHeap::current->store(from, i, Value::ref(to)); }
void store(Word* from, uint64_t i, Value v) { SyntheticHeap::current->store(from, i, v); }

std::unordered_set<Word*> reference_marks(const std::vector<Word*>& roots) {
  std::unordered_set<Word*> seen(roots.begin(), roots.end());
  std::vector<Word*> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    Word* h = stack.back();
    stack.pop_back();
    for (uint64_t i = 0; i < Header::nrefs(*h); ++i) {
      Value v = ref_slot(h, i);
      if (v.is_ref() && seen.insert(v.as_ref()).second) stack.push_back(v.as_ref());
    }
  }
  return seen;
}

// The CPU's part after a tail fallback: mark what is left gray.
void finish_on_cpu(const std::vector<Word*>& gray) {
  std::vector<Word*> stack(gray.begin(), gray.end());
  while (!stack.empty()) {
    Word* h = stack.back();
    stack.pop_back();
    if (Header::is_marked(*h)) continue;
    *h |= Header::kMarkBit;
    for (uint64_t i = 0; i < Header::nrefs(*h); ++i)
      if (Value v = ref_slot(h, i); v.is_ref()) stack.push_back(v.as_ref());
  }
}

std::unique_ptr<ClDevice> device_or_skip() {
  std::string why;
  auto d = choose_device("", &why);
  if (!d) MESSAGE("skipped: " << why);
  return d;
}

enum class HeapKind { kDirect, kGraph, kDoubleWrite };

struct Variant {
  HeapKind heap;
  Offsets offsets;
  bool vector;
  unsigned split, cus, tail;
  bool per_level;
};

// The direct heap and the rebuilt graph under every combination (192); the
// double-write graph, which runs the direct heap's kernel code over its
// own entries, under every combination of the rest with the offset method
// taken in turn (32).
std::vector<Variant> all_variants() {
  std::vector<Variant> v;
  constexpr Offsets kOffsets[] = {Offsets::kHistogram, Offsets::kPrefixSum, Offsets::kAtomic};
  for (HeapKind heap : {HeapKind::kDirect, HeapKind::kGraph, HeapKind::kDoubleWrite})
    for (Offsets offsets : kOffsets)
      for (int bits = 0; bits < 32; ++bits) {
        if (heap == HeapKind::kDoubleWrite && kOffsets[bits % 3] != offsets) continue;
        v.push_back({heap, offsets, bool(bits & 1), bits & 2 ? 16u : 0u, bits & 4 ? 2u : 1u,
                     bits & 8 ? 20u : 0u, bool(bits & 16)});
      }
  return v;
}

GpuOptions options_of(const Variant& v) {
  GpuOptions o;
  o.graph = v.heap != HeapKind::kDirect;
  o.double_write = v.heap == HeapKind::kDoubleWrite;
  o.offsets = v.offsets;
  o.vector_loads = v.vector;
  o.split_refs = v.split;
  o.compute_units = v.cus;
  o.tail_width = v.tail;
  o.launch_per_level = v.per_level;
  o.work_group_size = 64;
  return o;
}

// Marks heap from roots under every variant (192 combinations of the
// options) and compares each mark set with the reference.
void check_all_variants(SyntheticHeap& heap, const std::vector<Word*>& roots, const ClDevice& device) {
  std::unordered_set<Word*> expected = reference_marks(roots);
  observe::Recorder events;
  for (const Variant& v : all_variants()) {
    CAPTURE(static_cast<int>(v.heap));
    CAPTURE(static_cast<int>(v.offsets));
    CAPTURE(v.vector);
    CAPTURE(v.split);
    CAPTURE(v.cus);
    CAPTURE(v.tail);
    CAPTURE(v.per_level);
    heap.clear_marks();
    GpuMarker marker(ClSession::for_device(device), options_of(v));
    MarkReport report;
    marker.mark(heap, roots, events, report);
    if (!v.tail) CHECK(report.gray.empty());
    finish_on_cpu(report.gray);
    size_t wrong = 0;
    for (Word* h : heap.objects()) wrong += Header::is_marked(*h) != (expected.count(h) != 0);
    CHECK(wrong == 0);
    if (v.heap == HeapKind::kDoubleWrite) CHECK(!heap.reference_mirror()->check(heap, 0));
  }
  heap.clear_marks();
}

// A list of n one-slot objects; returns its head.
Word* build_list(SyntheticHeap& heap, int n) {
  Word* head = heap.alloc(1);
  Word* prev = head;
  for (int i = 1; i < n; ++i) {
    Word* next = heap.alloc(1);
    link(prev, 0, next);
    prev = next;
  }
  return head;
}

// One mark of heap from roots with a fresh marker.
MarkReport mark_once(const ClDevice& device, SyntheticHeap& heap, const std::vector<Word*>& roots,
                     const GpuOptions& o) {
  GpuMarker marker(ClSession::for_device(device), o);
  observe::Recorder events;
  MarkReport report;
  marker.mark(heap, roots, events, report);
  return report;
}

}  // namespace

TEST_CASE("gpu: degree buckets cover every count") {
  CHECK(degree_bucket(0) == 0);
  CHECK(degree_bucket(8) == 8);
  CHECK(degree_bucket(9) == 9);
  CHECK(degree_bucket(16) == 9);
  CHECK(degree_bucket(17) == 10);
  CHECK(degree_bucket(256) == 13);
  CHECK(degree_bucket(257) == 14);
  CHECK(degree_bucket(1u << 30) == 14);
}

TEST_CASE("gpu: the out-degree of a marked object counts its references, not its slots") {
  SyntheticHeap heap(1 << 16);
  Word* target = heap.alloc(0);
  Word* mixed = heap.alloc(4);  // a reference, a number, nil, a reference
  link(mixed, 0, target);
  store(mixed, 1, Value::num(2.5));
  link(mixed, 3, target);
  Word* unmarked = heap.alloc(3);
  link(unmarked, 0, target);
  *target |= Header::kMarkBit;
  *mixed |= Header::kMarkBit;
  auto degrees = marked_out_degrees(heap);
  CHECK(degrees[0] == 1);
  CHECK(degrees[2] == 1);
  CHECK(degrees[3] == 0);
  CHECK(degrees[4] == 0);
  heap.clear_marks();
}

TEST_CASE("gpu: every variant marks a random graph like the CPU") {
  auto device = device_or_skip();
  if (!device) return;
  SyntheticHeap heap(1 << 20);
  std::mt19937 rng(7);
  std::vector<Word*> objs;
  for (int i = 0; i < 3000; ++i) {
    uint64_t n = rng() % 10 == 0 ? 17 + rng() % 60 : rng() % 5;
    objs.push_back(heap.alloc(n, rng() % 3, rng() % 50 == 0));
  }
  // References, numbers and nil mixed in the slots; cycles and garbage.
  for (Word* h : objs)
    for (uint64_t i = 0; i < Header::nrefs(*h); ++i) {
      unsigned r = rng() % 8;
      if (r < 5)
        link(h, i, objs[rng() % objs.size()]);
      else if (r == 5)
        store(h, i, Value::num(1.5));
    }
  std::vector<Word*> roots;
  for (int i = 0; i < 40; ++i) roots.push_back(objs[rng() % objs.size()]);
  roots.push_back(roots[0]);  // a root held twice
  check_all_variants(heap, roots, *device);
}

TEST_CASE("gpu: long list, parallel lists, a very wide object, a single item") {
  auto device = device_or_skip();
  if (!device) return;
  SyntheticHeap heap(1 << 21);
  std::vector<Word*> roots;
  Word* single = heap.alloc(0, 2);
  roots.push_back(single);
  // A list of 300: the tail fallback leaves most of it to the CPU.
  Word* prev = heap.alloc(1);
  roots.push_back(prev);
  for (int i = 0; i < 300; ++i) {
    Word* next = heap.alloc(1);
    link(prev, 0, next);
    prev = next;
  }
  // 100 lists of 50, each from its own root.
  for (int l = 0; l < 100; ++l) {
    Word* head = heap.alloc(1);
    roots.push_back(head);
    for (int i = 0; i < 50; ++i) {
      Word* next = heap.alloc(1);
      link(head, 0, next);
      head = next;
    }
  }
  // One object of 1000 references (the divergence case), in the sparse
  // region with a few others.
  Word* wide = heap.alloc(1000, 1, true);
  link(wide, 999, heap.alloc(3, 1, true));
  for (int i = 0; i < 1000; ++i) link(wide, i, heap.alloc(0));
  roots.push_back(wide);
  // Garbage pointing into the live data.
  for (int i = 0; i < 200; ++i) link(heap.alloc(1), 0, wide);
  check_all_variants(heap, roots, *device);
}

TEST_CASE("gpu: a queue too small for a step grows and the mark resumes") {
  auto device = device_or_skip();
  if (!device) return;
  // 3 × 40000 references in one iteration: more than the first capacity.
  SyntheticHeap heap(1 << 21);
  std::vector<Word*> roots;
  Word* leaf = heap.alloc(0);
  for (int w = 0; w < 3; ++w) {
    Word* wide = heap.alloc(40000);
    for (int i = 0; i < 40000; ++i) link(wide, i, i % 2 ? leaf : heap.alloc(0));
    roots.push_back(wide);
  }
  std::unordered_set<Word*> expected = reference_marks(roots);
  // One work-group's level loop, and two work-groups sharing one queue
  // (mark_shared), whose wide step needs more places than the whole queue.
  for (unsigned cus : {1u, 2u}) {
    CAPTURE(cus);
    heap.clear_marks();
    GpuOptions o;
    o.compute_units = cus;
    o.tail_width = 0;
    MarkReport report = mark_once(*device, heap, roots, o);
    CHECK(report.launches > 1);
    if (cus == 1) CHECK(report.frontier.size() == 2);  // the three roots, then their references
    for (Word* h : heap.objects()) CHECK(Header::is_marked(*h) == (expected.count(h) != 0));
  }
}

TEST_CASE("gpu: the frontier is the paper's Figure 2 and the tail goes back to the CPU") {
  auto device = device_or_skip();
  if (!device) return;
  SyntheticHeap heap(1 << 16);
  Word* head = build_list(heap, 100);
  for (bool graph : {false, true})
    for (bool per_level : {false, true}) {
      CAPTURE(graph);
      CAPTURE(per_level);
      heap.clear_marks();
      GpuOptions o;
      o.graph = graph;
      o.compute_units = 1;
      o.launch_per_level = per_level;
      MarkReport report = mark_once(*device, heap, {head}, o);
      // One object per level; after 5 levels a queue of width 1 < 20
      // returns: the sixth object is left gray for the CPU. One launch did
      // it all, or one per level.
      CHECK(report.frontier == std::vector<uint64_t>(5, 1));
      CHECK(report.launches == (per_level ? 5u : 1u));
      REQUIRE(report.gray.size() == 1);
      CHECK(report.gray[0] == heap.objects()[5]);
      CHECK(Header::is_marked(*heap.objects()[4]));
      CHECK(!Header::is_marked(*heap.objects()[5]));
    }
  heap.clear_marks();
}

TEST_CASE("gpu: one launch marks a deep list, the width history refilled every 4096 levels") {
  auto device = device_or_skip();
  if (!device) return;
  SyntheticHeap heap(1 << 17);
  Word* head = build_list(heap, 10000);
  GpuOptions o;
  o.compute_units = 1;
  o.tail_width = 0;
  MarkReport report = mark_once(*device, heap, {head}, o);
  CHECK(report.frontier == std::vector<uint64_t>(10000, 1));
  CHECK(report.launches == 3);  // 4096 + 4096 + 1808 levels
  for (Word* h : heap.objects()) CHECK(Header::is_marked(*h));
}

TEST_CASE("gpu: only references enter the direct queue") {
  auto device = device_or_skip();
  if (!device) return;
  // A root of 40 slots (wide: more than --gpu-split's 16) and one of 6
  // (narrow), each holding numbers, nil, a boolean and three references.
  SyntheticHeap heap(1 << 14);
  std::vector<Word*> roots = {heap.alloc(40), heap.alloc(6)};
  for (Word* r : roots) {
    for (uint64_t i = 0; i < Header::nrefs(*r); ++i) store(r, i, Value::num(static_cast<double>(i)));
    store(r, 1, Value::nil());
    store(r, 2, Value::boolean(true));
    for (uint64_t i : {0, 3, 5}) link(r, i, heap.alloc(0));
  }
  for (bool per_level : {false, true}) {
    heap.clear_marks();
    GpuOptions o;
    o.compute_units = 1;
    o.tail_width = 0;
    o.launch_per_level = per_level;
    MarkReport report = mark_once(*device, heap, roots, o);
    CHECK(report.frontier == std::vector<uint64_t>{2, 6});
    for (Word* h : heap.objects()) CHECK(Header::is_marked(*h));
  }
}

namespace {
struct ListRoots final : RootSet {
  std::vector<Value> slots;
  void root_groups(std::vector<RootGroup>& out) override { out.push_back({slots.data(), slots.size()}); }
  void process_weak(WeakResolver&) override {}
};
}  // namespace

TEST_CASE("gpu: --gc-verify's mark-set check passes the kernel's marks and fails a dropped or extra mark") {
  auto device = device_or_skip();
  if (!device) return;
  SyntheticHeap heap(1 << 16);
  std::vector<Word*> objs;
  for (int i = 0; i < 200; ++i) objs.push_back(heap.alloc(2));
  for (int i = 0; i + 2 < 100; ++i) {
    link(objs[i], 0, objs[i + 1]);
    link(objs[i], 1, objs[i + 2]);
  }
  ListRoots roots;
  roots.slots = {Value::ref(objs[0]), Value::num(3), Value::nil()};
  Region dense, sparse;
  heap.regions(&dense, &sparse);
  verify::HeapShape shape;
  shape.linear_spaces.push_back({"synthetic", dense.begin, dense.end});

  GpuMarker marker(ClSession::for_device(*device), GpuOptions{});
  observe::Recorder events;
  MarkReport report;
  marker.mark(heap, {objs[0]}, events, report);
  finish_on_cpu(report.gray);
  CHECK(!verify::check_marks(shape, roots, 1));

  *objs[57] &= ~Header::kMarkBit;
  auto dropped = verify::check_marks(shape, roots, 1);
  REQUIRE(dropped);
  CHECK(dropped->what == "reachable object not marked");
  CHECK(dropped->object == reinterpret_cast<uintptr_t>(objs[57]));
  *objs[57] |= Header::kMarkBit;

  *objs[150] |= Header::kMarkBit;
  auto extra = verify::check_marks(shape, roots, 1);
  REQUIRE(extra);
  CHECK(extra->what == "unreachable object marked");
  // Outside a collection a mark is itself an error.
  CHECK(verify::check_heap(shape, roots, 1)->what == "mark bit set outside a collection");
  heap.clear_marks();
}

TEST_CASE(
    "gpu: the double-write graph builds only new nodes, forgets the dead, and its check finds a skipped "
    "barrier") {
  auto device = device_or_skip();
  if (!device) return;
  SyntheticHeap heap(1 << 16);
  GpuOptions o;
  o.graph = true;
  o.double_write = true;
  o.compute_units = 1;
  o.tail_width = 0;
  GpuMarker marker(ClSession::for_device(*device), o);
  observe::Recorder events;
  auto mark = [&](const std::vector<Word*>& roots) {
    heap.clear_marks();
    MarkReport r;
    marker.mark(heap, roots, events, r);
    CHECK(r.gray.empty());
    std::unordered_set<Word*> expected = reference_marks(roots);
    size_t wrong = 0;
    for (Word* h : heap.objects()) wrong += Header::is_marked(*h) != (expected.count(h) != 0);
    CHECK(wrong == 0);
    CHECK(!heap.reference_mirror()->check(heap, 0));
    return r;
  };
  // A list of 100 objects of two slots, the second holding a number; one
  // garbage object into it; a fiber stack, which the interpreter writes
  // without the barrier.
  std::vector<Word*> list;
  for (int i = 0; i < 100; ++i) list.push_back(heap.alloc(2));
  for (int i = 0; i + 1 < 100; ++i) {
    link(list[i], 0, list[i + 1]);
    store(list[i], 1, Value::num(i));
  }
  Word* garbage = heap.alloc(2);
  link(garbage, 0, list[50]);
  Word* stack = heap.alloc(4, 0, true, kStackClass);
  Word* on_stack = heap.alloc(0);
  std::vector<Word*> roots = {list[0], stack};

  MarkReport first = mark(roots);
  CHECK(first.objects == 103);  // every node
  CHECK(first.graph_bytes_updated == (101 * 3 + 5 + 1) * sizeof(uint32_t));

  // Stores through the barrier build nothing: list[11..19] is cut out, and
  // list[20] onwards stays reachable through a new object. The unmarked
  // objects were forgotten and are built again (the garbage, and what the
  // stack holds now); the stack is built every time.
  link(list[10], 0, list[60]);
  Word* fresh = heap.alloc(3);
  link(list[5], 1, fresh);
  link(fresh, 2, list[20]);
  ref_slot(stack, 3) = Value::ref(on_stack);
  MarkReport second = mark(roots);
  CHECK(second.objects == 4);
  CHECK(second.graph_bytes_updated == (4 + 3 + 5 + 1) * sizeof(uint32_t));
  CHECK(Header::is_marked(*on_stack));

  // A dead object's cell taken by a new object of the same shape, its slots
  // nil as allocation leaves them: the new object is built again, not read
  // from the dead one's node (which still names list[16]). This heap has no
  // sweep, so the dead list[11..19] are still walked and built again, with
  // the garbage and the stack.
  Word* reused = format_object(list[15] - words_below(2), kNode, 2, 1);
  REQUIRE(reused == list[15]);
  link(list[0], 1, reused);
  MarkReport third = mark(roots);
  CHECK(third.objects == 11);
  CHECK(third.graph_bytes_updated == (9 * 3 + 3 + 5) * sizeof(uint32_t));
  CHECK(Header::is_marked(*reused));
  CHECK(!Header::is_marked(*list[16]));

  // A store that skips the barrier is what --gc-verify's check reports.
  ref_slot(list[1], 1) = Value::ref(list[70]);
  auto failure = heap.reference_mirror()->check(heap, 4);
  REQUIRE(failure);
  CHECK(failure->object == reinterpret_cast<uintptr_t>(list[1]));
  CHECK(failure->slot == 1);
  CHECK(failure->collection == 4);
  heap.clear_marks();
}
