// The young generation's size, decided after every young collection, in
// the spirit of HotSpot's adaptive size policy for the Parallel collector
// (-XX:MaxGCPauseMillis). Its model of a young pause:
//
//   pause = fixed + per_copied_mib * survivors copied within the young
//           generation (MiB) + per_promoted_mib * survivors promoted (MiB)
//           + per_kcard * dirty cards (thousands)
//
// fitted by recursive least squares with forgetting, so that it follows a
// program whose costs change. A promoted byte costs more than one copied
// young (an old-space LAB, the card invariant's checks), and a small young
// generation promotes most of what it copies, so one cost per surviving
// byte would be the average of two and wrong for both; predictions take a
// copy to cost at most a promotion, which the fit cannot tell while few
// objects are copied. The next collection's survivors are those kept
// young by this one (below --tenure: promoted or copied again, costed as
// promoted) and, in the worst case, every young byte allocated meanwhile:
// promoted if the next collection promotes every survivor, else copied.
// Dirty cards: their decaying average. The next size is the largest whose
// worst-case pause meets the goal less the model's misses (target_ms: the
// goal divided by one plus three times the decaying relative deviation of
// pauses from their predictions, as HotSpot pads its pause average),
// within [min, max], growing at most 20% per collection, and shrinking at
// once after a pause over the goal.
//
// Why the worst case and not the survival rate of new objects (a decaying
// average padded by its deviation, as HotSpot's policy sizes): survival
// jumps. A program that builds a structure larger than the young
// generation finds all of it alive at once after collections that found
// almost nothing, and a size fitted to the average then costs one pause
// of several times the goal. Sized for the worst case, the young
// generation is smaller and collected more often, which costs little: each
// collection's fixed cost is small and a small young generation stays in
// the caches (docs/collectors/markcompact.md, "Sizing the young
// generation", has the survival jump and the runs' times).
// The survival rate (decaying, padded) still decides the tenuring
// threshold, which sets whether new survivors are costed as copied or
// promoted, and the survivors expected by the promotion area's touch.
//
// Throughput bounds it where shrinking cannot help the goal: the young
// generation does not shrink below the size at which its collections'
// fixed part alone (the model's fixed cost and dirty cards) would take a
// tenth of the program's time, at the allocation rate of the last interval
// between collections. A machine busy enough to lengthen every pause would
// otherwise shrink it to the smallest and collect many times as often, for
// pauses no shorter. Where the pause grows with the survivors the goal
// comes first, as in HotSpot's policy. The first size is the one the prior
// model says meets the goal were every byte promoted (a heap being built),
// within what --young allows.
//
// The tenuring threshold adapts too, as HotSpot's does: while most new
// objects survive (a heap being built), keeping them young only copies
// them twice, so the next collection promotes every survivor; otherwise
// the threshold is --tenure's.
// And as HotSpot's survivor spaces overflow into the old generation, a
// collection keeps at most keep_limit_bytes young (what the next one can
// copy again in half the pause it aims at) and promotes the rest: a jump
// in survival costs one pause over the goal, not a run of them.
//
// Without a goal (goal_ms 0) the first collections size it from survival
// instead of a fixed start: it starts small and doubles after each young
// collection whose new objects mostly died, up to --young's size, where
// it stays. While most new objects survive (the program building its
// heap) it holds, and every survivor is promoted, so that the heap being
// built is copied once, a small young generation at a time, rather than
// in a few long pauses. Holding is wrong when what it promotes would have
// died in a young generation of full size (structures larger than the
// small one but short-lived), and survival at the small size cannot tell
// the two apart (nor can it at full size: GCOld's new objects mostly
// survive one collection there too, and die before the next). So holding
// belongs to the program's start and is bounded: it ends once
// kHoldVolume times --young's size has been promoted while holding, or
// when a full collection finds most of the old generation dead (objects
// promoted before they could die young).
//
// A pure function of the samples it is fed: tests give it pauses and
// survival directly (tests/unit/test_markcompact.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>

namespace gc {

class YoungSizing {
 public:
  struct Sample {
    double pause_ms = 0;
    uint64_t young_bytes = 0;     // in the young generation at the collection: kept ones and new ones
    uint64_t survived_bytes = 0;  // copied within it and promoted out of it
    uint64_t promoted_bytes = 0;  // of those, promoted
    uint64_t dirty_cards = 0;     // old-to-young cards scanned as roots
    uint64_t kept_bytes = 0;      // survivors left in the young generation
    // The program's time since the last young collection ended (0: none
    // before this one).
    double interval_ms = 0;
    // The most room for new objects the heap allows now (--heap beside the
    // other generations); the decision stays within it.
    uint64_t limit_bytes = std::numeric_limits<uint64_t>::max();
  };
  struct Decision {
    uint64_t young_bytes = 0;  // room for new objects until the next decision
    double predicted_pause_ms = 0;
    const char* why = "";  // one of the reasons below, for --gc-log=debug
  };

