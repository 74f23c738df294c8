// Unit tests for the shared parallel machinery (gc/parallel/: deque,
// overflow set, termination, worker pool, chunk owners and inboxes), driven
// directly with many
// threads, including the races Flood et al. 2001 name (stealing the last
// element, overflow and refill, a thief that finds nothing), and for the
// pSemispaces collector at 1, 2 and 8 GC threads (8 on a 2-core machine is
// oversubscribed on purpose), including two threads forwarding the same
// object, under both forwarding protocols (--forwarding=owner and cas).
#include <doctest/doctest.h>
#include <sched.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/semispace/semispace.h"
#include "gc/mutator.h"
#include "gc/parallel/overflow_set.h"
#include "gc/parallel/ownership.h"
#include "gc/parallel/private_tasks.h"
#include "gc/parallel/steal.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/termination.h"
#include "gc/parallel/tracer.h"
#include "gc/parallel/worker_pool.h"
#include "gc/verify/verifier.h"
#include "tests/unit/vector_roots.h"

using namespace gc;
using namespace gc::parallel;

namespace {

// Tasks in these tests carry a number in the object field (never
// dereferenced): task i is (Word*)(8 * (i + 1)).
Task task_of(uint64_t i) { return Task::whole(reinterpret_cast<Word*>(8 * (i + 1)), 1); }
uint64_t index_of(const Task& t) { return reinterpret_cast<uintptr_t>(t.object) / 8 - 1; }

}  // namespace

TEST_CASE("deque: owner LIFO at the bottom, thieves FIFO at the top, fixed capacity") {
  TaskDeque d(8);
  Task t;
  CHECK_FALSE(d.pop(t));
  CHECK(d.steal(t) == TaskDeque::Steal::kEmpty);  // a thief that finds nothing
  for (uint64_t i = 0; i < 8; ++i) REQUIRE(d.push(task_of(i)));
  CHECK_FALSE(d.push(task_of(99)));  // full: reported, nothing pushed
  CHECK(d.size() == 8);
  REQUIRE(d.steal(t) == TaskDeque::Steal::kSuccess);
  CHECK(index_of(t) == 0);
  REQUIRE(d.pop(t));
  CHECK(index_of(t) == 7);
  // The cell a thief freed is reused (circular array).
  REQUIRE(d.push(task_of(8)));
  REQUIRE(d.push(task_of(9)));
  CHECK_FALSE(d.push(task_of(10)));
  // Ranges survive the round trip.
  TaskDeque r(4);
  REQUIRE(r.push(Task::slots(reinterpret_cast<Word*>(64), 2048, 100000)));
  REQUIRE(r.pop(t));
  CHECK(t.begin == 2048);
  CHECK(t.end == 100000);
}

TEST_CASE("steal: a worker never takes from its own deque; a thief outside the phase takes from any") {
  std::vector<std::unique_ptr<TaskDeque>> one;
  one.push_back(std::make_unique<TaskDeque>(8));
  REQUIRE(one[0]->push(task_of(1)));
  uint64_t seed = 12345;
  WorkerStats stats;
  Task t;
  CHECK_FALSE(steal_from_others(one, 0, seed, stats, t));  // its own, the only one
  REQUIRE(steal_from_others(one, kNoOwnDeque, seed, stats, t));
  CHECK(index_of(t) == 1);
  CHECK_FALSE(steal_from_others(one, kNoOwnDeque, seed, stats, t));  // now empty
  std::vector<std::unique_ptr<TaskDeque>> three;
  for (int i = 0; i < 3; ++i) three.push_back(std::make_unique<TaskDeque>(8));
  for (uint64_t i = 0; i < 3; ++i) REQUIRE(three[i]->push(task_of(10 + i)));
  std::vector<bool> taken(3, false);
  for (int k = 0; k < 3; ++k) {
    REQUIRE(steal_from_others(three, kNoOwnDeque, seed, stats, t));
    taken[index_of(t) - 10] = true;
  }
  CHECK(taken == std::vector<bool>{true, true, true});
  CHECK(stats.steals == 4);
}

TEST_CASE("private tasks: LIFO for the owner; the oldest leave first, in order, and the rest stay") {
  PrivateTasks p;
  CHECK(p.empty());
  for (uint64_t i = 0; i < PrivateTasks::kCapacity; ++i) p.push(task_of(i));
  CHECK(p.full());
  std::vector<uint64_t> released;
  p.release_oldest(PrivateTasks::kCapacity / 2, [&](Task t) { released.push_back(index_of(t)); });
  REQUIRE(released.size() == PrivateTasks::kCapacity / 2);
  for (uint64_t i = 0; i < released.size(); ++i) CHECK(released[i] == i);
  CHECK(p.size() == PrivateTasks::kCapacity / 2);
  CHECK(index_of(p.pop()) == PrivateTasks::kCapacity - 1);
  p.push(task_of(1000));
  CHECK(index_of(p.pop()) == 1000);
  uint64_t expect = PrivateTasks::kCapacity - 2;
  while (!p.empty()) CHECK(index_of(p.pop()) == expect--);
  CHECK(expect == PrivateTasks::kCapacity / 2 - 1);
}

