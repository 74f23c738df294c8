// Unit tests for cacheaware (gc/collectors/cacheaware/, Zhou and Demsky's
// cache-aware many-core collector), each mechanism shown directly:
//   - the finished/verify termination protocol (gc/parallel/finished_verify.h),
//     driven by hand through the orders that make a count-only test wrong;
//   - the reference cache that suppresses repeated mark messages;
//   - balancing when one core holds all the live data;
//   - huge objects across partitions: the partition-head table, normal
//     objects after a huge one, freeing, left in place by ordinary
//     collections, compacted both ways (cached at the top, sequential)
//     when a huge allocation finds no run, and the free space kept for
//     the cache;
//   - the mesh, the striping of partitions and the allocator's search order
//     (local, ring 1, ring 2, global while the flag allows), over a plain
//     buffer;
//   - whole collections at 1, 2, 4 and 8 GC threads on meshes from 1x1
//     to 8x8 (8 threads and 64 cores on a 2-core machine, oversubscribed
//     on purpose), against a shadow model of the object graph and the
//     independent verifier; collections triggered by allocation and by
//     --gc-stress;
//   - the options as resolved from --heap and --gc-threads, and the
//     combinations that cannot run.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/cacheaware/allocator.h"
#include "gc/collectors/cacheaware/cacheaware.h"
#include "gc/collectors/cacheaware/forwarding_map.h"
#include "gc/collectors/cacheaware/mapping.h"
#include "gc/collectors/cacheaware/mark.h"
#include "gc/mutator.h"
#include "gc/parallel/finished_verify.h"
#include "gc/verify/verifier.h"
#include "tests/unit/vector_roots.h"

using namespace gc;
using namespace gc::cacheaware;

namespace {

constexpr uint32_t kNode = kFirstUserClass + 7;

using TestRoots = test::VectorRoots;

HeapOptions ca_options(unsigned threads, const std::string& mesh, const std::string& partition_size = "",
                       uint64_t heap_bytes = 64ull << 20) {
  HeapOptions o;
  o.max_heap_bytes = heap_bytes;
  o.gc_threads = threads;
  o.record_events = true;
  o.keep_event_history = true;
  o.collector_options["ca-mesh"] = mesh;
  if (!partition_size.empty()) o.collector_options["ca-partition-size"] = partition_size;
  return o;
}

// A cacheaware collector over a fake root set.
struct CaHeap {
  TestRoots roots;
  std::unique_ptr<Collector> owner;
  CacheAwareCollector* c;

  explicit CaHeap(const HeapOptions& o, size_t nroots = 16) {
    roots.roots.assign(nroots, Value::nil());
    const CollectorInfo* info = find_collector("cacheaware");
    REQUIRE(info != nullptr);
    owner = info->create(roots, o);
    c = static_cast<CacheAwareCollector*>(owner.get());
  }
  Value& root(size_t i) { return roots.roots[i]; }
  Word* obj(size_t i) { return roots.roots[i].as_ref(); }
  Word* alloc(uint64_t nrefs, uint64_t raw) {
    Word* h = gc::allocate(*c, kNode, nrefs, raw);
    REQUIRE(h != nullptr);
    return h;
  }
  void collect() { c->collect(GcCause::kExplicit); }
  // One that leaves huge objects in place (huge.h).
  void collect_ordinary() { c->collect(GcCause::kAllocationFailure); }

  std::optional<verify::Failure> check() {
    verify::HeapShape shape;
    c->describe_heap(shape);
    return verify::check_heap(shape, roots, c->stats().collections);
  }
  // The partition an object's header lies in, and the core hosting it.
  uint32_t partition_of(const Word* h) const { return c->partition_map().partition_of(h); }
  unsigned host_of(const Word* h) const { return c->partition_map().host(partition_of(h)); }
  // Bytes of objects in the partitions a core hosts (exact between
  // collections, when no allocator holds a block).
  uint64_t hosted_bytes(unsigned core) const {
    uint64_t bytes = 0;
    for (uint32_t p : c->partition_map().hosted_by(core)) {
      const PartitionState& s = c->partitions()[p];
      if (s.top > s.floor) bytes += static_cast<uint64_t>(s.top - s.floor) * kWordSize;
    }
    return bytes;
  }
  // The last collection's total of a counter the collector reports.
  uint64_t counter(const std::string& name) const {
    const observe::Recorder& r = c->events;
    REQUIRE(!r.records().empty());
    uint64_t total = 0;
    for (const observe::CounterRecord& k : r.counters_of(r.records().size() - 1))
      if (r.counter_names()[k.counter] == name) total += k.value;
    return total;
  }
};

Value& slot(Word* h, uint64_t i) { return ref_slot(h, i); }
Word* start_of(Word* h) { return object_start(h, *h); }

void check_no_failure(CaHeap& h) {
  std::optional<verify::Failure> f = h.check();
  if (f) FAIL(f->message());
}

}  // namespace

// ---------------------------------------------------------------------------
// 1. Termination: finished / verify (section 2.1.1, L107-116)

namespace {
using Counts = parallel::FinishedVerify::Counts;
}  // namespace

TEST_CASE("cacheaware termination: a mark message in flight when every core has said finished") {
  // Core 1 sends one message to core 2; core 2 says finished before it
  // arrives. Every core has reported, but the totals (1 sent, 0 received)
  // differ: no verify round, no termination.
  parallel::FinishedVerify fv;
  fv.start(3);
  fv.finished(1, Counts{1, 0});
  fv.finished(2, Counts{0, 0});
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  CHECK_FALSE(fv.terminated());
  CHECK(fv.verify_rounds() == 0);

  // Core 2 receives it: busy (answering no round, since none is asked),
  // then idle with new counts.
  fv.answer_verify(2, false, Counts{0, 1});
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  CHECK(fv.verify_rounds() == 0);
  fv.finished(2, Counts{0, 1});
  fv.answer_verify(2, true, Counts{0, 1});  // the round is not asked yet
  // The necessary condition holds now: the master asks every core.
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  CHECK_FALSE(fv.terminated());
  CHECK(fv.verify_rounds() == 1);
  // One answer of two: still waiting.
  fv.answer_verify(1, true, Counts{1, 0});
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  CHECK_FALSE(fv.terminated());
  // A core answers a round once, however often it is asked to.
  fv.answer_verify(1, true, Counts{1, 0});
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  CHECK_FALSE(fv.terminated());
  // Both answers match the stored totals: terminated.
  fv.answer_verify(2, true, Counts{0, 1});
  CHECK(fv.master_poll(true, Counts{0, 0}));
  CHECK(fv.terminated());
  CHECK(fv.verify_rounds() == 1);
  CHECK(fv.finished_messages() == 3);
}

TEST_CASE("cacheaware termination: stale finished counts that balance with a message in flight") {
  // The case the verify round exists for (L112, L116): the finished counts
  // the master holds balance, yet a message is still in flight.
  //   core 2 says finished {0 sent, 0 received} at the start;
  //   the master sends X to core 2 (master {1, 0});
  //   core 2 receives X and sends Y and Z to core 1 (core 2 {2, 1}, busy);
  //   core 1 receives Y and says finished {0, 1}; Z is still in flight.
  // Held totals: sent 1 + 0 + 0, received 0 + 1 + 0: they match.
  parallel::FinishedVerify fv;
  fv.start(3);
  fv.finished(2, Counts{0, 0});
  fv.finished(1, Counts{0, 1});
  CHECK_FALSE(fv.master_poll(true, Counts{1, 0}));
  CHECK_FALSE(fv.terminated());
  REQUIRE(fv.verify_rounds() == 1);  // the necessary condition held

  // The answers: core 2 is idle now, with its real counts (it says
  // finished first, as a core's loop does); core 1 has Z in its inbox.
  fv.finished(2, Counts{2, 1});
  fv.answer_verify(2, true, Counts{2, 1});
  fv.answer_verify(1, false, Counts{0, 1});
  CHECK_FALSE(fv.master_poll(true, Counts{1, 0}));
  CHECK_FALSE(fv.terminated());
  // Held totals are 3 sent, 2 received: no new round.
  CHECK(fv.verify_rounds() == 1);
  CHECK_FALSE(fv.master_poll(true, Counts{1, 0}));
  CHECK(fv.verify_rounds() == 1);

  // Core 1 takes Z and finishes: the totals balance (3 and 3), a second
  // round is asked, and terminates only once both answers are in.
  fv.finished(1, Counts{0, 2});
  fv.answer_verify(1, true, Counts{0, 2});  // no round asked since its last answer
  CHECK_FALSE(fv.master_poll(true, Counts{1, 0}));
  CHECK(fv.verify_rounds() == 2);
  fv.answer_verify(1, true, Counts{0, 2});
  CHECK_FALSE(fv.master_poll(true, Counts{1, 0}));
  CHECK_FALSE(fv.terminated());
  fv.answer_verify(2, true, Counts{2, 1});
  CHECK(fv.master_poll(true, Counts{1, 0}));
  CHECK(fv.terminated());
}

TEST_CASE("cacheaware termination: a core that answers busy fails the round; its next finished restarts it") {
  parallel::FinishedVerify fv;
  fv.start(3);
  fv.finished(1, Counts{0, 0});
  fv.finished(2, Counts{0, 0});
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  REQUIRE(fv.verify_rounds() == 1);
  fv.answer_verify(1, true, Counts{0, 0});
  fv.answer_verify(2, false, Counts{0, 0});  // counts match, but not idle
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  CHECK_FALSE(fv.terminated());
  // Without a new finished, the master waits: no new round.
  for (int i = 0; i < 3; ++i) CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  CHECK(fv.verify_rounds() == 1);
  CHECK_FALSE(fv.terminated());
  // A busy master does not decide either.
  fv.finished(2, Counts{0, 0});
  CHECK_FALSE(fv.master_poll(false, Counts{0, 0}));
  CHECK(fv.verify_rounds() == 1);
  // Idle again: the finished from core 2 starts round 2.
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  CHECK(fv.verify_rounds() == 2);
  fv.answer_verify(1, true, Counts{0, 0});
  fv.answer_verify(2, true, Counts{0, 0});
  CHECK(fv.master_poll(true, Counts{0, 0}));
  CHECK(fv.terminated());

  // start() makes the protocol ready for another phase.
  fv.start(2);
  CHECK_FALSE(fv.terminated());
  CHECK(fv.verify_rounds() == 0);
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));  // core 1 has not said finished
  fv.finished(1, Counts{0, 0});
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));
  fv.answer_verify(1, true, Counts{0, 0});
  CHECK(fv.master_poll(true, Counts{0, 0}));
}

