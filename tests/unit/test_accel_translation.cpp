// Unit tests for accel's address translation (gc/collectors/accel/
// translation.h): TLB hits, a walk through the three levels, a TLB miss
// whose walk hits the walker's cache, the L2 TLB, and the blocking and
// non-blocking walkers, against timings computed by hand over an ideal
// pipe.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "gc/collectors/accel/translation.h"

using namespace gc::accel;

namespace {

// A page whose level-0 entry is the first of its 64-byte line, in a 1 GiB
// region whose root entry is the first of its line.
constexpr uint64_t kPageA = uint64_t{8} << 30;

struct Rig {
  explicit Rig(TranslationConfig config = {}, PipeConfig pipe = {}) : memory(pipe), tr(config) {}

  // The simulation loop over the walker and the memory, up to `limit`.
  void run_until(Cycle limit) {
    std::vector<MemResponse> responses;
    for (;;) {
      Cycle t = std::min(tr.next_event(), memory.next_event());
      if (t > limit) return;
      responses.clear();
      memory.advance(t, responses);
      for (const MemResponse& r : responses) tr.on_response(r);
      tr.advance(t, memory);
    }
  }

  Cycle done_at(Port port, uint64_t tag) {
    std::vector<Translation::Done> done;
    tr.take_done(port, done);
    for (const Translation::Done& d : done)
      if (d.tag == tag) return d.at;
    FAIL("request " << tag << " not translated");
    return 0;
  }

  IdealPipe memory;
  Translation tr;
};

}  // namespace

TEST_CASE("translation: the page table's entries sit in the root, level-1 and level-0 tables") {
  CHECK(pte_address(kPageA, 2) == kPageTableBase + 8 * 8);
  CHECK(pte_address(kPageA, 1) == kPageTableBase + ((1 + 8) << kPageShift));
  CHECK(pte_address(kPageA, 0) == kPageTableBase + ((1 + 512 + 8 * 512) << kPageShift));
  CHECK(pte_address(kPageA + 4096, 0) == pte_address(kPageA, 0) + 8);
}

TEST_CASE("translation: a cold miss walks three levels from memory, then the TLB hits") {
  Rig rig;
  Cycle ready = 0;
  REQUIRE(rig.tr.translate(Port::kMarker, kPageA + 100, 1, 0, &ready) == Translation::Outcome::kParked);
  rig.run_until(1000);
  // Each level misses the walker cache and reads a 64-byte line over the
  // pipe: 8 cycles of transfer and 1 of latency after the last, so the
  // entries are known at 8, 16 and 24.
  CHECK(rig.done_at(Port::kMarker, 1) == 24);
  CHECK(rig.tr.stats().walks == 1);
  CHECK(rig.tr.stats().walker_cache_misses == 3);
  CHECK(rig.memory.stats().requests[static_cast<unsigned>(Source::kWalker)] == 3);
  REQUIRE(rig.tr.translate(Port::kMarker, kPageA + 200, 2, 30, &ready) == Translation::Outcome::kNow);
  CHECK(ready == 30);
  CHECK(rig.tr.stats().l1_hits[0] == 1);
  CHECK(rig.tr.stats().l1_misses[0] == 1);
}

TEST_CASE("translation: a TLB miss next to a walked page hits the walker cache at every level") {
  Rig rig;
  Cycle ready = 0;
  rig.tr.translate(Port::kMarker, kPageA, 1, 0, &ready);
  rig.run_until(1000);
  REQUIRE(rig.tr.translate(Port::kMarker, kPageA + 4096, 2, 30, &ready) == Translation::Outcome::kParked);
  rig.run_until(1000);
  CHECK(rig.done_at(Port::kMarker, 2) == 33);  // three 1-cycle cache hits
  CHECK(rig.tr.stats().walker_cache_hits == 3);
  CHECK(rig.memory.stats().requests[static_cast<unsigned>(Source::kWalker)] == 3);  // none more
}

TEST_CASE("translation: the other port's miss hits the shared L2 TLB") {
  Rig rig;
  Cycle ready = 0;
  rig.tr.translate(Port::kMarker, kPageA, 1, 0, &ready);
  rig.run_until(1000);
  REQUIRE(rig.tr.translate(Port::kTracer, kPageA + 8, 7, 40, &ready) == Translation::Outcome::kNow);
  CHECK(ready == 42);
  CHECK(rig.tr.stats().l1_misses[1] == 1);
  CHECK(rig.tr.stats().l2_hits == 1);
}

TEST_CASE("translation: the blocking walker stalls the port and takes one walk at a time") {
  TranslationConfig config;
  PipeConfig pipe{.latency = 10, .bytes_per_cycle = 64};  // a line in 1 cycle, 10 of latency
  Rig rig(config, pipe);
  Cycle ready = 0;
  const uint64_t page_c = kPageA + (uint64_t{8} << 30);  // shares no table line with A
  REQUIRE(rig.tr.translate(Port::kMarker, kPageA, 1, 0, &ready) == Translation::Outcome::kParked);
  CHECK(rig.tr.blocked(Port::kMarker));
  CHECK(rig.tr.translate(Port::kMarker, kPageA, 2, 0, &ready) == Translation::Outcome::kBlocked);
  REQUIRE(rig.tr.translate(Port::kTracer, page_c, 3, 0, &ready) == Translation::Outcome::kParked);
  rig.run_until(1000);
  // A: lines at 10, 20, 30. C waits, then 40, 50, 60.
  CHECK(rig.done_at(Port::kMarker, 1) == 30);
  CHECK(rig.done_at(Port::kTracer, 3) == 60);
  CHECK_FALSE(rig.tr.blocked(Port::kMarker));
}

TEST_CASE("translation: the non-blocking walker overlaps walks and serves hits under a miss") {
  TranslationConfig config;
  config.walker = WalkerMode::kNonBlocking;
  PipeConfig pipe{.latency = 10, .bytes_per_cycle = 64};
  Rig rig(config, pipe);
  Cycle ready = 0;
  const uint64_t page_c = kPageA + (uint64_t{8} << 30);
  rig.tr.translate(Port::kMarker, kPageA, 1, 0, &ready);
  rig.run_until(1000);
  (void)rig.done_at(Port::kMarker, 1);
  REQUIRE(rig.tr.translate(Port::kMarker, page_c, 2, 100, &ready) == Translation::Outcome::kParked);
  CHECK_FALSE(rig.tr.blocked(Port::kMarker));
  REQUIRE(rig.tr.translate(Port::kMarker, kPageA + 16, 3, 100, &ready) == Translation::Outcome::kNow);
  CHECK(ready == 100);
  const uint64_t page_d = page_c + (uint64_t{8} << 30);
  REQUIRE(rig.tr.translate(Port::kTracer, page_d, 4, 100, &ready) == Translation::Outcome::kParked);
  rig.run_until(1000);
  // C's lines at 110, 120, 130; D's requests follow each of C's by a
  // cycle on the pipe: 111, 121, 131.
  CHECK(rig.done_at(Port::kMarker, 2) == 130);
  CHECK(rig.done_at(Port::kTracer, 4) == 131);
}

TEST_CASE("translation: off translates every address at once, counting nothing") {
  TranslationConfig config;
  config.walker = WalkerMode::kOff;
  Rig rig(config);
  Cycle ready = 0;
  CHECK(rig.tr.translate(Port::kTracer, kPageA, 1, 5, &ready) == Translation::Outcome::kNow);
  CHECK(ready == 5);
  CHECK(rig.tr.stats().walks == 0);
  CHECK(rig.tr.next_event() == kNever);
}
