// Unit tests for accel's memory models (gc/collectors/accel/memory.h),
// against timings computed by hand from the DDR3-2000 parameters
// (t_cas = t_rcd = t_rp = 14, t_ras = 47, a 64-byte burst in 4 cycles) and
// the ideal pipe's (1 cycle, 8 bytes a cycle).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gc/collectors/accel/memory.h"

using namespace gc::accel;

namespace {

// Default geometry: 8 KiB rows, rows interleaved over 8 banks, so bank b,
// row r starts at (r * 8 + b) * 8 KiB.
uint64_t at_bank_row(unsigned bank, uint64_t row, uint64_t offset = 0) {
  return (row * 8 + bank) * 8192 + offset;
}

MemRequest read(uint64_t addr, uint64_t tag, Source s = Source::kMarker) {
  return MemRequest{addr, 8, false, s, tag};
}

// Runs the model until it holds nothing and returns every response.
std::vector<MemResponse> drain(MemoryModel& m) {
  std::vector<MemResponse> out;
  for (Cycle t = m.next_event(); t != kNever; t = m.next_event()) m.advance(t, out);
  return out;
}

Cycle done_of(const std::vector<MemResponse>& rs, uint64_t tag) {
  for (const MemResponse& r : rs)
    if (r.request.tag == tag) return r.at;
  FAIL("no response with tag " << tag);
  return 0;
}

}  // namespace

TEST_CASE("dram: the address map puts consecutive rows in consecutive banks") {
  DramModel m(DramConfig{});
  CHECK(m.bank_of(at_bank_row(3, 5, 100)) == 3);
  CHECK(m.row_of(at_bank_row(3, 5, 100)) == 5);
  CHECK(m.bank_of(8191) == 0);
  CHECK(m.bank_of(8192) == 1);
}

TEST_CASE("dram: a read of a closed bank activates, then reads (t_rcd + t_cas + burst)") {
  DramModel m(DramConfig{});
  m.submit(read(at_bank_row(0, 0), 1), 0);
  auto rs = drain(m);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].at == 14 + 14 + 4);
  CHECK(m.stats().row_empty == 1);
  CHECK(m.stats().activations() == 1);
}

TEST_CASE(
    "dram: a row hit needs only the column command; a conflict waits for t_ras, precharges, activates") {
  DramModel m(DramConfig{});
  m.submit(read(at_bank_row(0, 0, 0), 1), 0);
  m.submit(read(at_bank_row(0, 0, 64), 2), 0);  // same row
  m.submit(read(at_bank_row(0, 1, 0), 3), 0);   // same bank, other row
  auto rs = drain(m);
  // 1: activate 0, column 14, data 28-32.
  CHECK(done_of(rs, 1) == 32);
  // 2: the bank is ready at 14 + 4; column 18, data wanted at 32, the bus
  // is free from 32: done 36.
  CHECK(done_of(rs, 2) == 36);
  // 3: decided at 22; precharge no earlier than 0 + 47, activate 61,
  // column 75, data 89-93.
  CHECK(done_of(rs, 3) == 93);
  CHECK(m.stats().row_hits == 1);
  CHECK(m.stats().row_empty == 1);
  CHECK(m.stats().row_conflicts == 1);
}

TEST_CASE("dram: two banks work at once and share the data bus") {
  DramModel m(DramConfig{});
  m.submit(read(at_bank_row(0, 0), 1), 0);
  m.submit(read(at_bank_row(1, 0), 2), 0);
  auto rs = drain(m);
  CHECK(done_of(rs, 1) == 32);
  CHECK(done_of(rs, 2) == 36);  // its data waits one burst for the bus
  CHECK(m.stats().busy_cycles == 8);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].request.tag == 1);  // earliest first
}

