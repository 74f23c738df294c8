#include "gc/collectors/marksweep/marksweep.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>

#include "gc/parallel/clock.h"
#include "gc/parallel/tracer.h"

namespace gc {

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

HeapOptions resolved_options(const HeapOptions& in) {
  HeapOptions o = in;
  if (o.max_heap_bytes == 0) o.max_heap_bytes = physical_memory_bytes() / 4;
  o.max_heap_bytes = std::max(round_up_pages(o.max_heap_bytes), kMinHeapBytes);
  return o;
}

uint64_t block_region_bytes(uint64_t max_heap) {
  return (max_heap + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
}

// A 64-bit finaliser (splitmix64): neighbouring addresses get unrelated
// hashes, which fit a double's mantissa.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58'476D'1CE4'E5B9ull;
  x ^= x >> 27;
  x *= 0x94D0'49BB'1331'11EBull;
  x ^= x >> 31;
  return x & ((1ull << 52) - 1);
}

uint64_t list_length(const Word* cell) {
  uint64_t n = 0;
  for (; cell; cell = reinterpret_cast<const Word*>(*cell)) ++n;
  return n;
}

constexpr uint64_t cell_bytes(unsigned size_class) { return uint64_t{kClassWords[size_class]} * kWordSize; }

}  // namespace

// Answers after marking: a marked object survives where it is.
class MarkSweepWeakResolver final : public WeakResolver {
 public:
  Word* resolve(Word* header) override { return MarkSweep::is_marked(header) ? header : nullptr; }
};

MarkSweep::MarkSweep(RootSet& roots, const HeapOptions& options)
    : Collector(roots, resolved_options(options)),
      reservation_(block_region_bytes(options_.max_heap_bytes) +
                   kLargeRegionHeaps * round_up_pages(options_.max_heap_bytes)),
      cards_(reservation_),
      blocks_begin_(reservation_.base()),
      max_blocks_(block_region_bytes(options_.max_heap_bytes) / kBlockBytes),
      los_(reservation_.base() + block_region_bytes(options_.max_heap_bytes) / kWordSize, reservation_.end()),
      trigger_bytes_(std::min(kInitialHeapBytes, options_.max_heap_bytes)),
      overflow_(0),
      worker_totals_(std::max(1u, options_.gc_threads)) {
  card_base = cards_.biased_base();
  // Every allocation reaches allocate_slow in stress mode; otherwise the
  // inline path pops the lists (top == limit == nullptr: no bump buffer).
  if (options_.stress_interval == 0) {
    size_class_of = marksweep::kSizeClassOfWords.data();
    free_lists = heads_;
  }
  unsigned threads = std::max(1u, options_.gc_threads);
  pool_ = std::make_unique<parallel::WorkerPool>(threads);
  if (!serial())
    for (unsigned w = 0; w < threads; ++w)
      deques_.push_back(
          std::make_unique<parallel::TaskDeque>(parallel::deque_capacity(options_.gc_deque_tasks)));
  describe_events();
}

MarkSweep::~MarkSweep() = default;

std::unique_ptr<Collector> create_marksweep(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<MarkSweep>(roots, options);
}

void MarkSweep::describe_events() {
  for (const char* c : {"objects marked", "tasks", "overflow tasks", "chunk tasks", "cells freed",
                        "empty blocks", "blocks swept"})
    events.describe_counter(c, "objects");
  for (const char* c : {"live cell bytes", "live object bytes", "internal fragmentation bytes",
                        "free cell bytes", "block tail bytes", "block bytes"})
    events.describe_counter(c, "bytes");
  events.describe_counter("termination idle ns", "ns");
  events.describe_counter("root groups", "groups");
  class_counter_names_.reserve(2 * kSizeClasses);
  for (unsigned c = 0; c < kSizeClasses; ++c) {
    std::string cell = "cells " + std::to_string(cell_bytes(c)) + " B: ";
    class_counter_names_.push_back(cell + "live");
    class_counter_names_.push_back(cell + "free");
  }
  for (const std::string& n : class_counter_names_) events.describe_counter(n.c_str(), "cells");
  events.add_panel(
      {"Cell occupancy",
       "live cells (% of block bytes)",
       "How much of the blocks' memory holds live objects after each sweep: the rest is free cells, "
       "cell padding and block tails, which a non-moving collector cannot give back.",
       {{"occupancy", "live cell bytes", "block bytes", 100}}});
  events.add_panel(
      {"Fragmentation",
       "% of block bytes",
       "Internal: the padding between objects and the size of their cells. External: free cells in "
       "blocks that also hold live ones (only objects of the same size class can use them).",
       {{"internal", "internal fragmentation bytes", "block bytes", 100},
        {"external", "free cell bytes", "block bytes", 100}}});
}

