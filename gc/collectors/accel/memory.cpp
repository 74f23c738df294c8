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

namespace {

// Field by field: copying a request whole reads it in 16-byte pieces,
// which the sender's narrower stores, just made, cannot forward (a stall
// a request).
void copy_request(MemRequest& to, const MemRequest& from) {
  to.addr = from.addr;
  to.bytes = from.bytes;
  to.write = from.write;
  to.source = from.source;
  to.tag = from.tag;
}

}  // namespace

// ---------------------------------------------------------------------------
// DRAM

DramModel::DramModel(const DramConfig& config)
    : config_(config),
      row_shift_(static_cast<unsigned>(std::countr_zero(config.row_bytes))),
      bank_shift_(static_cast<unsigned>(std::countr_zero(config.banks))),
      banks_(config.banks),
      decisions_(config.banks, kNever),
      queued_banks_((config.banks + 63) / 64) {
  entries_.reserve(config.max_in_flight);
  in_service_.reserve(2 * config.max_in_flight);
}

void DramModel::submit(const MemRequest& r, Cycle now) {
  count(r);
  uint32_t e = free_;
  if (e == kNone) {
    e = static_cast<uint32_t>(entries_.size());
    entries_.emplace_back();
  } else {
    free_ = entries_[e].next;
  }
  Entry& entry = entries_[e];
  copy_request(entry.request, r);
  entry.row = row_of(r.addr);
  entry.arrival = now;
  entry.sequence = next_sequence_++;
  entry.next = kNone;
  in_flight_++;
  full_ = in_flight_ >= config_.max_in_flight;
  unsigned b = bank_of(r.addr);
  Bank& bank = banks_[b];
  if (bank.tail != kNone) {
    entries_[bank.tail].next = e;
    bank.tail = e;
    return;  // the bank's oldest request, and so its decision, is unchanged
  }
  bank.head = bank.tail = e;
  queued_banks_[b / 64] |= uint64_t{1} << (b % 64);
  // Only this bank's decision changed, from never: the earliest moves only
  // if this one comes first (the lowest bank first among equals).
  Cycle at = decision_time(bank);
  decisions_[b] = at;
  if (at < first_decision_ || (at == first_decision_ && b < first_bank_)) {
    first_decision_ = at;
    first_bank_ = b;
  }
  update_next_event();
}

// After a decision: the decided bank's time changes, and under FIFO every
// bank's (the next request in order may sit in any).
void DramModel::update_decisions() {
  for (unsigned i = 0; i < banks_.size(); ++i) decisions_[i] = decision_time(banks_[i]);
  find_first_decision();
}

// A bank decides when it is ready and holds a request that has arrived;
// under FIFO, only the bank holding the oldest request in the controller
// may decide, so commands issue in arrival order.
Cycle DramModel::decision_time(const Bank& b) const {
  if (b.head == kNone) return kNever;
  const Entry& oldest = entries_[b.head];
  if (config_.scheduler == DramScheduler::kFifo) {
    if (oldest.sequence != fifo_next_) return kNever;
    return std::max({b.ready, oldest.arrival, fifo_ready_});
  }
  return std::max(b.ready, oldest.arrival);
}

// The earliest of the banks' decision times, found again when the
// earliest one moves later (once a decision).
// Over the banks with requests queued, the lowest first among equals;
// without branches, as which bank comes first is a coin toss to a
// predictor.
void DramModel::find_first_decision() {
  Cycle first = kNever;
  unsigned bank = first_bank_;
  for (size_t w = 0; w < queued_banks_.size(); ++w) {
    for (uint64_t bits = queued_banks_[w]; bits != 0; bits &= bits - 1) {
      auto i = static_cast<unsigned>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
      bool earlier = decisions_[i] < first;
      first = earlier ? decisions_[i] : first;
      bank = earlier ? i : bank;
    }
  }
  first_decision_ = first;
  first_bank_ = bank;
}

void DramModel::update_next_event() { next_event_ = std::min(first_decision_, next_delivery()); }

// FR-FCFS (L308-311: the unit gained from it, Rocket did not): among the
// requests that have arrived by `at`, the oldest that hits the open row,
// else the oldest.
void DramModel::decide(unsigned b, Cycle at) {
  Bank& bank = banks_[b];
  uint32_t chosen = bank.head;
  uint32_t before = kNone;  // the one queued before it
  if (config_.scheduler == DramScheduler::kFrFcfs && bank.open) {
    for (uint32_t e = bank.head, prev = kNone; e != kNone && entries_[e].arrival <= at;
         prev = e, e = entries_[e].next) {
      if (entries_[e].row == bank.row) {
        chosen = e;
        before = prev;
        break;
      }
    }
  }
  uint32_t after = entries_[chosen].next;
  (before == kNone ? bank.head : entries_[before].next) = after;
  if (bank.tail == chosen) bank.tail = before;
  if (bank.head == kNone) queued_banks_[b / 64] &= ~(uint64_t{1} << (b % 64));
  serve(bank, chosen, at);
  if (config_.scheduler == DramScheduler::kFifo) {
    fifo_next_++;
    fifo_ready_ = at;
    update_decisions();
  } else {
    decisions_[b] = decision_time(bank);
    find_first_decision();
  }
}

