#include "gc/collectors/markcompact/young_sizing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gc/heap/reservation.h"

namespace gc {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// Decaying averages: the newest sample's weight (HotSpot's
// AdaptiveSizePolicyWeight is 10%; a VM whose runs last seconds, not hours,
// follows its program faster).
constexpr double kWeight = 0.3;
// Deviations of padding on the survival rate (HotSpot's SurvivorPadding is 3).
constexpr double kPadding = 2;
// The least-squares fit's forgetting factor: a sample's weight halves
// after about seven collections.
constexpr double kForget = 0.9;
// A covariance this large has wound up (inputs that stopped varying):
// start the fit's uncertainty again from the prior.
constexpr double kCovarianceLimit = 1e6;
// The sizes aim below the goal by the model's misses: a decaying average
// of how far each pause fell from the model's prediction for its own
// survivors, relative to that prediction, padded by this many deviations
// (HotSpot pads its pause average by PausePadding = 1 deviation; the goal
// here is a 99th percentile, not an average). A pause costs about the same
// a surviving byte from one collection to the next only when nothing else
// runs on the machine (docs/collectors/markcompact.md, "Sizing the young
// generation", has the misses and the pauses over the goal with 2 and 3).
constexpr double kPausePadding = 3;
// The deviation assumed before the second collection.
constexpr double kPriorPauseDeviation = 0.05;
// Misses of pauses predicted far below the goal are measured against this
// share of the goal instead, so that the noise of tiny pauses does not
// count as large relative misses.
constexpr double kSmallPauseShare = 0.25;
// Copying is never free: the fitted cost per MiB is not believed below
// this (a fit from survivors that barely vary can say anything).
constexpr double kMinPerMibMs = 0.05;

// Under a goal, the most a size may grow from one collection to the next
// (HotSpot's YoungGenerationSizeIncrement is 20%): a size the model has
// not seen is approached in steps, so that a fit that momentarily
// underprices a MiB (its costs per MiB copied and promoted trade places
// when survival crosses the tenuring rule's threshold) cannot lead to a
// young generation twice what the program's pauses allow.
constexpr double kMaxGrowth = 1.2;

// Under a goal, the share of the pause aimed at that survivors kept young
// may take in the next collection (keep_limit_bytes).
constexpr double kKeptShare = 0.5;

// The prior: about what the first young collection costs two GC threads
// (docs/collectors/markcompact.md, "Sizing the young generation"). It runs
// cold (the collector's code, its deques and the old pages it promotes into
// first touched in it), several times what later ones cost; the fit
// replaces it within a few collections.
constexpr std::array<double, 4> kPriorTheta = {0.05, 1.0, 4.0, 0.05};
constexpr std::array<double, 4> kPriorVariance = {1.0, 10.0, 10.0, 1.0};

double mib(uint64_t bytes) { return static_cast<double>(bytes) / kMiB; }

}  // namespace

YoungSizing::YoungSizing(double goal_ms, uint64_t min_bytes, uint64_t max_bytes, uint64_t initial_bytes,
                         uint32_t tenure)
    : goal_ms_(goal_ms),
      tenure_(tenure),
      min_bytes_(min_bytes),
      max_bytes_(std::max(min_bytes, max_bytes)),
      theta_(kPriorTheta),
      cov_{},
      pause_deviation_(kPriorPauseDeviation) {
  for (int i = 0; i < kTerms; ++i) cov_[i][i] = kPriorVariance[i];
  if (goal_ms_ == 0) {
    young_bytes_ = std::clamp(round_down_pages(initial_bytes), min_bytes_, max_bytes_);
    return;
  }
  double room_ms = target_ms() - fixed_part_ms();
  double fits = room_ms > 0 ? room_ms / cost_per_kept_mib_ms() * kMiB : 0;
  young_bytes_ =
      std::clamp(round_down_pages(static_cast<uint64_t>(std::min(fits, static_cast<double>(initial_bytes)))),
                 min_bytes_, max_bytes_);
}

double YoungSizing::padded_survival() const {
  return std::min(1.0, survival_ + kPadding * survival_deviation_);
}

uint64_t YoungSizing::expected_survivor_bytes() const {
  if (samples_ == 0) return kept_bytes_ + young_bytes_;
  return kept_bytes_ + static_cast<uint64_t>(padded_survival() * static_cast<double>(young_bytes_));
}

