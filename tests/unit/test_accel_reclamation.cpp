// Unit tests for accel's reclamation unit (gc/collectors/accel/
// reclamation_unit.h): one block cell by cell, timed by hand over the
// ideal pipe, and sweepers working on blocks in parallel when the memory's
// latency is what bounds them; --gc-verify's check that the unit freed
// what the software sweep freed.
#include <doctest/doctest.h>

#include <vector>

#include "gc/collectors/accel/reclamation_unit.h"

using namespace gc;
using namespace gc::accel;

namespace {

constexpr uint32_t kClass = kFirstUserClass;

struct alignas(64) BlockMemory {
  Word words[1024] = {};
};

}  // namespace

TEST_CASE("reclamation: one block, cell by cell: reads, the second read of a count word, links") {
  BlockMemory m;
  Word* cells = m.words;
  Word* live = format_object(cells, kClass, 0, 3);
  *live |= Header::kMarkBit;
  format_object(cells + 4, kClass, 0, 3);  // unmarked: freed
  cells[8] = 0;                            // a free cell: a null next pointer
  Word* with_refs = format_object(cells + 12, kClass, 2, 0);
  *with_refs |= Header::kMarkBit;
  SweepBlock block{cells, 4, 4};
  IdealPipe memory(PipeConfig{});
  ReclamationUnit unit(ReclamationConfig{.sweepers = 1}, memory);
  std::vector<size_t> swept;
  // 0: the block list's line, back at 8; 8: the sweeper takes the block.
  // 9: cell 0 (marked: skipped); 10: cell 1 (unmarked), its link at 11;
  // 12: cell 2 (free), its link at 13; 14: cell 3's count word, 15: its
  // header (marked); 16: the block's entry written, acknowledged at 17;
  // 18: idle.
  CHECK(unit.run(std::span<const SweepBlock>(&block, 1), 0,
                 [&](size_t i, std::span<const uint32_t>) { swept.push_back(i); }) == 18);
  CHECK(swept == std::vector<size_t>{0});
  const ReclamationStats& s = unit.stats();
  CHECK(s.cells == 4);
  CHECK(s.cell_reads == 4);
  CHECK(s.header_reads == 1);
  CHECK(s.link_writes == 2);
  CHECK(s.block_writes == 1);
  CHECK(s.list_reads == 1);
  CHECK(memory.stats().requests[static_cast<unsigned>(Source::kSweeper)] == 9);
}

TEST_CASE("reclamation: with the memory's latency the bound, two sweepers take half the time of one") {
  std::vector<BlockMemory> memory_blocks(4);
  std::vector<SweepBlock> blocks;
  for (BlockMemory& m : memory_blocks) blocks.push_back(SweepBlock{m.words, 8, 128});  // all free
  auto run = [&](unsigned sweepers) {
    IdealPipe memory(PipeConfig{.latency = 100, .bytes_per_cycle = 8});
    ReclamationUnit unit(ReclamationConfig{.sweepers = sweepers}, memory);
    size_t swept = 0;
    Cycle end = unit.run(blocks, 0, [&](size_t, std::span<const uint32_t>) { swept++; });
    CHECK(swept == blocks.size());
    CHECK(unit.stats().link_writes == 4 * 128);
    return end;
  };
  Cycle one = run(1);
  Cycle two = run(2);
  // A free cell costs a read's latency and the cycle of its link: 101.
  CHECK(one >= 4 * 128 * 101);
  CHECK(two * 100 < one * 52);
}

// The block of the first test: cells 1 (dead) and 2 (free) are linked.
TEST_CASE(
    "reclamation: recorded links agree with a free list of the same cells, and a disagreement is named") {
  BlockMemory m;
  Word* cells = m.words;
  *format_object(cells, kClass, 0, 3) |= Header::kMarkBit;
  format_object(cells + 4, kClass, 0, 3);
  cells[8] = 0;
  *format_object(cells + 12, kClass, 2, 0) |= Header::kMarkBit;
  SweepBlock block{cells, 4, 4};
  IdealPipe memory(PipeConfig{});
  ReclamationUnit unit(ReclamationConfig{.sweepers = 1, .record_links = true}, memory);
  std::vector<uint32_t> linked;
  unit.run(std::span<const SweepBlock>(&block, 1), 0,
           [&](size_t, std::span<const uint32_t> l) { linked.assign(l.begin(), l.end()); });
  CHECK(linked == std::vector<uint32_t>{1, 2});

  // The software sweep's list as it links them: cell 1, then cell 2.
  cells[4] = reinterpret_cast<Word>(cells + 8);
  cells[8] = 0;
  CHECK(sweep_disagreement(block, linked, cells + 4, false).empty());
  // A sweep that also freed cell 3, and one that kept cell 2.
  cells[8] = reinterpret_cast<Word>(cells + 12);
  cells[12] = 0;
  CHECK(sweep_disagreement(block, linked, cells + 4, false) ==
        "cell 3 of 4: the software sweep freed it, the reclamation unit kept it");
  cells[4] = 0;
  CHECK(sweep_disagreement(block, linked, cells + 4, false) ==
        "cell 2 of 4: the reclamation unit freed it, the software sweep kept it");
  // A block the software sweep emptied has every cell free.
  CHECK(sweep_disagreement(block, linked, nullptr, true) ==
        "cell 0 of 4: the software sweep freed it, the reclamation unit kept it");
  std::vector<uint32_t> every{0, 1, 2, 3};
  CHECK(sweep_disagreement(block, every, nullptr, true).empty());
}
