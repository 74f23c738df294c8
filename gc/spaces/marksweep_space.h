// The mark-sweep space (MMTk's MarkSweepSpace policy): the non-moving heap of
// Maas et al. 2018 (section V-A, L211-219) that `marksweep`, `gpu` and
// `accel` share. Blocks of equal-size cells per size class (size_classes.h),
// per-class free lists, and a large-object space. Which marker sets the
// mark bits is the plan's business (gc/plan/marksweep_heap.h).
//
// Cells decode from memory alone (Maas et al. 2018, L262-264): a cell's
// first word is the object's count word (tag 10) or header (tag 01, the
// paper's "tag bit that we set to 1 for all live cells"), or a free cell's
// free-list link (tag 00).
//
// Allocation: the fast path (gc::allocate) pops free_lists()[size_class_of
// [words]], one block's free cells; when it is empty, take_cell installs
// the next block of the class with free cells, else an empty block, else a
// fresh one, within the heap limit.
//
// The sweep (sweep): sweep_blocks, by every GC thread a few blocks at a
// time (a marked cell is unmarked, an unmarked one freed, poisoned in
// verify and stress modes; a block with no live cell becomes empty, for any
// class), then sweep_large_objects, then account_sweep.
//
// Sizing policy. --heap bounds B + L (B the bytes of blocks in use, L of
// large-object pages). A collection starts when B + L would pass the
// trigger; after it the trigger is what is occupied plus as much again as
// is live (at least kInitialHeapBytes, at most --heap), and empty blocks
// beyond it return their pages to the OS.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "gc/constants.h"
#include "gc/gc_stats.h"
#include "gc/heap/reservation.h"
#include "gc/heap_options.h"
#include "gc/observe/recorder.h"
#include "gc/observe/recording.h"
#include "gc/parallel/worker_pool.h"
#include "gc/spaces/large_object_space.h"
#include "gc/spaces/size_classes.h"
#include "gc/verify/heap_shape.h"

namespace gc {

// The sweep's counters, which accel's reclamation unit reports too.
inline constexpr observe::Counter kBlocksSwept{"blocks swept", observe::Unit::kBlocks};
inline constexpr observe::Counter kCellsFreed{"cells freed", observe::Unit::kCells};

class MarkSweepSpace {
 public:
  // One block of the block region: kBlockBytes at begin, cut into cells of
  // cell_words words when it has a size class.
  struct Block {
    static constexpr uint8_t kNoSizeClass = 0xFF;

    Word* begin = nullptr;
    // Free cells not yet handed to the mutator, linked in address order, and
    // their count (0 once the block's list is installed).
    Word* free_list = nullptr;
    uint32_t cell_words = 0;  // 0 while empty
    uint32_t cells = 0;
    uint32_t free_cells = 0;
    uint64_t live_words = 0;  // words of the objects in live cells, at the last sweep
    uint8_t size_class = kNoSizeClass;
    bool committed = false;  // its pages are part of the heap (not given back)

    bool empty() const { return size_class == kNoSizeClass; }
    // The end of the last whole cell; a tail shorter than a cell follows.
    Word* cells_end() const { return begin + static_cast<uint64_t>(cells) * cell_words; }
    Word* end() const { return begin + marksweep::kBlockWords; }
  };

  static HeapOptions resolved_options(const HeapOptions& in);  // resolved_heap_options
  // The address space a heap of max_heap bytes reserves: its blocks, and
  // room for large objects.
  static uint64_t reservation_bytes(uint64_t max_heap);

  // options resolved; the space counts into stats and reports to events.
  MarkSweepSpace(const HeapOptions& options, GcStats& stats, observe::Recorder& events);

  // --- the mutator's side
  // The lists the inline fast path pops (Collector::free_lists).
  Word** free_lists() { return heads_; }
  uint8_t* card_base() const { return cards_.biased_base(); }
  // A free cell of the class, or nullptr when the heap would pass limit_bytes.
  Word* take_cell(unsigned size_class, uint64_t limit_bytes);
  // A large object, formatted, or nullptr when the heap would pass
  // limit_bytes or the region has no run of pages for it.
  Word* allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words,
                       uint64_t limit_bytes);
  // The fast path pops without counting: what each list lost since it was
  // last accounted is counted as allocated (whole cells).
  void account_allocation_lists();

