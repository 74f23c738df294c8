// The old generation's free areas under concurrent promotion LABs
// (gc/spaces/old_space.h): every word of an area that claims have left is
// an object or filler, whatever the interleaving of claims and given-back
// LAB tails.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "gc/heap/lab.h"
#include "gc/heap/reservation.h"
#include "gc/spaces/old_space.h"

using namespace gc;

namespace {

// The walk card scanning and the verifier do: false at the first word that
// is not a header where one must start.
bool walkable(Word* begin, Word* end) {
  for (Word* p = begin; p < end;) {
    if ((*p & Header::kTagMask) != Header::kHeaderTag) return false;
    p += 1 + Header::raw_words(*p);
  }
  return true;
}

}  // namespace

TEST_CASE(
    "old space: promotion LABs claimed and given back by many threads leave every closed area walkable") {
  constexpr uint64_t kSpaceWords = 1 << 16;
  Reservation reservation(kSpaceWords * kWordSize);
  Word* base = reservation.base();
  OffsetTable offsets(base, base + kSpaceWords);
  OldSpace old(base, base + kSpaceWords, offsets);
  std::mt19937_64 rng(7);
  const unsigned threads = 4;
  for (int round = 0; round < 200; ++round) {
    // Occupied runs of filler between small free areas, as a parallel
    // compaction leaves them; the free words hold poison, as after one.
    std::fill(base, base + kSpaceWords, Header::kPoison);
    std::vector<OldSpace::Run> runs;
    for (Word* p = base; p + 300 < base + kSpaceWords / 2;) {
      Word* run_end = p + 1 + rng() % 8;
      fill_dead_space(p, run_end);
      runs.push_back({p, run_end});
      p = run_end + 8 + rng() % 120;
    }
    old.reset_after_compaction(runs, static_cast<uint64_t>(runs.back().end - base) * kWordSize);

    // Each thread claims LABs, keeps a random prefix (written as filler, the
    // stand-in for promoted objects) and gives the tail back, or makes it
    // filler when it is no longer the end of its area's claims.
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, seed = rng()] {
        std::mt19937_64 r(seed);
        for (;;) {
          uint64_t got = 0;
          uint64_t min_words = 1 + r() % 6;
          Word* lab = old.claim_shared(min_words, min_words + r() % 24, &got);
          if (!lab) return;
          uint64_t kept = min_words + r() % (got - min_words + 1);
          fill_dead_space(lab, lab + kept);
          if (kept < got && !old.unclaim_shared(lab + kept, got - kept)) offsets.fill(lab + kept, lab + got);
        }
      });
    }
    for (std::thread& t : pool) t.join();

    std::vector<OldSpace::Run> occupied;
    old.occupied_runs(occupied);
    REQUIRE(!occupied.empty());
    CHECK(occupied.front().begin == base);
    for (const OldSpace::Run& r : occupied) REQUIRE(walkable(r.begin, r.end));
  }
}

TEST_CASE("old space: touching the next claims' cache lines leaves the space as it was") {
  constexpr uint64_t kSpaceWords = 1 << 14;
  Reservation reservation(kSpaceWords * kWordSize);
  Word* base = reservation.base();
  OffsetTable offsets(base, base + kSpaceWords);
  OldSpace old(base, base + kSpaceWords, offsets);
  // Two occupied runs (filler) and the free words between and after them
  // holding a pattern that must survive the touch.
  for (uint64_t i = 0; i < kSpaceWords; ++i) base[i] = Header::kPoison ^ i;
  fill_dead_space(base, base + 100);
  fill_dead_space(base + 1000, base + 1200);
  old.reset_after_compaction({{base, base + 100}, {base + 1000, base + 1200}}, kSpaceWords * kWordSize);
  std::vector<Word> before(base, base + kSpaceWords);
  std::vector<OldSpace::Area> areas_before = old.areas();
  old.touch_next_claims(4000 * kWordSize);  // beyond the first free area
  CHECK(std::equal(before.begin(), before.end(), base));
  REQUIRE(old.areas().size() == areas_before.size());
  for (size_t i = 0; i < areas_before.size(); ++i) {
    CHECK(old.areas()[i].top == areas_before[i].top);
    CHECK(old.areas()[i].end == areas_before[i].end);
  }
  CHECK(old.free_bytes() == (kSpaceWords - 300) * kWordSize);
}
