// The minimum-heap search (vm/min_heap.h) driven by a fake runner whose
// program needs exactly a known heap: the answer must bracket it within the
// resolution, and every other end (a failure, a hang, a program that needs
// more than the ceiling) must say so.
#include <doctest/doctest.h>

#include <cstdint>

#include "gc/options.h"
#include "vm/min_heap.h"

using vm::find_min_heap;
using vm::HeapResolution;
using vm::MinHeap;
using vm::Outcome;
using vm::Probe;
using vm::SearchBounds;

namespace {

constexpr uint64_t kFloor = 256 << 10;
constexpr uint64_t kCeiling = 64ull << 30;

// A program that completes at `need` bytes or more and runs out of memory
// below.
vm::RunAt needs(uint64_t need) {
  return [need](uint64_t heap, size_t, const std::string&) {
    Probe p;
    p.outcome = heap >= need ? Outcome::kCompleted : Outcome::kOutOfMemory;
    p.status = heap >= need ? 0 : 70;
    return p;
  };
}

SearchBounds bounds(HeapResolution r) { return {.floor = kFloor, .ceiling = kCeiling, .resolution = r}; }

}  // namespace

TEST_CASE("min heap: a resolution of one byte finds the need exactly") {
  for (uint64_t need : {kFloor + 1, uint64_t{300000}, uint64_t{5 << 20}, uint64_t{123456789}, kCeiling - 7}) {
    MinHeap m = find_min_heap(bounds({.bytes = 1}), needs(need));
    CHECK(m.answer == MinHeap::Answer::kFound);
    CHECK(m.min_heap == need);
    CHECK(m.fails_at == need - 1);
  }
}

TEST_CASE("min heap: the answer brackets the need within the resolution") {
  for (HeapResolution r : {HeapResolution{.bytes = 64 << 10}, HeapResolution{.fraction = 0.01},
                           HeapResolution{.fraction = 0.5}}) {
    for (uint64_t need = kFloor + 1; need < (1ull << 32); need = need * 3 + 12345) {
      MinHeap m = find_min_heap(bounds(r), needs(need));
      REQUIRE(m.answer == MinHeap::Answer::kFound);
      CHECK(m.min_heap >= need);
      CHECK(m.fails_at < need);
      CHECK(m.min_heap - m.fails_at <= r.at(m.min_heap));
      // Every run's outcome is the fake's, and the answer is one of them.
      bool ran_answer = false;
      for (const vm::ProbeRecord& run : m.runs) ran_answer |= run.heap == m.min_heap;
      CHECK(ran_answer);
    }
  }
}

TEST_CASE("min heap: a program that fits the floor takes one run") {
  MinHeap m = find_min_heap(bounds({.fraction = 0.01}), needs(1000));
  CHECK(m.answer == MinHeap::Answer::kFound);
  CHECK(m.min_heap == kFloor);
  CHECK(m.fails_at == 0);
  CHECK(m.runs.size() == 1);
}

TEST_CASE("min heap: out of memory at the ceiling needs more than the machine has") {
  MinHeap m = find_min_heap(bounds({.fraction = 0.01}), needs(kCeiling + 1));
  CHECK(m.answer == MinHeap::Answer::kNeedsMore);
  CHECK(m.runs.back().heap == kCeiling);
  // Doubling from 256K reaches 64G in 18 steps: 19 runs, no more.
  CHECK(m.runs.size() == 19);
}

TEST_CASE("min heap: a failure stops the search and is named") {
  auto fails_at_small = [](uint64_t heap, size_t, const std::string&) {
    Probe p;
    if (heap < (4 << 20)) {
      p.outcome = Outcome::kFailed;
      p.status = 70;
      p.detail = "the run exited 70: error: boom";
    } else {
      p.outcome = Outcome::kCompleted;
    }
    return p;
  };
  MinHeap m = find_min_heap(bounds({.fraction = 0.01}), fails_at_small);
  CHECK(m.answer == MinHeap::Answer::kFailed);
  CHECK(m.runs.size() == 1);
  CHECK(m.failure.find("error: boom") != std::string::npos);
  CHECK(m.failure.find("not a question of heap size") != std::string::npos);
}

TEST_CASE("min heap: a hang before any completion ends the search; after one, it is too small") {
  auto hangs = [](uint64_t, size_t, const std::string&) {
    Probe p;
    p.outcome = Outcome::kTimedOut;
    return p;
  };
  MinHeap hung = find_min_heap(bounds({.fraction = 0.01}), hangs);
  CHECK(hung.answer == MinHeap::Answer::kFailed);
  CHECK(hung.runs.size() == 1);
  CHECK(hung.failure.find("time limit") != std::string::npos);

  // Thrashes (times out) from 1.5M to 2M and runs out of memory below:
  // doubling meets 1M and 2M, bisection the thrashing between.
  constexpr uint64_t kNeed = 2 << 20;
  auto thrashes = [](uint64_t heap, size_t, const std::string&) {
    Probe p;
    p.outcome = heap >= kNeed       ? Outcome::kCompleted
                : heap >= (3 << 19) ? Outcome::kTimedOut
                                    : Outcome::kOutOfMemory;
    return p;
  };
  MinHeap m = find_min_heap(bounds({.bytes = 1}), thrashes);
  CHECK(m.answer == MinHeap::Answer::kFound);
  bool timed_out = false;
  for (const vm::ProbeRecord& run : m.runs) timed_out |= run.probe.outcome == Outcome::kTimedOut;
  CHECK(timed_out);
  CHECK(m.min_heap == kNeed);
}

TEST_CASE("min heap: a completing run with another status is a failure") {
  auto status_moves = [](uint64_t heap, size_t, const std::string&) {
    Probe p;
    // Doubling completes first at 1M with 0; bisection meets 3 below.
    p.outcome = heap >= (640 << 10) ? Outcome::kCompleted : Outcome::kOutOfMemory;
    p.status = heap >= (1 << 20) ? 0 : 3;
    return p;
  };
  MinHeap m = find_min_heap(bounds({.fraction = 0.01}), status_moves);
  CHECK(m.answer == MinHeap::Answer::kFailed);
  CHECK(m.failure.find("exited 3") != std::string::npos);
}

TEST_CASE("min heap: resolutions and multiples refuse what is not one") {
  CHECK(vm::parse_resolution("1%")->fraction == doctest::Approx(0.01));
  CHECK(vm::parse_resolution("64K")->bytes == 64 << 10);
  for (const char* bad : {"", "%", "0%", "0.01%", "51%", "-1%", "1e2%", "nan%", "inf%", "1.%", ".5%", "512",
                          "x", "2x", "1e999"})
    CHECK_MESSAGE(!vm::parse_resolution(bad), bad);
}

TEST_CASE("heap multiples: a number from 1 to 100 and x, nothing else") {
  CHECK(*gc::parse_heap_multiple("2.5x") == doctest::Approx(2.5));
  CHECK(*gc::parse_heap_multiple("1x") == 1);
  CHECK(*gc::parse_heap_multiple("100x") == 100);
  for (const char* bad : {"0x", "0.5x", "1e999x", "x", "-2x", "nanx", "infx", "2", "2X", "2xx", "100.5x",
                          "1e1x", ".5x", "2.x", "1.2.3x", " 2x", "2 x", "+2x", "00000000000002x"})
    CHECK_MESSAGE(!gc::parse_heap_multiple(bad), bad);
}
