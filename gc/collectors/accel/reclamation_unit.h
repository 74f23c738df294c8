// The reclamation unit (Figure 8, L166-168, L262-264): a reader streams the
// global block list, block sweepers (2 by default) take blocks from it and
// each steps through its block's cells linearly, and every swept block is
// written back to the list of free or of live blocks.
//
// A sweeper reads a cell's first word. A next pointer (tag 00) is a free
// cell; a header (tag 01) holds the mark bit; a count word (tag 10) says
// where the header is, which takes a second read. A free cell, or an
// allocated one whose object is not marked, has its first word written to
// link it into the block's free list; a marked object is skipped (L264).
// A sweeper waits for each of its reads (a small state machine, one cell
// at a time) and posts its writes. The sweepers share one request a cycle
// into the crossbar, round robin.
//
// What gclab chose (docs/collectors/accel.md): the unit sweeps physical
// addresses (blocks are handed over whole; the paper gives the reclamation
// unit no TLB), live objects keep their mark until the space's own sweep
// step clears it, with no request (JikesRVM flips the mark's sense
// between collections instead, so the paper's unit writes nothing for
// them either), and large objects are the runtime's, outside the unit (the
// paper's unit reclaims only the main mark-sweep space, L227).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gc/collectors/accel/memory.h"
#include "gc/collectors/accel/port.h"
#include "gc/layout.h"

namespace gc::accel {

// Where the simulated block list lives: beside the page table, away from
// the heap's addresses.
inline constexpr uint64_t kBlockListBase = uint64_t{3} << 46;

struct SweepBlock {
  Word* begin;
  uint32_t cell_words;
  uint32_t cells;
};

struct ReclamationConfig {
  unsigned sweepers = 2;
  // Hand each block's linked cells to swept(), for --gc-verify's check
  // against the software sweep (sweep_disagreement).
  bool record_links = false;
};

struct ReclamationStats {
  Cycle cycles = 0;
  uint64_t blocks = 0;
  uint64_t cells = 0;
  uint64_t freed_or_free_cells = 0;  // linked into a free list
  uint64_t list_reads = 0;
  uint64_t cell_reads = 0;    // first words
  uint64_t header_reads = 0;  // second reads, for objects with references
  uint64_t link_writes = 0;
  uint64_t block_writes = 0;
};

class ReclamationUnit {
 public:
  ReclamationUnit(const ReclamationConfig& config, MemoryModel& memory);

  // swept(i, linked) is called when block i's sweep is done (the plan
  // applies the real sweep to it then, after the unit has read its cells);
  // linked: the indices of the cells the unit linked into the block's free
  // list, in order, when the config records them (else empty).
  using Swept = std::function<void(size_t, std::span<const uint32_t>)>;
  // Sweeps `blocks` from cycle `start`. Returns the cycle the last write
  // was issued and every response has come back.
  Cycle run(std::span<const SweepBlock> blocks, Cycle start, const Swept& swept);

  const ReclamationStats& stats() const { return stats_; }

 private:
  enum class State : uint8_t { kIdle, kReadCell, kWaitCell, kReadHeader, kWaitHeader, kLink, kWriteBlock };
  struct Sweeper {
    State state = State::kIdle;
    size_t block = 0;
    uint32_t cell = 0;
    std::vector<uint32_t> linked;  // this block's, when recorded
  };

  bool step(Cycle now, std::span<const SweepBlock> blocks, const Swept& swept);
  bool may_act(std::span<const SweepBlock> blocks) const;
  bool read_block_list(Cycle now, std::span<const SweepBlock> blocks);
  bool step_sweeper(Sweeper& s, unsigned id, Cycle now, std::span<const SweepBlock> blocks,
                    const Swept& swept);
  void on_response(const MemResponse& r, std::span<const SweepBlock> blocks);
  void next_cell(Sweeper& s, std::span<const SweepBlock> blocks);

  ReclamationConfig config_;
  MemoryModel& memory_;
  MemoryPort port_;
  std::vector<Sweeper> sweepers_;
  // Read from the list, not yet taken: the list is read in order, a line
  // at a time, so these are the blocks from ready_ to arrived_.
  size_t ready_ = 0;
  size_t arrived_ = 0;
  size_t listed_ = 0;  // blocks whose list entry was requested
  unsigned list_reads_in_flight_ = 0;
  unsigned next_sweeper_ = 0;  // round robin
  ReclamationStats stats_;
  std::vector<MemResponse> responses_;  // scratch
};

// --gc-verify's check that the unit and the software sweep freed the same
// cells of a block: the cells the unit linked, against the block's free
// list after the software sweep (a block it emptied, all_free: every
// cell). Empty when they agree, else the first cell they differ on.
std::string sweep_disagreement(const SweepBlock& block, std::span<const uint32_t> linked,
                               const Word* free_list, bool all_free);

}  // namespace gc::accel