TEST_CASE(
    "cacheaware termination: the master's own new counts count as its finished; one core ends at once") {
  // One core: the master's idleness is enough.
  parallel::FinishedVerify one;
  one.start(1);
  CHECK(one.master_poll(true, Counts{0, 0}));
  CHECK(one.terminated());
  CHECK(one.verify_rounds() == 0);

  // Two cores; core 1 has sent the master a message the master has not
  // received yet: the totals differ, no round. Receiving it changes the
  // master's own counts, which is its finished: the round starts, and
  // core 1's answer ends it.
  parallel::FinishedVerify fv;
  fv.start(2);
  fv.finished(1, Counts{1, 0});
  CHECK_FALSE(fv.master_poll(true, Counts{0, 0}));  // 1 sent, 0 received
  CHECK(fv.verify_rounds() == 0);
  // The master received it: its own counts changed, which is its finished.
  CHECK_FALSE(fv.master_poll(true, Counts{0, 1}));
  CHECK(fv.verify_rounds() == 1);
  fv.answer_verify(1, true, Counts{1, 0});
  CHECK(fv.master_poll(true, Counts{0, 1}));
  CHECK(fv.terminated());
}

// ---------------------------------------------------------------------------
// 2. The reference cache (L118-120)

TEST_CASE(
    "cacheaware reference cache: a repeat hits, a conflicting reference evicts, a larger cache keeps both") {
  // The cache never dereferences: references are plain addresses here.
  std::vector<Word> memory(4 * 512);
  Mesh mesh(2, 1);
  PartitionMap map(memory.data(), 512, 4, mesh);
  const Word* a = memory.data() + 600;
  const Word* b = memory.data() + 1700;

  // One entry: every reference has the same slot.
  MarkPhase one(map, mesh, 1, 1, 16);
  CHECK_FALSE(one.cache_hit_or_insert(0, a));  // first send: a miss
  CHECK(one.cache_hit_or_insert(0, a));        // immediate repeat: a hit
  CHECK(one.cache_hit_or_insert(0, a));
  CHECK_FALSE(one.cache_hit_or_insert(0, b));  // b takes a's slot
  CHECK(one.cache_hit_or_insert(0, b));
  CHECK_FALSE(one.cache_hit_or_insert(0, a));  // a was evicted
  CHECK_FALSE(one.cache_hit_or_insert(0, b));  // and evicted b in turn
  // Each core has its own cache.
  CHECK_FALSE(one.cache_hit_or_insert(1, b));
  CHECK(one.cache_hit_or_insert(0, b));

  // 256 entries: sixteen neighbouring object addresses all stay.
  MarkPhase big(map, mesh, 1, 256, 16);
  for (int k = 0; k < 16; ++k) CHECK_FALSE(big.cache_hit_or_insert(0, a + 2 * k));
  for (int k = 0; k < 16; ++k) CHECK(big.cache_hit_or_insert(0, a + 2 * k));
  CHECK_FALSE(big.cache_hit_or_insert(0, b));
  CHECK(big.cache_hit_or_insert(0, a));
  CHECK(big.cache_hit_or_insert(0, b));
  // Of 64 references, a direct-mapped cache of 256 keeps most.
  MarkPhase many(map, mesh, 1, 256, 16);
  for (int k = 0; k < 64; ++k) many.cache_hit_or_insert(0, memory.data() + 13 * k);
  int kept = 0;
  for (int k = 0; k < 64; ++k) kept += many.cache_hit_or_insert(0, memory.data() + 13 * k);
  CHECK(kept >= 48);
}

TEST_CASE("cacheaware reference cache: many objects on core 0 pointing at one on core 1 send one message") {
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    CaHeap h(ca_options(threads, "1x2"));
    h.c->mutator_switched(1);
    REQUIRE(h.c->current_core() == 1);
    Word* target = h.alloc(0, 1);
    target[1] = 4242;
    h.root(1) = Value::ref(target);
    REQUIRE(h.host_of(target) == 1);
    h.c->mutator_switched(2);  // fiber 2 of a 2-core mesh: home core 0
    REQUIRE(h.c->current_core() == 0);
    constexpr uint64_t kNodes = 1000;
    h.root(0) = Value::ref(h.alloc(kNodes, 0));
    for (uint64_t i = 0; i < kNodes; ++i) {
      Word* n = h.alloc(1, 1);
      n[1] = i;
      slot(n, 0) = h.root(1);
      write_ref(*h.c, h.obj(0), &slot(h.obj(0), i), Value::ref(n));
    }
    h.root(1) = Value::nil();  // the target is reachable only through the nodes
    for (uint64_t i = 0; i < kNodes; ++i) REQUIRE(h.host_of(slot(h.obj(0), i).as_ref()) == 0);
    REQUIRE(h.host_of(h.obj(0)) == 0);

    h.collect();
    const MarkPhase& mark = h.c->mark_phase();
    // Core 0 marks its nodes itself; the target's reference goes out once
    // and the cache answers the other 999.
    CHECK(mark.counters(0).sent == 1);
    CHECK(mark.counters(0).suppressed == kNodes - 1);
    CHECK(mark.counters(1).received >= 1);
    CHECK(mark.counters(0).sent + mark.counters(1).sent ==
          mark.counters(0).received + mark.counters(1).received);
    CHECK(h.counter("mark messages suppressed") == kNodes - 1);
    CHECK(h.counter("objects marked") == kNodes + 2);
    for (uint64_t i = 0; i < kNodes; ++i) {
      Word* n = slot(h.obj(0), i).as_ref();
      CHECK(n[1] == i);
      REQUIRE(slot(n, 0).is_ref());
      CHECK(slot(n, 0).as_ref()[1] == 4242);
    }
    check_no_failure(h);
  }
}

TEST_CASE("cacheaware reference cache: with one entry, two alternating targets are never suppressed") {
  // Nodes point alternately at two objects on core 1 that share the one
  // slot: every reference misses. With 256 entries both stay.
  uint64_t suppressed[2] = {0, 0};
  int k = 0;
  for (const char* entries : {"1", "256"}) {
    HeapOptions o = ca_options(1, "1x2");
    o.collector_options["ca-ref-cache"] = entries;
    CaHeap h(o);
    REQUIRE(h.c->ca_options().ref_cache_entries == std::stoul(entries));
    h.c->mutator_switched(1);
    h.root(1) = Value::ref(h.alloc(0, 1));
    h.root(2) = Value::ref(h.alloc(0, 1));
    h.c->mutator_switched(0);
    constexpr uint64_t kNodes = 200;
    h.root(0) = Value::ref(h.alloc(kNodes, 0));
    for (uint64_t i = 0; i < kNodes; ++i) {
      Word* n = h.alloc(1, 0);
      slot(n, 0) = h.root(1 + i % 2);
      write_ref(*h.c, h.obj(0), &slot(h.obj(0), i), Value::ref(n));
    }
    h.root(1) = h.root(2) = Value::nil();
    h.collect();
    suppressed[k++] = h.c->mark_phase().counters(0).suppressed;
    CHECK(h.c->mark_phase().counters(0).sent + h.c->mark_phase().counters(0).suppressed == kNodes);
    check_no_failure(h);
  }
  CHECK(suppressed[0] == 0);
  CHECK(suppressed[1] == 198);
}

// ---------------------------------------------------------------------------
// 3. Balancing (section 3.3, L176-195)

TEST_CASE("cacheaware balancing: a core holding all the live data gives part of it to the other") {
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    CaHeap h(ca_options(threads, "1x2", "16K"));
    REQUIRE(h.c->current_core() == 0);
    // A list of 20,000 nodes of 5 words (800 KB, about 50 partitions of
    // 16 KB), all allocated by core 0; every 16th node hashed, so that it
    // grows a word when it moves.
    constexpr uint64_t kNodes = 20000;
    h.root(0) = Value::nil();
    std::vector<uint64_t> hashes(kNodes);
    for (uint64_t i = 0; i < kNodes; ++i) {
      Word* n = h.alloc(1, 2);
      uint64_t index = kNodes - 1 - i;
      n[1] = index;
      n[2] = index * 7 + 3;
      slot(n, 0) = h.root(0);
      h.root(0) = Value::ref(n);
      if (index % 16 == 0) hashes[index] = h.c->identity_hash(n);
    }
    REQUIRE(h.host_of(h.obj(0)) == 0);
    uint64_t live = kNodes * 5 * kWordSize;
    h.collect();
    // The first collection found everything on core 0 and balanced it.
    const CompactCounters& k0 = h.c->compact_phase().counters(0);
    CHECK(k0.balancing_moves > 0);
    CHECK(k0.balanced_bytes > 0);
    CHECK(h.c->compact_phase().counters(1).balancing_moves == 0);
    uint64_t on0 = h.hosted_bytes(0), on1 = h.hosted_bytes(1);
    CHECK(on1 > 0);
    CHECK(on1 == k0.balanced_bytes);
    // Every hashed node that moved grew by one word; none other did.
    uint64_t grown = 0;
    for (Value v = h.root(0); v.is_ref(); v = slot(v.as_ref(), 0))
      grown += Header::hash_state(*v.as_ref()) == HashState::kHashedAndMoved;
    CHECK(grown > 0);
    CHECK(on0 + on1 == live + grown * kWordSize);
    // Half each, give or take the master's slack (5%) and a partition.
    CHECK(on1 * 10 >= live * 4);
    CHECK(on0 * 10 >= live * 4);
    CHECK(h.counter("balancing moves") == k0.balancing_moves);
    CHECK(h.counter("bytes balanced") == k0.balanced_bytes);
    // Nothing lost: the whole list, in order, with its contents and hashes.
    auto check_list = [&] {
      uint64_t i = 0, wrong = 0;
      for (Value v = h.root(0); v.is_ref(); v = slot(v.as_ref(), 0), ++i) {
        Word* n = v.as_ref();
        REQUIRE(Header::class_id(*n) == kNode);
        REQUIRE(n[1] == i);
        wrong += n[2] != i * 7 + 3;
        if (i % 16 == 0) wrong += h.c->identity_hash(n) != hashes[i];
      }
      CHECK(i == kNodes);
      CHECK(wrong == 0);
    };
    check_list();
    check_no_failure(h);
    // A second collection finds the data balanced: nothing more moves
    // between cores, and the list is still whole.
    h.collect();
    CHECK(h.c->compact_phase().counters(0).balancing_moves == 0);
    CHECK(h.hosted_bytes(0) + h.hosted_bytes(1) == on0 + on1);
    check_list();
    check_no_failure(h);
  }
}