double YoungSizing::target_ms() const { return goal_ms_ / (1 + kPausePadding * pause_deviation_); }

uint64_t YoungSizing::keep_limit_bytes() const {
  if (goal_ms_ == 0) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(kKeptShare * target_ms() / cost_per_kept_mib_ms() * kMiB);
}

// Clamped as a sum, not term by term: while the dirty cards barely vary
// (a program that writes few old objects), their cost is collinear with
// the fixed cost, and the fit may split the sum into a large positive and
// a large negative part (docs/collectors/markcompact.md has one seen on
// binary_trees). Clamping each part would keep the positive one
// alone, and no size would meet the goal.
double YoungSizing::fixed_part_ms() const {
  return std::max(0.0, theta_[0] + theta_[3] * dirty_cards_ / 1000);
}

// New survivors are promoted when the next collection promotes every
// survivor, else copied young; kept ones may be either, and are costed as
// promoted. A copy within the young generation is taken to cost at most a
// promotion (which is the same copy into an old-space LAB, with the card
// invariant's checks): while few objects survive, the fit cannot tell the
// cost per MiB copied from the fixed cost, and may say anything.
double YoungSizing::cost_per_new_mib_ms() const {
  return tenure_age() == 0 ? cost_per_kept_mib_ms()
                           : std::clamp(theta_[1], kMinPerMibMs, cost_per_kept_mib_ms());
}

double YoungSizing::cost_per_kept_mib_ms() const { return std::max(kMinPerMibMs, theta_[2]); }

double YoungSizing::predict_ms(uint64_t young_bytes) const {
  return fixed_part_ms() + cost_per_new_mib_ms() * padded_survival() * mib(young_bytes) +
         cost_per_kept_mib_ms() * mib(kept_bytes_);
}

void YoungSizing::note_miss(double pause_ms, double predicted_ms) {
  double miss = std::fabs(pause_ms - predicted_ms) / std::max(predicted_ms, kSmallPauseShare * goal_ms_);
  pause_deviation_ = (1 - kWeight) * pause_deviation_ + kWeight * std::min(1.0, miss);
}

double YoungSizing::fit(const Sample& s) {
  uint64_t promoted = std::min(s.promoted_bytes, s.survived_bytes);
  const std::array<double, kTerms> x = {1.0, mib(s.survived_bytes - promoted), mib(promoted),
                                        static_cast<double>(s.dirty_cards) / 1000};
  std::array<double, kTerms> px{};
  for (int i = 0; i < kTerms; ++i)
    for (int j = 0; j < kTerms; ++j) px[i] += cov_[i][j] * x[j];
  double denominator = kForget;
  for (int i = 0; i < kTerms; ++i) denominator += x[i] * px[i];
  double predicted = 0;
  for (int i = 0; i < kTerms; ++i) predicted += theta_[i] * x[i];
  double error = s.pause_ms - predicted;
  double trace = 0;
  for (int i = 0; i < kTerms; ++i) {
    theta_[i] += px[i] / denominator * error;
    for (int j = 0; j < kTerms; ++j) cov_[i][j] = (cov_[i][j] - px[i] * px[j] / denominator) / kForget;
    trace += cov_[i][i];
  }
  if (!(trace < kCovarianceLimit)) {
    cov_ = {};
    for (int i = 0; i < kTerms; ++i) cov_[i][i] = kPriorVariance[i];
  }
  return predicted;
}

