#include "gc/spaces/marksweep_space.h"

#include <algorithm>

#include "gc/heap/identity_hash.h"

namespace gc {

namespace {

constexpr observe::Counter kEmptyBlocks{"empty blocks", observe::Unit::kBlocks};
// What the blocks hold after a sweep: levels, not amounts that add up.
constexpr observe::Counter kLiveCellBytes{"live cell bytes", observe::Unit::kBytes,
                                          observe::CounterKind::kPeak};
constexpr observe::Counter kLiveObjectBytes{"live object bytes", observe::Unit::kBytes,
                                            observe::CounterKind::kPeak};
constexpr observe::Counter kInternalFragmentationBytes{"internal fragmentation bytes", observe::Unit::kBytes,
                                                       observe::CounterKind::kPeak};
constexpr observe::Counter kFreeCellBytes{"free cell bytes", observe::Unit::kBytes,
                                          observe::CounterKind::kPeak};
constexpr observe::Counter kBlockTailBytes{"block tail bytes", observe::Unit::kBytes,
                                           observe::CounterKind::kPeak};
constexpr observe::Counter kBytesInBlocks{"block bytes", observe::Unit::kBytes, observe::CounterKind::kPeak};

}  // namespace

using marksweep::kBlockBytes;
using marksweep::kBlockWords;
using marksweep::kClassWords;
using marksweep::kSizeClasses;

namespace {

// Room for startup (prelude, class table, interned strings) without a
// collection, and little memory touched by a short script: the same as
// semispace's two initial 4 MB semispaces.
constexpr uint64_t kInitialHeapBytes = 8ull << 20;

// The smallest --heap honoured: a few blocks for a few size classes, so
// that tests of out-of-memory behaviour can use tiny heaps.
constexpr uint64_t kMinHeapBytes = 8 * kBlockBytes;

// After a collection the next one starts when the heap has grown by as
// much as is live beyond what the live data occupies now (the trigger is
// the occupied bytes plus the live bytes): a collection costs marking (live
// data) plus sweeping (the heap), so allocating at least the live data's
// worth between collections bounds the collection cost per allocated byte,
// as a copying collector's doubling rule does.
constexpr uint64_t kHeadroomPerLiveByte = 1;

// Address space for large objects, in heaps: a fragmented region must not
// refuse what the byte bound allows (as semispace reserves).
constexpr uint64_t kLargeRegionHeaps = 4;

// Blocks claimed at a time by a sweeping thread: enough that the claim
// counter is not contended, few enough to balance a small heap.
constexpr uint64_t kSweepClaimBlocks = 8;

// Heaps of at most this many blocks (1 MB) are swept by the collecting
// thread alone: tens of microseconds of sweeping, less than waking the
// other GC threads costs (and under --gc-stress every allocation collects).
constexpr uint64_t kSerialSweepBlocks = 64;

uint64_t block_region_bytes(uint64_t max_heap) {
  return (max_heap + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
}

uint64_t list_length(const Word* cell) {
  uint64_t n = 0;
  for (; cell; cell = reinterpret_cast<const Word*>(*cell)) ++n;
  return n;
}

constexpr uint64_t cell_bytes(unsigned size_class) { return uint64_t{kClassWords[size_class]} * kWordSize; }

}  // namespace

uint64_t MarkSweepSpace::reservation_bytes(uint64_t max_heap) {
  return block_region_bytes(max_heap) + kLargeRegionHeaps * round_up_pages(max_heap);
}

HeapOptions MarkSweepSpace::resolved_options(const HeapOptions& in) {
  return resolved_heap_options(in, kMinHeapBytes);
}

MarkSweepSpace::MarkSweepSpace(const HeapOptions& options, GcStats& stats, observe::Recorder& events)
    : stats_(stats),
      events_(events),
      max_heap_bytes_(options.max_heap_bytes),
      poison_(options.poison_freed_memory()),
      reservation_(reservation_bytes(max_heap_bytes_)),
      cards_(reservation_),
      blocks_begin_(reservation_.base()),
      max_blocks_(block_region_bytes(max_heap_bytes_) / kBlockBytes),
      los_(reservation_.base() + block_region_bytes(max_heap_bytes_) / kWordSize, reservation_.end()),
      trigger_bytes_(std::min(kInitialHeapBytes, max_heap_bytes_)) {
  describe_events();
}

void MarkSweepSpace::describe_events() {
  // Each size class's cells after a sweep: levels, not amounts that add up.
  class_counter_names_.reserve(2 * kSizeClasses);
  for (unsigned c = 0; c < kSizeClasses; ++c) {
    std::string cell = "cells " + std::to_string(cell_bytes(c)) + " B: ";
    class_counter_names_.push_back(cell + "live");
    class_counter_names_.push_back(cell + "free");
  }
  for (const std::string& n : class_counter_names_)
    class_counters_.push_back({n.c_str(), observe::Unit::kCells, observe::CounterKind::kPeak});
  events_.add_panel(
      {"Cell occupancy",
       "live cells (% of block bytes)",
       "How much of the memory of the blocks in use (those holding a live cell after the sweep) is "
       "live cells, their padding included: the rest is free cells and block tails, which a "
       "non-moving collector cannot give back.",
       {{"occupancy", &kLiveCellBytes, &kBytesInBlocks, 100}}});
  events_.add_panel(
      {"Fragmentation",
       "% of block bytes",
       "Internal: the padding between objects and the size of their cells. External: free cells in "
       "blocks that also hold live ones (only objects of the same size class can use them). Tails: "
       "the end of a block too short for one more cell of its class.",
       {{"internal", &kInternalFragmentationBytes, &kBytesInBlocks, 100},
        {"external", &kFreeCellBytes, &kBytesInBlocks, 100},
        {"tails", &kBlockTailBytes, &kBytesInBlocks, 100}}});
}

// The sweep

void MarkSweepSpace::retire_allocation_lists() {
  for (unsigned c = 0; c < kSizeClasses; ++c) {
    heads_[c] = nullptr;
    installed_cells_[c] = 0;
  }
}

void MarkSweepSpace::sweep(parallel::WorkerPool& pool) {
  std::vector<SweepTally> tallies = sweep_blocks(pool);
  sweep_large_objects();
  account_sweep(tallies);
}

// Blocks are claimed a few at a time by every GC thread (the reclamation
// unit's block sweepers, Maas et al. 2018, L166-168).
std::vector<MarkSweepSpace::SweepTally> MarkSweepSpace::sweep_blocks(parallel::WorkerPool& pool) {
  std::vector<SweepTally> tallies(pool.size());
  std::atomic<uint64_t> next{0};
  auto job = [&](unsigned worker) {
    SweepTally& t = tallies[worker];
    t.worker = worker;
    t.recording = observe::Recording::active();
    events_.phase(worker, "sweep", [&] {
      for (uint64_t i, end; claim_blocks(next, i, end);)
        for (; i < end; ++i)
          if (!blocks_[i].empty()) sweep_block(i, t);
    });
    events_.count(worker, kBlocksSwept, t.blocks);
    events_.count(worker, kCellsFreed, t.freed_cells);
  };
  if (blocks_.size() <= kSerialSweepBlocks) {
    job(0);
  } else {
    pool.run(job);
  }
  return tallies;
}

// The next kSweepClaimBlocks blocks, [begin, end); false when none is left.
bool MarkSweepSpace::claim_blocks(std::atomic<uint64_t>& next, uint64_t& begin, uint64_t& end) const {
  begin = next.fetch_add(kSweepClaimBlocks, std::memory_order_relaxed);
  if (begin >= blocks_.size()) return false;
  end = std::min<uint64_t>(blocks_.size(), begin + kSweepClaimBlocks);
  return true;
}

// One block, cell by cell (Maas et al. 2018, L262-264): a cell whose first
// word has tag 00 is free; otherwise the first word is the count word or
// the header, which holds the mark bit. Marked cells are unmarked; the
// others join the block's free list, built in address order so that the
// mutator fills the block from its start.
// A recorded collection's frees in this block (--gc-animate), told before
// the sweep, so that the sweep's own loop has no test for a recording.
void MarkSweepSpace::record_frees(const Block& b, const SweepTally& t) const {
  for (Word *cell = b.begin, *end = b.cells_end(); cell < end; cell += b.cell_words) {
    Word first = *cell;
    if ((first & Header::kTagMask) == 0) continue;
    if (!Header::is_marked(*header_from_start(cell))) t.recording->free(t.worker, cell, b.cell_words);
  }
}

void MarkSweepSpace::sweep_block(size_t index, SweepTally& t) {
  Block& b = blocks_[index];
  if (t.recording) [[unlikely]]
    record_frees(b, t);
  Word* head = nullptr;
  Word** tail = &head;
  uint32_t free = 0;
  uint64_t live_words = 0;
  const uint32_t cw = b.cell_words;
  for (Word *cell = b.begin, *end = b.cells_end(); cell < end; cell += cw) {
    Word first = *cell;
    if ((first & Header::kTagMask) != 0) {
      Word* h = (first & Header::kTagMask) == Header::kCountTag ? cell + 1 + (first >> 2) : cell;
      Word hw = *h;
      if (Header::is_marked(hw)) {
        *h = hw & ~Header::kMarkBit;
        live_words += object_words(hw);
        continue;
      }
      if (poison_) std::fill(cell + 1, cell + cw, Header::kPoison);
      t.freed_cells++;
    }
    *tail = cell;
    tail = reinterpret_cast<Word**>(cell);
    ++free;
  }
  *tail = nullptr;
  t.blocks++;
  t.live_cells[b.size_class] += b.cells - free;
  t.live_words += live_words;
  b.live_words = live_words;
  b.free_cells = free;
  if (free == b.cells) {
    t.emptied++;
    b.size_class = Block::kNoSizeClass;
    b.cell_words = 0;
    b.cells = 0;
    b.free_cells = 0;
    b.free_list = nullptr;
    return;
  }
  t.free_cells[b.size_class] += free;
  b.free_list = head;
}

void MarkSweepSpace::sweep_large_objects() {
  events_.phase(0, "sweep large objects", [&] { los_.sweep(poison_); });
}

// On the collecting thread: the threads' tallies summed into the per-class
// counters and the bytes in use, and the per-class lists rebuilt.
void MarkSweepSpace::account_sweep(const std::vector<SweepTally>& tallies) {
  SweepTally all;
  for (const SweepTally& t : tallies) {
    for (unsigned c = 0; c < kSizeClasses; ++c) {
      all.live_cells[c] += t.live_cells[c];
      all.free_cells[c] += t.free_cells[c];
    }
    all.live_words += t.live_words;
    all.blocks += t.blocks;
    all.emptied += t.emptied;
  }
  cell_bytes_in_use_ = 0;
  for (unsigned c = 0; c < kSizeClasses; ++c) cell_bytes_in_use_ += all.live_cells[c] * cell_bytes(c);
  rebuild_class_lists();
  report_sweep(all);
}

// What the sweep found in each block as it swept it: for a lazy sweep,
// blocks swept early may have had cells allocated since.
void MarkSweepSpace::report_sweep(const SweepTally& all) {
  uint64_t live_bytes = 0;
  uint64_t free_bytes = 0;
  for (unsigned c = 0; c < kSizeClasses; ++c) {
    live_bytes += all.live_cells[c] * cell_bytes(c);
    free_bytes += all.free_cells[c] * cell_bytes(c);
    if (all.live_cells[c] + all.free_cells[c] == 0) continue;
    events_.count(0, class_counters_[2 * c], all.live_cells[c]);
    events_.count(0, class_counters_[2 * c + 1], all.free_cells[c]);
  }
  uint64_t nonempty_bytes = (all.blocks - all.emptied) * kBlockBytes;
  events_.count(0, kBytesInBlocks, nonempty_bytes);
  events_.count(0, kLiveCellBytes, live_bytes);
  events_.count(0, kLiveObjectBytes, all.live_words * kWordSize);
  events_.count(0, kInternalFragmentationBytes, live_bytes - all.live_words * kWordSize);
  events_.count(0, kFreeCellBytes, free_bytes);
  events_.count(0, kBlockTailBytes, nonempty_bytes - live_bytes - free_bytes);
  events_.count(0, kEmptyBlocks, all.emptied);
  stats_.last_live_bytes = all.live_words * kWordSize + los_.committed_bytes();
}

// The lazy sweep

void MarkSweepSpace::begin_lazy_sweep() {
  account_allocation_lists();
  retire_allocation_lists();
  sweep_large_objects();
  for (auto& list : lazy_blocks_) list.clear();
  lazy_remaining_ = 0;
  // Highest address first, so that each class's lowest block is swept first.
  for (uint64_t i = blocks_.size(); i-- > 0;) {
    if (blocks_[i].empty()) continue;
    lazy_blocks_[blocks_[i].size_class].push_back(static_cast<uint32_t>(i));
    lazy_remaining_++;
  }
  lazy_class_ = 0;
  lazy_tally_ = SweepTally{};
  // Each block to sweep rejoins its class's list once swept; the empty
  // blocks stay available throughout.
  for (auto& list : available_) list.clear();
}

bool MarkSweepSpace::sweep_some(uint64_t cells, unsigned wanting_class) {
  uint64_t visited = 0;
  // The class whose list ran out first, until one of its blocks has a free
  // cell: else its next cell would come from an empty block while its own
  // blocks wait with free ones, and each cycle would spread the class over
  // one more block (pinned there by whatever of it stays live).
  if (wanting_class < kSizeClasses) {
    std::vector<uint32_t>& own = lazy_blocks_[wanting_class];
    while (!own.empty() && available_[wanting_class].empty() && (visited == 0 || visited < cells)) {
      visited += sweep_lazily(own.back());
      own.pop_back();
    }
  }
  while (lazy_remaining_ > 0 && (visited == 0 || visited < cells)) {
    while (lazy_blocks_[lazy_class_].empty()) lazy_class_++;
    std::vector<uint32_t>& list = lazy_blocks_[lazy_class_];
    visited += sweep_lazily(list.back());
    list.pop_back();
  }
  if (lazy_remaining_ > 0) return false;
  events_.count(0, kBlocksSwept, lazy_tally_.blocks);
  events_.count(0, kCellsFreed, lazy_tally_.freed_cells);
  rebuild_class_lists();
  report_sweep(lazy_tally_);
  return true;
}

// One block of the lazy sweep; the cells it visited.
uint64_t MarkSweepSpace::sweep_lazily(uint32_t i) {
  const Block& b = blocks_[i];
  uint64_t cells = b.cells;
  uint64_t bytes = cell_bytes(b.size_class);
  uint64_t freed_before = lazy_tally_.freed_cells;
  lazy_tally_.recording = observe::Recording::active();
  sweep_block(i, lazy_tally_);
  cell_bytes_in_use_ -= (lazy_tally_.freed_cells - freed_before) * bytes;
  lazy_remaining_--;
  // Committed, so taken first (empty_blocks_'s order).
  if (b.empty()) {
    empty_blocks_.push_back(i);
  } else if (b.free_cells) {
    available_[b.size_class].push_back(i);
  }
  return cells;
}

// The blocks with free cells, per class, lowest address taken first; the
// empty ones in one pool for every class, committed ones taken first.
void MarkSweepSpace::rebuild_class_lists() {
  for (auto& list : available_) list.clear();
  empty_blocks_.clear();
  for (uint64_t i = blocks_.size(); i-- > 0;) {
    const Block& b = blocks_[i];
    if (b.empty()) {
      if (!b.committed) empty_blocks_.push_back(static_cast<uint32_t>(i));
    } else if (b.free_cells) {
      available_[b.size_class].push_back(static_cast<uint32_t>(i));
    }
  }
  for (uint64_t i = blocks_.size(); i-- > 0;)
    if (blocks_[i].empty() && blocks_[i].committed) empty_blocks_.push_back(static_cast<uint32_t>(i));
}

// The sizing policy (the header). Empty blocks above the trigger give their
// pages back, highest addresses first.
void MarkSweepSpace::resize(uint64_t pending_large_bytes) {
  uint64_t occupied = (blocks_.size() - empty_blocks_.size()) * kBlockBytes + los_.committed_bytes();
  uint64_t live = cell_bytes_in_use_ + los_.committed_bytes();
  uint64_t target = std::max(kInitialHeapBytes, occupied + kHeadroomPerLiveByte * live);
  trigger_bytes_ = std::min(target, max_heap_bytes_);
  release_empty_blocks(trigger_bytes_ > pending_large_bytes ? trigger_bytes_ - pending_large_bytes : 0);
}

void MarkSweepSpace::release_empty_blocks(uint64_t keep) {
  if (committed_block_bytes() + los_.committed_bytes() <= keep) return;
  for (uint32_t i : empty_blocks_) {
    if (committed_block_bytes() + los_.committed_bytes() <= keep) break;
    Block& b = blocks_[i];
    if (!b.committed) continue;
    Reservation::release_pages(b.begin, b.end());
    b.committed = false;
    committed_blocks_--;
  }
  // Released blocks are taken last.
  std::stable_partition(empty_blocks_.begin(), empty_blocks_.end(),
                        [&](uint32_t i) { return !blocks_[i].committed; });
}

// The allocator's slow path onto blocks

Word* MarkSweepSpace::take_cell(unsigned size_class, uint64_t limit_bytes) {
  if (!heads_[size_class] && !install_next_block(size_class, limit_bytes)) return nullptr;
  Word* cell = heads_[size_class];
  heads_[size_class] = reinterpret_cast<Word*>(*cell);
  return cell;
}

// The class's list is empty: all the cells it was installed with are
// allocated. The next one is a block the sweep left with free cells, else
// an empty block formatted for the class.
bool MarkSweepSpace::install_next_block(unsigned size_class, uint64_t limit_bytes) {
  account_allocation_list(size_class);
  Block* b = nullptr;
  if (!available_[size_class].empty()) {
    b = &blocks_[available_[size_class].back()];
    available_[size_class].pop_back();
  } else {
    int64_t i = acquire_empty_block(limit_bytes);
    if (i < 0) return false;
    b = &blocks_[static_cast<size_t>(i)];
    format_block(*b, size_class);
  }
  heads_[size_class] = b->free_list;
  installed_cells_[size_class] = b->free_cells;
  // The cells are the mutator's now: the block has none left to hand out.
  b->free_list = nullptr;
  b->free_cells = 0;
  return true;
}

// An empty block: a committed one from the pool, else one whose pages were
// given back, else a new one from the region, as long as the heap stays
// within limit_bytes. -1 when there is none.
int64_t MarkSweepSpace::acquire_empty_block(uint64_t limit_bytes) {
  if (!empty_blocks_.empty() && blocks_[empty_blocks_.back()].committed) {
    uint32_t i = empty_blocks_.back();
    empty_blocks_.pop_back();
    return i;
  }
  if (committed_block_bytes() + kBlockBytes + los_.committed_bytes() > limit_bytes) return -1;
  if (!empty_blocks_.empty()) {
    uint32_t i = empty_blocks_.back();
    empty_blocks_.pop_back();
    return i;
  }
  if (blocks_.size() >= max_blocks_) return -1;
  Block b;
  b.begin = blocks_begin_ + blocks_.size() * kBlockWords;
  cards_.clean(b.begin, b.end());
  blocks_.push_back(b);
  return static_cast<int64_t>(blocks_.size() - 1);
}

// Cuts an empty block into cells of the class, all free, linked in address
// order. In verify and stress modes the cells' other words are poison.
void MarkSweepSpace::format_block(Block& b, unsigned size_class) {
  if (!b.committed) {
    b.committed = true;
    committed_blocks_++;
    note_peak_size();
  }
  const uint32_t cw = kClassWords[size_class];
  b.size_class = static_cast<uint8_t>(size_class);
  b.cell_words = cw;
  b.cells = marksweep::cells_per_block(size_class);
  b.free_cells = b.cells;
  b.live_words = 0;
  if (poison_) std::fill(b.begin, b.end(), Header::kPoison);
  Word* end = b.cells_end();
  for (Word* cell = b.begin; cell < end; cell += cw)
    *cell = cell + cw < end ? reinterpret_cast<Word>(cell + cw) : Word{0};
  b.free_list = b.begin;
}

Word* MarkSweepSpace::allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words,
                                     uint64_t limit_bytes) {
  uint64_t pages = LargeObjectSpace::pages_for(words);
  uint64_t bytes = pages * kPageBytes;
  // Empty blocks kept for small objects make way before a collection does:
  // otherwise a heap whose blocks sit at the trigger collects for every
  // large object (a string grown a character at a time collected at each).
  if (bytes <= limit_bytes) release_empty_blocks(limit_bytes - bytes);
  if (committed_block_bytes() + los_.committed_bytes() + bytes > limit_bytes) return nullptr;
  LargeObjectSpace::Object o = los_.allocate(class_id, nrefs, raw_words);
  if (!o.header) return nullptr;
  cards_.clean(o.start, o.end());
  stats_.bytes_allocated += words * kWordSize;
  note_peak_size();
  return o.header;
}

void MarkSweepSpace::account_allocation_lists() {
  for (unsigned c = 0; c < kSizeClasses; ++c) account_allocation_list(c);
}

void MarkSweepSpace::account_allocation_list(unsigned size_class) {
  if (installed_cells_[size_class] == 0) return;
  uint64_t left = list_length(heads_[size_class]);
  uint64_t bytes = (installed_cells_[size_class] - left) * cell_bytes(size_class);
  stats_.bytes_allocated += bytes;
  cell_bytes_in_use_ += bytes;
  installed_cells_[size_class] = static_cast<uint32_t>(left);
}

uint64_t MarkSweepSpace::unaccounted_cell_bytes() const {
  uint64_t bytes = 0;
  for (unsigned c = 0; c < kSizeClasses; ++c)
    if (installed_cells_[c]) bytes += (installed_cells_[c] - list_length(heads_[c])) * cell_bytes(c);
  return bytes;
}

void MarkSweepSpace::note_peak_size() {
  stats_.peak_heap_bytes = std::max(stats_.peak_heap_bytes, size_bytes());
}

// Queries

uint64_t MarkSweepSpace::used_bytes() const {
  return cell_bytes_in_use_ + unaccounted_cell_bytes() + los_.committed_bytes();
}

const MarkSweepSpace::Block* MarkSweepSpace::block_containing(const void* addr) const {
  uint64_t offset = reservation_.offset_of(addr);
  if (!reservation_.contains(addr) || offset / kBlockBytes >= blocks_.size()) return nullptr;
  return &blocks_[offset / kBlockBytes];
}

uint64_t MarkSweepSpace::hash_of_address(const Word* header) const {
  return address_hash(reservation_, header);
}

// The heap map: one space per size class in use, the empty blocks, the
// large objects. A class's used bytes are its allocated cells: those of its
// blocks not in a free list (installed lists count as handed out, less what
// is left in the one the mutator pops).
void MarkSweepSpace::describe_spaces(std::vector<observe::SpaceUsage>& out) const {
  uint64_t blocks[kSizeClasses] = {};
  uint64_t cells[kSizeClasses] = {};
  uint64_t empty = 0;
  for (const Block& b : blocks_) {
    if (b.empty()) {
      empty += b.committed;
      continue;
    }
    blocks[b.size_class]++;
    cells[b.size_class] += b.cells - b.free_cells;
  }
  for (unsigned c = 0; c < kSizeClasses; ++c) {
    if (!blocks[c]) continue;
    uint64_t used = (cells[c] - list_length(heads_[c])) * cell_bytes(c);
    out.push_back({"cells " + std::to_string(cell_bytes(c)) + " B",
                   "size class " + std::to_string(c) + ": " + std::to_string(blocks[c]) + " blocks",
                   blocks[c] * kBlockBytes, used});
  }
  out.push_back({"empty blocks", "free for any size class", empty * kBlockBytes, 0});
  out.push_back(
      {"large objects", "large-object pages: never move", los_.committed_bytes(), los_.committed_bytes()});
}

void MarkSweepSpace::describe_heap(verify::HeapShape& out) const {
  for (const Block& b : blocks_)
    if (!b.empty()) out.cell_spaces.push_back({"size-class blocks", b.begin, b.cells_end(), b.cell_words});
  out.large_space = {"large", los_.begin(), reservation_.end()};
  for (const LargeObjectSpace::Object& o : los_.objects()) out.large_objects.push_back(o.header);
}

}  // namespace gc
