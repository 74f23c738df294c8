// Unit tests for pMarkcompact (gc/collectors/markcompact/pmarkcompact.h),
// driven directly on a synthetic heap: an old space filled by bumping, a
// young space and a large-object space in one reservation, with a fake root
// set. Every test runs the engine with several thread counts, including 8
// threads on a 2-core machine (oversubscribed on purpose). A shadow model
// (object ids in raw word 0, expected children by id, expected hashes)
// checks that every reachable object survives with its contents, that every
// reference is redirected, and that the heap walks end to end.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gc/collectors/markcompact/pmarkcompact.h"
#include "gc/collectors/markcompact/serial_markcompact.h"
#include "gc/heap/lab.h"
#include "gc/heap/reservation.h"
#include "gc/verify/verifier.h"
#include "tests/unit/vector_roots.h"

using namespace gc;

namespace {

constexpr uint32_t kNode = kFirstUserClass + 3;

using Roots = test::VectorRoots;

uint64_t hash_of(const Word* h) { return (reinterpret_cast<uintptr_t>(h) * 0x9E37'79B9'7F4A'7C15ull) >> 12; }

// The identity hash an object answers with now (layout.h, HashState).
uint64_t identity_hash(Word* h) {
  Word hw = *h;
  if (Header::hash_state(hw) == HashState::kHashedAndMoved) return h[Header::raw_words(hw)];
  return hash_of(h);
}

// A synthetic heap: [old space | young space | large objects] in one
// reservation, with its card table.
struct Heap {
  static constexpr uint64_t kYoungWords = 1 << 16;  // 512 KB
  static constexpr uint64_t kLargeWords = 1 << 18;  // 2 MB
  uint64_t old_words;
  Reservation res;
  CardTable cards{res};
  Word* old_begin = res.base();
  Word* old_top = old_begin;
  Word* young_begin = old_begin + old_words;
  Word* young_top = young_begin;
  LargeObjectSpace los{young_begin + kYoungWords, young_begin + kYoungWords + kLargeWords};
  Roots roots;
  uint64_t next_id = 0;

  explicit Heap(uint64_t old_space_words = 1 << 19)  // 4 MB
      : old_words(old_space_words), res((old_words + kYoungWords + kLargeWords) * kWordSize) {
    cards.clean(res.base(), res.end());
  }

  Word* alloc_in(Word*& top, uint64_t nrefs, uint64_t raw) {
    Word* h = format_object(top, kNode, nrefs, raw);
    top += object_words(nrefs, raw);
    if (raw) h[1] = next_id++;
    return h;
  }
  Word* old_obj(uint64_t nrefs, uint64_t raw = 1) { return alloc_in(old_top, nrefs, raw); }
  Word* young_obj(uint64_t nrefs, uint64_t raw = 1) { return alloc_in(young_top, nrefs, raw); }
  Word* large_obj(uint64_t nrefs, uint64_t raw = 1) {
    Word* h = los.allocate(kNode, nrefs, raw).header;
    REQUIRE(h != nullptr);
    h[1] = next_id++;
    return h;
  }
  // A dead object between live ones: a gap compaction must close.
  void garbage(uint64_t words) { old_obj(words > 3 ? 2 : 0, words > 3 ? words - 4 : words - 1); }

  // pMarkcompact, or the serial collector it parallelises.
  template <class Engine>
  ParallelMarkCompact::Result collect(Engine& mc, bool with_cards = true) {
    WordRange young[] = {{young_begin, young_top}};
    ParallelMarkCompact::Input in{
        roots, WordRange{old_begin, old_top}, young, los, hash_of, with_cards ? cards.biased_base() : nullptr,
        {}};
    return mc.collect(in);
  }

  // The independent verifier (gc/verify): every space walks end to end,
  // every reference reaches an object start, no mark is left over.
  void verify() {
    verify::HeapShape shape;
    shape.linear_spaces.push_back({"old", old_begin, old_top});
    shape.linear_spaces.push_back({"young", young_begin, young_top});
    shape.large_space = {"large", los.begin(), los.frontier()};
    for (const LargeObjectSpace::Object& o : los.objects()) shape.large_objects.push_back(o.header);
    std::optional<verify::Failure> f = verify::check_heap(shape, roots, 0);
    if (f) FAIL(f->message());
  }
};

void link(Word* from, uint64_t slot, Word* to) { ref_slot(from, slot) = Value::ref(to); }
uint64_t id_of(Word* h) { return h[1]; }

// The shadow model: per id, the children's ids (or ~0 for nil) and the
// expected hash (0 when not hashed).
struct Model {
  std::map<uint64_t, std::vector<uint64_t>> children;
  std::map<uint64_t, uint64_t> hash;
  std::vector<uint64_t> root_ids;  // per root slot, ~0 for a non-reference

  void record(Word* root) {
    std::vector<Word*> stack{root};
    while (!stack.empty()) {
      Word* h = stack.back();
      stack.pop_back();
      uint64_t id = id_of(h);
      if (children.count(id)) continue;
      std::vector<uint64_t>& c = children[id];
      uint64_t n = Header::nrefs(*h);
      for (uint64_t i = 0; i < n; ++i) {
        Value v = ref_slot(h, i);
        c.push_back(v.is_ref() ? id_of(v.as_ref()) : ~0ull);
        if (v.is_ref()) stack.push_back(v.as_ref());
      }
      if (Header::hash_state(*h) != HashState::kUnhashed) hash[id] = identity_hash(h);
    }
  }

  // Everything reachable from the roots matches; returns the reachable set.
  // Mismatches are counted and the first one described, so that a heap of
  // many thousand objects costs one assertion.
  std::set<Word*> check(Roots& roots) {
    std::set<Word*> seen;
    std::vector<Word*> stack;
    std::string first;
    uint64_t errors = 0;
    auto fail = [&](const char* what, uint64_t id) {
      if (errors++ == 0) first = std::string(what) + " at object " + std::to_string(id);
    };
    REQUIRE(roots.roots.size() == root_ids.size());
    for (size_t i = 0; i < roots.roots.size(); ++i) {
      Value v = roots.roots[i];
      if (v.is_ref() != (root_ids[i] != ~0ull)) fail("root", i);
      if (!v.is_ref()) continue;
      if (!Header::is_header(*v.as_ref()) || id_of(v.as_ref()) != root_ids[i]) fail("root", i);
      stack.push_back(v.as_ref());
    }
    while (!stack.empty()) {
      Word* h = stack.back();
      stack.pop_back();
      if (!seen.insert(h).second) continue;
      if (!Header::is_header(*h)) {
        fail("not a header", 0);
        continue;
      }
      uint64_t id = id_of(h);
      if (Header::is_marked(*h)) fail("mark left", id);
      if (Header::class_id(*h) != kNode) fail("class", id);
      auto it = children.find(id);
      if (it == children.end() || it->second.size() != Header::nrefs(*h)) {
        fail("unknown object or wrong size", id);
        continue;
      }
      const std::vector<uint64_t>& c = it->second;
      uint64_t n = Header::nrefs(*h);
      if (n && h[-1 - static_cast<int64_t>(n)] != Header::count_word(n)) fail("count word", id);
      for (uint64_t i = 0; i < n; ++i) {
        Value v = ref_slot(h, i);
        if (c[i] == ~0ull) {
          if (!v.is_nil()) fail("nil slot", id);
        } else if (!v.is_ref()) {
          fail("reference lost", id);
        } else {
          if (id_of(v.as_ref()) != c[i]) fail("wrong child", id);
          stack.push_back(v.as_ref());
        }
      }
      auto hash_it = hash.find(id);
      if (hash_it != hash.end() && identity_hash(h) != hash_it->second) fail("hash", id);
    }
    CHECK_MESSAGE(errors == 0, first);
    return seen;
  }
};

Model model_of(Heap& heap) {
  Model m;
  for (Value v : heap.roots.roots) {
    m.root_ids.push_back(v.is_ref() ? id_of(v.as_ref()) : ~0ull);
    if (v.is_ref()) m.record(v.as_ref());
  }
  return m;
}

uint64_t reachable_old_bytes(Heap& heap, const std::set<Word*>& reach) {
  uint64_t bytes = 0;
  for (Word* h : reach)
    if (h >= heap.old_begin && h < heap.old_top) bytes += object_words(*h) * kWordSize;
  return bytes;
}

// The old space as 40,000 live list nodes of raw_words raw words (one
// reference: the next node), each followed by dead_words of garbage; the
// list's head is the only root.
void build_interleaved_list(Heap& heap, uint64_t raw_words, uint64_t dead_words) {
  heap.roots.roots.assign(1, Value::nil());
  Word* head = nullptr;
  for (int i = 0; i < 40000; ++i) {
    Word* n = heap.old_obj(1, raw_words);
    if (head) link(n, 0, head);
    head = n;
    heap.garbage(dead_words);
  }
  heap.roots.roots[0] = Value::ref(head);
}

MarkCompactOptions no_prefix() {
  MarkCompactOptions o;
  o.dense_prefix = false;
  return o;
}

// A random graph over old, young and large objects, some hashed: half of
// the objects (chosen at random, so live and dead ones interleave in every
// unit) reference only each other and hold the roots; the other half is
// garbage that may reference anything.
void build_random_graph(Heap& heap, uint64_t seed, size_t objects) {
  std::mt19937_64 rng(seed);
  std::vector<Word*> all;
  std::vector<Word*> live;
  std::vector<bool> is_live;
  for (size_t i = 0; i < objects; ++i) {
    uint64_t kind = rng() % 100;
    uint64_t nrefs = rng() % 5;
    uint64_t raw = 1 + rng() % 4;
    Word* h = kind == 0 && rng() % 2 ? heap.large_obj(2100 + rng() % 2000, raw)
              : kind < 15            ? heap.young_obj(nrefs, raw)
                                     : heap.old_obj(nrefs, raw);
    if (rng() % 8 == 0) *h = Header::with_hash_state(*h, HashState::kHashed);
    all.push_back(h);
    is_live.push_back(rng() % 2);
    if (is_live.back()) live.push_back(h);
  }
  for (size_t k = 0; k < all.size(); ++k) {
    const std::vector<Word*>& targets = is_live[k] ? live : all;
    uint64_t n = Header::nrefs(*all[k]);
    for (uint64_t i = 0; i < n; ++i)
      if (rng() % 4) link(all[k], i, targets[rng() % targets.size()]);
  }
  heap.roots.roots.assign(objects / 40, Value::nil());
  for (Value& v : heap.roots.roots)
    if (rng() % 3) v = Value::ref(live[rng() % live.size()]);
}

}  // namespace

TEST_CASE(
    "pMarkcompact: random graphs survive with contents, references and hashes, at 1, 2, 3 and 8 threads") {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    for (bool prefix : {false, true}) {
      CAPTURE(threads);
      CAPTURE(prefix);
      Heap heap;
      build_random_graph(heap, threads * 7 + prefix, 6000);
      Model model = model_of(heap);
      parallel::WorkerPool pool(threads);
      observe::Recorder events;
      events.set_workers(threads);
      MarkCompactOptions o;
      o.dense_prefix = prefix;
      ParallelMarkCompact mc(pool, events, o);
      for (int round = 0; round < 3; ++round) {
        CAPTURE(round);
        uint64_t used = static_cast<uint64_t>(heap.old_top - heap.old_begin) * kWordSize;
        ParallelMarkCompact::Result r = heap.collect(mc);
        heap.verify();
        std::set<Word*> reach = model.check(heap.roots);
        CHECK(r.old_live_bytes == reachable_old_bytes(heap, reach));
        if (round == 0) CHECK(r.old_live_bytes < used * 2 / 3);
        if (round == 0) CHECK(r.bytes_moved > 0);
        // Every reachable old object lies in an occupied run.
        size_t outside = 0;
        for (Word* h : reach) {
          if (h < heap.old_begin || h >= heap.old_top) continue;
          outside += std::none_of(r.occupied.begin(), r.occupied.end(),
                                  [&](const WordRange& run) { return h >= run.begin && h < run.end; });
        }
        CHECK(outside == 0);
        // Drop a few roots so that the next round has new garbage.
        for (size_t i = 0; i < heap.roots.roots.size(); i += 3) heap.roots.roots[i] = Value::nil();
        model = model_of(heap);
      }
    }
  }
}

TEST_CASE("pMarkcompact: a list, a tree, a DAG and cycles keep their shape; garbage is reclaimed") {
  for (unsigned threads : {1u, 2u, 8u}) {
    CAPTURE(threads);
    Heap heap;
    heap.roots.roots.assign(4, Value::nil());
    // A 20000-node list with dead nodes between the live ones.
    Word* prev = nullptr;
    for (int i = 0; i < 20000; ++i) {
      Word* n = heap.old_obj(1, 2);
      if (prev) link(n, 0, prev);
      prev = n;
      heap.garbage(3 + i % 5);
    }
    heap.roots.roots[0] = Value::ref(prev);
    // A complete binary tree of depth 12.
    std::vector<Word*> level;
    for (int i = 0; i < (1 << 12); ++i) level.push_back(heap.old_obj(0, 1));
    while (level.size() > 1) {
      std::vector<Word*> up;
      for (size_t i = 0; i < level.size(); i += 2) {
        heap.garbage(2);
        Word* n = heap.old_obj(2, 1);
        link(n, 0, level[i]);
        link(n, 1, level[i + 1]);
        up.push_back(n);
      }
      level = up;
    }
    heap.roots.roots[1] = Value::ref(level[0]);
    // A DAG: 500 parents share 20 children; and a cycle of 1000 with self-loops.
    std::vector<Word*> shared;
    for (int i = 0; i < 20; ++i) shared.push_back(heap.old_obj(0, 3));
    Word* hub = heap.old_obj(500, 1);
    for (int i = 0; i < 500; ++i) {
      heap.garbage(4);
      Word* p = heap.old_obj(2, 1);
      link(p, 0, shared[i % 20]);
      link(p, 1, p);
      link(hub, static_cast<uint64_t>(i), p);
    }
    heap.roots.roots[2] = Value::ref(hub);
    Word* first = heap.old_obj(1, 1);
    Word* cur = first;
    for (int i = 1; i < 1000; ++i) {
      heap.garbage(1);
      Word* n = heap.old_obj(1, 1);
      link(cur, 0, n);
      cur = n;
    }
    link(cur, 0, first);
    heap.roots.roots[3] = Value::ref(first);

    Model model = model_of(heap);
    uint64_t used = static_cast<uint64_t>(heap.old_top - heap.old_begin) * kWordSize;
    parallel::WorkerPool pool(threads);
    observe::Recorder events;
    ParallelMarkCompact mc(pool, events, no_prefix());
    ParallelMarkCompact::Result r = heap.collect(mc);
    heap.verify();
    std::set<Word*> reach = model.check(heap.roots);
    CHECK(reach.size() == 20000 + (2 * 4096 - 1) + 20 + 1 + 500 + 1000);
    CHECK(r.old_live_bytes == reachable_old_bytes(heap, reach));
    CHECK(r.old_live_bytes < used);
    uint64_t free_bytes = 0;
    for (const WordRange& f : r.free_areas) free_bytes += f.words() * kWordSize;
    CHECK(free_bytes == used - r.old_live_bytes);
    CHECK(r.bytes_moved > 0);
    // The cycle still closes on itself.
    Word* c = heap.roots.roots[3].as_ref();
    Word* walk = c;
    for (int i = 0; i < 1000; ++i) walk = ref_slot(walk, 0).as_ref();
    CHECK(walk == c);
  }
}

TEST_CASE("pMarkcompact: n regions sliding in alternating directions leave floor((n + 1) / 2) free areas") {
  for (unsigned threads : {1u, 2u, 3u, 4u, 5u, 8u}) {
    CAPTURE(threads);
    Heap heap;
    // Live and dead objects alternate evenly over the whole space.
    build_interleaved_list(heap, 1, 3);
    Model model = model_of(heap);
    parallel::WorkerPool pool(threads);
    observe::Recorder events;
    ParallelMarkCompact mc(pool, events, no_prefix());
    ParallelMarkCompact::Result r = heap.collect(mc);
    heap.verify();
    model.check(heap.roots);
    CHECK(r.free_areas.size() == (threads + 1) / 2);
    CHECK(r.occupied.size() == threads / 2 + 1);
    const ParallelMarkCompact::Report& rep = mc.last_report();
    CHECK(rep.units.size() == 4 * threads);
    CHECK(rep.regions.size() == threads);
    // Regions hold equal live data, to within one unit's share.
    uint64_t live = r.old_live_bytes;
    for (uint64_t b : rep.region_live_bytes) CHECK(b * threads <= live + live / 2);
    // Free area i lies between region 2i, which slid down, and region
    // 2i + 1, which slid up (or the end of the space).
    for (size_t i = 0; i < r.free_areas.size(); ++i) {
      CHECK(r.free_areas[i].begin == rep.regions[2 * i].begin + rep.region_live_bytes[2 * i] / kWordSize);
      if (2 * i + 1 < threads) {
        CHECK(r.free_areas[i].end ==
              rep.regions[2 * i + 1].end - rep.region_live_bytes[2 * i + 1] / kWordSize);
      } else {
        CHECK(r.free_areas[i].end == heap.old_top);
      }
    }
  }
}

TEST_CASE(
    "pMarkcompact: the dense prefix is taken when the start of the space is nearly all live, not otherwise") {
  for (unsigned threads : {1u, 2u, 8u}) {
    CAPTURE(threads);
    for (int shape = 0; shape < 3; ++shape) {
      CAPTURE(shape);
      // shape 0: the first half all live, the second half mostly dead;
      // shape 1: garbage everywhere; shape 2: as 0 with the prefix off.
      Heap heap;
      heap.roots.roots.assign(1, Value::nil());
      Word* head = nullptr;
      std::vector<Word*> early;
      for (int i = 0; i < 60000; ++i) {
        Word* n = heap.old_obj(1, 1);
        if (head) link(n, 0, head);
        head = n;
        if (i < 30000 && shape != 1) {
          early.push_back(n);
        } else {
          heap.garbage(6);
        }
      }
      heap.roots.roots[0] = Value::ref(head);
      Model model = model_of(heap);
      std::map<uint64_t, Word*> before;
      for (Word* h : early) before[id_of(h)] = h;
      parallel::WorkerPool pool(threads);
      observe::Recorder events;
      MarkCompactOptions o;
      o.dense_prefix = shape != 2;
      ParallelMarkCompact mc(pool, events, o);
      ParallelMarkCompact::Result r = heap.collect(mc);
      heap.verify();
      std::set<Word*> reach = model.check(heap.roots);
      unsigned prefix = mc.last_report().dense_prefix_units;
      if (shape == 0) {
        // The first half of the space is about 2/9 of it (objects of 3
        // words against 9 after): at least one of 4n units is dense.
        CHECK(prefix >= 1);
        CHECK(r.dense_prefix_end > heap.old_begin);
        CHECK(r.prefix_dead_bytes == 0);
        // Nothing in the prefix moved.
        size_t moved = 0;
        for (Word* h : reach) moved += h < r.dense_prefix_end && before.at(id_of(h)) != h;
        CHECK(moved == 0);
      } else {
        CHECK(prefix == 0);
        CHECK(r.dense_prefix_end == heap.old_begin);
      }
      CHECK(r.old_live_bytes == reachable_old_bytes(heap, reach));
    }
  }
}

TEST_CASE("pMarkcompact: a region sliding up leaves its dense end in place, unless the prefix is off") {
  for (bool dense : {true, false}) {
    CAPTURE(dense);
    // The lower half of the space half live, the upper half 20 live words
    // for each dead one (95.2%). Two threads: regions of equal live data
    // put units 5 to 7 of 8, all in the upper half, in region 1, which
    // slides up.
    Heap heap;
    heap.roots.roots.assign(1, Value::nil());
    Word* head = nullptr;
    std::vector<Word*> all;
    for (int i = 0; i < 30000; ++i) {
      Word* n = heap.old_obj(1, 17);  // 20 words
      if (head) link(n, 0, head);
      head = n;
      all.push_back(n);
      heap.garbage(i < 10000 ? 20 : 1);
    }
    heap.roots.roots[0] = Value::ref(head);
    Model model = model_of(heap);
    std::map<uint64_t, Word*> before;
    for (Word* h : all) before[id_of(h)] = h;
    parallel::WorkerPool pool(2);
    observe::Recorder events;
    MarkCompactOptions o;
    o.dense_prefix = dense;
    ParallelMarkCompact mc(pool, events, o);
    ParallelMarkCompact::Result r = heap.collect(mc);
    heap.verify();
    std::set<Word*> reach = model.check(heap.roots);
    const ParallelMarkCompact::Report& rep = mc.last_report();
    REQUIRE(rep.regions.size() == 2);
    CHECK(rep.regions[1].begin == rep.units[5].begin);
    CHECK(r.old_live_bytes == reachable_old_bytes(heap, reach));
    size_t moved_in_region_1 = 0;
    for (Word* h : reach) {
      Word* was = before.at(id_of(h));
      moved_in_region_1 += was >= rep.regions[1].begin && was != h;
    }
    if (dense) {
      CHECK(rep.dense_end_units == 3);
      CHECK(r.dense_end_dead_bytes > 0);
      CHECK(moved_in_region_1 == 0);
    } else {
      CHECK(rep.dense_end_units == 0);
      CHECK(r.dense_end_dead_bytes == 0);
      CHECK(moved_in_region_1 > 10000);
    }
  }
}

TEST_CASE("pMarkcompact: the dense prefix threshold decides, and dead words in the prefix stay as fillers") {
  Heap heap;
  // Everywhere 1 dead word for every 20 live: 95.2% live.
  build_interleaved_list(heap, 17, 1);
  Model model = model_of(heap);
  for (double threshold : {0.94, 0.96}) {
    CAPTURE(threshold);
    parallel::WorkerPool pool(2);
    observe::Recorder events;
    MarkCompactOptions o;
    o.dense_prefix_min_live = threshold;
    ParallelMarkCompact mc(pool, events, o);
    ParallelMarkCompact::Result r = heap.collect(mc);
    heap.verify();
    model.check(heap.roots);
    if (threshold < 0.95) {
      // All dense: nothing moves, the dead words stay as fillers.
      CHECK(mc.last_report().dense_prefix_units == 8);
      CHECK(r.bytes_moved == 0);
      CHECK(r.prefix_dead_bytes == 40000 * kWordSize);
      CHECK(r.free_areas.empty());
    } else {
      CHECK(mc.last_report().dense_prefix_units == 0);
      CHECK(r.bytes_moved > 0);
    }
  }
}

TEST_CASE(
    "serial mark-compact: its dense prefix keeps leading objects while the dead words fit 1 - threshold") {
  // The same heap: 1 dead word after every 20 live ones (4.76% dead).
  for (double threshold : {0.94, 0.96, 0.0}) {
    CAPTURE(threshold);
    Heap heap;
    build_interleaved_list(heap, 17, 1);
    Model model = model_of(heap);
    uint64_t space = static_cast<uint64_t>(heap.old_top - heap.old_begin);
    observe::Recorder events;
    MarkCompactOptions o;
    o.dense_prefix = threshold > 0;
    o.dense_prefix_min_live = threshold;
    SerialMarkCompact mc(events, o);
    ParallelMarkCompact::Result r = heap.collect(mc);
    heap.old_top = r.occupied.empty() ? heap.old_begin : r.occupied.back().end;
    heap.verify();
    model.check(heap.roots);
    if (threshold == 0.94) {
      // The budget, 6% of the space, holds every dead word: nothing moves;
      // the dead word after the last live object is the free area.
      CHECK(r.bytes_moved == 0);
      CHECK(r.prefix_dead_bytes == 39999 * kWordSize);
      CHECK(r.dense_prefix_end == heap.old_begin + space - 1);
      REQUIRE(r.free_areas.size() == 1);
      CHECK(r.free_areas[0].words() == 1);
    } else if (threshold == 0.96) {
      // 4% of the space: the prefix ends at the dead word that passes it.
      uint64_t budget = static_cast<uint64_t>(0.04 * static_cast<double>(space));
      CHECK(r.prefix_dead_bytes == budget * kWordSize);
      CHECK(r.dense_prefix_end == heap.old_begin + (budget + 1) * 21 - 1);
      CHECK(r.bytes_moved == (40000 - budget - 1) * 20 * kWordSize);
    } else {
      CHECK(r.dense_prefix_end == heap.old_begin);
      CHECK(r.prefix_dead_bytes == 0);
      CHECK(r.bytes_moved == (40000 - 1) * 20 * kWordSize);
    }
    CHECK(r.old_live_bytes == 40000 * 20 * kWordSize);
  }
}

TEST_CASE("pMarkcompact: hashed objects that move grow their hash word and keep their hash") {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    CAPTURE(threads);
    Heap heap;
    heap.roots.roots.assign(1, Value::nil());
    // Dense stretches (nothing before them dies) and sparse ones, with every
    // other object hashed, so that the gap closes and reopens within units.
    std::vector<Word*> nodes;
    Word* head = nullptr;
    for (int i = 0; i < 30000; ++i) {
      Word* n = heap.old_obj(1, 1 + i % 3);
      if (i % 2 == 0) *n = Header::with_hash_state(*n, HashState::kHashed);
      if (head) link(n, 0, head);
      head = n;
      nodes.push_back(n);
      if ((i / 1000) % 3 == 2 && i % 7 == 0) heap.garbage(1);
    }
    heap.roots.roots[0] = Value::ref(head);
    Model model = model_of(heap);
    std::map<uint64_t, Word*> before;
    for (Word* h : nodes) before[id_of(h)] = h;
    parallel::WorkerPool pool(threads);
    observe::Recorder events;
    ParallelMarkCompact mc(pool, events, no_prefix());
    for (int round = 0; round < 2; ++round) {
      ParallelMarkCompact::Result r = heap.collect(mc);
      heap.verify();
      std::set<Word*> reach = model.check(heap.roots);
      CHECK(r.old_live_bytes == reachable_old_bytes(heap, reach));
      uint64_t moved_hashed = 0;
      uint64_t moved_still_kHashed = 0;
      for (Word* h : reach) {
        HashState s = Header::hash_state(*h);
        if (h == before.at(id_of(h)) || s == HashState::kUnhashed) continue;
        moved_hashed++;
        moved_still_kHashed += s != HashState::kHashedAndMoved;
      }
      CHECK(moved_still_kHashed == 0);
      if (round == 0) CHECK(moved_hashed > 0);
      for (Word* h : reach) before[id_of(h)] = h;
    }
  }
}

