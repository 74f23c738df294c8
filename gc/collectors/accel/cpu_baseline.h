// The CPU the paper measures the unit against (Table I, L270-278): a Rocket
// in-order core at 1 GHz with a 16 KiB L1 data cache, a 256 KiB 8-way L2 and
// a 32-entry DTLB, over the same memory model as the unit. It replays
// gclab's software mark (the serial marker's depth-first loop over a mark
// stack) and sweep (cell by cell, as the reclamation unit decodes them) on
// the same heap, and its cycles are the denominator of every speedup.
//
// The model: one instruction a cycle; a load's value is used by the next
// instruction, so the core waits out its latency (L1 hit, L2 hit, or the
// memory model's response to a line fill); a store that misses fills its
// line without waiting (the write buffer); a DTLB miss walks the Sv39 page
// table with loads through the caches. Instruction counts per step are the
// loops' own (cpu_baseline.cpp names each). What it leaves out: dirty-line
// write-backs (they cost the in-order core no waiting, and the memory some
// bandwidth), the instruction cache, branch mispredictions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gc/collectors/accel/memory.h"
#include "gc/collectors/accel/reclamation_unit.h"
#include "gc/collectors/accel/tag_array.h"
#include "gc/layout.h"

namespace gc::accel {

struct CpuConfig {
  uint64_t l1_bytes = 16 << 10;
  unsigned l1_ways = 4;
  Cycle l1_hit_cycles = 2;
  uint64_t l2_bytes = 256 << 10;
  unsigned l2_ways = 8;
  Cycle l2_hit_cycles = 20;
  unsigned dtlb_entries = 32;
};

struct CpuStats {
  uint64_t instructions = 0;  // loads and stores included
  uint64_t loads = 0, stores = 0;
  uint64_t l1_misses = 0, l2_misses = 0;  // a miss in both is a line from memory
  uint64_t dtlb_misses = 0;               // each a walk of three loads
  uint64_t memory_stall_cycles = 0;       // waiting for line fills
};

class CpuBaseline {
 public:
  explicit CpuBaseline(const CpuConfig& config);
  CpuBaseline(const CpuConfig& config, MemoryModel& memory) : CpuBaseline(config) { start(memory); }

  // A new run over `memory`, from cycle 0 with empty caches and TLB (kept
  // between collections: emptying them costs nothing).
  void start(MemoryModel& memory);

  // The software mark from the roots (header addresses). It marks the real
  // headers, as the serial marker does, and lists what it marked so that
  // the plan can clear those marks before the unit marks the same heap.
  // Returns the cycles it took.
  Cycle mark(std::span<Word* const> roots, std::vector<Word*>& marked);
  // The software sweep of the blocks, reading what the unit reads and
  // writing what it writes. Returns the cycles.
  Cycle sweep(std::span<const SweepBlock> blocks);

  const CpuStats& stats() const { return stats_; }

 private:
  void execute(uint64_t instructions) {
    stats_.instructions += instructions;
    now_ += instructions;
  }
  void load(const void* addr);
  void store(const void* addr);
  // The latency of a data access at this cycle: TLB, L1, L2, memory.
  Cycle access(uint64_t addr, bool is_store);
  Cycle access_line(uint64_t addr, bool is_store);
  Cycle fill_from_memory(uint64_t line_addr, bool wait);
  void advance_memory(Cycle t);
  void drain_memory();
  void mark_target(Value v, std::vector<Word*>& stack, std::vector<Word*>& marked);

  CpuConfig config_;
  MemoryModel* memory_ = nullptr;
  TagArray l1_;
  TagArray l2_;
  TagArray dtlb_;
  Cycle now_ = 0;
  Cycle memory_now_ = 0;  // the latest time the memory was advanced to
  uint64_t next_tag_ = 0;
  CpuStats stats_;
  std::vector<MemResponse> responses_;  // scratch
};

}  // namespace gc::accel