// Runs the calling thread, and the threads it starts, on its first allowed
// CPU alone (one_core), or leaves them where they are; restores on exit.
class CpuPin {
 public:
  explicit CpuPin(bool one_core) {
    if (!one_core || sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &saved_)) {
        CPU_SET(cpu, &one);
        break;
      }
    pinned_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~CpuPin() {
    if (pinned_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t saved_{};
  bool pinned_ = false;
};

TEST_CASE("deque: the last element goes to exactly one of the owner and a thief") {
  // Thieves steal without pause while the owner, many times over, pushes
  // one task, waits a moment and pops it: each time the deque holds one
  // element and both ends want it. Exactly one side must get it, every
  // round. Who wins a contested round is the scheduler's choice (on a
  // loaded machine the thief may never run during one), so every eighth
  // round is the thief's: the owner pops only once the thief has taken the
  // task, and its pop must then find the deque empty. Run on the machine's
  // cores and with owner and thief sharing one.
  constexpr int kRounds = 50000;
  constexpr int kThiefRoundEvery = 8;
  constexpr int kThieves = 1;  // one per core beside the owner
  // A thief's round gives up after this many yields: only a deque whose
  // steal never succeeds gets near it, and it fails rather than hangs.
  constexpr uint64_t kYieldsGivingUp = 10'000'000;
  for (bool one_core : {false, true}) {
    CAPTURE(one_core);
    CpuPin pin(one_core);
    REQUIRE(pin.pinned() == one_core);
    TaskDeque d(16);
    std::atomic<bool> stop{false};
    std::vector<std::atomic<int>> taken(kRounds);
    std::vector<std::thread> thieves;
    for (int k = 0; k < kThieves; ++k) {
      thieves.emplace_back([&] {
        Task t;
        unsigned misses = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          if (d.steal(t) == TaskDeque::Steal::kSuccess) {
            taken[index_of(t)].fetch_add(1);
            misses = 0;
          } else if (++misses % 64 == 0) {
            std::this_thread::yield();  // gives the owner a core it shares
          }
        }
      });
    }
    int owner_wins = 0, owner_pops_after_theft = 0, contested = 0;
    uint64_t seed = 12345;
    for (int r = 0; r < kRounds; ++r) {
      REQUIRE(d.push(task_of(r)));
      Task t;
      if (r % kThiefRoundEvery == 0) {
        // Ends: the thief steals until `stop`, which is set only after the
        // last round, on its own thread; the owner yields, so that on one
        // core the thief gets it, and the thief yields back after 64
        // misses. A steal that never succeeds ends at the bound.
        for (uint64_t y = 0; taken[r].load() == 0 && y < kYieldsGivingUp; ++y) std::this_thread::yield();
        REQUIRE(taken[r].load() == 1);
        if (d.pop(t)) owner_pops_after_theft++;
        continue;
      }
      ++contested;
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      for (unsigned spin = 0; spin < (seed >> 56); ++spin)
        std::atomic_signal_fence(std::memory_order_seq_cst);
      if (d.pop(t)) {
        taken[index_of(t)].fetch_add(1);
        owner_wins++;
      }
    }
    stop.store(true);
    for (auto& t : thieves) t.join();
    for (int r = 0; r < kRounds; ++r) REQUIRE(taken[r].load() == 1);
    CHECK(owner_pops_after_theft == 0);
    CHECK(d.looks_empty());
    MESSAGE("contested rounds: owner won " << owner_wins << ", thieves won " << contested - owner_wins);
  }
}

TEST_CASE("deque: concurrent push, pop and steal take every task exactly once") {
  constexpr uint64_t kTasks = 400000;
  constexpr int kThieves = 7;  // oversubscribed on 2 cores, on purpose
  TaskDeque d(1024);
  std::vector<std::atomic<uint8_t>> taken(kTasks);
  std::atomic<bool> owner_done{false};
  std::atomic<uint64_t> stolen{0}, empty_steals{0};
  std::vector<std::thread> thieves;
  for (int k = 0; k < kThieves; ++k)
    thieves.emplace_back([&] {
      Task t;
      while (!owner_done.load(std::memory_order_acquire) || !d.looks_empty()) {
        switch (d.steal(t)) {
          case TaskDeque::Steal::kSuccess:
            taken[index_of(t)].fetch_add(1);
            stolen.fetch_add(1);
            break;
          case TaskDeque::Steal::kEmpty:
            empty_steals.fetch_add(1);  // a thief that finds nothing
            std::this_thread::yield();
            break;
          case TaskDeque::Steal::kAbort:
            break;
        }
      }
    });
  Task t;
  uint64_t next = 0;
  while (next < kTasks) {
    // Bursts of pushes, then some pops: the deque fills and drains.
    for (int i = 0; i < 50 && next < kTasks; ++i)
      if (!d.push(task_of(next)))
        break;
      else
        ++next;
    for (int i = 0; i < 20 && d.pop(t); ++i) taken[index_of(t)].fetch_add(1);
  }
  while (d.pop(t)) taken[index_of(t)].fetch_add(1);
  owner_done.store(true, std::memory_order_release);
  for (auto& th : thieves) th.join();
  uint64_t missing = 0, twice = 0;
  for (auto& x : taken) {
    missing += x.load() == 0;
    twice += x.load() > 1;
  }
  CHECK(missing == 0);
  CHECK(twice == 0);
  MESSAGE(stolen.load() << " stolen, " << empty_steals.load() << " empty steals");
}

TEST_CASE("overflow set: bottom half out, at most the top half back, nothing overflows twice") {
  TaskDeque d(8);
  OverflowSet set;
  for (uint64_t i = 0; i < 8; ++i) REQUIRE(d.push(task_of(i)));
  REQUIRE_FALSE(d.push(task_of(8)));
  CHECK(set.take_bottom_half(d) == 4);  // the 4 pushed last: 4..7
  CHECK(set.size() == 4);
  CHECK(d.size() == 4);
  Task t;
  CHECK(d.steal(t) == TaskDeque::Steal::kSuccess);
  CHECK(index_of(t) == 0);  // the top half stayed
  while (d.pop(t)) {
  }
  CHECK(set.refill(d, d.capacity() / 2) == 4);
  CHECK(set.looks_empty());
  CHECK(set.refill(d, 4) == 0);

  // The owner's protocol over a long run, counting overflows per task: a
  // task refilled from the set sits in the top half, and only the bottom
  // half overflows, so no task goes to the set twice.
  TaskDeque q(64);
  OverflowSet s;
  std::vector<int> overflowed(100000, 0);
  uint64_t next = 0, done = 0;
  auto push = [&](Task x) {
    if (q.push(x)) return;
    // Mark what moves: pop the bottom half ourselves to count it.
    std::vector<Task> moved;
    for (uint64_t i = 0; i < q.capacity() / 2; ++i) {
      Task y;
      REQUIRE(q.pop(y));
      moved.push_back(y);
    }
    for (auto it = moved.rbegin(); it != moved.rend(); ++it) REQUIRE(q.push(*it));
    REQUIRE(s.take_bottom_half(q) == q.capacity() / 2);
    for (const Task& y : moved) overflowed[index_of(y)]++;
    REQUIRE(q.push(x));
  };
  while (done < overflowed.size()) {
    Task x;
    if (q.pop(x)) {
      ++done;
      // Each task spawns two more until all are made: the deque overflows.
      for (int c = 0; c < 2 && next < overflowed.size(); ++c) push(task_of(next++));
    } else if (s.refill(q, q.capacity() / 2) == 0) {
      if (next < overflowed.size()) push(task_of(next++));
    }
  }
  int most = 0;
  for (int o : overflowed) most = std::max(most, o);
  CHECK(most <= 1);
}

namespace {

// A synthetic tracing workload for termination: task n spawns 4n+1 ..
// 4n+4 below `limit` (a 4-ary tree of `limit` nodes), pushed on the
// thread's own deque, with overflow and stealing as the collector does.
struct TreeWork {
  explicit TreeWork(unsigned threads, uint64_t capacity, uint64_t limit) : limit(limit), seen(limit) {
    for (unsigned i = 0; i < threads; ++i) deques.push_back(std::make_unique<TaskDeque>(capacity));
    term.reset(threads);
  }
  uint64_t limit;
  std::vector<std::unique_ptr<TaskDeque>> deques;
  OverflowSet overflow;
  Termination term;
  std::vector<std::atomic<uint8_t>> seen;
  std::atomic<uint64_t> steals{0}, overflows{0}, offers{0}, failed_steals{0};
  // Thread 0 keeps the root's children on its deque until a thief takes
  // one, so that a steal happens whatever the scheduler does.
  bool hold_for_thief = false;
  // A thief fails on a deque that has tasks only by losing a race to
  // another thief, which then counts its steal; this many failures with no
  // steal counted means the deque gives nothing up, so thread 0 stops
  // waiting and the test fails rather than hangs.
  static constexpr uint64_t kFailedStealsGivingUp = 100000;

