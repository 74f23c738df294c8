#include "gc/observe/mmu.h"

#include <algorithm>
#include <cmath>

#include "gc/observe/recorder.h"

namespace gc::observe {

// The host's mutator time between collections stays; each pause takes its
// own length (simulated where modelled), moving what follows it.
PauseTimeline PauseTimeline::of(const std::vector<CollectionRecord>& collections, int64_t run_ns) {
  std::vector<std::pair<int64_t, int64_t>> pauses;
  int64_t shift = 0, last_end = 0;
  for (const CollectionRecord& c : collections) {
    int64_t start = c.start_ns + shift;
    pauses.push_back({start, start + c.pause_ns()});
    shift += c.pause_ns() - c.host_ns();
    last_end = c.end_ns;
  }
  return PauseTimeline(std::move(pauses), std::max(run_ns, last_end) + shift);
}

PauseTimeline::PauseTimeline(std::vector<std::pair<int64_t, int64_t>> pauses, int64_t run_ns)
    : pauses_(std::move(pauses)), run_ns_(run_ns) {
  int64_t sum = 0;
  for (const auto& [start, end] : pauses_) {
    paused_until_.push_back(sum);
    sum += end - start;
  }
}

int64_t PauseTimeline::shortest_pause_ns() const {
  int64_t shortest = run_ns_;
  for (const auto& [start, end] : pauses_)
    if (end > start) shortest = std::min(shortest, end - start);
  return shortest;
}

int64_t PauseTimeline::paused_before(int64_t t) const {
  // The last pause that starts before t: all earlier pauses, and its part before t.
  auto it = std::upper_bound(pauses_.begin(), pauses_.end(), t,
                             [](int64_t v, const std::pair<int64_t, int64_t>& p) { return v < p.first; });
  if (it == pauses_.begin()) return 0;
  size_t i = static_cast<size_t>(it - pauses_.begin()) - 1;
  return paused_until_[i] + std::min(t, pauses_[i].second) - pauses_[i].first;
}

int64_t PauseTimeline::paused_between(int64_t from, int64_t to) const {
  return paused_before(to) - paused_before(from);
}

// The pause time in a window is piecewise linear in where the window
// starts, so its maximum is at a window that starts where a pause starts
// or ends where a pause ends (or at either end of the run).
PauseTimeline::Window PauseTimeline::minimum_utilisation(int64_t window_ns) const {
  window_ns = std::clamp<int64_t>(window_ns, 1, std::max<int64_t>(run_ns_, 1));
  Window worst;
  int64_t most = -1;
  auto consider = [&](int64_t start) {
    start = std::clamp<int64_t>(start, 0, run_ns_ - window_ns);
    int64_t paused = paused_between(start, start + window_ns);
    if (paused > most) {
      most = paused;
      worst.start_ns = start;
    }
  };
  consider(0);
  consider(run_ns_ - window_ns);
  for (const auto& [start, end] : pauses_) {
    consider(start);
    consider(end - window_ns);
  }
  worst.utilisation = 1 - static_cast<double>(most) / static_cast<double>(window_ns);
  return worst;
}

std::vector<size_t> PauseTimeline::pauses_in(int64_t start_ns, int64_t window_ns) const {
  std::vector<size_t> in;
  for (size_t i = 0; i < pauses_.size(); ++i)
    if (pauses_[i].first < start_ns + window_ns && pauses_[i].second > start_ns) in.push_back(i);
  return in;
}

std::vector<UtilisationPoint> utilisation_curve(const PauseTimeline& timeline, unsigned points) {
  std::vector<UtilisationPoint> curve;
  if (timeline.empty() || timeline.run_ns() <= 0 || points < 2) return curve;
  double lo = std::log(static_cast<double>(std::max<int64_t>(timeline.shortest_pause_ns(), 1)));
  double hi = std::log(static_cast<double>(timeline.run_ns()));
  for (unsigned k = 0; k < points; ++k) {
    double window = std::exp(lo + (hi - lo) * k / (points - 1));
    double mmu = timeline.minimum_utilisation(static_cast<int64_t>(window)).utilisation;
    curve.push_back({window / 1e6, mmu, mmu});
  }
  for (size_t k = curve.size() - 1; k-- > 0;) curve[k].bmu = std::min(curve[k].mmu, curve[k + 1].bmu);
  return curve;
}

}  // namespace gc::observe
