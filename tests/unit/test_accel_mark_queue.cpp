// Unit tests for accel's mark queue (gc/collectors/accel/mark_queue.h): a
// queue that must spill to memory and refill from it, the direct path from
// outQ to inQ, the tracer's throttle, and compressed entries, over an
// ideal pipe whose 64-byte line takes 8 cycles and arrives 1 cycle later.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "gc/collectors/accel/mark_queue.h"

using namespace gc::accel;

namespace {

struct Rig {
  explicit Rig(MarkQueueConfig config) : memory(PipeConfig{}), queue(config) {}

  // The spill machine and the memory, until neither has anything to do
  // by `limit`.
  void run_until(Cycle limit) {
    std::vector<MemResponse> responses;
    for (;;) {
      Cycle t = std::min(queue.next_event(now, memory), memory.next_event());
      if (t > limit) break;
      now = std::max(now, t);
      responses.clear();
      memory.advance(now, responses);
      for (const MemResponse& r : responses) queue.on_response(r);
      queue.advance(now, memory);
    }
    now = std::max(now, limit);
  }

  std::vector<uint64_t> pop_all() {
    std::vector<uint64_t> out;
    while (queue.can_pop()) out.push_back(queue.pop());
    return out;
  }

  IdealPipe memory;
  MarkQueue queue;
  Cycle now = 0;
};

MarkQueueConfig small(bool compressed = false) {
  MarkQueueConfig c;
  c.entries = 4;
  c.side_entries = 16;
  c.compressed = compressed;
  c.spill_base = 1u << 20;
  return c;
}

}  // namespace

TEST_CASE("mark queue: Q first, then outQ, which moves to inQ directly while inQ has room") {
  Rig rig(small());
  for (uint64_t r = 1; r <= 12; ++r) rig.queue.push(r);
  CHECK(rig.queue.occupancy() == 4);
  CHECK(rig.queue.throttle());  // outQ holds 8 of 16
  rig.run_until(0);
  CHECK_FALSE(rig.queue.throttle());
  CHECK(rig.queue.stats().direct_moves == 8);
  CHECK(rig.memory.stats().total_requests() == 0);
  std::vector<uint64_t> popped = rig.pop_all();
  CHECK(popped == std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  CHECK(rig.queue.empty());
}

TEST_CASE("mark queue: a queue that must spill writes lines, then reads them back when drained") {
  Rig rig(small());
  for (uint64_t r = 1; r <= 20; ++r) rig.queue.push(r);  // Q 4, outQ 16
  CHECK_FALSE(rig.queue.can_push());
  rig.run_until(0);                                       // all 16 to inQ
  for (uint64_t r = 21; r <= 36; ++r) rig.queue.push(r);  // outQ 16, inQ full
  rig.run_until(0);
  // Two lines of 8 written at cycle 0: the pipe carries them in cycles
  // 0-7 and 8-15, acknowledged at 8 and 16.
  CHECK(rig.queue.stats().spill_writes == 2);
  CHECK(rig.queue.stats().spilled_entries == 16);
  CHECK(rig.queue.stats().spill_peak_bytes == 128);
  CHECK(rig.memory.stats().writes == 2);
  std::vector<uint64_t> popped = rig.pop_all();  // Q's 4 and inQ's 16
  CHECK(popped.size() == 20);
  CHECK_FALSE(rig.queue.empty());
  // The top line (refs 29-36) is read once its write is acknowledged, at
  // 16, and is back at 24; the other line is read then, back at 32.
  rig.run_until(23);
  CHECK(rig.queue.stats().spill_reads == 1);
  CHECK_FALSE(rig.queue.can_pop());
  rig.run_until(24);
  std::vector<uint64_t> top = rig.pop_all();
  CHECK(top == std::vector<uint64_t>{29, 30, 31, 32, 33, 34, 35, 36});
  rig.run_until(31);
  CHECK_FALSE(rig.queue.can_pop());
  rig.run_until(32);
  std::vector<uint64_t> second = rig.pop_all();
  CHECK(second == std::vector<uint64_t>{21, 22, 23, 24, 25, 26, 27, 28});
  CHECK(rig.queue.stats().spill_reads == 2);
  CHECK(rig.queue.empty());
  popped.insert(popped.end(), top.begin(), top.end());
  popped.insert(popped.end(), second.begin(), second.end());
  std::sort(popped.begin(), popped.end());
  std::vector<uint64_t> all(36);
  for (uint64_t r = 0; r < 36; ++r) all[r] = r + 1;
  CHECK(popped == all);
  CHECK(rig.memory.stats().requests[static_cast<unsigned>(Source::kSpill)] == 4);
}

TEST_CASE("mark queue: compressed entries double Q and put 16 in a spill line") {
  Rig rig(small(true));
  CHECK(rig.queue.capacity() == 8);
  for (uint64_t r = 1; r <= 24; ++r) rig.queue.push(r);  // Q 8, outQ 16
  rig.run_until(0);
  for (uint64_t r = 25; r <= 40; ++r) rig.queue.push(r);
  rig.run_until(100);
  CHECK(rig.queue.stats().spill_writes == 1);  // one line of 16
  CHECK(rig.queue.stats().spilled_entries == 16);
  std::vector<uint64_t> popped = rig.pop_all();
  rig.run_until(200);
  for (uint64_t r : rig.pop_all()) popped.push_back(r);
  CHECK(popped.size() == 40);
  CHECK(rig.queue.empty());
}