// Two cores of one GC thread stop at their bound with objects left, and the
// cores that finished below it cannot take all of them: the first core to
// ask waits for every core's answer, which the second gives only if it
// reported before the first began to wait.
TEST_CASE("cacheaware balancing: several cores of one thread at their bound all answer before one waits") {
  struct Shape {
    unsigned threads;
    const char* mesh;
    unsigned heavy[2];  // the two cores at their bound, both on thread 0
  };
  for (const Shape& shape : {Shape{1, "2x2", {0, 1}}, Shape{2, "4x2", {0, 2}}}) {
    CAPTURE(std::string(shape.mesh));
    CaHeap h(ca_options(shape.threads, shape.mesh, "16K"), 128);
    unsigned cores = h.c->mesh().cores();
    // Objects of 1,500 slots (12 KB), one to a 16 KB partition: each
    // core's bound (from the live words, 5% slack) holds fewer than the
    // cores' average count of them.
    constexpr uint64_t kSlots = 1500;
    const unsigned counts[2] = {7 * cores, 3 * cores};
    size_t r = 0;
    for (unsigned k = 0; k < 2; ++k) {
      h.c->mutator_switched(shape.heavy[k]);
      for (unsigned i = 0; i < counts[k]; ++i, ++r) {
        Word* a = h.alloc(kSlots, 0);
        for (uint64_t j = 1; j < kSlots; ++j) slot(a, j) = Value::num(static_cast<double>(r * 10000 + j));
        slot(a, 0) = r ? h.root(r - 1) : Value::nil();  // a chain across the cores
        REQUIRE(r < 128);
        h.root(r) = Value::ref(a);
      }
    }
    h.c->mutator_switched(0);
    for (size_t i = 0; i < r; ++i) REQUIRE(h.host_of(h.obj(i)) == shape.heavy[i < counts[0] ? 0 : 1]);
    h.collect();
    uint64_t last_resorts = 0;
    for (unsigned k : shape.heavy) last_resorts += h.c->compact_phase().counters(k).last_resorts;
    CHECK(last_resorts > 0);
    CHECK(h.counter("last-resort destinations") > 0);
    uint64_t wrong = 0;
    for (size_t i = 0; i < r; ++i) {
      Word* a = h.obj(i);
      REQUIRE(Header::nrefs(*a) == kSlots);
      for (uint64_t j = 1; j < kSlots; ++j)
        wrong += slot(a, j).as_num() != static_cast<double>(i * 10000 + j);
      wrong += i && slot(a, 0).as_ref() != h.obj(i - 1);
    }
    CHECK(wrong == 0);
    check_no_failure(h);
  }
}

// The forwarding map (forwarding_map.h) against the moves it was told of:
// objects of 1 to 300 words (inside a chunk, across chunk ends, over many
// chunks), some left in place, destinations that jump (a new partition, a
// balancing destination) or leave a gap (a hash word grown), from two
// writers, and huge objects' moves on the side.
TEST_CASE("cacheaware forwarding map: every moved object's header found, unmoved ones unchanged") {
  constexpr uint64_t kWords = 1 << 16;
  std::vector<Word> region(2 * kWords);
  Word* base = region.data();
  for (uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    ForwardingMap map(base, kWords, 2);
    map.reset();
    struct Expect {
      Word* header;
      Word* now;
    };
    std::vector<Expect> expect;
    for (unsigned w = 0; w < 2; ++w) {
      // Writer w records the objects of [w * kWords / 2, (w + 1) * kWords / 2).
      Word* p = base + w * kWords / 2;
      Word* end = p + kWords / 2;
      map.writer(w).clear(p, end);
      Word* to = base + kWords + w * kWords / 2;  // destinations outside the region
      while (p < end) {
        uint64_t words = rng() % 4 == 0 ? 1 + rng() % 300 : 1 + rng() % 12;
        words = std::min<uint64_t>(words, static_cast<uint64_t>(end - p));
        uint64_t below = rng() % words;  // where the header lies in the object
        Word* header = p + below;
        switch (rng() % 8) {
          case 0:  // dead: no record
            break;
          case 1:  // left in place
            expect.push_back({header, header});
            break;
          case 2:  // a new destination
            to += 1 + rng() % 100;
            [[fallthrough]];
          default:
            map.writer(w).moved(p, words, to);
            expect.push_back({header, to + below});
            to += words + (rng() % 16 == 0 ? 1 + rng() % 3 : 0);  // sometimes a grown hash word
        }
        p += words + (rng() % 3 == 0 ? rng() % 40 : 0);
      }
    }
    // Huge objects' moves, by header, on headers no normal object recorded.
    std::vector<Expect> huge;
    for (const Expect& e : expect)
      if (e.now == e.header && huge.size() < 20)
        huge.push_back({e.header, base + 2 * kWords - 1 - huge.size()});
    for (const Expect& e : huge) map.huge_moved(e.header, e.now);
    uint64_t wrong = 0;
    for (const Expect& e : expect) {
      bool is_huge =
          std::any_of(huge.begin(), huge.end(), [&](const Expect& x) { return x.header == e.header; });
      Word* want = e.now;
      if (is_huge)
        for (const Expect& x : huge)
          if (x.header == e.header) want = x.now;
      wrong += map.forward(e.header) != want;
    }
    CHECK(wrong == 0);
    CHECK(expect.size() > 1000);
    // Memory: the chunks of the region and the runs of split chunks.
    CHECK(map.bytes() >= kWords / ForwardingMap::kChunkWords * 16);
    CHECK(map.bytes() < kWords / ForwardingMap::kChunkWords * 16 * 4);
  }
}

// ---------------------------------------------------------------------------
// 4. Huge objects (section 4, L214-244)

namespace {

// A huge object of 5,012 words with 10 reference slots: 16 KB partitions
// (2,048 words) hold it in three, with 1,132 words left in the last.
constexpr uint64_t kHugeRefs = 10;
constexpr uint64_t kHugeRaw = 5000;
constexpr uint64_t kHugeWords = kHugeRefs + 1 + 1 + kHugeRaw;

Word* huge(CaHeap& h, uint64_t tag, uint64_t raw = kHugeRaw) {
  Word* o = h.alloc(kHugeRefs, raw);
  for (uint64_t i = 0; i < raw; ++i) o[1 + i] = tag * 1'000'000 + i;
  return o;
}

void check_huge_contents(Word* o, uint64_t tag, uint64_t raw = kHugeRaw) {
  REQUIRE(Header::is_header(*o));
  REQUIRE(Header::raw_words(*o) == raw);
  REQUIRE(Header::nrefs(*o) == kHugeRefs);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < raw; ++i) wrong += o[1 + i] != tag * 1'000'000 + i;
  CHECK(wrong == 0);
}

HeapOptions huge_options(const char* compaction = "top", uint64_t heap_bytes = 16ull << 20) {
  HeapOptions o = ca_options(1, "1x1", "16K", heap_bytes);
  o.collector_options["ca-huge"] = compaction;
  return o;
}

}  // namespace

TEST_CASE("cacheaware huge objects: the partition-head table, and normal objects after one") {
  CaHeap h(huge_options());
  const PartitionMap& map = h.c->partition_map();
  REQUIRE(map.partition_words() == 2048);
  Word* a = huge(h, 1);
  Word* a_start = start_of(a);
  Word* a_end = a_start + kHugeWords;
  uint32_t first = map.partition_of(a_start);
  CHECK(first == 0);
  CHECK(a_start == map.begin(first));
  REQUIRE(h.c->huge_objects().objects().size() == 1);
  const HugeObject& o = h.c->huge_objects().objects()[0];
  CHECK(o.start == a_start);
  CHECK(o.header == a);
  CHECK(o.first == first);
  CHECK(o.last == first + 2);
  CHECK(o.words == kHugeWords);
  // -1 in the table (floor == end) where it covers the partition; its end
  // in the partition where it ends.
  CHECK(h.c->partitions()[first].floor == map.end(first));
  CHECK(h.c->partitions()[first + 1].floor == map.end(first + 1));
  CHECK(h.c->partitions()[first + 2].floor == a_end);

  // The next normal objects start right after it, in its last partition.
  Word* n = h.alloc(1, 1);
  n[1] = 77;
  CHECK(start_of(n) == a_end);
  CHECK(map.partition_of(n) == first + 2);
  slot(n, 0) = Value::ref(a);
  slot(a, 3) = Value::ref(n);
  h.root(0) = Value::ref(a);
  check_no_failure(h);

  // It survives a collection where it is, its contents intact; so does the
  // normal object after it.
  h.collect_ordinary();
  CHECK(h.obj(0) == a);
  check_huge_contents(h.obj(0), 1);
  Word* n2 = slot(h.obj(0), 3).as_ref();
  CHECK(n2 == n);
  CHECK(n2[1] == 77);
  CHECK(slot(n2, 0).as_ref() == a);
  CHECK(h.c->partitions()[first].floor == map.end(first));
  CHECK(h.c->partitions()[first + 2].floor == a_end);
  check_no_failure(h);
}