TEST_CASE(
    "pMarkcompact: young objects are marked and redirected, not moved; cards follow old-to-young slots") {
  for (unsigned threads : {1u, 2u, 8u}) {
    CAPTURE(threads);
    Heap heap;
    heap.roots.roots.assign(2, Value::nil());
    std::vector<Word*> young;
    for (int i = 0; i < 2000; ++i) young.push_back(heap.young_obj(1, 1));
    Word* head = nullptr;
    std::vector<Word*> holders;
    for (int i = 0; i < 20000; ++i) {
      Word* n = heap.old_obj(2, 1);
      if (head) link(n, 0, head);
      head = n;
      if (i % 10 == 0) {
        link(n, 1, young[static_cast<size_t>(i / 10) % young.size()]);
        holders.push_back(n);
      } else if (i % 50 == 5) {
        // A wide holder whose young reference is two cards below its
        // header, far from its other slots.
        Word* wide = heap.old_obj(150, 1);
        link(wide, 140, young[static_cast<size_t>(i / 50) % young.size()]);
        link(n, 1, wide);
      }
      heap.garbage(2);
    }
    // Young objects point back into the old space, which moves.
    for (size_t i = 0; i < young.size(); ++i) link(young[i], 0, holders[i % holders.size()]);
    heap.roots.roots[0] = Value::ref(head);
    heap.roots.roots[1] = Value::ref(young[0]);
    // Every card dirty before, as a mutator might leave them.
    std::fill(heap.cards.biased_base() + (reinterpret_cast<uintptr_t>(heap.old_begin) >> kCardShift),
              heap.cards.biased_base() + (reinterpret_cast<uintptr_t>(heap.old_top) >> kCardShift),
              kCardDirty);
    Model model = model_of(heap);
    parallel::WorkerPool pool(threads);
    observe::Recorder events;
    ParallelMarkCompact mc(pool, events, no_prefix());
    ParallelMarkCompact::Result r = heap.collect(mc);
    heap.verify();
    std::set<Word*> reach = model.check(heap.roots);
    size_t young_moved = 0;
    for (Word* y : young) young_moved += reach.count(y) == 0;
    CHECK(young_moved == 0);  // same addresses: not moved
    // A card is dirty exactly when a slot on it holds a young reference.
    std::set<uintptr_t> expect;
    for (Word* h : reach) {
      if (h < heap.old_begin || h >= heap.old_top) continue;
      for (uint64_t i = 0; i < Header::nrefs(*h); ++i) {
        Value v = ref_slot(h, i);
        if (v.is_ref() && v.as_ref() >= heap.young_begin && v.as_ref() < heap.young_top)
          expect.insert(reinterpret_cast<uintptr_t>(&ref_slot(h, i)) >> kCardShift);
      }
    }
    CHECK(expect.size() > 100);
    uintptr_t first = reinterpret_cast<uintptr_t>(heap.old_begin) >> kCardShift;
    uintptr_t last = reinterpret_cast<uintptr_t>(heap.old_top - 1) >> kCardShift;
    size_t wrong = 0;
    for (uintptr_t c = first; c <= last; ++c)
      wrong += (heap.cards.biased_base()[c] == kCardDirty) != (expect.count(c) == 1);
    CHECK(wrong == 0);
    CHECK(r.occupied.front().begin == heap.old_begin);
  }
}