  // --- one collection, in order
  // Drops the mutator's lists: their cells are still free, the sweep links them again.
  void retire_allocation_lists();
  // Frees every unmarked cell and large object and clears the others'
  // marks, on the pool's threads.
  void sweep(parallel::WorkerPool& pool);
  // The sizing policy, keeping room for the large object that collected.
  void resize(uint64_t pending_large_bytes);
  // Gives back empty blocks' pages, highest first, until the committed
  // blocks and the large objects take at most `keep` bytes (or no empty
  // committed block is left).
  void release_empty_blocks(uint64_t keep);

  // --- the sweep's steps, for a plan whose block sweepers are its own (an
  // accelerator's reclamation unit): sweep_block for every non-empty block,
  // then sweep_large_objects and account_sweep.

  // What one sweeper found, per size class.
  struct SweepTally {
    uint64_t live_cells[marksweep::kSizeClasses] = {};
    uint64_t free_cells[marksweep::kSizeClasses] = {};
    uint64_t live_words = 0;
    uint64_t freed_cells = 0;
    uint64_t blocks = 0;
    uint64_t emptied = 0;
    // The sweeper, and the collection's recording (--gc-animate) if any.
    unsigned worker = 0;
    observe::Recording* recording = nullptr;
  };
  std::vector<SweepTally> sweep_blocks(parallel::WorkerPool& pool);
  void sweep_block(size_t index, SweepTally& t);
  uint64_t sweep_lazily(uint32_t index);
  void record_frees(const Block& b, const SweepTally& t) const;
  void sweep_large_objects();
  void account_sweep(const std::vector<SweepTally>& tallies);

  // --- the lazy sweep, for a plan that sweeps while the program runs
  // (incremental): begin_lazy_sweep once the mark is complete (the
  // mutator's lists accounted and retired, the large objects swept at
  // once), then sweep_some, a few blocks at a time (whole blocks until
  // `cells` cells have been visited, at least one; first those of
  // `wanting_class`, the class whose list ran out, until one of them has a
  // free cell), until it answers true,
  // having accounted the sweep as account_sweep does. Meanwhile the
  // mutator takes cells only from blocks already swept and from empty
  // ones, never from a block still to sweep: a cell it takes is never
  // freed or unmarked by a later step, and what it allocates is unmarked.
  // The bytes in use stay exact throughout (each step subtracts what it
  // freed).
  void begin_lazy_sweep();
  bool sweep_some(uint64_t cells, unsigned wanting_class = marksweep::kNoCellClass);
  // Whether the class's next cell would come from an empty block while
  // blocks of its own still await the lazy sweep.
  bool awaits_sweep(unsigned size_class) const {
    return size_class < marksweep::kSizeClasses && !heads_[size_class] && available_[size_class].empty() &&
           !lazy_blocks_[size_class].empty();
  }
  // Blocks begin_lazy_sweep found to sweep and not yet swept.
  uint64_t blocks_to_sweep() const { return lazy_remaining_; }

  // --- queries
  uint64_t max_heap_bytes() const { return max_heap_bytes_; }
  uint64_t trigger_bytes() const { return trigger_bytes_; }
  // Bytes in allocated cells (whole cells: their internal fragmentation
  // counts) plus large-object pages.
  uint64_t used_bytes() const;
  // B + L of the sizing policy.
  uint64_t size_bytes() const { return committed_block_bytes() + los_.committed_bytes(); }
  uint64_t committed_block_bytes() const { return committed_blocks_ * marksweep::kBlockBytes; }
  // Empty blocks (any class may take them), committed or not.
  size_t empty_block_count() const { return empty_blocks_.size(); }
  bool contains(const void* addr) const { return reservation_.contains(addr); }
  // The block holding addr, or nullptr outside the block region.
  const Block* block_containing(const void* addr) const;
  const std::vector<Block>& blocks() const { return blocks_; }
  const LargeObjectSpace& large_objects() const { return los_; }
  const Reservation& reservation() const { return reservation_; }
  // Objects never move: a hash of the address serves as identity hash.
  uint64_t hash_of_address(const Word* header) const;
  // Calls f(header) for every allocated object, cells block by block then
  // large objects: between collections, or between mark and sweep.
  template <class F>
  void for_each_object(F&& f) const;
  // The heap map and the verifier's description.
  void describe_spaces(std::vector<observe::SpaceUsage>& out) const;
  void describe_heap(verify::HeapShape& out) const;
  // Raises the statistics' peak heap size to size_bytes().
  void note_peak_size();

