// Minimum mutator utilisation (gc/observe/mmu.h) against figures worked
// out by hand, and against a brute-force scan of every window position.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "gc/observe/mmu.h"

using gc::observe::PauseTimeline;

namespace {

// The least utilisation of any window of `w` ns, trying every start in
// steps of 1 ns: the definition, slowly.
double brute_force_mmu(const std::vector<std::pair<int64_t, int64_t>>& pauses, int64_t run, int64_t w) {
  double least = 1;
  for (int64_t t = 0; t + w <= run; ++t) {
    int64_t paused = 0;
    for (const auto& [start, end] : pauses)
      paused += std::max<int64_t>(0, std::min(end, t + w) - std::max(start, t));
    least = std::min(least, 1 - static_cast<double>(paused) / static_cast<double>(w));
  }
  return least;
}

}  // namespace

TEST_CASE("mmu: a window inside a pause is 0, the whole run its mutator share, and between as worked out") {
  // 100 ns: pauses [10, 30) and [50, 55).
  PauseTimeline t({{10, 30}, {50, 55}}, 100);
  CHECK(t.minimum_utilisation(20).utilisation == doctest::Approx(0));
  CHECK(t.minimum_utilisation(10).utilisation == doctest::Approx(0));
  CHECK(t.minimum_utilisation(100).utilisation == doctest::Approx(0.75));
  // 40 ns hold at most 20 of pause; 45 ns from 10 hold both pauses.
  CHECK(t.minimum_utilisation(40).utilisation == doctest::Approx(0.5));
  PauseTimeline::Window w = t.minimum_utilisation(45);
  CHECK(w.utilisation == doctest::Approx(20.0 / 45));
  CHECK(w.start_ns == 10);
  CHECK(t.pauses_in(w.start_ns, 45) == std::vector<size_t>{0, 1});
  CHECK(t.shortest_pause_ns() == 5);
  // A window longer than the run is the run.
  CHECK(t.minimum_utilisation(1000).utilisation == doctest::Approx(0.75));
}

TEST_CASE("mmu: equals a scan of every window position on random timelines") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::pair<int64_t, int64_t>> pauses;
    int64_t at = 0;
    int n = static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
      at += static_cast<int64_t>(rng() % 20);
      int64_t length = 1 + static_cast<int64_t>(rng() % 15);
      pauses.push_back({at, at + length});
      at += length;
    }
    int64_t run = at + static_cast<int64_t>(rng() % 20) + 1;
    PauseTimeline t(pauses, run);
    for (int64_t w = 1; w <= run; w += 1 + w / 4)
      CHECK(t.minimum_utilisation(w).utilisation == doctest::Approx(brute_force_mmu(pauses, run, w)));
  }
}

TEST_CASE("mmu: the curve runs from the shortest pause to the run, and BMU never falls as the window grows") {
  PauseTimeline t({{1000, 3000}, {10000, 10500}, {20000, 26000}}, 100000);
  auto curve = gc::observe::utilisation_curve(t, 20);
  REQUIRE(curve.size() == 20);
  CHECK(curve.front().window_ms == doctest::Approx(500 / 1e6));
  CHECK(curve.back().window_ms == doctest::Approx(100000 / 1e6));
  CHECK(curve.front().mmu == doctest::Approx(0));
  CHECK(curve.back().mmu == doctest::Approx(1 - 8500.0 / 100000));
  for (size_t k = 0; k + 1 < curve.size(); ++k) {
    CHECK(curve[k].bmu <= curve[k].mmu + 1e-12);
    CHECK(curve[k].bmu <= curve[k + 1].bmu + 1e-12);
  }
  CHECK(gc::observe::utilisation_curve(PauseTimeline({}, 100), 20).empty());
}