TEST_CASE("pMarkcompact: large objects are marked in place and freed when dead; weak references resolve") {
  for (unsigned threads : {1u, 2u, 8u}) {
    CAPTURE(threads);
    Heap heap;
    heap.roots.roots.assign(2, Value::nil());
    // A large array (chunked marking) of old objects, and a dead large object.
    Word* big = heap.large_obj(20000, 1);
    Word* dead_big = heap.large_obj(10, 1);
    std::vector<Word*> elems;
    for (uint64_t i = 0; i < 20000; ++i) {
      heap.garbage(2);
      Word* e = heap.old_obj(0, 1);
      link(big, i, e);
      elems.push_back(e);
    }
    Word* dead_old = heap.old_obj(0, 1);
    heap.roots.roots[0] = Value::ref(big);
    heap.roots.weak = {elems[19999], dead_old, big, dead_big, nullptr};
    uint64_t weak_id = id_of(elems[19999]);
    Model model = model_of(heap);
    parallel::WorkerPool pool(threads);
    observe::Recorder events;
    ParallelMarkCompact mc(pool, events, no_prefix());
    ParallelMarkCompact::Result r = heap.collect(mc);
    heap.verify();
    model.check(heap.roots);
    CHECK(heap.roots.roots[0].as_ref() == big);
    CHECK(heap.los.object_count() == 1);
    CHECK(r.large_freed_bytes == kPageBytes);
    REQUIRE(heap.roots.weak[0] != nullptr);
    CHECK(heap.roots.weak[0] != elems[19999]);  // moved, and found there
    CHECK(id_of(heap.roots.weak[0]) == weak_id);
    CHECK(heap.roots.weak[0] == ref_slot(big, 19999).as_ref());
    CHECK(heap.roots.weak[1] == nullptr);
    CHECK(heap.roots.weak[2] == big);
    CHECK(heap.roots.weak[3] == nullptr);
  }
}