// ---------------------------------------------------------------------------
// One collection

void MarkSweep::collect(GcCause cause) { collect_for(cause, 0); }

void MarkSweep::collect_for(GcCause cause, uint64_t pending_large_bytes) {
  // Accounted, the lists hold no unaccounted cells: dropping them leaves
  // heap_used as the recorder reads it at the collection's start.
  account_allocation_lists();
  retire_allocation_lists();
  run_collection(observe::CollectionKind::kFull, cause, [this, pending_large_bytes] {
    mark_phase();
    events.phase_start(0, "weak references");
    process_weak();
    events.phase_end(0, "weak references");
    sweep_phase();
    events.phase_start(0, "resize");
    resize_heap(pending_large_bytes);
    events.phase_end(0, "resize");
    return true;
  });
}

// The lists the mutator was popping are dropped: their cells are still free
// (a next pointer in the first word) and the sweep links them again.
void MarkSweep::retire_allocation_lists() {
  for (unsigned c = 0; c < kSizeClasses; ++c) {
    heads_[c] = nullptr;
    installed_cells_[c] = 0;
  }
}

void MarkSweep::process_weak() {
  MarkSweepWeakResolver resolver;
  roots_.process_weak(resolver);
}

// What one sweeping thread found, per size class.
struct SweepTally {
  uint64_t live_cells[kSizeClasses] = {};
  uint64_t free_cells[kSizeClasses] = {};
  uint64_t live_words = 0;
  uint64_t freed_cells = 0;
  uint64_t blocks = 0;
  uint64_t emptied = 0;
};

namespace {

// One block, cell by cell (Maas et al. 2018, L262-264): a cell whose first
// word has tag 00 is free; otherwise the first word is the count word or
// the header, which holds the mark bit. Marked cells are unmarked; the
// others join the block's free list, built in address order so that the
// mutator fills the block from its start.
void sweep_block(MarkSweep::Block& b, bool poison, SweepTally& t) {
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
      if (poison) std::fill(cell + 1, cell + cw, Header::kPoison);
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
    b.size_class = MarkSweep::Block::kNoSizeClass;
    b.cell_words = 0;
    b.cells = 0;
    b.free_cells = 0;
    b.free_list = nullptr;
    return;
  }
  t.free_cells[b.size_class] += free;
  b.free_list = head;
}

}  // namespace

// Blocks are claimed a few at a time by every GC thread (the reclamation
// unit's block sweepers, Maas et al. 2018, L166-168); then, on this thread,
// the per-class lists are rebuilt and the large-object space swept.
void MarkSweep::sweep_phase() {
  unsigned threads = pool_->size();
  std::vector<SweepTally> tallies(threads);
  std::atomic<uint64_t> next{0};
  const uint64_t count = blocks_.size();
  const bool poison = debug_poisoning();
  auto job = [&](unsigned worker) {
    uint64_t start = parallel::now_ns();
    events.phase_start(worker, "sweep");
    SweepTally& t = tallies[worker];
    for (;;) {
      uint64_t i = next.fetch_add(kSweepClaimBlocks, std::memory_order_relaxed);
      if (i >= count) break;
      for (uint64_t e = std::min(count, i + kSweepClaimBlocks); i < e; ++i)
        if (!blocks_[i].empty()) sweep_block(blocks_[i], poison, t);
    }
    events.phase_end(worker, "sweep");
    events.count(worker, "blocks swept", t.blocks);
    events.count(worker, "cells freed", t.freed_cells);
    worker_totals_[worker].busy_ns += parallel::now_ns() - start;
  };
  if (count <= kSerialSweepBlocks) {
    job(0);
  } else {
    pool_->run(job);
  }

  events.phase_start(0, "sweep large objects");
  los_.sweep(poison);
  events.phase_end(0, "sweep large objects");

  SweepTally all;
  for (const SweepTally& t : tallies) {
    for (unsigned c = 0; c < kSizeClasses; ++c) {
      all.live_cells[c] += t.live_cells[c];
      all.free_cells[c] += t.free_cells[c];
    }
    all.live_words += t.live_words;
    all.emptied += t.emptied;
  }
  cell_bytes_in_use_ = 0;
  uint64_t free_bytes = 0;
  for (unsigned c = 0; c < kSizeClasses; ++c) {
    cell_bytes_in_use_ += all.live_cells[c] * cell_bytes(c);
    free_bytes += all.free_cells[c] * cell_bytes(c);
    if (all.live_cells[c] + all.free_cells[c] == 0) continue;
    events.count(0, class_counter_names_[2 * c].c_str(), all.live_cells[c]);
    events.count(0, class_counter_names_[2 * c + 1].c_str(), all.free_cells[c]);
  }
  rebuild_class_lists();
  uint64_t nonempty_bytes = (blocks_.size() - empty_blocks_.size()) * kBlockBytes;
  events.count(0, "live cell bytes", cell_bytes_in_use_);
  events.count(0, "live object bytes", all.live_words * kWordSize);
  events.count(0, "internal fragmentation bytes", cell_bytes_in_use_ - all.live_words * kWordSize);
  events.count(0, "free cell bytes", free_bytes);
  events.count(0, "block tail bytes", nonempty_bytes - cell_bytes_in_use_ - free_bytes);
  events.count(0, "empty blocks", all.emptied);
  stats_.last_live_bytes = all.live_words * kWordSize + los_.committed_bytes();
}

