// Values sampled at a fixed interval of simulated time, for the report's
// pictures of a collection (memory bandwidth, queue occupancy). A long run
// keeps at most kMaxSamples: when it outgrows them, neighbours are merged
// and the interval doubles, so a mark of a billion cycles costs the report
// no more than a short one.
#pragma once

#include <cstdint>
#include <vector>

#include "gc/collectors/accel/sim.h"

namespace gc::accel {

class Timeline {
 public:
  static constexpr size_t kMaxSamples = 2048;
  // A rate is a count per `base` cycles (a wider interval's count is
  // scaled down to it); a level is a value as it stood at each sample.
  enum class Kind : uint8_t { kRate, kLevel };

  // Sampling from cycle `start`, every `base` cycles at first.
  Timeline(Kind kind, Cycle base, Cycle start)
      : kind_(kind), base_(base), interval_(base), end_(start + base) {}

  // Whether the current interval ended by cycle `now`.
  bool due(Cycle now) const { return now >= end_; }
  // Closes the current interval with its value: the count in it (a rate)
  // or the value at its end (a level).
  void close(uint64_t value) {
    values_.push_back(kind_ == Kind::kRate ? value / (interval_ / base_) : value);
    if (values_.size() == kMaxSamples) halve();  // before the next interval: it is the wider
    end_ += interval_;
  }

  const std::vector<uint64_t>& values() const { return values_; }
  Cycle interval() const { return interval_; }

 private:
  void halve() {
    for (size_t i = 0; i < values_.size() / 2; ++i)
      values_[i] = (values_[2 * i] + values_[2 * i + 1] + 1) / 2;
    values_.resize(values_.size() / 2);
    interval_ *= 2;
  }

  Kind kind_;
  Cycle base_;
  Cycle interval_;
  Cycle end_;
  std::vector<uint64_t> values_;
};

}  // namespace gc::accel