TEST_CASE("pMarkcompact: units are object aligned, and the report has every phase on every thread") {
  Heap heap;
  build_random_graph(heap, 99, 4000);
  parallel::WorkerPool pool(4);
  observe::Recorder events;
  events.set_workers(4);
  events.enable(true);
  ParallelMarkCompact mc(pool, events, MarkCompactOptions{});
  ParallelMarkCompact::Result r = heap.collect(mc);
  heap.verify();
  const ParallelMarkCompact::Report& rep = mc.last_report();
  REQUIRE(rep.units.size() == 16);
  CHECK(rep.units.front().begin == heap.old_begin);
  for (size_t k = 0; k + 1 < rep.units.size(); ++k) CHECK(rep.units[k].end == rep.units[k + 1].begin);
  uint64_t total = 0;
  for (uint64_t b : rep.unit_live_bytes) total += b;
  uint64_t after = 0;
  for (uint64_t b : rep.region_live_bytes) after += b;
  CHECK(after + static_cast<uint64_t>(r.dense_prefix_end - heap.old_begin) * kWordSize -
            r.prefix_dead_bytes >=
        total);
  for (int phase = 0; phase < 5; ++phase)
    for (unsigned w = 0; w < 4; ++w) CHECK(rep.phase_ns[phase][w] > 0);
}