// The blocks with free cells, per class, lowest address taken first; the
// empty ones in one pool for every class, committed ones taken first.
void MarkSweep::rebuild_class_lists() {
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

// The sizing policy (marksweep.h). Empty blocks above the trigger give their
// pages back, highest addresses first.
void MarkSweep::resize_heap(uint64_t pending_large_bytes) {
  uint64_t occupied = (blocks_.size() - empty_blocks_.size()) * kBlockBytes + los_.committed_bytes();
  uint64_t live = cell_bytes_in_use_ + los_.committed_bytes();
  uint64_t target = std::max(kInitialHeapBytes, occupied + kHeadroomPerLiveByte * live);
  trigger_bytes_ = std::min(target, options_.max_heap_bytes);
  uint64_t keep = trigger_bytes_ > pending_large_bytes ? trigger_bytes_ - pending_large_bytes : 0;
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

// ---------------------------------------------------------------------------
// Slow paths

Word* MarkSweep::allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  count_stress_allocation();
  if (nrefs > SizeCode::max(SizeCode::kRefMantissaBits) ||
      raw_words > SizeCode::max(SizeCode::kRawMantissaBits))
    return out_of_memory();
  uint64_t words = object_words(nrefs, raw_words);
  if (words > marksweep::kMaxCellObjectWords)
    return allocate_large(class_id, nrefs, raw_words, words, GcCause::kLargeAllocation);
  return allocate_cell(class_id, nrefs, raw_words, words);
}

Word* MarkSweep::allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  count_stress_allocation();
  if (nrefs > SizeCode::max(SizeCode::kRefMantissaBits) ||
      raw_words > SizeCode::max(SizeCode::kRawMantissaBits))
    return out_of_memory();
  return allocate_large(class_id, nrefs, raw_words, object_words(nrefs, raw_words),
                        GcCause::kLargeAllocation);
}

void MarkSweep::count_stress_allocation() {
  if (options_.stress_interval && ++stress_count_ % options_.stress_interval == 0)
    collect_for(GcCause::kStress, 0);
}

// Up to the trigger first; after a collection, up to --heap.
Word* MarkSweep::allocate_cell(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) {
  unsigned size_class = marksweep::kSizeClassOfWords[words];
  Word* cell = take_cell(size_class, trigger_bytes_);
  if (!cell) {
    collect_for(GcCause::kAllocationFailure, 0);
    cell = take_cell(size_class, options_.max_heap_bytes);
    if (!cell) return out_of_memory();
  }
  return format_object(cell, class_id, nrefs, raw_words);
}

Word* MarkSweep::take_cell(unsigned size_class, uint64_t limit_bytes) {
  if (!heads_[size_class] && !install_next_block(size_class, limit_bytes)) return nullptr;
  Word* cell = heads_[size_class];
  heads_[size_class] = reinterpret_cast<Word*>(*cell);
  return cell;
}