  // goal_ms > 0: a pause goal; 0: none (grown from survival). Bytes are a
  // semispace's, page multiples; the first size is at most initial_bytes,
  // within [min, max]. tenure: --tenure's.
  YoungSizing(double goal_ms, uint64_t min_bytes, uint64_t max_bytes, uint64_t initial_bytes,
              uint32_t tenure);

  Decision after_young(const Sample& s);
  // A full collection left kept_bytes of survivors young, and found
  // old_live_bytes of the old_used_bytes the old generation held.
  void after_full(uint64_t kept_bytes, uint64_t old_used_bytes, uint64_t old_live_bytes);

  double goal_ms() const { return goal_ms_; }
  // Without a goal: whether the young generation has reached its size.
  bool grown() const { return grown_; }
  uint64_t young_bytes() const { return young_bytes_; }
  // The model as it stands (for the log and the tests).
  double fixed_ms() const { return theta_[0]; }
  double per_copied_mib_ms() const { return theta_[1]; }
  double per_promoted_mib_ms() const { return theta_[2]; }
  double per_kcard_ms() const { return theta_[3]; }
  double survival() const { return survival_; }
  // The share of time young collections take (decaying average, for the
  // log).
  double overhead() const { return overhead_; }
  // The most of the program's time the collections' fixed part may take
  // before the young generation stops shrinking.
  static constexpr double kMaxFixedCostShare = 0.1;
  // The next young collection's tenuring threshold, at most --tenure's.
  uint32_t tenure_age() const { return survival_ > kPromoteAllSurvival && !grown_ ? 0 : tenure_; }
  // The survival rate of new objects above which every survivor is
  // promoted (and, without a goal, the young generation does not grow).
  static constexpr double kPromoteAllSurvival = 0.5;
  // Without a goal: the share of the old generation a full collection
  // finds dead above which holding the young generation small stops.
  static constexpr double kPrematurePromotion = 0.5;
  // Without a goal: the most bytes promoted while holding, in units of
  // the full size.
  static constexpr uint64_t kHoldVolume = 4;
  double padded_survival() const;
  // The pause the sizes aim at: the goal less the model's misses.
  double target_ms() const;
  // The survivors a young collection may keep young (survivor overflow,
  // promotion_lab.h): under a goal, as many as the next collection can
  // copy again in half the pause it aims at; without one, no limit.
  uint64_t keep_limit_bytes() const;
  // The decaying relative deviation of pauses from the model's predictions.
  double pause_deviation() const { return pause_deviation_; }
  // The survivors the next young collection is expected to find: those the
  // last one kept young and the new objects at the padded survival rate
  // (every byte, before the first collection).
  uint64_t expected_survivor_bytes() const;
  // The pause the model predicts after young_bytes more are allocated.
  double predict_ms(uint64_t young_bytes) const;
  // "model: 0.08 ms + 1.1 ms/MiB copied + ..." for --gc-log=debug.
  std::string describe() const;

 private:
  static constexpr int kTerms = 4;
  void note_miss(double pause_ms, double predicted_ms);
  // Fits the sample; returns what the model predicted for it before.
  double fit(const Sample& s);
  Decision grow_from_survival(const Sample& s);
  // The model's costs as predictions use them: a pause's part that does
  // not grow with survivors (fixed and dirty cards), and the costs per MiB
  // of new survivors and of those kept young by the last collection.
  double fixed_part_ms() const;
  double cost_per_new_mib_ms() const;
  double cost_per_kept_mib_ms() const;

  double goal_ms_;
  uint32_t tenure_;
  uint64_t min_bytes_, max_bytes_, young_bytes_;
  uint64_t samples_ = 0;
  // Recursive least squares over x = [1, copied MiB, promoted MiB, dirty
  // kcards].
  std::array<double, kTerms> theta_;
  std::array<std::array<double, kTerms>, kTerms> cov_;
  double pause_deviation_;
  double survival_ = 0, survival_deviation_ = 0, dirty_cards_ = 0;
  uint64_t kept_bytes_ = 0;  // survivors the last collection left young
  double overhead_ = 0;
  // Without a goal, set once the young generation reaches its size (or
  // holding it small promoted what died soon); always false with one.
  bool grown_ = false;
  uint64_t held_promoted_ = 0;  // promoted while holding
};

}  // namespace gc
