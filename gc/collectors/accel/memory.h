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
#include <cstddef>
#include <cstdint>
#include <deque>
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
  bool can_accept() const { return !full_; }
  // A request at cycle `now`, which is not before any earlier call's.
  virtual void submit(const MemRequest& r, Cycle now) = 0;
  // The next cycle at which the model has something to do or to deliver;
  // kNever when it holds no request.
  Cycle next_event() const { return next_event_; }
  // Time moves to `now`: the scheduling decisions due by then are taken,
  // and every response due by then is appended to `out`, earliest first.
  virtual void advance(Cycle now, std::vector<MemResponse>& out) = 0;
  // For a sender that will submit nothing before `until`: the scheduling
  // decisions due by then, up to the next response, are taken now. Each
  // sees the requests submitted before its time, as it would at its time,
  // so nothing changes but that the sender need not stop at each.
  virtual void settle(Cycle until) = 0;

  const MemoryStats& stats() const { return stats_; }
  // Requests submitted so far (the sum of stats().requests, kept as it goes).
  uint64_t submitted() const { return submitted_; }

 protected:
  void count(const MemRequest& r);

  MemoryStats stats_;
  uint64_t submitted_ = 0;
  // The units ask both every simulated cycle: the models keep them up to
  // date as they change, so that asking costs no virtual call.
  bool full_ = false;
  Cycle next_event_ = kNever;
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

  void submit(const MemRequest& r, Cycle now) override;
  void advance(Cycle now, std::vector<MemResponse>& out) override;
  void settle(Cycle until) override;

  // Rows and banks are powers of two: shifts, not divisions (a request's
  // bank is found several times).
  unsigned bank_of(uint64_t addr) const {
    return static_cast<unsigned>(addr >> row_shift_ & (config_.banks - 1));
  }
  uint64_t row_of(uint64_t addr) const { return addr >> row_shift_ >> bank_shift_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  // A request the controller holds, from its submission to its response.
  // Requests stay in one place (entries_): a bank's queue links them in
  // arrival order, so that taking one from its middle moves nothing.
  struct Entry {
    MemRequest request;
    uint64_t row;
    Cycle arrival;
    uint64_t sequence;  // arrival order, for FIFO and for ties
    uint32_t next;      // the next in the bank's queue, or in the free list
  };
  struct Bank {
    uint32_t head = kNone;  // the oldest request queued
    uint32_t tail = kNone;
    bool open = false;
    uint64_t row = 0;
    Cycle ready = 0;         // the next column or precharge command may issue
    Cycle activated_at = 0;  // for t_ras
  };
  // A decided request: its data burst ends at `done` and it is delivered
  // then. The requests in service are exactly the bursts that may still
  // collide with a new one (both end at `done`), so one list, in order of
  // (done, sequence), is both the response queue and the bus's bookings.
  struct InService {
    Cycle done;
    uint64_t sequence;
    uint32_t entry;
    bool operator>(const InService& o) const {
      return done != o.done ? done > o.done : sequence > o.sequence;
    }
  };

  Cycle decision_time(const Bank& b) const;
  void update_decisions();
  void find_first_decision();
  // At cycle `at`, the bank picks one request and sends its commands.
  void decide(unsigned bank, Cycle at);
  void serve(Bank& bank, uint32_t entry, Cycle at);
  // Books the earliest burst slot at or after `wanted` that overlaps no
  // burst booked already, for the entry.
  void reserve_bus(Cycle wanted, uint32_t entry);
  void deliver(Cycle now, std::vector<MemResponse>& out);
  Cycle next_delivery() const {
    return delivered_ < in_service_.size() ? in_service_[delivered_].done : kNever;
  }
  void update_next_event();

  DramConfig config_;
  unsigned row_shift_;
  unsigned bank_shift_;
  std::vector<Entry> entries_;
  uint32_t free_ = kNone;  // the free list through Entry::next
  std::vector<Bank> banks_;
  std::vector<Cycle> decisions_;  // decision_time of each bank
  // A bit a bank that holds queued requests: only those have a decision.
  std::vector<uint64_t> queued_banks_;
  Cycle first_decision_ = kNever;  // the earliest of them, and its bank
  unsigned first_bank_ = 0;
  // In order from in_service_[delivered_]; the delivered ones before it
  // are dropped now and then, not one by one.
  std::vector<InService> in_service_;
  size_t delivered_ = 0;
  // From here to the end, each burst starts where the one before ends:
  // on a busy bus a new burst goes after all of them, found at once.
  size_t back_to_back_ = 0;
  unsigned in_flight_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t fifo_next_ = 0;  // FIFO: the sequence number that must go next
  Cycle fifo_ready_ = 0;    // FIFO: when the previous one was decided
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

  void submit(const MemRequest& r, Cycle now) override;
  void advance(Cycle now, std::vector<MemResponse>& out) override;
  void settle(Cycle) override {}  // the pipe decides nothing

 private:
  PipeConfig config_;
  std::deque<MemResponse> responses_;  // in arrival order: the pipe keeps order
  Cycle pipe_free_ = 0;
};

}  // namespace gc::accel