YoungSizing::Decision YoungSizing::after_young(const Sample& s) {
  double predicted = fit(s);
  // The first pause is measured against the prior, not a fit.
  if (goal_ms_ > 0 && samples_ > 0) note_miss(s.pause_ms, predicted);
  // Of the new objects: what survived beyond the last collection's kept
  // ones.
  uint64_t new_survivors = s.survived_bytes - std::min(s.survived_bytes, kept_bytes_);
  uint64_t allocated = s.young_bytes - std::min(s.young_bytes, kept_bytes_);
  double rate = allocated ? std::min(1.0, static_cast<double>(new_survivors) / static_cast<double>(allocated))
                          : survival_;
  kept_bytes_ = s.kept_bytes;
  if (s.interval_ms > 0)
    overhead_ = (1 - kWeight) * overhead_ + kWeight * s.pause_ms / (s.pause_ms + s.interval_ms);
  if (samples_++ == 0) {
    survival_ = rate;
    survival_deviation_ = rate / 2;
    dirty_cards_ = static_cast<double>(s.dirty_cards);
  } else {
    survival_ = (1 - kWeight) * survival_ + kWeight * rate;
    survival_deviation_ = (1 - kWeight) * survival_deviation_ + kWeight * std::fabs(rate - survival_);
    dirty_cards_ = (1 - kWeight) * dirty_cards_ + kWeight * static_cast<double>(s.dirty_cards);
  }

  if (goal_ms_ == 0) return grow_from_survival(s);

  // The worst case: every new object survives (why not the survival rate:
  // young_sizing.h).
  Decision d;
  double room_ms = target_ms() - fixed_part_ms() - cost_per_kept_mib_ms() * mib(kept_bytes_);
  double want = room_ms > 0 ? room_ms / cost_per_new_mib_ms() * kMiB : 0;
  d.why = room_ms > 0 ? "pause goal" : "pause goal: the fixed cost and the kept survivors alone miss it";
  if (s.pause_ms > goal_ms_) {
    want = std::min(want, static_cast<double>(young_bytes_) * goal_ms_ / s.pause_ms);
    d.why = "pause over the goal";
  }
  // Throughput: not shrunk below the size whose collections' fixed part
  // alone would take a tenth of the program's time at its allocation rate
  // (shrinking further cannot shorten that part of the pause, only repeat
  // it more often).
  double throughput_floor = s.interval_ms > 0 ? static_cast<double>(allocated) / s.interval_ms *
                                                    fixed_part_ms() * (1 / kMaxFixedCostShare - 1)
                                              : 0;
  if (want < std::min(throughput_floor, static_cast<double>(young_bytes_))) {
    want = std::min(throughput_floor, static_cast<double>(young_bytes_));
    d.why = "collections' fixed cost would take over a tenth of the time: not shrunk further";
  }
  want = std::min(want, kMaxGrowth * static_cast<double>(young_bytes_));
  uint64_t most = std::min(max_bytes_, s.limit_bytes);
  young_bytes_ = std::clamp(round_down_pages(static_cast<uint64_t>(std::max(0.0, want))),
                            std::min(min_bytes_, most), most);
  d.young_bytes = young_bytes_;
  d.predicted_pause_ms = predict_ms(young_bytes_);
  return d;
}

YoungSizing::Decision YoungSizing::grow_from_survival(const Sample& s) {
  Decision d;
  d.why = "grown";
  uint64_t size = young_bytes_;
  if (!grown_ && survival_ > kPromoteAllSurvival) {
    held_promoted_ += s.promoted_bytes;
    grown_ = held_promoted_ >= kHoldVolume * max_bytes_;
    d.why = grown_ ? "promoted the most holding may: grown"
                   : "most new objects survive (a heap being built): held, survivors promoted";
  } else if (!grown_) {
    size = std::min(2 * young_bytes_, max_bytes_);
    grown_ = size == max_bytes_;
    d.why = "most new objects die: doubled";
  }
  if (grown_) size = max_bytes_;
  uint64_t most = std::min(max_bytes_, s.limit_bytes);
  young_bytes_ = std::clamp(size, std::min(min_bytes_, most), most);
  d.young_bytes = young_bytes_;
  d.predicted_pause_ms = predict_ms(young_bytes_);
  return d;
}

void YoungSizing::after_full(uint64_t kept_bytes, uint64_t old_used_bytes, uint64_t old_live_bytes) {
  kept_bytes_ = kept_bytes;
  if (goal_ms_ == 0 && old_used_bytes &&
      static_cast<double>(old_used_bytes - std::min(old_used_bytes, old_live_bytes)) >
          kPrematurePromotion * static_cast<double>(old_used_bytes))
    grown_ = true;
}

std::string YoungSizing::describe() const {
  char buf[320];
  std::snprintf(
      buf, sizeof buf,
      "model: %.3f ms + %.3f ms/MiB copied + %.3f ms/MiB promoted + %.3f ms/1000 cards, misses %.0f%% "
      "(aim %.3f ms); survival %.3f (padded %.3f), dirty cards %.0f, young GC time %.1f%%",
      theta_[0], theta_[1], theta_[2], theta_[3], 100 * pause_deviation_, target_ms(), survival_,
      padded_survival(), dirty_cards_, 100 * overhead_);
  return buf;
}

}  // namespace gc