  // --- mark bits (layout.h's Header::kMarkBit in the header word)
  static bool is_marked(const Word* header) {
    return Header::is_marked(std::atomic_ref<const Word>(*header).load(std::memory_order_relaxed));
  }
  // Single-threaded marking (or applying another marker's marks): plain.
  // True if the object was not marked before.
  static bool set_mark(Word* header) {
    Word h = *header;
    if (Header::is_marked(h)) return false;
    *header = h | Header::kMarkBit;
    return true;
  }
  // Single-threaded: e.g. to mark again with another marker and compare.
  static void clear_mark(Word* header) { *header &= ~Header::kMarkBit; }

 private:
  void describe_events();
  // The counters of a sweep that found `all`, and the live bytes after it.
  void report_sweep(const SweepTally& all);
  bool claim_blocks(std::atomic<uint64_t>& next, uint64_t& begin, uint64_t& end) const;
  void rebuild_class_lists();
  // --- the allocator's slow path onto blocks
  bool install_next_block(unsigned size_class, uint64_t limit_bytes);
  int64_t acquire_empty_block(uint64_t limit_bytes);
  void format_block(Block& b, unsigned size_class);
  void account_allocation_list(unsigned size_class);
  uint64_t unaccounted_cell_bytes() const;

  GcStats& stats_;
  observe::Recorder& events_;
  uint64_t max_heap_bytes_;
  // Verify and stress modes: freed cells are poisoned.
  bool poison_;
  Reservation reservation_;
  CardTable cards_;
  Word* blocks_begin_;
  uint64_t max_blocks_;  // the block region's capacity
  LargeObjectSpace los_;

  std::vector<Block> blocks_;           // carved so far, by address
  uint64_t committed_blocks_ = 0;       // blocks whose pages count as heap
  std::vector<uint32_t> empty_blocks_;  // empty blocks, committed ones last (taken first)
  // Per size class: blocks the last sweep left with free cells (not yet
  // installed), the list the fast path pops, and what was accounted of it.
  std::vector<uint32_t> available_[marksweep::kSizeClasses];
  // heads_[kNoCellClass] stays nullptr (size_classes.h).
  Word* heads_[marksweep::kSizeClasses + 1] = {};
  uint32_t installed_cells_[marksweep::kSizeClasses] = {};
  // Bytes of allocated cells at the last accounting (retired lists, sweep).
  uint64_t cell_bytes_in_use_ = 0;
  uint64_t trigger_bytes_;
  // The lazy sweep's blocks still to sweep, per class, the lowest address
  // last; how many there are; the class the steps sweep next; and what the
  // steps found so far.
  std::vector<uint32_t> lazy_blocks_[marksweep::kSizeClasses];
  uint64_t lazy_remaining_ = 0;
  unsigned lazy_class_ = 0;
  SweepTally lazy_tally_;
  // Per-class counters ("cells 24 B: live", ...), made once at construction,
  // and their names, reserved whole so that no counter's name moves.
  std::vector<std::string> class_counter_names_;
  std::vector<observe::Counter> class_counters_;
};

template <class F>
void MarkSweepSpace::for_each_object(F&& f) const {
  for (const Block& b : blocks_) {
    if (b.empty()) continue;
    for (Word* cell = b.begin; cell < b.cells_end(); cell += b.cell_words) {
      Word first = *cell;
      if ((first & Header::kTagMask) == 0) continue;  // a free cell's next pointer
      f(header_from_start(cell));
    }
  }
  for (const LargeObjectSpace::Object& o : los_.objects()) f(o.header);
}

}  // namespace gc
