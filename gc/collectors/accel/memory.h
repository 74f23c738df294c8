// The memory behind the GC unit and the CPU baseline: the paper's DRAM
// model (Table I, L270-278: a single rank of DDR3-2000, 14-14-14-47 ns,
// 8 banks, open page, FR-FCFS with 16 or 8 requests in flight) or its
// ideal pipe (L306: 1-cycle latency, 8 GB/s). Discrete-event: a sender
// submits requests at the current cycle, the simulation loop asks each
// model for its next event and advances it there, and responses come
// back in the order they arrive.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <vector>

#include "gc/collectors/accel/sim.h"

namespace gc::accel {

// What a memory model counts, by source and in total (the report's
// "requests by source" and the DRAM row counters).
struct MemoryStats {
  std::array<uint64_t, kSourceCount> requests{};
  std::array<uint64_t, kSourceCount> bytes{};
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t row_hits = 0;       // the bank had the row open
  uint64_t row_empty = 0;      // the bank had no row open: activate
  uint64_t row_conflicts = 0;  // another row open: precharge, then activate
  uint64_t busy_cycles = 0;    // cycles the data bus (or the pipe) carried data

  uint64_t total_requests() const;
  uint64_t activations() const { return row_empty + row_conflicts; }
};

class MemoryModel {
 public:
  virtual ~MemoryModel() = default;

  // Whether a request submitted now would be taken: the controller holds
  // at most its limit of requests, queued or in service, and a sender
  // that finds it full waits (back-pressure).
  virtual bool can_accept() const = 0;
  // A request at cycle `now`, which is not before any earlier call's.
  virtual void submit(const MemRequest& r, Cycle now) = 0;
  // The next cycle at which the model has something to do or to deliver;
  // kNever when it holds no request.
  virtual Cycle next_event() const = 0;
  // Time moves to `now`: the scheduling decisions due by then are taken,
  // and every response due by then is appended to `out`, earliest first.
  virtual void advance(Cycle now, std::vector<MemResponse>& out) = 0;

  const MemoryStats& stats() const { return stats_; }
  // Requests submitted so far (the sum of stats().requests, kept as it goes).
  uint64_t submitted() const { return submitted_; }

 protected:
  void count(const MemRequest& r);

  MemoryStats stats_;
  uint64_t submitted_ = 0;
};

enum class DramScheduler : uint8_t {
  kFrFcfs,  // first ready, first come first served: row hits first (Rixner et al. 2000)
  kFifo,    // strictly in arrival order
};

// DDR3-2000 as Table I gives it, in 1 GHz cycles. What the paper leaves
// open, gclab chose (docs/collectors/accel.md): 8 KiB rows (a rank of x8
// chips with 1 KiB pages), consecutive rows of the address space in
// consecutive banks, one 64-byte burst per request whatever its size
// (BL8 at 2000 MT/s on a 64-bit bus: 4 ns), and writes timed as reads.
struct DramConfig {
  Cycle t_cas = 14;  // column command to data
  Cycle t_rcd = 14;  // activate to column command
  Cycle t_rp = 14;   // precharge to activate
  Cycle t_ras = 47;  // activate to precharge, at least
  Cycle t_burst = 4;
  unsigned banks = 8;         // a power of two
  uint64_t row_bytes = 8192;  // a power of two
  unsigned max_in_flight = 16;
  DramScheduler scheduler = DramScheduler::kFrFcfs;
};

class DramModel final : public MemoryModel {
 public:
  explicit DramModel(const DramConfig& config);

  bool can_accept() const override { return in_flight_ < config_.max_in_flight; }
  void submit(const MemRequest& r, Cycle now) override;
  Cycle next_event() const override;
  void advance(Cycle now, std::vector<MemResponse>& out) override;

  // Rows and banks are powers of two: shifts, not divisions (a request's
  // bank is found several times).
  unsigned bank_of(uint64_t addr) const {
    return static_cast<unsigned>(addr >> row_shift_ & (config_.banks - 1));
  }
  uint64_t row_of(uint64_t addr) const { return addr >> row_shift_ >> bank_shift_; }

 private:
  struct Pending {
    MemRequest request;
    Cycle arrival;
    uint64_t sequence;  // arrival order, for FIFO and for ties
  };
  struct Bank {
    std::vector<Pending> queue;  // arrival order (a few entries: the in-flight limit bounds them)
    bool open = false;
    uint64_t row = 0;
    Cycle ready = 0;         // the next column or precharge command may issue
    Cycle activated_at = 0;  // for t_ras
  };
  struct InService {
    Cycle done;
    uint64_t sequence;
    MemRequest request;
    bool operator>(const InService& o) const {
      return done != o.done ? done > o.done : sequence > o.sequence;
    }
  };

  // The bank whose next decision comes first, and when (kNever: none),
  // from each bank's decision time, kept up to date as banks change.
  Cycle next_decision(unsigned& bank) const;
  Cycle decision_time(const Bank& b) const;
  void update_decisions();
  void set_decision(unsigned bank, Cycle at);
  // At cycle `at`, the bank picks one request and sends its commands.
  void decide(Bank& bank, Cycle at);
  void serve(Bank& bank, const Pending& p, Cycle at);
  Cycle reserve_bus(Cycle wanted);

  DramConfig config_;
  unsigned row_shift_;
  unsigned bank_shift_;
  std::vector<Bank> banks_;
  std::vector<Cycle> decisions_;   // decision_time of each bank
  Cycle first_decision_ = kNever;  // the earliest of them, and its bank
  unsigned first_bank_ = 0;
  std::priority_queue<InService, std::vector<InService>, std::greater<>> in_service_;
  unsigned in_flight_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t fifo_next_ = 0;  // FIFO: the sequence number that must go next
  Cycle fifo_ready_ = 0;    // FIFO: when the previous one was decided
  // Start cycles of data bursts that may still collide, in order (a few:
  // the in-flight limit bounds them).
  std::vector<Cycle> bursts_;
};

// The paper's "latency-bandwidth pipe" (L306): every request takes the
// pipe for its bytes at 8 bytes a cycle (8 GB/s at 1 GHz), one after
// another, and its response arrives `latency` cycles after its last
// bytes went in. Any number of requests may wait.
struct PipeConfig {
  Cycle latency = 1;
  uint64_t bytes_per_cycle = 8;
};

class IdealPipe final : public MemoryModel {
 public:
  explicit IdealPipe(const PipeConfig& config) : config_(config) {}

  bool can_accept() const override { return true; }
  void submit(const MemRequest& r, Cycle now) override;
  Cycle next_event() const override { return responses_.empty() ? kNever : responses_.front().at; }
  void advance(Cycle now, std::vector<MemResponse>& out) override;

 private:
  PipeConfig config_;
  std::deque<MemResponse> responses_;  // in arrival order: the pipe keeps order
  Cycle pipe_free_ = 0;
};

}  // namespace gc::accel