// Open page: the row stays open after the access. A hit needs only the
// column command; an empty bank activates first; a conflict precharges
// (no earlier than t_ras after the row's activation), then activates.
void DramModel::serve(Bank& bank, uint32_t entry, Cycle at) {
  uint64_t row = entries_[entry].row;
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
  reserve_bus(column + config_.t_cas, entry);
  stats_.busy_cycles += config_.t_burst;
}

void DramModel::reserve_bus(Cycle wanted, uint32_t entry) {
  const Cycle burst = config_.t_burst;
  size_t end = in_service_.size();
  size_t at = end;
  Cycle start = wanted;
  if (delivered_ < end && in_service_[end - 1].done > wanted) {
    // The first burst that ends after `wanted` (those that end by then
    // cannot collide), found back from the back-to-back run: a busy bus
    // has few bursts before it.
    size_t run = std::max(back_to_back_, delivered_);
    at = run;
    while (at > delivered_ && in_service_[at - 1].done > wanted) at--;
    // From it, the new burst goes after each burst it would overlap; into
    // the run, after all of it.
    while (at < end && in_service_[at].done - burst < start + burst) {
      if (at >= run) {
        start = in_service_[end - 1].done;
        at = end;
        break;
      }
      start = in_service_[at].done;
      at++;
    }
  }
  InService s{start + burst, entries_[entry].sequence, entry};
  // Equal ends (only with an empty burst) go in sequence order.
  while (at > delivered_ && in_service_[at - 1] > s) at--;
  if (at == end) {
    if (at == delivered_ || in_service_[at - 1].done != start) back_to_back_ = at;
  } else if (at <= back_to_back_) {
    back_to_back_++;
  } else {
    back_to_back_ = at + 1;
  }
  if (at == end) {
    in_service_.push_back(s);
  } else {
    in_service_.insert(in_service_.begin() + static_cast<ptrdiff_t>(at), s);
  }
}

void DramModel::deliver(Cycle now, std::vector<MemResponse>& out) {
  size_t end = in_service_.size();
  while (delivered_ < end && in_service_[delivered_].done <= now) {
    const InService& s = in_service_[delivered_++];
    Entry& e = entries_[s.entry];
    MemResponse& response = out.emplace_back();
    copy_request(response.request, e.request);
    response.at = s.done;
    e.next = free_;
    free_ = s.entry;
    in_flight_--;
  }
  if (delivered_ == end) {
    in_service_.clear();
    delivered_ = 0;
    back_to_back_ = 0;
  } else if (delivered_ >= config_.max_in_flight) {
    in_service_.erase(in_service_.begin(), in_service_.begin() + static_cast<ptrdiff_t>(delivered_));
    back_to_back_ = back_to_back_ > delivered_ ? back_to_back_ - delivered_ : 0;
    delivered_ = 0;
  }
  full_ = in_flight_ >= config_.max_in_flight;
}

void DramModel::advance(Cycle now, std::vector<MemResponse>& out) {
  while (first_decision_ <= now) decide(first_bank_, first_decision_);
  if (next_delivery() <= now) deliver(now, out);
  update_next_event();
}

// A decision due at the next response comes first at its time too
// (advance() decides, then delivers), so it is taken; one after it
// waits, as the sender may submit then.
void DramModel::settle(Cycle until) {
  while (first_decision_ != kNever && first_decision_ <= std::min(until, next_delivery()))
    decide(first_bank_, first_decision_);
  update_next_event();
}

// ---------------------------------------------------------------------------
// The ideal pipe

void IdealPipe::submit(const MemRequest& r, Cycle now) {
  count(r);
  Cycle start = std::max(now, pipe_free_);
  Cycle occupancy = (r.bytes + config_.bytes_per_cycle - 1) / config_.bytes_per_cycle;
  pipe_free_ = start + occupancy;
  stats_.busy_cycles += occupancy;
  MemResponse& response = responses_.emplace_back();
  copy_request(response.request, r);
  response.at = pipe_free_ - 1 + config_.latency;
  next_event_ = responses_.front().at;
}

void IdealPipe::advance(Cycle now, std::vector<MemResponse>& out) {
  while (!responses_.empty() && responses_.front().at <= now) {
    out.push_back(responses_.front());
    responses_.pop_front();
  }
  next_event_ = responses_.empty() ? kNever : responses_.front().at;
}

}  // namespace gc::accel