// Every small heap from 4 to 90 objects, hashed or not, with gaps
// anywhere, compacted twice by mc and checked against its model. Small
// heaps put unit, region and card boundaries next to every kind of object:
// a hashed object with a one-word gap above it in a region that slides up
// grows in place; in the serial collector, a card where a moving hashed
// object grows is walked while its neighbours' destinations come from
// their live bits.
template <class Engine>
void compact_every_small_heap(Engine& mc) {
  Heap heap;
  for (int n = 4; n <= 90; ++n) {
    for (int variant = 0; variant < 4; ++variant) {
      CAPTURE(n);
      CAPTURE(variant);
      heap.old_top = heap.old_begin;
      heap.roots.roots.assign(1, Value::nil());
      Word* head = nullptr;
      for (int i = 0; i < n; ++i) {
        Word* o = heap.old_obj(1, 1 + (variant & 1) * (i % 3));
        if (i % 2 == 0 && (variant & 2)) *o = Header::with_hash_state(*o, HashState::kHashed);
        if (head) link(o, 0, head);
        head = o;
        if ((i / 10) % 3 == 2 && i % 7 == 0) heap.garbage(1 + i % 2);
      }
      heap.roots.roots[0] = Value::ref(head);
      Model model = model_of(heap);
      for (int round = 0; round < 2; ++round) {
        ParallelMarkCompact::Result r = heap.collect(mc);
        heap.verify();
        std::set<Word*> reach = model.check(heap.roots);
        REQUIRE(reach.size() == static_cast<size_t>(n));
        CHECK(r.old_live_bytes == reachable_old_bytes(heap, reach));
      }
    }
  }
}