TEST_CASE("cacheaware huge objects: a dead one gives back its partitions") {
  CaHeap h(huge_options());
  const PartitionMap& map = h.c->partition_map();
  h.root(0) = Value::ref(huge(h, 1));  // partitions 0-2
  Word* n = h.alloc(0, 1);             // after it in partition 2
  n[1] = 5;
  h.root(1) = Value::ref(n);
  Word* b = huge(h, 2);
  uint32_t b_first = map.partition_of(start_of(b));
  CHECK(b_first == 3);  // partition 2 holds a normal object: not free
  CHECK(h.c->huge_objects().objects().size() == 2);
  h.c->flush_stats();
  uint64_t used_with_b = h.c->heap_used();
  h.collect_ordinary();  // b is garbage
  REQUIRE(h.c->huge_objects().objects().size() == 1);
  CHECK(h.c->huge_objects().objects()[0].header == h.obj(0));
  for (uint32_t p = b_first; p < b_first + 3; ++p) {
    CAPTURE(p);
    CHECK(h.c->partitions()[p].floor == map.begin(p));
    CHECK(h.c->partitions()[p].top == map.begin(p));
  }
  CHECK(h.c->heap_used() == used_with_b - kHugeWords * kWordSize);
  CHECK(h.c->huge_objects().bytes() == kHugeWords * kWordSize);
  CHECK(h.counter("huge bytes freed") == kHugeWords * kWordSize);
  check_huge_contents(h.obj(0), 1);
  CHECK(h.obj(1)[1] == 5);
  check_no_failure(h);
  // Its partitions are free for the next huge object.
  Word* c = huge(h, 3);
  CHECK(map.partition_of(start_of(c)) == b_first);
  check_no_failure(h);

  // A dead huge object with a live normal object after it in its last
  // partition: its part of that partition becomes a filler the walk steps
  // over, and the normal object slides down to the heap's first partition
  // (on a 1x1 mesh every partition is core 0's).
  h.root(0) = Value::nil();
  h.collect_ordinary();
  CHECK(h.c->huge_objects().objects().empty());
  CHECK(start_of(h.obj(1)) == map.begin(0));
  CHECK(h.obj(1)[1] == 5);
  CHECK(h.c->partitions()[0].floor == map.begin(0));
  CHECK(h.c->partitions()[0].top == map.begin(0) + object_words(0, 1));
  for (uint32_t p = 1; p < 6; ++p) {
    CAPTURE(p);
    CHECK(h.c->partitions()[p].floor == map.begin(p));
    CHECK(h.c->partitions()[p].top == map.begin(p));
  }
  check_no_failure(h);
}

TEST_CASE("cacheaware huge objects: a live one slides down into the run an earlier one freed") {
  // Partition 0: garbage, then four live normal objects. Then c, a huge
  // object of 2 or 3 partitions, then d, of 3 partitions. c dies: d slides
  // down to partition 1 (over its own first partition when c was 2 long),
  // the normal objects slide down over the garbage, and every reference
  // among them follows.
  for (auto [c_raw, compaction] :
       {std::pair{uint64_t{3000}, "top"}, std::pair{kHugeRaw, "top"}, std::pair{uint64_t{3000}, "sequential"},
        std::pair{kHugeRaw, "sequential"}}) {
    CAPTURE(c_raw);
    CAPTURE(compaction);
    bool top = std::string(compaction) == "top";
    CaHeap h(huge_options(compaction));
    const PartitionMap& map = h.c->partition_map();
    h.alloc(0, 40);  // garbage
    for (int k = 0; k < 4; ++k) {
      Word* x = h.alloc(1, 1);
      x[1] = 100 + k;
      h.root(2 + k) = Value::ref(x);
    }
    REQUIRE(map.partition_of(h.obj(2)) == 0);
    Word* c = huge(h, 1, c_raw);
    h.root(0) = Value::ref(c);
    Word* d = huge(h, 2);
    h.root(1) = Value::ref(d);
    uint32_t c_first = map.partition_of(start_of(h.obj(0)));
    uint32_t d_first = map.partition_of(start_of(d));
    uint64_t c_partitions = c_raw == kHugeRaw ? 3 : 2;
    CHECK(c_first == 1);
    CHECK(d_first == c_first + c_partitions);
    for (int k = 0; k < 4; ++k) {
      slot(d, k) = h.root(2 + k);
      slot(h.obj(0), k) = h.root(2 + k);
      slot(h.obj(2 + k), 0) = Value::ref(d);
    }
    for (int k = 0; k < 6; ++k) h.root(k) = Value::nil();
    h.root(1) = Value::ref(d);
    check_no_failure(h);

    h.collect();
    REQUIRE(h.c->huge_objects().objects().size() == 1);
    const HugeObject& o = h.c->huge_objects().objects()[0];
    CHECK(o.start == map.begin(1));
    CHECK(o.first == 1);
    CHECK(o.last == 3);
    CHECK(o.header == h.obj(1));
    CHECK(h.obj(1) == map.begin(1) + kHugeRefs + 1);
    check_huge_contents(h.obj(1), 2);
    // Cached at the top of the heap (the highest run of three partitions),
    // then compacted from there; or slid down once.
    CHECK(h.counter("huge bytes cached") == (top ? kHugeWords * kWordSize : 0));
    CHECK(h.counter("huge bytes moved") == kHugeWords * kWordSize);
    // The table: partitions 1 and 2 covered, 3 from d's end; d's old
    // partitions past 3 free.
    CHECK(h.c->partitions()[1].floor == map.end(1));
    CHECK(h.c->partitions()[2].floor == map.end(2));
    CHECK(h.c->partitions()[3].floor == o.start + kHugeWords);
    for (uint32_t p = 4; p < d_first + 3; ++p) {
      CAPTURE(p);
      CHECK(h.c->partitions()[p].floor == map.begin(p));
      CHECK(h.c->partitions()[p].top == map.begin(p));
    }
    // The normal objects slid to the start of partition 0, and point at d
    // where it is now; d points at them where they are now.
    Word* dd = h.obj(1);
    for (int k = 0; k < 4; ++k) {
      CAPTURE(k);
      REQUIRE(slot(dd, k).is_ref());
      Word* x = slot(dd, k).as_ref();
      CHECK(start_of(x) == map.begin(0) + k * object_words(1, 1));
      CHECK(x[1] == static_cast<uint64_t>(100 + k));
      CHECK(slot(x, 0).as_ref() == dd);
    }
    check_no_failure(h);
  }
}

TEST_CASE(
    "cacheaware huge objects: left in place by ordinary collections, compacted when a huge "
    "allocation finds no run") {
  // 64 partitions of 16 KB. 32 huge objects of two partitions each fill
  // them; every other one dies. The runs left free are two partitions
  // long, and a three-partition object fits none until the survivors are
  // compacted.
  constexpr uint64_t kTwoRaw = 3000, kThreeRaw = 6000;
  constexpr uint64_t kTwoWords = kHugeRefs + 2 + kTwoRaw;
  for (const char* compaction : {"top", "sequential"}) {
    CAPTURE(compaction);
    bool top = std::string(compaction) == "top";
    CaHeap h(huge_options(compaction, 1ull << 20), 40);
    const PartitionMap& map = h.c->partition_map();
    REQUIRE(map.count() == 64);
    for (uint64_t k = 0; k < 32; ++k) h.root(k) = Value::ref(huge(h, k, kTwoRaw));
    for (uint64_t k = 0; k < 32; ++k) REQUIRE(start_of(h.obj(k)) == map.begin(2 * k));

    // An ordinary collection (an allocation failure) moves none.
    for (uint64_t k = 1; k < 32; k += 2) h.root(k) = Value::nil();
    h.c->collect(GcCause::kAllocationFailure);
    CHECK(h.counter("huge bytes freed") == 16 * kTwoWords * kWordSize);
    CHECK(h.counter("huge bytes cached") == 0);
    CHECK(h.counter("huge bytes moved") == 0);
    for (uint64_t k = 0; k < 32; k += 2) CHECK(start_of(h.obj(k)) == map.begin(2 * k));
    check_no_failure(h);

    uint64_t collections = h.c->stats().collections;
    Word* big = huge(h, 99, kThreeRaw);
    h.root(33) = Value::ref(big);
    CHECK(h.c->stats().collections == collections + 1);
    CHECK(h.counter("huge bytes cached") == (top ? 16 * kTwoWords * kWordSize : 0));
    CHECK(h.counter("huge bytes moved") == (top ? 16 : 15) * kTwoWords * kWordSize);
    for (uint64_t k = 0; k < 32; k += 2) {
      CAPTURE(k);
      CHECK(start_of(h.obj(k)) == map.begin(k));
      check_huge_contents(h.obj(k), k, kTwoRaw);
    }
    CHECK(start_of(h.obj(33)) == map.begin(32));
    check_huge_contents(h.obj(33), 99, kThreeRaw);
    check_no_failure(h);
  }
}

TEST_CASE("cacheaware huge objects: a last partition that normal objects fill to its end is not free") {
  // Five partitions: a in 0-2, a live normal object filling the rest of 2
  // exactly, 3 and 4 free. Caching a at the top must not take 2-4, which
  // would copy a over the normal object and then write the filler for a's
  // old tail over a's new first words.
  CaHeap h(huge_options("top", 5 * 16 * 1024));
  const PartitionMap& map = h.c->partition_map();
  REQUIRE(map.count() == 5);
  h.root(0) = Value::ref(huge(h, 1));
  constexpr uint64_t kRest = 3 * 2048 - kHugeWords;
  Word* n = h.alloc(0, kRest - 1);
  for (uint64_t i = 0; i < kRest - 1; ++i) n[1 + i] = 7'000'000 + i;
  REQUIRE(start_of(n) == start_of(h.obj(0)) + kHugeWords);
  REQUIRE(n + kRest == map.end(2));
  h.root(1) = Value::ref(n);
  h.collect();
  REQUIRE(h.c->huge_objects().objects().size() == 1);
  CHECK(h.c->huge_objects().objects()[0].first == 0);
  check_huge_contents(h.obj(0), 1);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < kRest - 1; ++i) wrong += h.obj(1)[1 + i] != 7'000'000 + i;
  CHECK(wrong == 0);
  check_no_failure(h);
}

TEST_CASE("cacheaware huge objects: --ca-huge=top keeps free space for the cache") {
  // 64 partitions of 16 KB. With 12 live huge objects (289 KB), the trigger
  // leaves that much of the heap free; with 24 (578 KB), keeping it would
  // leave nothing to allocate, and the trigger is the heap.
  constexpr uint64_t kHeap = 1ull << 20;
  for (uint64_t count : {12, 24})
    for (const char* compaction : {"top", "sequential"}) {
      CAPTURE(count);
      CAPTURE(compaction);
      CaHeap h(huge_options(compaction, kHeap), 40);
      for (uint64_t k = 0; k < count; ++k) h.root(k) = Value::ref(huge(h, k, 3000));
      h.collect();
      uint64_t huge_bytes = h.c->huge_objects().bytes();
      CHECK(huge_bytes == count * (kHugeRefs + 2 + 3000) * kWordSize);
      bool reserved = std::string(compaction) == "top" && count == 12;
      CHECK(h.c->allocator().trigger_bytes() == (reserved ? kHeap - huge_bytes : kHeap));
    }
}

