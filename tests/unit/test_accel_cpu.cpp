// Unit tests for accel's CPU baseline (gc/collectors/accel/
// cpu_baseline.h): a long list costs the in-order core a full memory
// latency a node, counted instruction by instruction; the sweep reads and
// writes what the reclamation unit does.
#include <doctest/doctest.h>

#include <vector>

#include "gc/collectors/accel/cpu_baseline.h"

using namespace gc;
using namespace gc::accel;

namespace {

constexpr uint32_t kClass = kFirstUserClass;

struct alignas(4096) Page {
  Word words[512] = {};
};

}  // namespace

TEST_CASE("cpu baseline: a list node costs its instructions and one L2-missing load") {
  auto run = [](int n) {
    static Page page;  // the same addresses in every run
    page = Page{};
    static std::vector<Word*> nodes;
    nodes.clear();
    for (int i = 0; i < n; ++i)
      nodes.push_back(format_object(page.words + 8 * i, kClass, 1, 1));  // a line each
    for (int i = 0; i + 1 < n; ++i) ref_slot(nodes[i], 0) = Value::ref(nodes[i + 1]);
    IdealPipe memory(PipeConfig{.latency = 100, .bytes_per_cycle = 64});
    CpuBaseline cpu(CpuConfig{}, memory);
    std::vector<Word*> marked;
    Cycle cycles = cpu.mark(std::span<Word* const>(nodes.data(), 1), marked);
    CHECK(marked.size() == static_cast<size_t>(n));
    return cycles;
  };
  // A node after the first: pop (a load that hits, 2 cycles, and 7
  // instructions), its slot (a hit, 2), the slot's test (4), the next
  // node's header (a miss in both caches: 20 + 100 cycles), the mark test
  // (2), the mark's store (1), the mark's decode and push (8), the push's
  // store (1): 147 cycles. (Lists of 2 and 10 nodes: the same first node
  // and the same end, where a list of 1 also waits for its stack line's
  // fill.)
  CHECK(run(10) - run(2) == 8 * 147);
}

TEST_CASE(
    "cpu baseline: the sweep loads each cell's first word, a header behind a count word, and links free "
    "cells") {
  Page page;
  Word* cells = page.words;
  Word* live = format_object(cells, kClass, 0, 3);
  *live |= Header::kMarkBit;
  format_object(cells + 4, kClass, 0, 3);
  cells[8] = 0;
  Word* with_refs = format_object(cells + 12, kClass, 2, 0);
  *with_refs |= Header::kMarkBit;
  SweepBlock block{cells, 4, 4};
  IdealPipe memory(PipeConfig{});
  CpuBaseline cpu(CpuConfig{}, memory);
  Cycle cycles = cpu.sweep(std::span<const SweepBlock>(&block, 1));
  CHECK(cpu.stats().loads == 1 + 4 + 1);
  CHECK(cpu.stats().stores == 2 + 1);
  CHECK(cycles >= cpu.stats().instructions);
  CHECK(memory.stats().requests[static_cast<unsigned>(Source::kCpu)] == cpu.stats().l2_misses);
}