TEST_CASE(
    "pMarkcompact: every small heap from 4 to 90 objects, hashed or not, gaps anywhere, at 1 to 3 threads") {
  for (unsigned threads : {1u, 2u, 3u}) {
    CAPTURE(threads);
    parallel::WorkerPool pool(threads);
    observe::Recorder events;
    ParallelMarkCompact mc(pool, events, no_prefix());
    compact_every_small_heap(mc);
  }
}

TEST_CASE("serial mark-compact: every small heap from 4 to 90 objects, hashed or not, gaps anywhere") {
  for (bool prefix : {false, true}) {
    CAPTURE(prefix);
    observe::Recorder events;
    MarkCompactOptions o;
    o.dense_prefix = prefix;
    SerialMarkCompact mc(events, o);
    compact_every_small_heap(mc);
  }
}

// Not a test: phase times on a GCOld-like old space (Flood et al. 2001,
// section 6.1: an array of binary trees, a part of them replaced), for
// docs/collectors/markcompact.md. The first collection compacts trees of
// which a third died; then a few recent trees die and the second
// collection finds a dense prefix. Run with
//   unit_tests -tc="pMarkcompact timing*" --no-skip
TEST_CASE("pMarkcompact timing: GCOld-like trees, 1, 2 and 4 threads" * doctest::skip()) {
  for (unsigned threads : {1u, 2u, 4u}) {
    for (bool prefix : {false, true}) {
      Heap heap(uint64_t{30} << 20);  // 240 MB
      heap.roots.roots.assign(1, Value::nil());
      // Trees of depth 14 (16383 nodes of 4 or 6 words, about 0.8 MB).
      constexpr int kTrees = 220;
      Word* array = heap.large_obj(kTrees, 1);
      heap.roots.roots[0] = Value::ref(array);
      for (int t = 0; t < kTrees; ++t) {
        std::vector<Word*> level;
        for (int i = 0; i < (1 << 13); ++i) level.push_back(heap.old_obj(0, 1));
        while (level.size() > 1) {
          std::vector<Word*> up;
          for (size_t i = 0; i < level.size(); i += 2) {
            Word* n = heap.old_obj(2, 1);
            link(n, 0, level[i]);
            link(n, 1, level[i + 1]);
            up.push_back(n);
          }
          level = up;
        }
        if (t % 3 != 1) link(array, static_cast<uint64_t>(t), level[0]);
      }
      parallel::WorkerPool pool(threads);
      observe::Recorder events;
      MarkCompactOptions o;
      o.dense_prefix = prefix;
      ParallelMarkCompact mc(pool, events, o);
      for (int round = 0; round < 2; ++round) {
        if (round == 1)
          for (int t = kTrees - 20; t < kTrees; t += 4)
            ref_slot(array, static_cast<uint64_t>(t)) = Value::nil();
        auto start = std::chrono::steady_clock::now();
        ParallelMarkCompact::Result r = heap.collect(mc);
        double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        const ParallelMarkCompact::Report& rep = mc.last_report();
        std::printf("threads %u prefix %d round %d: %.1f ms (", threads, prefix, round, ms);
        for (int p = 0; p < 5; ++p)
          std::printf(
              "%s %.1f ", ParallelMarkCompact::kPhaseNames[p],
              static_cast<double>(*std::max_element(rep.phase_ns[p].begin(), rep.phase_ns[p].end())) / 1e6);
        std::printf(") live %.1f MB, moved %.1f MB, free areas %zu, prefix units %u, decision %.3f ms\n",
                    static_cast<double>(r.old_live_bytes) / 1e6, static_cast<double>(r.bytes_moved) / 1e6,
                    r.free_areas.size(), rep.dense_prefix_units,
                    static_cast<double>(rep.dense_prefix_decision_ns) / 1e6);
      }
    }
  }
}