TEST_CASE("cacheaware --ca-trigger=full: no sizing trigger, a collection only when the heap is full") {
  // 16 MB: the sizing trigger starts at 4 MB and after a collection is
  // twice what is in use; without it the budget is the heap throughout.
  constexpr uint64_t kHeap = 16ull << 20;
  for (const char* trigger : {"sizing", "full"}) {
    CAPTURE(trigger);
    HeapOptions o = ca_options(1, "1x1", "16K", kHeap);
    o.collector_options["ca-trigger"] = trigger;
    CaHeap h(o);
    bool sizing = std::string(trigger) == "sizing";
    CHECK(h.c->allocator().trigger_bytes() == (sizing ? 4ull << 20 : kHeap));
    h.root(0) = Value::ref(h.alloc(0, 100));
    h.collect();
    CHECK(h.c->allocator().trigger_bytes() == (sizing ? 4ull << 20 : kHeap));
    check_no_failure(h);
  }
}

// ---------------------------------------------------------------------------
// 5. The mesh, the striping and the allocator (sections 3.1 and 3.4)

namespace {

// Partitions over a plain buffer, all empty.
struct PlainHeap {
  Mesh mesh;
  std::vector<Word> memory;
  PartitionMap map;
  std::vector<PartitionState> states;

  PlainHeap(unsigned width, unsigned height, uint32_t count, uint64_t words,
            Homing homing = Homing::kPartition)
      : mesh(width, height),
        memory(count * words),
        map(memory.data(), words, count, mesh, homing),
        states(count) {
    for (uint32_t p = 0; p < count; ++p) states[p].floor = states[p].top = map.begin(p);
  }
  void fill(uint32_t p) { states[p].top = map.end(p); }
  void fill_core(unsigned core) {
    for (uint32_t p : map.hosted_by(core)) fill(p);
  }
  void fill_cores(const std::vector<unsigned>& cores) {
    for (unsigned core : cores) fill_core(core);
  }
  // The test's own reading of the search (L210-212): the lowest partition
  // with any room hosted by one of `cores`.
  uint32_t lowest_with_room(const std::vector<unsigned>& cores) const {
    uint32_t best = UINT32_MAX;
    for (unsigned core : cores)
      for (uint32_t p : map.hosted_by(core))
        if (states[p].top < map.end(p)) best = std::min(best, p);
    return best;
  }
};

}  // namespace

TEST_CASE("cacheaware mesh: rings of 4 and 8 in the middle, fewer at the edges; hops are Manhattan") {
  Mesh m(5, 5);
  CHECK(m.cores() == 25);
  unsigned middle = 12;  // (2, 2)
  CHECK(m.ring(middle, 1).size() == 4);
  CHECK(m.ring(middle, 2).size() == 8);
  CHECK(m.ring(0, 1).size() == 2);  // a corner
  CHECK(m.ring(0, 2).size() == 3);  // (2,0) (1,1) (0,2)
  CHECK(m.ring(2, 1).size() == 3);  // the middle of an edge
  CHECK(m.ring(2, 2).size() == 5);  // (0,0) (4,0) (1,1) (3,1) (2,2)
  CHECK(m.ring(6, 2).size() == 6);  // (1,1), one in from the corner
  for (unsigned a = 0; a < m.cores(); ++a)
    for (unsigned d = 1; d <= 2; ++d)
      for (unsigned b : m.ring(a, d)) {
        CHECK(m.hops(a, b) == d);
        CHECK(m.hops(b, a) == d);
      }
  CHECK(m.hops(0, 24) == 8);
  CHECK(m.hops(4, 20) == 8);
  CHECK(m.hops(7, 7) == 0);
  std::vector<unsigned> snake{0,  1,  2,  3,  4,  9,  8,  7,  6,  5,  10, 11, 12,
                              13, 14, 19, 18, 17, 16, 15, 20, 21, 22, 23, 24};
  CHECK(m.snake() == snake);
  // A one-row mesh: ring 1 is the two sides.
  Mesh row(8, 1);
  CHECK(row.ring(3, 1) == std::vector<unsigned>{2, 4});
  CHECK(row.ring(3, 2) == std::vector<unsigned>{1, 5});
  CHECK(row.ring(0, 1) == std::vector<unsigned>{1});
  Mesh single(1, 1);
  CHECK(single.ring(0, 1).empty());
  CHECK(single.ring(0, 2).empty());
}

TEST_CASE(
    "cacheaware mapping: partitions striped in snake order, neighbours in address on neighbouring cores") {
  // Figure 2's 3x3 example.
  PlainHeap h(3, 3, 27, 512);
  std::vector<unsigned> hosts;
  for (uint32_t p = 0; p < 27; ++p) hosts.push_back(h.map.host(p));
  std::vector<unsigned> expect{0, 1, 2, 5, 4, 3, 6, 7, 8, 8, 7, 6, 3, 4,
                               5, 2, 1, 0, 0, 1, 2, 5, 4, 3, 6, 7, 8};
  CHECK(hosts == expect);
  for (auto [w, hgt, count, words] : {std::tuple{3u, 3u, 100u, 512u}, std::tuple{4u, 4u, 101u, 500u},
                                      std::tuple{8u, 8u, 300u, 256u}, std::tuple{5u, 2u, 37u, 2048u}}) {
    CAPTURE(w);
    CAPTURE(hgt);
    PlainHeap ph(w, hgt, count, words);
    const PartitionMap& map = ph.map;
    uint64_t far = 0;
    for (uint32_t p = 0; p + 1 < count; ++p) far += ph.mesh.hops(map.host(p), map.host(p + 1)) > 1;
    CHECK(far == 0);
    // Each core hosts its share, ascending, and ranks say where.
    uint32_t total = 0;
    for (unsigned c = 0; c < ph.mesh.cores(); ++c) {
      const std::vector<uint32_t>& mine = map.hosted_by(c);
      total += static_cast<uint32_t>(mine.size());
      CHECK(mine.size() >= count / ph.mesh.cores());
      CHECK(mine.size() <= count / ph.mesh.cores() + 1);
      CHECK(std::is_sorted(mine.begin(), mine.end()));
      for (uint32_t r = 0; r < mine.size(); ++r) {
        CHECK(map.host(mine[r]) == c);
        CHECK(map.rank(mine[r]) == r);
      }
    }
    CHECK(total == count);
    // Addresses: every word of a partition is in it (power-of-two sizes
    // by shifting, others by division).
    for (uint32_t p = 0; p < count; p += 7) {
      CHECK(map.partition_of(map.begin(p)) == p);
      CHECK(map.partition_of(map.end(p) - 1) == p);
      CHECK(map.contains(map.begin(p)));
    }
    CHECK_FALSE(map.contains(map.limit()));
    CHECK_FALSE(map.contains(map.base() - 1));
  }
}

TEST_CASE("cacheaware allocator: local, then ring 1, then ring 2, then global while the flag allows") {
  // A 4x4 mesh, 3 partitions per core. Core 5 is (1,1): ring 1 is cores
  // 1, 4, 6 and 9; ring 2 is 0, 2, 7, 8, 10 and 13; 3, 11, 12, 14 and 15
  // are further.
  PlainHeap h(4, 4, 48, 1024);
  const unsigned c = 5;
  REQUIRE(h.mesh.ring(c, 1) == std::vector<unsigned>{1, 4, 6, 9});
  REQUIRE(h.mesh.ring(c, 2).size() == 6);
  Allocator a(h.map, h.mesh, h.states, 50);
  constexpr uint64_t kBudget = 1 << 20;
  a.reset(0, kBudget);

  using Step = SearchStep;
  auto [step, p] = a.search(c, 16, false);
  CHECK(step == Step::kLocal);
  CHECK(p == h.map.hosted_by(c)[0]);
  // A partition with less room than asked for is passed by.
  uint32_t first = h.map.hosted_by(c)[0];
  h.states[first].top = h.map.end(first) - 100;
  std::tie(step, p) = a.search(c, 16, false);
  CHECK(step == Step::kLocal);
  CHECK(p == first);
  std::tie(step, p) = a.search(c, 200, false);
  CHECK(step == Step::kLocal);
  CHECK(p == h.map.hosted_by(c)[1]);

  // Ring 1: the lowest partition of the four neighbours.
  h.fill_core(c);
  std::tie(step, p) = a.search(c, 16, false);
  CHECK(step == Step::kRing1);
  CHECK(p == 1);  // core 1's first
  CHECK(p == h.lowest_with_room(h.mesh.ring(c, 1)));
  h.fill(1);
  std::tie(step, p) = a.search(c, 16, false);
  CHECK(step == Step::kRing1);
  CHECK(p == 5);  // core 6's first, below core 1's second (30)
  CHECK(h.map.host(p) == 6);

  // Ring 2: the lowest partition of the next eight (six here).
  h.fill_cores(h.mesh.ring(c, 1));
  std::tie(step, p) = a.search(c, 16, false);
  CHECK(step == Step::kRing2);
  CHECK(p == 0);
  CHECK(p == h.lowest_with_room(h.mesh.ring(c, 2)));
  CHECK(h.mesh.hops(c, h.map.host(p)) == 2);

  // Global: the lowest partition anywhere, while less than 50% of the
  // budget has been taken since the last collection.
  h.fill_cores(h.mesh.ring(c, 2));
  CHECK_FALSE(a.global_search_flag());
  std::tie(step, p) = a.search(c, 16, false);
  CHECK(step == Step::kGlobal);
  CHECK(p == 3);
  CHECK(h.mesh.hops(c, h.map.host(p)) > 2);
  CHECK(a.global_search_flag());
  // Once set, the flag stays until the next collection.
  REQUIRE(a.charge(kBudget * 6 / 10, 0, false));
  std::tie(step, p) = a.search(c, 16, false);
  CHECK(step == Step::kGlobal);
  CHECK(p == 3);

  // After a collection, with 60% of the budget taken before the search
  // reaches the whole heap: the flag is not set, and the answer is a
  // collection; unless this allocation follows one.
  a.reset(0, kBudget);
  CHECK_FALSE(a.global_search_flag());
  REQUIRE(a.charge(kBudget * 6 / 10, 0, false));
  std::tie(step, p) = a.search(c, 16, false);
  CHECK(step == Step::kNone);
  CHECK_FALSE(a.global_search_flag());
  std::tie(step, p) = a.search(c, 16, true);
  CHECK(step == Step::kGlobal);
  CHECK(p == 3);
  // 40% taken: under the threshold.
  a.reset(0, kBudget);
  REQUIRE(a.charge(kBudget * 4 / 10, 0, false));
  std::tie(step, p) = a.search(c, 16, false);
  CHECK(step == Step::kGlobal);
  CHECK(a.global_search_flag());
  // The budget is what the trigger leaves over the data in use.
  a.reset(kBudget, 2 * kBudget);
  REQUIRE(a.charge(kBudget * 4 / 10, 0, false));
  std::tie(step, p) = a.search(c, 16, false);
  CHECK(step == Step::kGlobal);

  // Nothing left anywhere: none, even after a collection.
  h.fill_cores({3, 11, 12, 14, 15});
  a.reset(0, kBudget);
  CHECK(a.search(c, 16, false).first == Step::kNone);
  CHECK(a.search(c, 16, true).first == Step::kNone);
}

