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

// k pauses of p ns every period ns from `first`: [first + i * period, + p).
std::vector<std::pair<int64_t, int64_t>> every(int64_t first, int64_t k, int64_t p, int64_t period) {
  std::vector<std::pair<int64_t, int64_t>> pauses;
  for (int64_t i = 0; i < k; ++i) pauses.push_back({first + i * period, first + i * period + p});
  return pauses;
}

// MMU and BMU of k pauses of p every period, in closed form, for a run
// that holds a window of w around them: a window of m periods and r more
// holds at most m pauses and min(r, p) of the next, and no more than k;
// MMU's local minima are at m periods and p, 1 - (m + 1) p / (m period + p),
// which rise with m, so BMU is the lesser of MMU(w) and the first of them
// at w or beyond.
double periodic_mmu(int64_t k, int64_t p, int64_t period, int64_t w) {
  int64_t m = w / period, r = w % period;
  return 1 - static_cast<double>(std::min(k * p, m * p + std::min(r, p))) / static_cast<double>(w);
}
double periodic_bmu(int64_t k, int64_t p, int64_t period, int64_t w) {
  double least = periodic_mmu(k, p, period, w);
  for (int64_t m = 0; m < k; ++m)
    if (m * period + p >= w) return std::min(least, periodic_mmu(k, p, period, m * period + p));
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

TEST_CASE("mmu: one pause, evenly spaced pauses and a burst, in closed form") {
  SUBCASE("one pause: 0 within it, then 1 - p / w, and BMU the same since it rises") {
    PauseTimeline t({{40, 47}}, 100);
    for (int64_t w = 1; w <= 100; ++w) {
      double mmu = w <= 7 ? 0 : 1 - 7.0 / static_cast<double>(w);
      CHECK(t.minimum_utilisation(w).utilisation == doctest::Approx(mmu));
      CHECK(t.bounded_utilisation(w) == doctest::Approx(mmu));
    }
  }
  SUBCASE("evenly spaced: 8 pauses of 3 ns every 10 ns over the run") {
    PauseTimeline t(every(0, 8, 3, 10), 80);
    for (int64_t w = 1; w <= 80; ++w) {
      CHECK(t.minimum_utilisation(w).utilisation == doctest::Approx(periodic_mmu(8, 3, 10, w)));
      CHECK(t.bounded_utilisation(w) == doctest::Approx(periodic_bmu(8, 3, 10, w)));
    }
    // Between the local minima MMU rises again: BMU is not MMU there.
    CHECK(t.minimum_utilisation(10).utilisation == doctest::Approx(0.7));
    CHECK(t.bounded_utilisation(10) == doctest::Approx(1 - 6.0 / 13));
  }
  SUBCASE("a burst: 5 pauses of 4 ns 6 ns apart, then a long run of the program") {
    PauseTimeline t(every(100, 5, 4, 10), 1000);
    for (int64_t w = 1; w <= 900; ++w) {
      CHECK(t.minimum_utilisation(w).utilisation == doctest::Approx(periodic_mmu(5, 4, 10, w)));
      CHECK(t.bounded_utilisation(w) == doctest::Approx(periodic_bmu(5, 4, 10, w)));
    }
    CHECK(t.bounded_utilisation(44) == doctest::Approx(1 - 20.0 / 44));
    CHECK(t.bounded_utilisation(1000) == doctest::Approx(1 - 20.0 / 1000));
  }
}

TEST_CASE("mmu: BMU equals the least MMU at every longer window on random timelines") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<std::pair<int64_t, int64_t>> pauses;
    int64_t at = 0;
    int n = static_cast<int>(rng() % 7);
    for (int i = 0; i < n; ++i) {
      at += static_cast<int64_t>(rng() % 12);
      int64_t length = 1 + static_cast<int64_t>(rng() % 9);
      pauses.push_back({at, at + length});
      at += length;
    }
    int64_t run = at + static_cast<int64_t>(rng() % 12) + 1;
    PauseTimeline t(pauses, run);
    std::vector<double> mmu(static_cast<size_t>(run) + 1);
    for (int64_t x = 1; x <= run; ++x) mmu[static_cast<size_t>(x)] = brute_force_mmu(pauses, run, x);
    double least = 1;
    for (int64_t w = run; w >= 1; --w) {
      least = std::min(least, mmu[static_cast<size_t>(w)]);
      CHECK(t.bounded_utilisation(w) == doctest::Approx(least));
    }
  }
}