  // Every task processed, none twice.
  bool each_seen_once() const {
    for (const auto& s : seen)
      if (s.load() != 1) return false;
    return true;
  }

  void run(unsigned id) {
    TaskDeque& d = *deques[id];
    auto push = [&](Task t) {
      if (!d.push(t)) {
        overflows.fetch_add(1);
        overflow.take_bottom_half(d);
        REQUIRE(d.push(t));
      }
    };
    auto visit = [&](uint64_t n) {
      seen[n].fetch_add(1);
      for (uint64_t c = 4 * n + 1; c <= 4 * n + 4; ++c)
        if (c < limit) push(task_of(c));
    };
    if (id == 0) {
      visit(0);
      // The wait ends: every other thread runs this loop on its own
      // std::thread (none plays two roles), finds thread 0's deque holding
      // the root's children, and tries to steal until one of them succeeds;
      // none can leave through term.offer meanwhile, since thread 0 has not
      // offered and its deque is visible. At 8 and 16 threads on the 2
      // cores the suite runs on, yield() lets the thieves run. Were
      // stealing broken, the failures' bound ends it.
      while (hold_for_thief && steals.load() == 0 && failed_steals.load() < kFailedStealsGivingUp)
        std::this_thread::yield();
    }
    uint64_t idle = 0;
    Task t;
    for (;;) {
      while (d.pop(t)) visit(index_of(t));
      if (overflow.refill(d, d.capacity() / 2)) continue;
      bool stole = false;
      for (unsigned k = 1; k < deques.size() && !stole; ++k) {
        TaskDeque& v = *deques[(id + k) % deques.size()];
        if (v.looks_empty()) continue;
        if (v.steal(t) == TaskDeque::Steal::kSuccess)
          stole = true;
        else
          failed_steals.fetch_add(1);
      }
      if (stole) {
        steals.fetch_add(1);
        REQUIRE(d.push(t));
        continue;
      }
      offers.fetch_add(1);
      auto visible = [&] {
        if (!overflow.looks_empty()) return true;
        for (auto& q : deques)
          if (!q->looks_empty()) return true;
        return false;
      };
      if (term.offer(visible, idle)) return;
    }
  }
};

}  // namespace

TEST_CASE("termination: every thread ends only when all work is done, with more threads than cores") {
  for (unsigned threads : {1u, 2u, 8u, 16u}) {
    CAPTURE(threads);
    // Small deques so that overflow and refill happen during the run.
    TreeWork w(threads, 16, 300000);
    w.hold_for_thief = threads > 1;
    WorkerPool pool(threads);
    auto job = [&](unsigned id) { w.run(id); };
    pool.run(job);
    CHECK(w.term.done());
    CHECK(w.each_seen_once());
    CHECK(w.overflow.looks_empty());
    // Stolen work, too, is done before the phase ends.
    if (threads > 1) CHECK(w.steals.load() > 0);
    MESSAGE(threads << " threads: " << w.steals.load() << " steals, " << w.overflows.load() << " overflows, "
                    << w.offers.load() << " offers");
  }
}

TEST_CASE("worker pool: an open phase runs on the workers admitted, and none runs after it returns") {
  // Worker 0's part ends at once, so pool threads often arrive too late;
  // each phase's count is checked after a closed phase has waited for
  // every thread, so a part run after its phase returned would show.
  for (unsigned threads : {2u, 4u}) {
    CAPTURE(threads);
    WorkerPool pool(threads);
    constexpr int kPhases = 2000;
    std::vector<std::atomic<unsigned>> ran(kPhases);
    std::vector<unsigned> returned(kPhases);
    unsigned skipped = 0;
    for (int phase = 0; phase < kPhases; ++phase) {
      auto job = [&](unsigned) { ran[phase].fetch_add(1); };
      returned[phase] = pool.run_open(job);
      skipped += returned[phase] < threads;
    }
    std::atomic<unsigned> all{0};
    auto closed = [&](unsigned) { all.fetch_add(1); };
    pool.run(closed);
    CHECK(all.load() == threads);  // a closed phase waits for every thread
    for (int phase = 0; phase < kPhases; ++phase) {
      REQUIRE(ran[phase].load() == returned[phase]);
      REQUIRE(returned[phase] >= 1);
    }
    MESSAGE(threads << " threads: " << skipped << " of " << kPhases << " open phases ran without some");
  }
}

TEST_CASE("termination: in an open phase the work is done by whoever joins, late joiners included") {
  for (unsigned threads : {2u, 8u}) {
    CAPTURE(threads);
    for (int round = 0; round < 20; ++round) {
      TreeWork w(threads, 16, 50000);
      WorkerPool pool(threads);
      std::atomic<unsigned> ran{0};
      unsigned admitted = trace_open(pool, w.term, [&](unsigned id) {
        ran.fetch_add(1);
        w.run(id);
      });
      CHECK(w.term.done());
      // A pool thread admitted after the traversal ended does not run it.
      CHECK(ran.load() >= 1);
      CHECK(ran.load() <= admitted);
      CHECK(w.term.joined() == ran.load());
      REQUIRE(w.each_seen_once());
    }
  }
}

TEST_CASE("termination: idle threads with nothing at all end at once") {
  Termination t;
  WorkerPool pool(8);
  for (int phase = 0; phase < 50; ++phase) {
    t.reset(8);
    std::atomic<int> ended{0};
    auto job = [&](unsigned) {
      uint64_t idle = 0;
      if (t.offer([] { return false; }, idle)) ended.fetch_add(1);
    };
    pool.run(job);
    REQUIRE(ended.load() == 8);
  }
}

namespace {

// The smallest policy of the shared tracer: mark with a fetch-or (so that
// every object is counted once) and defer what has slots.
class CountingMarker : public Tracer<CountingMarker> {
 public:
  using Tracer::Tracer;
  void run(RootClaim& roots) {
    begin_trace();
    marked = 0;
    claim_roots(roots);
    trace();
  }
  void trace_slot(Value* slot) {
    if (!slot->is_ref()) return;
    Word* h = slot->as_ref();
    Word before = std::atomic_ref<Word>(*h).fetch_or(Header::kMarkBit, std::memory_order_relaxed);
    if (Header::is_marked(before)) return;
    marked++;
    if (uint64_t n = Header::nrefs(before)) defer(Task::whole(h, n));
  }
  uint64_t marked = 0;
};

}  // namespace

namespace {

// The tracer tests' heap: a complete binary tree of depth 12 and an array
// of 10000 slots each referring to one leaf object; the array and the
// tree's root (twice) are roots.
struct TraceHeap {
  std::vector<Word> heap = std::vector<Word>(1u << 20);
  Word* top = heap.data();
  uint64_t objects = 0;
  uint64_t array_slots = rounded_refs(10000);
  std::vector<Value> root_slots;
  std::vector<RootGroup> groups;

