#include "gc/collectors/accel/cpu_baseline.h"

#include <algorithm>

#include "gc/collectors/accel/translation.h"

namespace gc::accel {

namespace {

constexpr uint64_t kLineBytes = 64;
// The software mark stack's simulated address: a region of its own, so
// that its lines stay in the caches as the real loop's do.
constexpr uint64_t kMarkStackBase = uint64_t{5} << 45;

const void* stack_slot(size_t depth) {
  return reinterpret_cast<const void*>(kMarkStackBase + depth * kWordSize);
}

// Instructions of each step besides its loads and stores (RV64, counted
// from the loops as gclab writes them):
// a slot or root: test the value's tag, branch, step the pointer, loop
constexpr uint64_t kSlotInstructions = 4;
// a target's header: test the mark bit, branch
constexpr uint64_t kTestInstructions = 2;
// a new mark: set the bit, decode the reference count (two shifts, two
// masks, a shift by the exponent), branch, bump the stack pointer
constexpr uint64_t kMarkInstructions = 8;
// a pop: test the stack, step it, find the slots below the header, decode
// the count again
constexpr uint64_t kPopInstructions = 7;
// a cell: decode the tag, branch, step to the next cell, loop
constexpr uint64_t kCellInstructions = 5;
// a count word: compute the header's address
constexpr uint64_t kCountInstructions = 2;
// a free cell linked: the tail pointer's update
constexpr uint64_t kLinkInstructions = 2;
// a block: load its descriptor, set up the cell loop, write it back
constexpr uint64_t kBlockInstructions = 10;

// How far ahead of the loop over the roots the host prefetches their
// headers: enough to cover a miss.
constexpr size_t kRootsAhead = 8;

}  // namespace

CpuBaseline::CpuBaseline(const CpuConfig& config)
    : config_(config),
      l1_(config.l1_bytes / kLineBytes / config.l1_ways, config.l1_ways),
      l2_(config.l2_bytes / kLineBytes / config.l2_ways, config.l2_ways),
      dtlb_(TagArray::fully_associative(config.dtlb_entries)) {}

void CpuBaseline::start(MemoryModel& memory) {
  memory_ = &memory;
  l1_.clear();
  l2_.clear();
  dtlb_.clear();
  now_ = 0;
  memory_now_ = 0;
  stats_ = CpuStats{};
}

void CpuBaseline::load(const void* addr) {
  stats_.loads++;
  execute(1);
  now_ += access(reinterpret_cast<uint64_t>(addr), false) - 1;
}

void CpuBaseline::store(const void* addr) {
  stats_.stores++;
  execute(1);
  access(reinterpret_cast<uint64_t>(addr), true);
}

Cycle CpuBaseline::access(uint64_t addr, bool is_store) {
  if (!dtlb_.access_or_fill(addr >> kPageShift)) {
    stats_.dtlb_misses++;
    // The walk: one load a level, through the caches.
    for (int level = kPageTableLevels - 1; level >= 0; --level) {
      execute(2);
      now_ += access_line(pte_address(addr, static_cast<unsigned>(level)), false);
    }
  }
  return access_line(addr, is_store);
}

Cycle CpuBaseline::access_line(uint64_t addr, bool is_store) {
  uint64_t line = addr / kLineBytes;
  if (l1_.access(line)) return config_.l1_hit_cycles;
  stats_.l1_misses++;
  l1_.fill(line);
  if (l2_.access(line)) return config_.l2_hit_cycles;
  stats_.l2_misses++;
  l2_.fill(line);
  return config_.l2_hit_cycles + fill_from_memory(line * kLineBytes, !is_store);
}

// Moves the memory's time to t (never back).
void CpuBaseline::advance_memory(Cycle t) {
  memory_now_ = std::max(memory_now_, t);
  responses_.clear();
  memory_->advance(memory_now_, responses_);
}

// A line from memory: the cycles until it arrives when the core waits for
// it; a store's fill goes on without the core, unless the memory is full,
// when the core waits for room.
Cycle CpuBaseline::fill_from_memory(uint64_t line_addr, bool wait) {
  Cycle start = now_;
  advance_memory(now_);
  while (!memory_->can_accept()) advance_memory(memory_->next_event());
  Cycle issue = std::max(now_, memory_now_);
  uint64_t tag = next_tag_++;
  memory_->submit(MemRequest{line_addr, kLineBytes, false, Source::kCpu, tag}, issue);
  if (!wait) {
    stats_.memory_stall_cycles += issue - start;
    return issue - start;
  }
  for (;;) {
    advance_memory(memory_->next_event());
    for (const MemResponse& r : responses_) {
      if (r.request.tag == tag) {
        stats_.memory_stall_cycles += r.at - start;
        return r.at - start;
      }
    }
  }
}

// The core is done when its last fills have arrived.
void CpuBaseline::drain_memory() {
  while (memory_->next_event() != kNever) advance_memory(memory_->next_event());
  now_ = std::max(now_, memory_now_);
}

void CpuBaseline::mark_target(Value v, std::vector<Word*>& stack, std::vector<Word*>& marked) {
  execute(kSlotInstructions);
  if (!v.is_ref()) return;
  Word* h = v.as_ref();
  load(h);
  execute(kTestInstructions);
  Word before = *h;
  if (Header::is_marked(before)) return;
  *h = before | Header::kMarkBit;
  store(h);
  marked.push_back(h);
  execute(kMarkInstructions);
  if (uint64_t n = Header::nrefs(before)) {
    stack.push_back(h);
    store(stack_slot(stack.size() - 1));
    // The host reads its targets' headers when the loop comes to them:
    // their lines come into the host's cache meanwhile.
    for (uint64_t i = 0; i < n; ++i)
      if (Value v = ref_slot(h, i); v.is_ref()) __builtin_prefetch(v.as_ref());
  }
}

Cycle CpuBaseline::mark(std::span<Word* const> roots, std::vector<Word*>& marked) {
  Cycle start = now_;
  std::vector<Word*> stack;
  for (size_t i = 0; i < roots.size(); ++i) {
    // A few roots ahead, as for the targets of a marked object.
    if (i + kRootsAhead < roots.size()) __builtin_prefetch(roots[i + kRootsAhead]);
    load(reinterpret_cast<const void*>(kHwgcSpaceBase + i * kWordSize));
    mark_target(Value::ref(roots[i]), stack, marked);
  }
  while (!stack.empty()) {
    load(stack_slot(stack.size() - 1));
    Word* h = stack.back();
    stack.pop_back();
    execute(kPopInstructions);
    uint64_t n = Header::nrefs(*h);
    for (uint64_t i = 0; i < n; ++i) {
      Value* slot = &ref_slot(h, i);
      load(slot);
      mark_target(*slot, stack, marked);
    }
  }
  drain_memory();
  return now_ - start;
}

Cycle CpuBaseline::sweep(std::span<const SweepBlock> blocks) {
  Cycle start = now_;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const SweepBlock& b = blocks[i];
    // The block list the unit reads too: a word per block.
    load(reinterpret_cast<const void*>(kBlockListBase + i * kWordSize));
    execute(kBlockInstructions);
    for (uint32_t c = 0; c < b.cells; ++c) {
      Word* cell = b.begin + static_cast<uint64_t>(c) * b.cell_words;
      load(cell);
      execute(kCellInstructions);
      Word first = *cell;
      uint64_t tag = first & Header::kTagMask;
      bool free = tag == 0;
      if (tag == Header::kCountTag) {
        execute(kCountInstructions);
        Word* h = cell + 1 + (first >> 2);
        load(h);
        free = !Header::is_marked(*h);
      } else if (tag != 0) {
        free = !Header::is_marked(first);
      }
      if (free) {
        store(cell);
        execute(kLinkInstructions);
      }
    }
    store(&b);
  }
  drain_memory();
  return now_ - start;
}

}  // namespace gc::accel