TEST_CASE("dram: FR-FCFS serves a later row hit before an older conflict; FIFO keeps arrival order") {
  auto run = [](DramScheduler scheduler) {
    DramConfig config;
    config.scheduler = scheduler;
    DramModel m(config);
    m.submit(read(at_bank_row(0, 1), 1), 0);
    m.submit(read(at_bank_row(0, 2), 2), 0);
    m.submit(read(at_bank_row(0, 1, 64), 3), 0);
    return drain(m);
  };
  auto fr = run(DramScheduler::kFrFcfs);
  // 1: done 32 (bank ready at 18). 3 hits row 1: column 18, done 36.
  // 2 at 22: precharge at 47, activate 61, column 75, done 93.
  CHECK(done_of(fr, 1) == 32);
  CHECK(done_of(fr, 3) == 36);
  CHECK(done_of(fr, 2) == 93);
  auto fifo = run(DramScheduler::kFifo);
  // 2 first: done 93, row 2 activated at 61, bank ready at 79. 3 is a
  // conflict now: precharge at max(79, 61 + 47) = 108, activate 122,
  // column 136, data 150-154.
  CHECK(done_of(fifo, 1) == 32);
  CHECK(done_of(fifo, 2) == 93);
  CHECK(done_of(fifo, 3) == 154);
}

TEST_CASE("dram: at most max_in_flight requests; a slot frees when its response is delivered") {
  DramConfig config;
  config.max_in_flight = 2;
  DramModel m(config);
  CHECK(m.can_accept());
  m.submit(read(at_bank_row(0, 0), 1), 0);
  m.submit(read(at_bank_row(1, 0), 2), 0);
  CHECK_FALSE(m.can_accept());
  std::vector<MemResponse> out;
  m.advance(31, out);
  CHECK(out.empty());
  CHECK_FALSE(m.can_accept());
  m.advance(32, out);
  REQUIRE(out.size() == 1);
  CHECK(m.can_accept());
}

TEST_CASE("dram: a request arriving later is decided when it arrives, not before") {
  DramModel m(DramConfig{});
  std::vector<MemResponse> out;
  m.submit(read(at_bank_row(0, 0), 1), 0);
  m.advance(100, out);
  REQUIRE(out.size() == 1);
  m.submit(read(at_bank_row(0, 0, 8), 2), 100);  // the row is still open
  CHECK(m.next_event() == 100);
  auto rs = drain(m);
  CHECK(done_of(rs, 2) == 100 + 14 + 4);
}

TEST_CASE("dram: requests are counted by source, with their bytes") {
  DramModel m(DramConfig{});
  m.submit(MemRequest{0, 64, false, Source::kTracer, 1}, 0);
  m.submit(MemRequest{64, 8, true, Source::kMarker, 2}, 0);
  m.submit(MemRequest{128, 16, false, Source::kTracer, 3}, 0);
  drain(m);
  const MemoryStats& s = m.stats();
  CHECK(s.requests[static_cast<unsigned>(Source::kTracer)] == 2);
  CHECK(s.bytes[static_cast<unsigned>(Source::kTracer)] == 80);
  CHECK(s.requests[static_cast<unsigned>(Source::kMarker)] == 1);
  CHECK(s.total_requests() == 3);
  CHECK(s.reads == 2);
  CHECK(s.writes == 1);
  CHECK(std::string(source_name(Source::kWalker)) == "page walker");
}

TEST_CASE("ideal pipe: 8 bytes a cycle, one cycle of latency after the last bytes, in order") {
  IdealPipe m(PipeConfig{});
  m.submit(MemRequest{0, 8, false, Source::kMarker, 1}, 0);     // takes cycle 0
  m.submit(MemRequest{64, 64, false, Source::kTracer, 2}, 0);   // cycles 1-8
  m.submit(MemRequest{128, 16, true, Source::kMarker, 3}, 20);  // cycles 20-21
  auto rs = drain(m);
  CHECK(done_of(rs, 1) == 1);
  CHECK(done_of(rs, 2) == 9);
  CHECK(done_of(rs, 3) == 22);
  CHECK(m.stats().busy_cycles == 1 + 8 + 2);
  CHECK(m.can_accept());
}
