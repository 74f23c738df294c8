// Unit tests for accel's traversal unit (gc/collectors/accel/
// traversal_unit.h): a single object, a long list (latency bound), a wide
// array (bandwidth bound), a queue that must spill and refill, and random
// graphs whose marked set must equal a reference traversal's under every
// memory, translation and queue setting. Timings are computed by hand over
// the ideal pipe with translation off, where every step is visible.
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <set>
#include <vector>

#include "gc/collectors/accel/traversal_unit.h"

using namespace gc;
using namespace gc::accel;

namespace {

constexpr uint32_t kClass = kFirstUserClass;

// Objects in one 64-byte-aligned arena, formatted as the heap formats them.
class Arena {
 public:
  explicit Arena(size_t words) : words_(new (std::align_val_t{64}) Word[words]), size_(words) {}
  ~Arena() { ::operator delete[](words_, std::align_val_t{64}); }

  Word* object(uint64_t nrefs, uint64_t raw = 0) {
    uint64_t size = object_words(nrefs, raw);
    REQUIRE(used_ + size <= size_);
    Word* h = format_object(words_ + used_, kClass, nrefs, raw);
    used_ += size;
    all_.push_back(h);
    return h;
  }
  // Skips to the next 64-byte line.
  void align_line() { used_ = (used_ + 7) / 8 * 8; }
  const std::vector<Word*>& all() const { return all_; }

 private:
  Word* words_;
  size_t size_;
  size_t used_ = 0;
  std::vector<Word*> all_;
};

void link(Word* from, uint64_t slot, Word* to) { ref_slot(from, slot) = Value::ref(to); }

// An array of kWidth references to as many leaves, its object starting a
// line.
constexpr uint64_t kWidth = 4096;
struct WideArray {
  Arena arena{kWidth * 2 + kWidth + 64};
  std::vector<Word*> leaves;
  Word* array = nullptr;
  WideArray() {
    for (uint64_t i = 0; i < kWidth; ++i) leaves.push_back(arena.object(0, 0));
    arena.align_line();
    array = arena.object(kWidth);
    for (uint64_t i = 0; i < kWidth; ++i) link(array, i, leaves[i]);
  }
};

TraversalConfig plain(WalkerMode walker = WalkerMode::kOff) {
  TraversalConfig c;
  c.translation.walker = walker;
  return c;
}

Cycle mark(const TraversalConfig& config, MemoryModel& memory, std::vector<Word*> roots,
           TraversalStats* stats = nullptr) {
  TraversalUnit unit(config, memory);
  alignas(64) static Word* hwgc_space[4096];
  REQUIRE(roots.size() <= 4096);
  std::copy(roots.begin(), roots.end(), hwgc_space);
  Cycle end = unit.run(std::span<Word* const>(hwgc_space, roots.size()), 0);
  if (stats) *stats = unit.stats();
  return end;
}

}  // namespace

TEST_CASE("traversal: the request generator issues the paper's example, 8, 32, 64, 16 bytes") {
  uint64_t a = 0x1a18, end = a + 15 * 8;
  std::vector<uint32_t> sizes;
  while (a < end) {
    sizes.push_back(request_bytes(a, end));
    a += sizes.back();
  }
  CHECK(sizes == std::vector<uint32_t>{8, 32, 64, 16});
}

TEST_CASE("traversal: a single object, step by step") {
  Arena arena(64);
  Word* a = arena.object(0, 1);
  IdealPipe memory(PipeConfig{});
  TraversalStats stats;
  // Cycle 0: the reader asks for the roots' line (8 cycles on the pipe,
  // back at 8). 8: the root is pushed, the marker takes it. 9: its header
  // read, back at 10: marked, no references. 10: the write-back, whose
  // acknowledgement comes at 11. 12: every box idle.
  CHECK(mark(plain(), memory, {a}, &stats) == 12);
  CHECK(Header::is_marked(*a));
  CHECK(stats.marker.objects_marked == 1);
  CHECK(stats.marker.write_backs == 1);
  CHECK(stats.tracer.objects_traced == 0);
  CHECK(stats.root_lines == 1);
}

