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

// paused_before at points that never go back, without a search each time.
class PauseTimeline::Cursor {
 public:
  explicit Cursor(const PauseTimeline& timeline) : t_(timeline) {}
  int64_t paused_before(int64_t at) {
    while (next_ < t_.pauses_.size() && t_.pauses_[next_].first < at) ++next_;
    if (next_ == 0) return 0;
    const auto& [start, end] = t_.pauses_[next_ - 1];
    return t_.paused_until_[next_ - 1] + std::min(at, end) - start;
  }

 private:
  const PauseTimeline& t_;
  size_t next_ = 0;  // the pauses before it start before the last point asked
};

// The pause time in a window is piecewise linear in where the window
// starts, so its maximum is at a window that starts where a pause starts
// or ends where a pause ends (or at either end of the run). Each kind of
// start rises with the pauses, so one pass of two cursors takes each.
PauseTimeline::Window PauseTimeline::minimum_utilisation(int64_t window_ns) const {
  window_ns = std::clamp<int64_t>(window_ns, 1, std::max<int64_t>(run_ns_, 1));
  Window worst;
  int64_t most = -1;
  auto consider = [&](int64_t start, Cursor& from, Cursor& to) {
    start = std::clamp<int64_t>(start, 0, run_ns_ - window_ns);
    int64_t paused = to.paused_before(start + window_ns) - from.paused_before(start);
    if (paused > most) {
      most = paused;
      worst.start_ns = start;
    }
  };
  Cursor from(*this), to(*this);
  consider(0, from, to);
  for (const auto& [start, end] : pauses_) consider(start, from, to);
  Cursor from_end(*this), to_end(*this);
  for (const auto& [start, end] : pauses_) consider(end - window_ns, from_end, to_end);
  consider(run_ns_ - window_ns, from_end, to_end);
  worst.utilisation = 1 - static_cast<double>(most) / static_cast<double>(window_ns);
  return worst;
}

// A window longer than `window_ns` at its least utilisation starts where a
// pause starts and ends where one ends: moving an end that lies in mutator
// time inwards, or one inside a pause outwards, lowers it. So BMU is the
// least of MMU(window) and of those windows' utilisations, found by
// Dinkelbach's method: each round takes the window that minimises
// mutator - lambda * length, whose utilisation becomes lambda, until none
// is below lambda. Lambda falls strictly among finitely many windows, so
// the rounds end; each is one pass over the pauses.
double PauseTimeline::bounded_utilisation(int64_t window_ns) const {
  window_ns = std::clamp<int64_t>(window_ns, 1, std::max<int64_t>(run_ns_, 1));
  Window at_window = minimum_utilisation(window_ns);
  // lambda as the fraction mutator / length, compared exactly.
  int64_t lambda_mutator = window_ns - paused_between(at_window.start_ns, at_window.start_ns + window_ns);
  int64_t lambda_length = window_ns;
  auto mutator_before = [&](size_t i, bool at_end) {
    int64_t t = at_end ? pauses_[i].second : pauses_[i].first;
    return t - paused_until_[i] - (at_end ? pauses_[i].second - pauses_[i].first : 0);
  };
  for (;;) {
    double lambda = static_cast<double>(lambda_mutator) / static_cast<double>(lambda_length);
    // Over windows [start of pause i, end of pause j) at least window_ns
    // long: the least mutator(end) - mutator(start) - lambda * length.
    double least = 0;
    int64_t best_mutator = 0, best_length = 0;
    double best_start_value = 0;
    size_t best_start = 0;
    bool have_start = false;
    size_t next_start = 0;
    for (size_t j = 0; j < pauses_.size(); ++j) {
      int64_t end = pauses_[j].second;
      for (; next_start <= j && pauses_[next_start].first <= end - window_ns; ++next_start) {
        double value = static_cast<double>(mutator_before(next_start, false)) -
                       lambda * static_cast<double>(pauses_[next_start].first);
        if (!have_start || value > best_start_value) {
          best_start_value = value;
          best_start = next_start;
          have_start = true;
        }
      }
      if (!have_start) continue;
      double value =
          static_cast<double>(mutator_before(j, true)) - lambda * static_cast<double>(end) - best_start_value;
      if (value < least) {
        least = value;
        best_mutator = mutator_before(j, true) - mutator_before(best_start, false);
        best_length = end - pauses_[best_start].first;
      }
    }
    if (best_length == 0 || static_cast<__int128>(best_mutator) * lambda_length >=
                                static_cast<__int128>(lambda_mutator) * best_length)
      break;
    lambda_mutator = best_mutator;
    lambda_length = best_length;
  }
  return static_cast<double>(lambda_mutator) / static_cast<double>(lambda_length);
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
    auto window_ns = static_cast<int64_t>(window);
    curve.push_back({window / 1e6, timeline.minimum_utilisation(window_ns).utilisation,
                     timeline.bounded_utilisation(window_ns)});
  }
  return curve;
}

}  // namespace gc::observe
