#include "gc/collectors/accel/memory.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace gc::accel {

const char* source_name(Source s) {
  switch (s) {
    case Source::kMarker:
      return "marker";
    case Source::kTracer:
      return "tracer";
    case Source::kSpill:
      return "spill";
    case Source::kSweeper:
      return "sweeper";
    case Source::kWalker:
      return "page walker";
    case Source::kCpu:
      return "cpu";
  }
  return "?";
}

void stalled(const char* unit, Cycle at) {
  std::fprintf(stderr, "vm: internal error: accel's %s stalled with work left at cycle %llu\n", unit,
               static_cast<unsigned long long>(at));
  std::abort();
}

uint64_t MemoryStats::total_requests() const {
  return std::accumulate(requests.begin(), requests.end(), uint64_t{0});
}

void MemoryModel::count(const MemRequest& r) {
  submitted_++;
  auto s = static_cast<unsigned>(r.source);
  stats_.requests[s]++;
  stats_.bytes[s] += r.bytes;
  (r.write ? stats_.writes : stats_.reads)++;
}

// ---------------------------------------------------------------------------
// DRAM

DramModel::DramModel(const DramConfig& config)
    : config_(config),
      row_shift_(static_cast<unsigned>(std::countr_zero(config.row_bytes))),
      bank_shift_(static_cast<unsigned>(std::countr_zero(config.banks))),
      banks_(config.banks),
      decisions_(config.banks, kNever) {}

void DramModel::submit(const MemRequest& r, Cycle now) {
  count(r);
  in_flight_++;
  unsigned b = bank_of(r.addr);
  banks_[b].queue.push_back(Pending{r, now, next_sequence_++});
  if (banks_[b].queue.size() == 1 || config_.scheduler == DramScheduler::kFifo)
    set_decision(b, decision_time(banks_[b]));
}

// After a decision: the decided bank's time changes, and under FIFO every
// bank's (the next request in order may sit in any).
void DramModel::update_decisions() {
  for (unsigned i = 0; i < banks_.size(); ++i) set_decision(i, decision_time(banks_[i]));
}

// A bank decides when it is ready and holds a request that has arrived;
// under FIFO, only the bank holding the oldest request in the controller
// may decide, so commands issue in arrival order.
Cycle DramModel::decision_time(const Bank& b) const {
  if (b.queue.empty()) return kNever;
  const Pending& oldest = b.queue.front();
  if (config_.scheduler == DramScheduler::kFifo && oldest.sequence != fifo_next_) return kNever;
  return std::max(
      {b.ready, oldest.arrival, config_.scheduler == DramScheduler::kFifo ? fifo_ready_ : Cycle{0}});
}

Cycle DramModel::next_decision(unsigned& bank) const {
  bank = first_bank_;
  return first_decision_;
}

// The earliest of the banks' decision times, found again whenever one
// changes (a few times a request; the queries come every cycle).
void DramModel::set_decision(unsigned bank, Cycle at) {
  decisions_[bank] = at;
  first_decision_ = kNever;
  for (unsigned i = 0; i < decisions_.size(); ++i) {
    if (decisions_[i] < first_decision_) {
      first_decision_ = decisions_[i];
      first_bank_ = i;
    }
  }
}

Cycle DramModel::next_event() const {
  unsigned bank = 0;
  Cycle t = next_decision(bank);
  if (!in_service_.empty()) t = std::min(t, in_service_.top().done);
  return t;
}

// FR-FCFS (L308-311: the unit gained from it, Rocket did not): among the
// requests that have arrived by `at`, the oldest that hits the open row,
// else the oldest.
void DramModel::decide(Bank& bank, Cycle at) {
  auto chosen = bank.queue.begin();
  if (config_.scheduler == DramScheduler::kFrFcfs && bank.open) {
    for (auto it = bank.queue.begin(); it != bank.queue.end() && it->arrival <= at; ++it) {
      if (row_of(it->request.addr) == bank.row) {
        chosen = it;
        break;
      }
    }
  }
  Pending p = *chosen;
  bank.queue.erase(chosen);
  serve(bank, p, at);
  if (config_.scheduler == DramScheduler::kFifo) {
    fifo_next_++;
    fifo_ready_ = at;
    update_decisions();
  } else {
    set_decision(static_cast<unsigned>(&bank - banks_.data()), decision_time(bank));
  }
}

// Open page: the row stays open after the access. A hit needs only the
// column command; an empty bank activates first; a conflict precharges
// (no earlier than t_ras after the row's activation), then activates.
void DramModel::serve(Bank& bank, const Pending& p, Cycle at) {
  uint64_t row = row_of(p.request.addr);
  Cycle column;
  if (bank.open && bank.row == row) {
    stats_.row_hits++;
    column = at;
  } else {
    Cycle activate = at;
    if (bank.open) {
      stats_.row_conflicts++;
      activate = std::max(at, bank.activated_at + config_.t_ras) + config_.t_rp;
    } else {
      stats_.row_empty++;
    }
    bank.activated_at = activate;
    column = activate + config_.t_rcd;
  }
  bank.open = true;
  bank.row = row;
  bank.ready = column + config_.t_burst;
  Cycle data = reserve_bus(column + config_.t_cas);
  stats_.busy_cycles += config_.t_burst;
  in_service_.push(InService{data + config_.t_burst, p.sequence, p.request});
}

// The earliest burst slot at or after `wanted` that overlaps no burst
// already on the bus.
Cycle DramModel::reserve_bus(Cycle wanted) {
  Cycle start = wanted;
  auto it = std::lower_bound(bursts_.begin(), bursts_.end(),
                             start >= config_.t_burst ? start - config_.t_burst + 1 : 0);
  for (; it != bursts_.end() && *it < start + config_.t_burst; ++it) start = *it + config_.t_burst;
  bursts_.insert(it, start);
  return start;
}

void DramModel::advance(Cycle now, std::vector<MemResponse>& out) {
  for (;;) {
    unsigned bank = 0;
    Cycle at = next_decision(bank);
    if (at > now) break;
    decide(banks_[bank], at);
  }
  while (!in_service_.empty() && in_service_.top().done <= now) {
    const InService& s = in_service_.top();
    out.push_back(MemResponse{s.request, s.done});
    in_service_.pop();
    in_flight_--;
  }
  // Every decision due by `now` is taken, so a new burst starts after it:
  // bursts that ended by then cannot collide with one.
  auto ended =
      std::find_if(bursts_.begin(), bursts_.end(), [&](Cycle b) { return b + config_.t_burst > now; });
  bursts_.erase(bursts_.begin(), ended);
}

// ---------------------------------------------------------------------------
// The ideal pipe

void IdealPipe::submit(const MemRequest& r, Cycle now) {
  count(r);
  Cycle start = std::max(now, pipe_free_);
  Cycle occupancy = (r.bytes + config_.bytes_per_cycle - 1) / config_.bytes_per_cycle;
  pipe_free_ = start + occupancy;
  stats_.busy_cycles += occupancy;
  responses_.push_back(MemResponse{r, pipe_free_ - 1 + config_.latency});
}

void IdealPipe::advance(Cycle now, std::vector<MemResponse>& out) {
  while (!responses_.empty() && responses_.front().at <= now) {
    out.push_back(responses_.front());
    responses_.pop_front();
  }
}

}  // namespace gc::accel