TEST_CASE("traversal: a long list costs two memory latencies a node (latency bound)") {
  auto run = [](int n) {
    Arena arena(16 * n + 64);
    std::vector<Word*> nodes;
    for (int i = 0; i < n; ++i) nodes.push_back(arena.object(1, 1));
    for (int i = 0; i + 1 < n; ++i) link(nodes[i], 0, nodes[i + 1]);
    IdealPipe memory(PipeConfig{.latency = 100, .bytes_per_cycle = 8});
    Cycle end = mark(plain(), memory, {nodes[0]});
    for (Word* h : nodes) CHECK(Header::is_marked(*h));
    return end;
  };
  // A node's header read comes back 100 cycles after it is sent; the
  // write-back takes the port in that cycle and the node enters the tracer
  // queue; the tracer's 8-byte read goes the next cycle and returns 100
  // later with the next reference, which the marker takes then and reads
  // the cycle after: 202 cycles a node.
  CHECK(run(10) - run(1) == 9 * 202);
}

TEST_CASE("traversal: a wide array is bandwidth bound: the pipe is busy nearly every cycle") {
  WideArray wide;
  auto& [arena, leaves, array] = wide;
  IdealPipe memory(PipeConfig{});
  TraversalStats stats;
  Cycle end = mark(plain(), memory, {array}, &stats);
  for (Word* h : leaves) CHECK(Header::is_marked(*h));
  // Bytes on the pipe: the roots' line, the array's header read and
  // write-back, its 32 KiB of references, a read and a write-back of 8
  // bytes for each leaf, and the spill lines (the tracer pushes a
  // reference a cycle, the marker takes one every two, so the queue
  // fills): at 8 bytes a cycle, the pipe's busy cycles. The run takes
  // hardly longer than that.
  uint64_t spill_bytes = 64 * (stats.queue.spill_writes + stats.queue.spill_reads);
  uint64_t bytes = 64 + 16 + kWidth * 8 + kWidth * 16 + spill_bytes;
  CHECK(stats.queue.spill_writes > 0);
  CHECK(memory.stats().busy_cycles == bytes / 8);
  CHECK(end >= bytes / 8);
  CHECK(end <= bytes / 8 + bytes / 8 / 100);  // within 1% of the bound
  // The reference section starts a word into a line (after the count
  // word) and so ends a word into one: 8, 16 and 32 bytes, then 64-byte
  // requests, then 8.
  CHECK(stats.tracer.requests == 3 + (kWidth * 8 - 56 - 8) / 64 + 1);
  CHECK(stats.tracer.bytes == kWidth * 8);
  // The report's samples: one per 1,000 cycles that ended, holding every
  // request but those of the last, unfinished interval.
  CHECK(stats.sample_interval == TraversalUnit::kSampleCycles);
  CHECK(stats.bandwidth.size() == end / TraversalUnit::kSampleCycles);
  CHECK(stats.occupancy.size() == stats.bandwidth.size());
  uint64_t sampled = 0;
  for (uint64_t n : stats.bandwidth) sampled += n;
  CHECK(sampled <= memory.submitted());
  CHECK(memory.submitted() - sampled <= TraversalUnit::kSampleCycles);
}

TEST_CASE("traversal: a timeline past its size merges neighbours and doubles its interval") {
  Timeline rate(Timeline::Kind::kRate, 10, 0), level(Timeline::Kind::kLevel, 10, 0);
  CHECK(!rate.due(9));
  CHECK(rate.due(10));
  for (size_t i = 0; i < Timeline::kMaxSamples; ++i) {
    rate.close(i % 2 ? 30 : 10);
    level.close(i % 2 ? 30 : 10);
  }
  REQUIRE(rate.values().size() == Timeline::kMaxSamples / 2);
  CHECK(rate.interval() == 20);
  CHECK(rate.values().front() == 20);
  CHECK(rate.values().back() == 20);
  // The next interval is the wider one.
  CHECK(!rate.due(Timeline::kMaxSamples * 10 + 19));
  CHECK(rate.due(Timeline::kMaxSamples * 10 + 20));
  // A count over the wider interval is kept per 10 cycles; a level as it is.
  rate.close(40);
  level.close(40);
  CHECK(rate.values().back() == 20);
  CHECK(level.values().back() == 40);
  CHECK(!rate.due(Timeline::kMaxSamples * 10 + 39));
  CHECK(rate.due(Timeline::kMaxSamples * 10 + 40));
}