  TraceHeap() {
    Word* root = tree(12);
    Word* array = alloc(array_slots);
    for (uint64_t i = 0; i < array_slots; ++i) ref_slots_begin(array, array_slots)[i] = Value::ref(alloc(0));
    root_slots = {Value::ref(root), Value::ref(array), Value::ref(root)};
    for (Value& v : root_slots) groups.push_back(RootGroup{&v, 1});
  }

  Word* alloc(uint64_t nrefs) {
    Word* h = format_object(top, kFirstUserClass, nrefs, 0);
    top += object_words(nrefs, 0);
    REQUIRE(top <= heap.data() + heap.size());
    objects++;
    return h;
  }

  Word* tree(int depth) {
    Word* h = alloc(depth ? 2 : 0);
    if (depth) {
      ref_slots_begin(h, 2)[0] = Value::ref(tree(depth - 1));
      ref_slots_begin(h, 2)[1] = Value::ref(tree(depth - 1));
    }
    return h;
  }

  void unmark() {
    for (Word* p = heap.data(); p < top;) {
      Word* h = header_from_start(p);
      *h &= ~Header::kMarkBit;
      p = h + 1 + Header::raw_words(*h);
    }
  }
};

// The tracer's machinery for one phase at `threads` threads.
struct TraceMachinery {
  explicit TraceMachinery(unsigned threads) : inboxes(std::make_unique<Inbox[]>(threads)) {
    for (unsigned w = 0; w < threads; ++w) deques.push_back(std::make_unique<TaskDeque>(deque_capacity(0)));
    termination.reset(threads);
  }
  std::vector<std::unique_ptr<TaskDeque>> deques;
  OverflowSet overflow;
  Termination termination;
  std::unique_ptr<Inbox[]> inboxes;
};

// A policy whose objects each belong to one thread, by address (4 KB pages
// dealt round the threads): a slot whose target is another thread's goes
// to that thread. The owner marks with a plain load and store, so that an
// object marked by two threads would be counted twice.
class OwnedMarker : public Tracer<OwnedMarker> {
 public:
  OwnedMarker(const TraceShared& shared, unsigned id, const Word* base, unsigned threads)
      : Tracer(shared, id), base_(base), threads_(threads) {}
  void run(RootClaim& roots) {
    begin_trace();
    claim_roots(roots);
    trace();
  }
  void trace_slot(Value* slot) {
    if (!slot->is_ref()) return;
    Word* h = slot->as_ref();
    unsigned owner = static_cast<unsigned>(((h - base_) * kWordSize / 4096) % threads_);
    if (owner != id()) {
      send(owner, Task::slot(slot));
      return;
    }
    std::atomic_ref<Word> header(*h);
    Word before = header.load(std::memory_order_relaxed);
    if (Header::is_marked(before)) return;
    header.store(before | Header::kMarkBit, std::memory_order_relaxed);
    marked++;
    if (uint64_t n = Header::nrefs(before)) defer(Task::whole(h, n));
  }
  uint64_t marked = 0;