// The class's list is empty: all the cells it was installed with are
// allocated. The next one is a block the sweep left with free cells, else
// an empty block formatted for the class.
bool MarkSweep::install_next_block(unsigned size_class, uint64_t limit_bytes) {
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
int64_t MarkSweep::acquire_empty_block(uint64_t limit_bytes) {
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
void MarkSweep::format_block(Block& b, unsigned size_class) {
  if (!b.committed) {
    b.committed = true;
    committed_blocks_++;
    note_heap_size();
  }
  const uint32_t cw = kClassWords[size_class];
  b.size_class = static_cast<uint8_t>(size_class);
  b.cell_words = cw;
  b.cells = marksweep::cells_per_block(size_class);
  b.free_cells = b.cells;
  b.live_words = 0;
  if (debug_poisoning()) std::fill(b.begin, b.end(), Header::kPoison);
  Word* end = b.cells_end();
  for (Word* cell = b.begin; cell < end; cell += cw)
    *cell = cell + cw < end ? reinterpret_cast<Word>(cell + cw) : Word{0};
  b.free_list = b.begin;
}

Word* MarkSweep::allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words,
                                GcCause cause) {
  if (Word* h = try_allocate_large(class_id, nrefs, raw_words, words, trigger_bytes_)) return h;
  collect_for(cause, LargeObjectSpace::pages_for(words) * kPageBytes);
  if (Word* h = try_allocate_large(class_id, nrefs, raw_words, words, options_.max_heap_bytes)) return h;
  return out_of_memory();
}

Word* MarkSweep::try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words,
                                    uint64_t limit) {
  uint64_t pages = LargeObjectSpace::pages_for(words);
  uint64_t bytes = pages * kPageBytes;
  if (committed_block_bytes() + los_.committed_bytes() + bytes > limit) return nullptr;
  Word* start = los_.allocate_pages(pages);
  if (!start) return nullptr;
  cards_.clean(start, start + bytes / kWordSize);
  Word* h = format_object(start, class_id, nrefs, raw_words);
  los_.add_object(h, start, pages);
  stats_.bytes_allocated += words * kWordSize;
  note_heap_size();
  return h;
}

Word* MarkSweep::out_of_memory() {
  live_at_exhaustion_ = heap_used();
  return nullptr;
}

// The fast path pops without counting: what each list lost since it was
// last accounted is allocated (whole cells).
void MarkSweep::account_allocation_lists() {
  for (unsigned c = 0; c < kSizeClasses; ++c) account_allocation_list(c);
}

void MarkSweep::account_allocation_list(unsigned size_class) {
  if (installed_cells_[size_class] == 0) return;
  uint64_t left = list_length(heads_[size_class]);
  uint64_t bytes = (installed_cells_[size_class] - left) * cell_bytes(size_class);
  stats_.bytes_allocated += bytes;
  cell_bytes_in_use_ += bytes;
  installed_cells_[size_class] = static_cast<uint32_t>(left);
}

uint64_t MarkSweep::unaccounted_cell_bytes() const {
  uint64_t bytes = 0;
  for (unsigned c = 0; c < kSizeClasses; ++c)
    if (installed_cells_[c]) bytes += (installed_cells_[c] - list_length(heads_[c])) * cell_bytes(c);
  return bytes;
}

void MarkSweep::flush_stats() { account_allocation_lists(); }

void MarkSweep::note_heap_size() { stats_.peak_heap_bytes = std::max(stats_.peak_heap_bytes, heap_size()); }

// ---------------------------------------------------------------------------
// Queries

uint64_t MarkSweep::heap_used() const {
  return cell_bytes_in_use_ + unaccounted_cell_bytes() + los_.committed_bytes();
}

uint64_t MarkSweep::heap_size() const { return committed_block_bytes() + los_.committed_bytes(); }

const MarkSweep::Block* MarkSweep::block_containing(const void* addr) const {
  uint64_t offset = reservation_.offset_of(addr);
  if (!reservation_.contains(addr) || offset / kBlockBytes >= blocks_.size()) return nullptr;
  return &blocks_[offset / kBlockBytes];
}

uint64_t MarkSweep::hash_of_address(const Word* header) const { return mix(reservation_.offset_of(header)); }

uint64_t MarkSweep::identity_hash(Word* header) {
  Word h = *header;
  if (Header::hash_state(h) == HashState::kUnhashed) *header = Header::with_hash_state(h, HashState::kHashed);
  return hash_of_address(header);
}

// The heap map: one space per size class in use, the empty blocks, the
// large objects. A class's used bytes are its allocated cells: those of its
// blocks not in a free list (installed lists count as handed out, less what
// is left in the one the mutator pops).
void MarkSweep::describe_spaces(std::vector<observe::SpaceUsage>& out) const {
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

void MarkSweep::describe_heap(verify::HeapShape& out) const {
  for (const Block& b : blocks_)
    if (!b.empty()) out.cell_spaces.push_back({"size-class blocks", b.begin, b.cells_end(), b.cell_words});
  out.large_space = {"large", los_.begin(), reservation_.end()};
  for (const LargeObjectSpace::Object& o : los_.objects()) out.large_objects.push_back(o.header);
}

}  // namespace gc