TEST_CASE("traversal: a queue that must spill writes lines out and reads them back, losing nothing") {
  WideArray wide;
  auto& [arena, leaves, array] = wide;
  TraversalConfig config = plain();
  config.queue.entries = 16;
  config.queue.spill_base = uint64_t{1} << 46;
  // A slow marker (one slot, a long latency) against a tracer that reads
  // 8 references a request: the queue fills and spills.
  config.marker.slots = 1;
  IdealPipe memory(PipeConfig{.latency = 20, .bytes_per_cycle = 64});
  TraversalStats stats;
  mark(config, memory, {array}, &stats);
  for (Word* h : leaves) CHECK(Header::is_marked(*h));
  CHECK(stats.queue.spill_writes > 0);
  CHECK(stats.queue.spill_reads == stats.queue.spill_writes);
  CHECK(stats.queue.spilled_entries == 8 * stats.queue.spill_writes);
  CHECK(memory.stats().requests[static_cast<unsigned>(Source::kSpill)] == 2 * stats.queue.spill_writes);
  CHECK(stats.marker.objects_marked == kWidth + 1);
}

TEST_CASE("traversal: random graphs mark exactly what a reference traversal reaches, in every setting") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 24; ++round) {
    Arena arena(1 << 16);
    std::vector<Word*> objects;
    int n = 200 + static_cast<int>(rng() % 800);
    for (int i = 0; i < n; ++i) objects.push_back(arena.object(rng() % 6, rng() % 3));
    for (Word* h : objects)
      for (uint64_t s = 0; s < Header::nrefs(*h); ++s)
        if (rng() % 3) link(h, s, objects[rng() % objects.size()]);
    std::vector<Word*> roots;
    for (int i = 0; i < 1 + static_cast<int>(rng() % 12); ++i)
      roots.push_back(objects[rng() % objects.size()]);
    std::set<Word*> reached;
    std::vector<Word*> stack(roots.begin(), roots.end());
    while (!stack.empty()) {
      Word* h = stack.back();
      stack.pop_back();
      if (!reached.insert(h).second) continue;
      for (uint64_t s = 0; s < Header::nrefs(*h); ++s)
        if (ref_slot(h, s).is_ref()) stack.push_back(ref_slot(h, s).as_ref());
    }
    TraversalConfig config;
    config.translation.walker = static_cast<WalkerMode>(round % 3);
    config.queue.entries = round % 2 ? 8 : 1024;
    config.queue.compressed = round % 4 == 1;
    config.queue.spill_base = uint64_t{1} << 46;
    config.marker.mark_cache_entries = round % 5 == 0 ? 64 : 0;
    config.marker.slots = 1 + round % 16;
    config.tracer_queue_entries = 1 + round % 7;
    std::unique_ptr<MemoryModel> memory;
    if (round % 2) {
      DramConfig dram;
      dram.scheduler = round % 4 == 3 ? DramScheduler::kFifo : DramScheduler::kFrFcfs;
      dram.max_in_flight = round % 3 ? 16 : 8;
      memory = std::make_unique<DramModel>(dram);
    } else {
      memory = std::make_unique<IdealPipe>(PipeConfig{});
    }
    TraversalStats stats;
    mark(config, *memory, roots, &stats);
    std::set<Word*> marked;
    for (Word* h : arena.all())
      if (Header::is_marked(*h)) marked.insert(h);
    CAPTURE(round);
    CHECK(marked == reached);
    CHECK(stats.marker.objects_marked == reached.size());
  }
}