TEST_CASE("cacheaware allocator: the budget, a threshold of 0, and after_collection") {
  PlainHeap h(4, 4, 48, 1024);
  const unsigned c = 5;
  // Threshold 0: never the whole heap, except after a collection.
  Allocator zero(h.map, h.mesh, h.states, 0);
  zero.reset(0, 1 << 20);
  h.fill_core(c);
  h.fill_cores(h.mesh.ring(c, 1));
  h.fill_cores(h.mesh.ring(c, 2));
  CHECK(zero.search(c, 16, false).first == SearchStep::kNone);
  CHECK_FALSE(zero.global_search_flag());
  CHECK(zero.search(c, 16, true).first == SearchStep::kGlobal);

  // Past the trigger nothing is handed out but after a collection.
  PlainHeap fresh(4, 4, 48, 1024);
  Allocator a(fresh.map, fresh.mesh, fresh.states, 50);
  CHECK(a.search(c, 16, false).first == SearchStep::kNone);  // no budget before the first reset
  CHECK(a.search(c, 16, true).first == SearchStep::kLocal);
  a.reset(0, 8192);
  CHECK(a.search(c, 16, false).first == SearchStep::kLocal);
  CHECK_FALSE(a.charge(8193, 0, false));
  // What is reserved counts against the budget until the next collection.
  CHECK_FALSE(a.charge(4000, 4193, false));
  CHECK(a.charge(0, 4096, false));
  CHECK_FALSE(a.charge(4097, 0, false));
  a.reset(0, 8192);
  // 192 bytes left: a block for 100 words (800 bytes) does not fit.
  CHECK(a.charge(8000, 0, false));
  CHECK(a.search(c, 100, false).first == SearchStep::kNone);
  CHECK(a.search(c, 100, true).first == SearchStep::kLocal);
  CHECK(a.allocate(c, 100, false) == nullptr);
  CHECK(a.counters().refused == 1);
  CHECK(a.allocate(c, 100, true) != nullptr);
  CHECK(a.counters().refused == 1);
  CHECK(a.charge(1 << 20, 1 << 20, true));  // after a collection it always fits
}

TEST_CASE("cacheaware line homing: line i on core i mod C; hops in closed form match a loop over lines") {
  std::mt19937_64 rng(7);
  for (auto [w, hgt] : {std::pair{1u, 1u}, std::pair{3u, 3u}, std::pair{4u, 2u}, std::pair{5u, 1u},
                        std::pair{1u, 7u}, std::pair{8u, 8u}}) {
    CAPTURE(w);
    CAPTURE(hgt);
    for (Homing homing : {Homing::kLines, Homing::kPartition}) {
      CAPTURE(homing == Homing::kLines);
      PlainHeap h(w, hgt, 2 * w * hgt, 512, homing);  // 4 KB partitions, 64 lines each
      const PartitionMap& map = h.map;
      unsigned cores = h.mesh.cores();
      auto home = [&](uint64_t line) {
        return homing == Homing::kLines ? static_cast<unsigned>(line % cores)
                                        : map.host(map.partition_of(map.base() + line * kCacheLineWords));
      };
      uint64_t heap_words = 512 * map.count();
      for (uint64_t line = 0; line < heap_words / kCacheLineWords; ++line)
        CHECK(map.line_home(line) == home(line));
      for (int k = 0; k < 300; ++k) {
        // Short objects at any offset, and some that span many lines,
        // several times round the mesh and across partitions.
        uint64_t words = 1 + rng() % (k % 3 == 0 ? heap_words - 1 : 24);
        uint64_t offset = rng() % (heap_words - words + 1);
        const Word* begin = map.base() + offset;
        unsigned core = static_cast<unsigned>(rng() % cores);
        uint64_t first = offset / kCacheLineWords, last = (offset + words - 1) / kCacheLineWords;
        uint64_t hops = 0;
        for (uint64_t line = first; line <= last; ++line) hops += h.mesh.hops(core, home(line));
        CHECK(map.lines(begin, words) == last - first + 1);
        CHECK(map.line_hops(core, begin, words) == hops);
      }
    }
  }
  // Under partition homing the host's own objects cost nothing; under line
  // homing eight consecutive lines from core 0 of a 2x2 mesh cost 0+1+1+2
  // twice.
  PlainHeap parts(2, 2, 8, 512);
  uint32_t p = parts.map.hosted_by(3)[0];
  CHECK(parts.map.line_hops(3, parts.map.begin(p), 512) == 0);
  CHECK(parts.map.line_hops(0, parts.map.begin(p), 512) == 64 * 2);
  PlainHeap lines(2, 2, 8, 512, Homing::kLines);
  CHECK(lines.map.line_hops(0, lines.map.base(), 8 * kCacheLineWords) == 8);
  CHECK(lines.map.line_hops(0, lines.map.base() + 7, 2) == 1);  // lines 0 and 1
}

TEST_CASE("cacheaware allocator: under line homing no core is preferred, whatever the global flag") {
  PlainHeap h(4, 4, 48, 1024, Homing::kLines);
  Allocator a(h.map, h.mesh, h.states, 0);  // threshold 0: the flag is never set
  a.reset(0, 1 << 20);
  for (unsigned c = 0; c < h.mesh.cores(); ++c) {
    CAPTURE(c);
    auto [step, p] = a.search(c, 16, false);
    CHECK(step == SearchStep::kGlobal);
    CHECK(p == 0);  // core 0's, the lowest in the heap
  }
  CHECK_FALSE(a.global_search_flag());
  // Core 5 takes partition 0; core 9 (not its neighbour's) the next up.
  REQUIRE(a.allocate(5, 16, false) != nullptr);
  CHECK(a.core(5).blocks[a.core(5).current].partition == 0);
  REQUIRE(a.allocate(9, 16, false) != nullptr);
  CHECK(a.core(9).blocks[a.core(9).current].partition == 1);
  CHECK(a.counters().blocks[static_cast<unsigned>(SearchStep::kLocal)] == 0);
  CHECK(a.counters().blocks[static_cast<unsigned>(SearchStep::kGlobal)] == 2);
  // The same heap under partition homing: each core its own first.
  PlainHeap parts(4, 4, 48, 1024);
  Allocator b(parts.map, parts.mesh, parts.states, 0);
  b.reset(0, 1 << 20);
  CHECK(b.search(5, 16, false) == std::pair{SearchStep::kLocal, parts.map.hosted_by(5)[0]});
}

