// Minimum mutator utilisation (Cheng and Blelloch, PLDI 2001): for a window
// of w ms, the smallest share of any w ms of the run in which the program,
// not the collector, ran. MMU(w) rises from 0 (a window inside the longest
// pause) to the run's mutator share (a window as long as the run). Its
// bounded form BMU(w) is the smallest MMU of any window at least w long,
// so that the curve never falls as the window grows.
//
// The run is a timeline of pauses: each collection's pause at its place
// among the mutator's time. A collection whose pause is modelled (accel)
// takes its simulated time there, not the host's time to simulate it, so
// that the curve is the modelled system's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gc::observe {

struct CollectionRecord;

class PauseTimeline {
 public:
  // Pauses [start, end) in ns, in order and apart, in a run of run_ns.
  PauseTimeline(std::vector<std::pair<int64_t, int64_t>> pauses, int64_t run_ns);
  // The collections in order, in a run of run_ns of the host's time.
  static PauseTimeline of(const std::vector<CollectionRecord>& collections, int64_t run_ns);

  int64_t run_ns() const { return run_ns_; }
  bool empty() const { return pauses_.empty(); }
  int64_t shortest_pause_ns() const;

  struct Window {
    double utilisation = 1;  // 0..1
    int64_t start_ns = 0;    // where the worst window of this size starts
  };
  // MMU at a window of `window_ns` (at most the run's length).
  Window minimum_utilisation(int64_t window_ns) const;
  // BMU at `window_ns`: the least MMU at that window or any longer one.
  double bounded_utilisation(int64_t window_ns) const;
  // The indexes of the pauses that overlap [start, start + window).
  std::vector<size_t> pauses_in(int64_t start_ns, int64_t window_ns) const;
  // Pause i's [start, end) on the timeline.
  std::pair<int64_t, int64_t> pause(size_t i) const { return pauses_[i]; }

 private:
  class Cursor;
  // The pause time in [from, to).
  int64_t paused_between(int64_t from, int64_t to) const;
  // The pause time in [0, t).
  int64_t paused_before(int64_t t) const;

  std::vector<std::pair<int64_t, int64_t>> pauses_;
  std::vector<int64_t> paused_until_;  // paused_until_[i]: pause time in [0, pauses_[i].first)
  int64_t run_ns_;
};

struct UtilisationPoint {
  double window_ms;
  double mmu;  // 0..1
  double bmu;  // 0..1, the least MMU at this window or any longer one
};
// The curve at `points` window sizes spaced evenly in log scale, from the
// shortest pause to the whole run; empty without pauses.
std::vector<UtilisationPoint> utilisation_curve(const PauseTimeline& timeline, unsigned points);

}  // namespace gc::observe
