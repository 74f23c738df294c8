#include "gc/collectors/accel/reclamation_unit.h"

#include <algorithm>

namespace gc::accel {

namespace {

constexpr uint64_t kEntriesPerLine = 8;
constexpr uint64_t kListTag = uint64_t{1} << 63;  // else the sweeper's index

}  // namespace

ReclamationUnit::ReclamationUnit(const ReclamationConfig& config, MemoryModel& memory)
    : config_(config), memory_(memory), port_(memory), sweepers_(config.sweepers) {}

Cycle ReclamationUnit::run(std::span<const SweepBlock> blocks, Cycle start, const Swept& swept) {
  Cycle now = start;
  for (;;) {
    // After a busy cycle the next is stepped, unless no part could act in
    // it: then, as after a quiet cycle, no part acts before a response
    // comes back, so the memory's decisions up to it are taken now and the
    // loop jumps to it.
    bool busy = step(now, blocks, swept);
    if (busy && may_act(blocks)) {
      now++;
      continue;
    }
    memory_.settle(kNever);
    Cycle next = memory_.next_event();
    if (next == kNever) {
      now += busy;  // the cycle after the last busy one is the last
      break;
    }
    now = std::max(next, now + 1);
  }
  bool idle = std::all_of(sweepers_.begin(), sweepers_.end(),
                          [](const Sweeper& s) { return s.state == State::kIdle; });
  if (!idle || listed_ != blocks.size() || ready_ != arrived_) stalled("reclamation unit", now);
  stats_.cycles = now - start;
  return now;
}

bool ReclamationUnit::step(Cycle now, std::span<const SweepBlock> blocks, const Swept& swept) {
  bool progress = false;
  if (memory_.next_event() <= now) {
    responses_.clear();
    memory_.advance(now, responses_);
    for (const MemResponse& r : responses_) on_response(r, blocks);
    progress = !responses_.empty();
  }
  if (listed_ != blocks.size()) progress |= read_block_list(now, blocks);
  // Round robin from the sweeper after the last that acted, which may
  // change as the loop goes. The sums stay below twice the count: a
  // subtraction, not a division.
  auto n = static_cast<unsigned>(sweepers_.size());
  for (unsigned k = 0; k < n; ++k) {
    unsigned id = next_sweeper_ + k;
    if (id >= n) id -= n;
    if (step_sweeper(sweepers_[id], id, now, blocks, swept)) {
      progress = true;
      next_sweeper_ = id + 1 == n ? 0 : id + 1;
    }
  }
  return progress;
}

// Whether a step could do anything without a memory response, as things
// stand: the list reader or a sweeper with a request to send (the port is
// free at a new cycle if the memory takes one), or a sweeper to take a
// block that has arrived.
bool ReclamationUnit::may_act(std::span<const SweepBlock> blocks) const {
  bool can_send = memory_.can_accept();
  if (can_send && listed_ != blocks.size() && list_reads_in_flight_ == 0 &&
      arrived_ - ready_ < kEntriesPerLine)
    return true;
  for (const Sweeper& s : sweepers_) {
    switch (s.state) {
      case State::kIdle:
        if (ready_ != arrived_) return true;
        break;
      case State::kWaitCell:
      case State::kWaitHeader:
        break;
      default:
        if (can_send) return true;
        break;
    }
  }
  return false;
}

// The block list, a line of 8 entries at a time, kept a line ahead of the
// sweepers.
bool ReclamationUnit::read_block_list(Cycle now, std::span<const SweepBlock> blocks) {
  if (listed_ == blocks.size() || list_reads_in_flight_ > 0 || arrived_ - ready_ >= kEntriesPerLine ||
      !port_.ready(now))
    return false;
  uint64_t line = listed_ / kEntriesPerLine;
  port_.submit(MemRequest{kBlockListBase + line * 64, 64, false, Source::kSweeper, kListTag | listed_}, now);
  list_reads_in_flight_++;
  stats_.list_reads++;
  listed_ = std::min<size_t>(blocks.size(), (line + 1) * kEntriesPerLine);
  return true;
}

bool ReclamationUnit::step_sweeper(Sweeper& s, unsigned id, Cycle now, std::span<const SweepBlock> blocks,
                                   const Swept& swept) {
  switch (s.state) {
    case State::kIdle:
      if (ready_ == arrived_) return false;
      s.block = ready_++;
      s.cell = 0;
      s.linked.clear();
      stats_.blocks++;
      s.state = blocks[s.block].cells ? State::kReadCell : State::kWriteBlock;
      return true;
    case State::kReadCell:
    case State::kReadHeader:
    case State::kLink:
    case State::kWriteBlock:
      break;
    case State::kWaitCell:
    case State::kWaitHeader:
      return false;
  }
  if (!port_.ready(now)) return false;
  const SweepBlock& b = blocks[s.block];
  Word* cell = b.begin + static_cast<uint64_t>(s.cell) * b.cell_words;
  switch (s.state) {
    case State::kReadCell:
      port_.submit(MemRequest{reinterpret_cast<uint64_t>(cell), kWordSize, false, Source::kSweeper, id}, now);
      // The host reads the cell when the simulated read returns: its line
      // comes into the host's cache meanwhile.
      __builtin_prefetch(cell);
      stats_.cell_reads++;
      s.state = State::kWaitCell;
      break;
    case State::kReadHeader:
      port_.submit(MemRequest{reinterpret_cast<uint64_t>(cell + 1 + (*cell >> 2)), kWordSize, false,
                              Source::kSweeper, id},
                   now);
      stats_.header_reads++;
      s.state = State::kWaitHeader;
      break;
    case State::kLink:
      port_.submit(MemRequest{reinterpret_cast<uint64_t>(cell), kWordSize, true, Source::kSweeper, id}, now);
      stats_.link_writes++;
      stats_.freed_or_free_cells++;
      if (config_.record_links) s.linked.push_back(s.cell);
      next_cell(s, blocks);
      break;
    case State::kWriteBlock:
      port_.submit(MemRequest{kBlockListBase + s.block * kWordSize, kWordSize, true, Source::kSweeper, id},
                   now);
      stats_.block_writes++;
      swept(s.block, s.linked);
      s.state = State::kIdle;
      break;
    default:
      break;
  }
  return true;
}

void ReclamationUnit::on_response(const MemResponse& r, std::span<const SweepBlock> blocks) {
  uint64_t tag = r.request.tag;
  if (tag & kListTag) {
    uint64_t first = tag & ~kListTag;
    arrived_ = std::min<uint64_t>(blocks.size(), first / kEntriesPerLine * kEntriesPerLine + 8);
    list_reads_in_flight_--;
    return;
  }
  if (r.request.write) return;  // a posted write's acknowledgement
  Sweeper& s = sweepers_[tag];
  const SweepBlock& b = blocks[s.block];
  Word* cell = b.begin + static_cast<uint64_t>(s.cell) * b.cell_words;
  Word first = *cell;
  if (s.state == State::kWaitCell) {
    stats_.cells++;
    uint64_t tag_bits = first & Header::kTagMask;
    if (tag_bits == 0) {
      s.state = State::kLink;  // free: linked again
    } else if (tag_bits == Header::kCountTag) {
      s.state = State::kReadHeader;
    } else if (Header::is_marked(first)) {
      next_cell(s, blocks);
    } else {
      s.state = State::kLink;
    }
    return;
  }
  // kWaitHeader
  if (Header::is_marked(*(cell + 1 + (first >> 2)))) {
    next_cell(s, blocks);
  } else {
    s.state = State::kLink;
  }
}

void ReclamationUnit::next_cell(Sweeper& s, std::span<const SweepBlock> blocks) {
  s.cell++;
  s.state = s.cell < blocks[s.block].cells ? State::kReadCell : State::kWriteBlock;
}

std::string sweep_disagreement(const SweepBlock& block, std::span<const uint32_t> linked,
                               const Word* free_list, bool all_free) {
  std::vector<uint32_t> freed;
  if (all_free) {
    for (uint32_t c = 0; c < block.cells; ++c) freed.push_back(c);
  } else {
    // Bounded by the block's cells: a corrupt list must not loop.
    for (const Word* p = free_list; p && freed.size() <= block.cells; p = reinterpret_cast<const Word*>(*p))
      freed.push_back(static_cast<uint32_t>(static_cast<uint64_t>(p - block.begin) / block.cell_words));
  }
  size_t u = 0, f = 0;
  while (u < linked.size() || f < freed.size()) {
    if (u < linked.size() && f < freed.size() && linked[u] == freed[f]) {
      ++u, ++f;
      continue;
    }
    bool unit_only = f == freed.size() || (u < linked.size() && linked[u] < freed[f]);
    uint32_t cell = unit_only ? linked[u] : freed[f];
    return "cell " + std::to_string(cell) + " of " + std::to_string(block.cells) + ": the " +
           (unit_only ? "reclamation unit freed it, the software sweep kept it"
                      : "software sweep freed it, the reclamation unit kept it");
  }
  return "";
}

}  // namespace gc::accel