TEST_CASE("cacheaware allocator: two blocks per core, memory cleared 4 KB at a time, blocks retired") {
  PlainHeap h(4, 4, 48, 1024);  // partitions of 8 KB: two clearing blocks each
  std::fill(h.memory.begin(), h.memory.end(), Word{0xABAB'ABAB'ABAB'ABABull});
  Allocator a(h.map, h.mesh, h.states, 50);
  a.reset(0, 1 << 20);
  const unsigned c = 5;
  uint32_t p0 = h.map.hosted_by(c)[0], p1 = h.map.hosted_by(c)[1];

  Word* x = a.allocate(c, 400, false);
  CHECK(x == h.map.begin(p0));
  CHECK(h.states[p0].holder == static_cast<int32_t>(c));
  CHECK(a.counters().blocks[static_cast<unsigned>(SearchStep::kLocal)] == 1);
  CHECK(a.taken_bytes() == 400 * kWordSize);  // what is allocated, not the block's room
  // Cleared up to the first 4 KB boundary past the object, no further.
  const Allocator::Block& b = a.core(c).blocks[a.core(c).current];
  CHECK(b.cleared == h.map.begin(p0) + 512);
  CHECK(std::all_of(x, x + 512, [](Word w) { return w == 0; }));
  CHECK(h.map.begin(p0)[512] == 0xABAB'ABAB'ABAB'ABABull);

  Word* y = a.allocate(c, 400, false);
  CHECK(y == x + 400);
  CHECK(b.cleared == h.map.end(p0));
  // 224 words left in p0: an object of 300 takes a second block, and the
  // first keeps its room (L203) for an object the second cannot take.
  Word* z = a.allocate(c, 300, false);
  CHECK(z == h.map.begin(p1));
  CHECK(h.states[p1].holder == static_cast<int32_t>(c));
  CHECK(h.states[p0].holder == static_cast<int32_t>(c));
  Word* z2 = a.allocate(c, 720, false);
  CHECK(z2 == z + 300);  // 4 words left in p1
  Word* w = a.allocate(c, 200, false);
  CHECK(w == y + 400);
  CHECK(a.counters().blocks[static_cast<unsigned>(SearchStep::kLocal)] == 2);
  // A third block replaces the one with less room (p1's 4 words, not
  // p0's 24), and the partition it leaves keeps its top.
  Word* v = a.allocate(c, 1000, false);
  uint32_t pv = h.map.partition_of(v);
  CHECK(pv == h.map.hosted_by(c)[2]);
  CHECK(h.states[p1].holder == -1);
  CHECK(h.states[p1].top == z2 + 720);
  CHECK(h.states[p0].holder == static_cast<int32_t>(c));

  a.retire_all();
  CHECK(h.states[p0].holder == -1);
  CHECK(h.states[p0].top == w + 200);
  CHECK(h.states[pv].top == v + 1000);
  CHECK(h.states[pv].holder == -1);
  CHECK(a.core(c).blocks[0].partition == -1);
  CHECK(a.core(c).blocks[1].partition == -1);
  CHECK(a.take_counters().bytes_cleared > 0);
  CHECK(a.counters().bytes_cleared == 0);
}

// ---------------------------------------------------------------------------
// 6. Whole collections, 1 to 8 threads, 1x1 to 8x8 meshes

namespace {

// A random graph over normal, pinned and big objects, some hashed, spread
// over the mesh's cores by switching the mutator's home core as it is
// built. Object ids are in raw word 0, the other raw words hold id-derived
// values; every object is rooted while the graph is built, so a
// collection during construction loses nothing.
struct Graph {
  struct Node {
    std::vector<uint64_t> children;  // ids, ~0 for nil
    std::vector<uint64_t> raw;       // the raw words as allocated
    uint64_t hash = 0;               // 0: not hashed
  };
  std::map<uint64_t, Node> nodes;  // the reachable ones
  std::vector<uint64_t> root_ids;  // per root slot, ~0 for nil
  std::vector<uint64_t> weak_ids;  // per weak reference, ~0 for a dead one
  uint64_t pinned_reachable = 0;
};

uint64_t raw_value(uint64_t id, uint64_t i) { return i == 0 ? id : id * 1000 + i; }

constexpr size_t kGraphObjects = 6000;

// With `pinned` false, the objects that would be pinned are normal ones:
// the graph is the same.
void build_graph(CaHeap& h, uint64_t seed, bool pinned) {
  std::mt19937_64 rng(seed);
  TestRoots& roots = h.roots;
  roots.roots.assign(kGraphObjects, Value::nil());
  std::vector<bool> live(kGraphObjects);
  std::vector<size_t> live_ids;
  for (size_t i = 0; i < kGraphObjects; ++i) {
    if (i % 64 == 0) h.c->mutator_switched(i / 64);
    uint64_t kind = rng() % 100;
    uint64_t nrefs = rng() % 5;
    uint64_t raw = 1 + rng() % 4;
    Word* o;
    if (i == 17 || i == 4000) {
      nrefs = 3000;  // 24 KB: huge with 16 KB partitions, normal otherwise
      o = h.alloc(nrefs, raw);
    } else if (kind == 0 && pinned) {
      o = h.c->allocate_pinned(kNode, rounded_refs(nrefs), raw);
      REQUIRE(o != nullptr);
    } else {
      o = h.alloc(nrefs, raw);
    }
    for (uint64_t k = 0; k < raw; ++k) o[1 + k] = raw_value(i, k);
    roots.roots[i] = Value::ref(o);
    live[i] = rng() % 2 || i == 17 || i == 4000;
    if (live[i]) live_ids.push_back(i);
    if (rng() % 10 == 0) h.c->identity_hash(o);
  }
  for (size_t i = 0; i < kGraphObjects; ++i) {
    Word* o = roots.roots[i].as_ref();
    uint64_t n = Header::nrefs(*o);
    for (uint64_t k = 0; k < n; ++k) {
      if (rng() % 4 == 0) continue;
      size_t t = live[i] ? live_ids[rng() % live_ids.size()] : rng() % kGraphObjects;
      write_ref(*h.c, o, &slot(o, k), roots.roots[t]);
    }
  }
  // Weak references to a few live and a few dead objects.
  roots.weak.clear();
  for (size_t i = 3; i < kGraphObjects; i += 97) roots.weak.push_back(roots.roots[i].as_ref());
  // Keep every 20th live object (and the two big ones) as a root.
  for (size_t i = 0; i < kGraphObjects; ++i)
    if (!live[i] || (i % 20 != 0 && i != 17 && i != 4000)) roots.roots[i] = Value::nil();
}

uint64_t id_of(const Word* o) { return o[1]; }

// The graph as it is now, from the roots.
Graph graph_of(CaHeap& h) {
  Graph g;
  std::vector<Word*> stack;
  for (Value v : h.roots.roots) {
    g.root_ids.push_back(v.is_ref() ? id_of(v.as_ref()) : ~0ull);
    if (v.is_ref()) stack.push_back(v.as_ref());
  }
  while (!stack.empty()) {
    Word* o = stack.back();
    stack.pop_back();
    uint64_t id = id_of(o);
    if (g.nodes.count(id)) continue;
    Graph::Node& n = g.nodes[id];
    if (!h.c->partition_map().contains(o)) g.pinned_reachable++;
    uint64_t nrefs = Header::nrefs(*o);
    for (uint64_t k = 0; k < nrefs; ++k) {
      Value v = slot(o, k);
      n.children.push_back(v.is_ref() ? id_of(v.as_ref()) : ~0ull);
      if (v.is_ref()) stack.push_back(v.as_ref());
    }
    uint64_t raw = Header::raw_words(*o);
    if (Header::hash_state(*o) == HashState::kHashedAndMoved) raw--;  // the hash word a move added
    for (uint64_t k = 0; k < raw; ++k) n.raw.push_back(o[1 + k]);
    if (Header::hash_state(*o) != HashState::kUnhashed) n.hash = h.c->identity_hash(o);
  }
  for (Word* w : h.roots.weak) g.weak_ids.push_back(w ? id_of(w) : ~0ull);
  return g;
}

// Everything reachable matches the model: same ids, children, raw words
// and hashes; no mark left; every weak reference to a live object leads
// to it, every other one is cleared.
void check_graph(CaHeap& h, const Graph& before) {
  uint64_t errors = 0;
  std::string first;
  auto fail = [&](const std::string& what) {
    if (errors++ == 0) first = what;
  };
  std::map<uint64_t, Word*> where;
  std::vector<Word*> stack;
  REQUIRE(h.roots.roots.size() == before.root_ids.size());
  for (size_t i = 0; i < h.roots.roots.size(); ++i) {
    Value v = h.roots.roots[i];
    if (v.is_ref() != (before.root_ids[i] != ~0ull)) fail("root " + std::to_string(i));
    if (v.is_ref()) stack.push_back(v.as_ref());
  }
  while (!stack.empty()) {
    Word* o = stack.back();
    stack.pop_back();
    if (!Header::is_header(*o)) {
      fail("not a header");
      continue;
    }
    uint64_t id = id_of(o);
    auto [it, fresh] = where.emplace(id, o);
    if (!fresh) {
      if (it->second != o) fail("two copies of object " + std::to_string(id));
      continue;
    }
    auto model = before.nodes.find(id);
    if (model == before.nodes.end()) {
      fail("unknown object " + std::to_string(id));
      continue;
    }
    const Graph::Node& n = model->second;
    if (Header::is_marked(*o)) fail("mark left on " + std::to_string(id));
    if (Header::class_id(*o) != kNode) fail("class of " + std::to_string(id));
    if (Header::nrefs(*o) != n.children.size()) {
      fail("size of " + std::to_string(id));
      continue;
    }
    for (uint64_t k = 0; k < n.children.size(); ++k) {
      Value v = slot(o, k);
      if (n.children[k] == ~0ull) {
        if (!v.is_nil()) fail("nil slot of " + std::to_string(id));
      } else if (!v.is_ref() || !h.c->in_heap(v.as_ref()) || id_of(v.as_ref()) != n.children[k]) {
        fail("child " + std::to_string(k) + " of " + std::to_string(id));
      } else {
        stack.push_back(v.as_ref());
      }
    }
    for (uint64_t k = 0; k < n.raw.size(); ++k)
      if (o[1 + k] != n.raw[k]) fail("raw word " + std::to_string(k) + " of " + std::to_string(id));
    if (n.hash && h.c->identity_hash(o) != n.hash) fail("hash of " + std::to_string(id));
  }
  if (where.size() != before.nodes.size()) fail("reachable objects: " + std::to_string(where.size()));
  REQUIRE(h.roots.weak.size() == before.weak_ids.size());
  for (size_t i = 0; i < h.roots.weak.size(); ++i) {
    uint64_t id = before.weak_ids[i];
    auto live = before.nodes.find(id);
    Word* expect = live == before.nodes.end() ? nullptr : where[id];
    if (h.roots.weak[i] != expect) fail("weak reference " + std::to_string(i));
  }
  CHECK_MESSAGE(errors == 0, first, " (", errors, " errors)");
}

struct Config {
  const char* name;
  unsigned threads;
  const char* mesh;
  unsigned cores;
  const char* partition;  // empty: the default
  const char* requests;   // empty: the default
  bool pinned;            // some objects in the pinned large-object space
};

}  // namespace

TEST_CASE("cacheaware: the same graph survives whole collections at every thread count and mesh") {
  const Config configs[] = {
      {"1 thread, 1x1", 1, "1x1", 1, "", "", true},
      {"1 thread, 4x4, 16K partitions", 1, "4x4", 16, "16K", "", true},
      // With several GC threads, a thread scanning a pinned object reads its
      // header while another may be marking it (MarkPhase's scan and
      // mark_unhosted): TSan checks that both are atomic.
      {"2 threads, 1x2", 2, "1x2", 2, "", "", true},
      {"2 threads, 8x8, 16K partitions", 2, "8x8", 64, "16K", "", true},
      {"8 threads, 8x8", 8, "8x8", 64, "", "", true},
      // More threads than cores: two of them host nothing.
      {"4 threads, 1x2", 4, "1x2", 2, "", "", true},
      // No request list: every remote reference is updated by ptrquery.
      {"2 threads, 2x2, 16K partitions, no request list", 2, "2x2", 4, "16K", "0", true},
  };
  std::optional<std::map<uint64_t, Graph::Node>> first_graph;
  for (const Config& config : configs) {
    CAPTURE(config.name);
    HeapOptions o = ca_options(config.threads, config.mesh, config.partition);
    if (*config.requests) o.collector_options["ca-requests"] = config.requests;
    CaHeap h(o);
    REQUIRE(h.c->mesh().cores() == config.cores);
    build_graph(h, 12345, config.pinned);
    Graph before = graph_of(h);
    REQUIRE(before.nodes.size() > kGraphObjects / 4);
    REQUIRE(before.nodes.size() < kGraphObjects * 3 / 4);
    CHECK((before.pinned_reachable > 0) == config.pinned);
    check_no_failure(h);
    bool sixteen_k = std::string(config.partition) == "16K";
    CHECK(h.c->huge_objects().objects().size() == (sixteen_k ? 2u : 0u));

    for (int round = 0; round < 3; ++round) {
      CAPTURE(round);
      h.collect();
      check_graph(h, before);
      check_no_failure(h);
      // Marking: every message delivered, and each reachable object in
      // the partitions marked once, by its host.
      const MarkPhase& mark = h.c->mark_phase();
      uint64_t sent = 0, received = 0, marked = 0, hops = 0;
      for (unsigned k = 0; k < h.c->mesh().cores(); ++k) {
        sent += mark.counters(k).sent;
        received += mark.counters(k).received;
        marked += mark.counters(k).objects;
        hops += mark.counters(k).hops;
      }
      CHECK(sent == received);
      CHECK(marked == before.nodes.size() - before.pinned_reachable);
      if (h.c->mesh().cores() > 1) {
        CHECK(sent > 0);
        CHECK(hops >= sent);
        CHECK(mark.verify_rounds() >= 1);
      }
      CHECK(h.counter("mark messages sent") == sent);
      if (*config.requests) {
        uint64_t kept = 0, dropped = 0;
        for (unsigned k = 0; k < h.c->mesh().cores(); ++k) {
          kept += mark.counters(k).requests_kept;
          dropped += mark.counters(k).requests_dropped;
        }
        CHECK(kept == 0);
        CHECK(dropped > 0);
        CHECK(h.counter("request list drops") == dropped);
      }
      CHECK(h.counter("objects marked") == marked);
      if (round == 0) {
        // Dead objects went: the hashed survivors may have grown a word.
        CHECK(h.c->heap_used() < h.c->stats().bytes_allocated);
      }
      // Allocate some garbage between collections, from several cores.
      for (int i = 0; i < 3000; ++i) {
        if (i % 100 == 0) h.c->mutator_switched(static_cast<uint64_t>(i / 100 + round));
        h.alloc(2, 3);
      }
    }
    h.c->mutator_switched(0);
    check_graph(h, before);
    if (!first_graph)
      first_graph = before.nodes;
    else
      CHECK(before.nodes.size() == first_graph->size());
    bool same = first_graph->size() == before.nodes.size();
    for (auto& [id, node] : before.nodes) {
      auto it = first_graph->find(id);
      same = same && it != first_graph->end() && it->second.children == node.children &&
             it->second.raw == node.raw;
    }
    CHECK(same);
  }
}

TEST_CASE("cacheaware: collections triggered by allocation keep a growing structure whole") {
  // A 4 MB trigger in a 24 MB heap, lists built from several cores while
  // garbage is allocated: allocation failures collect, blocks are retired
  // and re-handed out, the buffer follows the home core. Under both
  // homings: with lines spread over the cores, marking reaches lines homed
  // elsewhere and no block is a core's own.
  for (auto [threads, homing] : {std::pair{1u, "partition"}, std::pair{2u, "partition"},
                                 std::pair{1u, "lines"}, std::pair{2u, "lines"}}) {
    CAPTURE(threads);
    CAPTURE(homing);
    HeapOptions o = ca_options(threads, "2x2", "16K", 24ull << 20);
    o.collector_options["ca-homing"] = homing;
    CaHeap h(o);
    bool lines = std::string(homing) == "lines";
    constexpr uint64_t kPerList = 4000;
    for (uint64_t r = 0; r < 4; ++r) h.root(r) = Value::nil();
    for (uint64_t i = 0; i < kPerList; ++i)
      for (uint64_t r = 0; r < 4; ++r) {
        h.c->mutator_switched(r);
        Word* n = h.alloc(1, 2);
        n[1] = i;
        n[2] = r;
        slot(n, 0) = h.root(r);
        h.root(r) = Value::ref(n);
        for (int g = 0; g < 16; ++g) h.alloc(3, 4);  // garbage
      }
    CHECK(h.c->stats().collections >= 3);
    for (uint64_t r = 0; r < 4; ++r) {
      uint64_t expect = kPerList;
      for (Value v = h.root(r); v.is_ref(); v = slot(v.as_ref(), 0)) {
        --expect;
        REQUIRE(v.as_ref()[1] == expect);
        REQUIRE(v.as_ref()[2] == r);
      }
      CHECK(expect == 0);
    }
    check_no_failure(h);
    CHECK(h.counter("mark lines touched") > 0);
    CHECK((h.counter("mark line hops") > 0) == lines);
    CHECK((h.counter("blocks local") > 0) == !lines);
  }
}

TEST_CASE("cacheaware: --gc-stress collects at every few allocations and loses nothing") {
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    HeapOptions o = ca_options(threads, "2x2", "16K", 16ull << 20);
    o.stress_interval = 7;
    CaHeap h(o);
    constexpr uint64_t kNodes = 1500;
    h.root(0) = Value::nil();
    for (uint64_t i = 0; i < kNodes; ++i) {
      if (i % 50 == 0) h.c->mutator_switched(i / 50);
      Word* n = h.alloc(2, 1);
      n[1] = i;
      slot(n, 0) = h.root(0);
      h.root(0) = Value::ref(n);
      if (i % 3 == 0) {
        Word* side = h.alloc(0, 1);  // may collect: n is rooted through the list
        side[1] = i * 11;
        write_ref(*h.c, h.obj(0), &slot(h.obj(0), 1), Value::ref(side));
      }
      if (i % 100 == 0) h.c->identity_hash(h.obj(0));
    }
    CHECK(h.c->stats().collections >= kNodes / 7);
    uint64_t expect = kNodes;
    for (Value v = h.root(0); v.is_ref(); v = slot(v.as_ref(), 0)) {
      Word* n = v.as_ref();
      --expect;
      REQUIRE(n[1] == expect);
      if (expect % 3 == 0) {
        REQUIRE(slot(n, 1).is_ref());
        REQUIRE(slot(n, 1).as_ref()[1] == expect * 11);
      } else {
        REQUIRE(slot(n, 1).is_nil());
      }
    }
    CHECK(expect == 0);
    check_no_failure(h);
  }
}

TEST_CASE("cacheaware options: defaults from --heap and --gc-threads, and the errors of combinations") {
  auto resolve = [](uint64_t heap, unsigned threads, OptionValues values, std::string* error) {
    HeapOptions o;
    o.max_heap_bytes = heap;
    o.gc_threads = threads;
    o.collector_options = std::move(values);
    return cacheaware_options(o, error);
  };
  std::string error;
  // The squarest mesh of the GC threads; 256 KB partitions.
  Options o = resolve(64ull << 20, 8, {}, &error);
  CHECK(error.empty());
  CHECK(o.mesh_width == 2);
  CHECK(o.mesh_height == 4);
  CHECK(o.partition_bytes == 256 * 1024);
  CHECK(o.partitions == 256);
  CHECK(o.ref_cache_entries == 256);
  CHECK(o.request_list == 4096);
  CHECK(o.global_search_percent == 50);
  CHECK(o.huge_cached_at_top);
  o = resolve(64ull << 20, 7, {}, &error);
  CHECK(o.mesh_width == 1);
  CHECK(o.mesh_height == 7);
  // Partitions halve until each of the 64 cores hosts 4: 16 MB / 256 = 64 KB.
  o = resolve(16ull << 20, 1, {{"ca-mesh", "8x8"}}, &error);
  CHECK(error.empty());
  CHECK(o.cores() == 64);
  CHECK(o.partition_bytes == 64 * 1024);
  CHECK(o.partitions == 256);
  // Never below 16 KB: 4 MB on 64 cores has 256 of them.
  o = resolve(4ull << 20, 1, {{"ca-mesh", "8x8"}}, &error);
  CHECK(error.empty());
  CHECK(o.partition_bytes == 16 * 1024);
  // --ca-partitions alone divides the heap, in whole 4 KB blocks.
  o = resolve(64ull << 20, 2, {{"ca-partitions", "100"}}, &error);
  CHECK(error.empty());
  CHECK(o.partitions == 100);
  CHECK(o.partition_bytes == (64ull << 20) / 100 / 4096 * 4096);
  o = resolve(
      64ull << 20, 2,
      {{"ca-ref-cache", "1"}, {"ca-requests", "0"}, {"ca-global-search", "0"}, {"ca-huge", "sequential"}},
      &error);
  CHECK_FALSE(o.huge_cached_at_top);
  CHECK(o.homing == Homing::kPartition);
  CHECK(o.ref_cache_entries == 1);
  CHECK(o.request_list == 0);
  CHECK(o.global_search_percent == 0);

  o = resolve(64ull << 20, 2, {{"ca-homing", "lines"}}, &error);
  CHECK(o.homing == Homing::kLines);

  // Combinations that cannot run.
  resolve(16ull << 20, 1, {{"ca-mesh", "8x8"}, {"ca-partition-size", "1M"}}, &error);
  CHECK(error == "a mesh of 64 cores needs at least as many partitions; there are 16");
  error.clear();
  resolve(16ull << 20, 1, {{"ca-partitions", "2000"}}, &error);
  CHECK(error == "--ca-partitions=2000 leaves partitions under 16K in a heap of 16M");
  error.clear();
  resolve(16ull << 20, 1, {{"ca-partitions", "100"}, {"ca-partition-size", "256K"}}, &error);
  CHECK(error == "--ca-partitions=100 of 256K need more than the heap limit of 16M");
  error.clear();
  resolve(1ull << 20, 1, {{"ca-partition-size", "2M"}}, &error);
  CHECK(error == "the heap limit of 1M holds no partition of 2M (zero partitions)");
  HeapOptions fine;
  fine.max_heap_bytes = 64ull << 20;
  fine.gc_threads = 2;
  CHECK(cacheaware_check_configuration(fine).empty());
  fine.collector_options["ca-mesh"] = "64x64";  // 4096 partitions of 16 KB: one each
  CHECK(cacheaware_check_configuration(fine).empty());
  fine.max_heap_bytes = 32ull << 20;
  CHECK(cacheaware_check_configuration(fine) ==
        "a mesh of 4096 cores needs at least as many partitions; there are 2048");
  // Every option has a line in the table.
  std::set<std::string> names;
  for (const OptionSpec& spec : cacheaware_option_table()) names.insert(spec.name);
  CHECK(names == std::set<std::string>{"ca-partition-size", "ca-partitions", "ca-mesh", "ca-ref-cache",
                                       "ca-requests", "ca-global-search", "ca-huge", "ca-homing",
                                       "ca-trigger"});
}