 private:
  const Word* base_;
  unsigned threads_;
};

}  // namespace

TEST_CASE("tracer: every reachable object once, at 1, 2 and 4 threads, with large arrays in chunks") {
  TraceHeap heap;
  for (unsigned threads : {1u, 2u, 4u}) {
    CAPTURE(threads);
    heap.unmark();
    TraceMachinery m(threads);
    TraceShared shared{m.deques, m.overflow, m.termination};
    std::vector<std::unique_ptr<CountingMarker>> markers;
    for (unsigned w = 0; w < threads; ++w) markers.push_back(std::make_unique<CountingMarker>(shared, w));
    RootClaim roots{heap.groups};
    WorkerPool pool(threads);
    auto job = [&](unsigned w) { markers[w]->run(roots); };
    pool.run(job);
    uint64_t marked = 0, chunks = 0, claimed = 0;
    for (auto& marker : markers) {
      marked += marker->marked;
      chunks += marker->stats().chunk_tasks;
      claimed += marker->stats().root_groups_claimed;
    }
    CHECK(marked == heap.objects);
    CHECK(claimed == heap.groups.size());
    CHECK(chunks == (heap.array_slots - 1) / kChunkSlots);
  }
}

TEST_CASE("tracer: work sent to its owner is done by the owner, once, before the phase ends") {
  // Every thread owns some of the objects and only it may mark them, so
  // each must have marked some; sends cross in both directions, tasks go
  // in batches and the last ones when a thread runs out of work, and
  // termination waits for batches still in an inbox.
  TraceHeap heap;
  for (unsigned threads : {2u, 4u, 8u}) {
    CAPTURE(threads);
    for (int round = 0; round < 20; ++round) {
      heap.unmark();
      TraceMachinery m(threads);
      TraceShared shared{m.deques, m.overflow, m.termination, m.inboxes.get()};
      std::vector<std::unique_ptr<OwnedMarker>> markers;
      for (unsigned w = 0; w < threads; ++w)
        markers.push_back(std::make_unique<OwnedMarker>(shared, w, heap.heap.data(), threads));
      RootClaim roots{heap.groups};
      WorkerPool pool(threads);
      auto job = [&](unsigned w) { markers[w]->run(roots); };
      pool.run(job);
      uint64_t marked = 0, sent = 0;
      for (auto& marker : markers) {
        CHECK(marker->marked > 0);
        marked += marker->marked;
        sent += marker->stats().tasks_sent;
      }
      REQUIRE(marked == heap.objects);
      CHECK(sent > 0);
      CHECK(m.termination.done());
      for (unsigned w = 0; w < threads; ++w) CHECK(m.inboxes[w].looks_empty());
    }
  }
}

TEST_CASE("termination: a batch in flight keeps the phase open until its owner takes it") {
  Termination t;
  t.reset(1);
  uint64_t idle = 0;
  t.hold();
  CHECK(t.active() == 1);  // batches are not threads
  CHECK_FALSE(t.done());
  // The only thread offers while the batch is held: not over, and it goes
  // back to work when it sees the batch.
  CHECK_FALSE(t.offer([] { return true; }, idle));
  t.release(1);
  CHECK_FALSE(t.done());
  CHECK(t.offer([] { return false; }, idle));
  CHECK(t.done());
}

TEST_CASE("chunk owners: a free chunk is claimed, another's is asked for and shared between objects") {
  std::vector<Word> space(4 * (size_t{1} << ChunkOwners::kChunkShift) / kWordSize);
  const Word* chunk0 = space.data();
  const Word* chunk1 = chunk0 + (size_t{1} << ChunkOwners::kChunkShift) / kWordSize;
  ChunkOwners owners;
  owners.reset(space.data(), space.data() + space.size(), 2);
  ChunkOwners::View first = owners.view(0), second = owners.view(1);
  unsigned owner = 99;
  using Access = ChunkOwners::Access;
  CHECK(first.access(chunk0, owner) == Access::kOwn);
  CHECK(first.access(chunk0 + 100, owner) == Access::kOwn);
  CHECK(second.access(chunk0 + 7, owner) == Access::kSend);
  CHECK(owner == 0);
  CHECK(first.asked());
  CHECK_FALSE(second.asked());
  // Asked once; until the owner is between objects it still owns the chunk
  // and the others keep sending.
  CHECK(second.access(chunk0, owner) == Access::kSend);
  CHECK(first.access(chunk0, owner) == Access::kOwn);
  second.share_asked();
  CHECK(first.asked());
  first.share_asked();
  CHECK_FALSE(first.asked());
  CHECK(first.access(chunk0, owner) == Access::kShare);
  CHECK(second.access(chunk0, owner) == Access::kShare);
  // Chunk 1 is the second thread's once it touches it first.
  CHECK(second.access(chunk1, owner) == Access::kOwn);
  CHECK(first.access(chunk1 + 1, owner) == Access::kSend);
  CHECK(owner == 1);
  CHECK(second.asked());  // the phase ends before it is answered
  // A new phase starts with every chunk free and no request.
  owners.reset(space.data(), space.data() + space.size(), 2);
  first = owners.view(0);
  second = owners.view(1);
  CHECK_FALSE(second.asked());
  CHECK(second.access(chunk0, owner) == Access::kOwn);
  CHECK(first.access(chunk1, owner) == Access::kOwn);
  CHECK(first.access(chunk0, owner) == Access::kSend);
  second.share_asked();
  CHECK(first.access(chunk0, owner) == Access::kShare);
  CHECK(second.access(chunk1 + 2, owner) == Access::kSend);
  CHECK(owner == 0);
}

TEST_CASE("worker pool: every worker runs each phase once; threads sleep between phases") {
  for (unsigned n : {1u, 2u, 8u}) {
    WorkerPool pool(n);
    std::vector<std::atomic<int>> runs(n);
    for (int phase = 0; phase < 200; ++phase) {
      auto job = [&](unsigned w) { runs[w].fetch_add(1); };
      pool.run(job);
    }
    for (unsigned w = 0; w < n; ++w) CHECK(runs[w].load() == 200);
    CHECK(pool.phases() == 200);
  }
}

// ---------------------------------------------------------------------------
// The collector at 1, 2 and 8 threads

namespace {

constexpr uint32_t kPNode = kFirstUserClass + 2;

using PRoots = test::VectorRoots;

struct PHeap {
  PRoots roots;
  std::unique_ptr<Collector> owner;
  SemispaceCollector* c;
  PHeap(unsigned threads, size_t nroots, uint64_t heap = 256ull << 20, uint64_t lab = 0, uint64_t deque = 0,
        const char* forwarding = "owner") {
    HeapOptions o;
    o.collector_options["forwarding"] = forwarding;
    o.gc_deque_tasks = deque;
    o.max_heap_bytes = heap;
    o.gc_threads = threads;
    if (lab) o.collector_options["gc-lab"] = std::to_string(lab);
    roots.roots.assign(nroots, Value::nil());
    owner = find_collector("semispace")->create(roots, o);
    c = static_cast<SemispaceCollector*>(owner.get());
  }
  Word* alloc(uint64_t nrefs, uint64_t raw) {
    Word* h = gc::allocate(*c, kPNode, nrefs, raw);
    REQUIRE(h != nullptr);
    return h;
  }
  void collect() { c->collect(GcCause::kExplicit); }
  std::optional<verify::Failure> check() {
    verify::HeapShape shape;
    c->describe_heap(shape);
    return verify::check_heap(shape, roots, c->stats().collections);
  }
  parallel::WorkerStats totals() const {
    parallel::WorkerStats t;
    for (const auto& s : c->worker_stats()) t.add(s);
    return t;
  }
};

Value& pslot(Word* h, uint64_t i) { return ref_slot(h, i); }

// A complete binary tree of depth d under root r; node raw word = its
// index in heap order, so its shape can be checked after collection.
Word* build_tree(PHeap& h, int depth, uint64_t& counter) {
  Word* n = h.alloc(2, 1);
  n[1] = counter++;
  if (depth > 0) {
    // A collection during these allocations would move n: allocate the
    // children first (the heap is big enough that none happens).
    Word* l = build_tree(h, depth - 1, counter);
    Word* r = build_tree(h, depth - 1, counter);
    pslot(n, 0) = Value::ref(l);
    pslot(n, 1) = Value::ref(r);
  }
  return n;
}

uint64_t check_tree(Word* n, int depth) {
  uint64_t count = 1;
  if (depth > 0) {
    REQUIRE(pslot(n, 0).is_ref());
    REQUIRE(pslot(n, 1).is_ref());
    count += check_tree(pslot(n, 0).as_ref(), depth - 1);
    count += check_tree(pslot(n, 1).as_ref(), depth - 1);
  }
  return count;
}

}  // namespace

TEST_CASE("pSemispaces at 1, 2 and 8 threads: trees, sharing, large arrays, hashes and weak refs") {
  for (std::string forwarding : {"owner", "cas"})
    for (unsigned threads : {1u, 2u, 8u}) {
      CAPTURE(forwarding);
      CAPTURE(threads);
      PHeap h(threads, 64, 256ull << 20, 0, 0, forwarding.c_str());
      CHECK(h.c->gc_threads() == threads);
      uint64_t counter = 0;
      // Eight trees of 2^12 nodes under separate roots: work for every
      // thread (small enough that building them does not collect).
      for (int t = 0; t < 8; ++t) h.roots.roots[t] = Value::ref(build_tree(h, 11, counter));
      // One shared object referenced from 40 roots in 10 root groups and
      // from every slot of a large array: threads race to forward it.
      Word* shared = h.alloc(0, 1);
      shared[1] = 4242;
      for (int i = 8; i < 48; ++i) h.roots.roots[i] = Value::ref(shared);
      // A large array (in the large-object space) of 100000 slots, each a
      // small object; it is scanned as chunk tasks.
      Word* big = gc::allocate(*h.c, kArrayStorageClass, 100000, 0);
      REQUIRE(big != nullptr);
      CHECK(h.c->in_large_space(big));
      h.roots.roots[48] = Value::ref(big);
      for (uint64_t i = 0; i < 100000; ++i) {
        Word* o = i % 2 ? shared : h.alloc(0, 1);
        if (!(i % 2)) o[1] = i;
        pslot(big, i) = Value::ref(o);
      }
      // A hashed object grows a hash word when copied.
      Word* hashed = h.alloc(1, 1);
      uint64_t hash = h.c->identity_hash(hashed);
      h.roots.roots[49] = Value::ref(hashed);
      // Weak: one kept, one dead.
      Word* dead = h.alloc(0, 1);
      h.roots.weak = {shared, dead};

      for (int round = 0; round < 3; ++round) {
        h.collect();
        REQUIRE_FALSE(h.check().has_value());
        for (int t = 0; t < 8; ++t) CHECK(check_tree(h.roots.roots[t].as_ref(), 11) == (1u << 12) - 1);
        Word* s = h.roots.roots[8].as_ref();
        CHECK(s[1] == 4242);
        for (int i = 8; i < 48; ++i)
          REQUIRE(h.roots.roots[i].as_ref() == s);  // copied once: still one object
        Word* b = h.roots.roots[48].as_ref();
        CHECK(b == big);  // large objects do not move
        for (uint64_t i = 0; i < 100000; i += 1) {
          Word* o = pslot(b, i).as_ref();
          if (i % 2) {
            REQUIRE(o == s);
          } else {
            REQUIRE(o[1] == i);
          }
        }
        CHECK(h.c->identity_hash(h.roots.roots[49].as_ref()) == hash);
        CHECK(h.roots.weak[0] == s);
        CHECK(h.roots.weak[1] == nullptr);
      }
      parallel::WorkerStats t = h.totals();
      CHECK(t.chunk_tasks > 0);
      CHECK(t.large_objects_marked == 3);
      CHECK(t.root_groups_claimed == 3 * 16);  // 64 roots in groups of 4, three collections
      CHECK(t.cas_failures == t.undone_allocations);
      CHECK(h.c->stats().bytes_copied == t.bytes_copied);
      if (threads > 1) {
        unsigned busy = 0;
        for (const auto& s : h.c->worker_stats()) busy += s.objects_copied > 0;
        MESSAGE(forwarding << ", " << threads << " threads: " << busy << " copied, " << t.steals
                           << " steals of " << t.steal_attempts << " attempts, " << t.tasks_sent
                           << " tasks sent, " << t.cas_forwardings << " CAS forwardings, " << t.cas_failures
                           << " CAS failures, " << t.labs_taken << " LABs, " << t.lab_waste_bytes
                           << " bytes wasted");
      }
    }
}

TEST_CASE("two threads forwarding the same object: one copy, the loser undoes its allocation") {
  // Root groups hold 4 slots; 8 consecutive groups (32 slots) all point at
  // the same object, so threads claiming neighbouring groups at the same
  // moment race to forward the same object: by CAS, or (forwarding by
  // owner) to claim, ask for or share its chunk. Whatever the interleaving,
  // each object is copied exactly once: bytes copied equals the live bytes,
  // every root agrees on the new address, and every lost CAS is matched by
  // an undone allocation.
  constexpr size_t kRoots = 32000;
  constexpr size_t kPerObject = 32;
  for (std::string forwarding : {"owner", "cas"})
    for (unsigned threads : {2u, 8u}) {
      CAPTURE(forwarding);
      CAPTURE(threads);
      PHeap h(threads, kRoots, 256ull << 20, 0, 0, forwarding.c_str());
      for (int round = 0; round < 40; ++round) {
        for (size_t k = 0; k < kRoots / kPerObject; ++k) {
          Word* o = h.alloc(1, 2);
          o[1] = k;
          for (size_t i = 0; i < kPerObject; ++i) h.roots.roots[k * kPerObject + i] = Value::ref(o);
        }
        uint64_t before = h.c->stats().bytes_copied;
        h.collect();
        REQUIRE_FALSE(h.check().has_value());
        CHECK(h.c->stats().bytes_copied - before == kRoots / kPerObject * object_words(1, 2) * kWordSize);
        for (size_t i = 0; i < kRoots; ++i) {
          Word* o = h.roots.roots[i].as_ref();
          REQUIRE(o == h.roots.roots[i / kPerObject * kPerObject].as_ref());
          REQUIRE(o[1] == i / kPerObject);
        }
      }
      parallel::WorkerStats t = h.totals();
      CHECK(t.cas_failures == t.undone_allocations);
      if (forwarding == "cas") CHECK(t.tasks_sent == 0);
      MESSAGE(forwarding << ", " << threads << " threads: " << t.cas_failures
                         << " forwarding races lost and undone in 40 collections, " << t.tasks_sent
                         << " slots sent to their target's owner");
    }
}

TEST_CASE("pSemispaces: wide graphs overflow the deques and still copy everything") {
  // One object with 60000 distinct children, traced with 64-task deques:
  // each chunk of the array pushes 2048 copies, so deques overflow into the
  // overflow set and are refilled from it.
  for (unsigned threads : {1u, 2u, 8u}) {
    CAPTURE(threads);
    PHeap h(threads, 4, 256ull << 20, 0, 64);
    Word* wide = gc::allocate(*h.c, kArrayStorageClass, 60000, 0);
    REQUIRE(wide != nullptr);
    h.roots.roots[0] = Value::ref(wide);
    for (uint64_t i = 0; i < 60000; ++i) {
      Word* o = h.alloc(1, 1);
      o[1] = i;
      pslot(wide, i) = Value::ref(o);
    }
    h.collect();
    REQUIRE_FALSE(h.check().has_value());
    for (uint64_t i = 0; i < 60000; ++i) REQUIRE(pslot(wide, i).as_ref()[1] == i);
    CHECK(h.totals().objects_copied == 60000);
    CHECK(h.totals().overflow_events > 0);
    CHECK(h.totals().refills > 0);
  }
}

TEST_CASE("pSemispaces: small heaps and tiny LABs never overrun to-space") {
  for (unsigned threads : {1u, 2u, 8u}) {
    for (uint64_t lab : {64ull, 4096ull, 1ull << 20}) {
      CAPTURE(threads);
      CAPTURE(lab);
      PHeap h(threads, 64, 2ull << 20, lab);
      // Lists under every root, rebuilt until the heap is nearly full:
      // allocation either succeeds or returns nullptr (out of memory).
      bool oom = false;
      for (int r = 0; r < 64 && !oom; ++r) {
        for (int i = 0; i < 2000; ++i) {
          Word* n = gc::allocate(*h.c, kPNode, 1, 3);
          if (!n) {
            oom = true;
            break;
          }
          pslot(n, 0) = h.roots.roots[r];
          h.roots.roots[r] = Value::ref(n);
        }
      }
      h.collect();
      REQUIRE_FALSE(h.check().has_value());
      CHECK(h.c->heap_used() <= 2 * (2ull << 20));
    }
  }
}

TEST_CASE(
    "pSemispaces: filler left by a parallel copy never makes an allocation fail that the live data fits") {
  // Near the heap limit, the filler of a parallel copy (LAB tails, whose
  // amount depends on thread scheduling) used to count against the heap
  // bound: a semispace is never shrunk below what it holds, filler
  // included, so a large allocation that needed the semispaces to shrink
  // failed although the live data plus the request fit, and whether a
  // program fitted depended on the interleaving (the differential tester's
  // `--heap=512K --gc-threads=16` flake). Here small objects stay live, and
  // one large object as big as fits beside both semispaces at the live
  // data's size must be allocated. Repeated: each round is one draw of the
  // scheduling.
  constexpr uint64_t kHeap = 8ull << 20;
  uint64_t retries = 0;
  for (int round = 0; round < 24; ++round) {
    CAPTURE(round);
    PHeap h(8, 512, kHeap);
    for (uint64_t i = 0; i < 40000u + 997u * static_cast<uint64_t>(round % 8); ++i) {
      Word* n = h.alloc(1, 5);
      Value& root = h.roots.roots[(i * 7919) % 511];
      pslot(n, 0) = root;
      root = Value::ref(n);
    }
    h.collect();
    uint64_t large = h.c->large_objects().committed_bytes();
    uint64_t live = h.c->heap_used() - large;  // filler is not live
    uint64_t room = kHeap - large - 2 * round_up_pages(live);
    uint64_t raw = room / kWordSize;
    while (LargeObjectSpace::pages_for(object_words(0, raw)) * kPageBytes > room) raw -= 16;
    CAPTURE(live);
    CAPTURE(room);
    Word* big = gc::allocate(*h.c, kPNode, 0, raw);
    CHECK(big != nullptr);
    if (big) h.roots.roots[511] = Value::ref(big);
    REQUIRE_FALSE(h.check().has_value());
    retries += h.c->retries_leaving_no_gaps();
  }
  MESSAGE(retries << " serial retries after a parallel copy left filler in the way");
}
