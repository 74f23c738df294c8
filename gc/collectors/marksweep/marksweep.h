// marksweep: the non-moving mark-sweep collector that Maas et al. 2012
// offload (Jikes RVM's MarkSweep plan: "We modified Jikes' MarkSweep garbage
// collector to offload its mark phase to the GPU", section 4.1), with the
// heap of Maas et al. 2018 (section V-A, L211-219): blocks of equal-size
// cells per size class, free cells linked into per-class free lists, large
// objects in the large-object space. It is the CPU baseline that `gpu` and
// `accel` are measured against, on the same heap.
//
// A collection, in order (collect_for reads as this list):
//   mark_phase      virtual; here the CPU marker: root groups claimed
//                   dynamically, tracing with work stealing, termination and
//                   overflow (gc/parallel, Flood et al. 2001 sections 3.1-3.4),
//                   marks in the header set with an atomic fetch-or; with
//                   --gc-threads=0 or 1, a serial mark stack and plain stores
//   process_weak    fibers' native state: unmarked means dead
//   sweep_phase     blocks claimed by the GC threads and swept cell by cell:
//                   a marked cell is unmarked, an allocated unmarked cell is
//                   freed (poisoned in verify and stress modes) and linked
//                   into its block's free list; a block left with no live
//                   cell becomes empty and serves any size class next; then
//                   the large-object space is swept
//   resize          the sizing policy below
//
// Cells decode from memory alone (Maas et al. 2018, L262-264): the first
// word of a cell is the object's count word (tag 10) or its header (tag 01,
// the allocated bit of the paper's "tag bit that we set to 1 for all live
// cells"), or, for a free cell, the next pointer of its free list (tag 00:
// cells are word aligned). The header's mark bit is layout.h's.
//
// Allocation: the inline fast path (collector.h, gc::allocate) pops the
// head of free_lists[size_class_of[words]]. Each list is one block's free
// cells; when it is empty, allocate_slow installs the next block of the
// class that the last sweep left with free cells, else an empty block, else
// a fresh one, else collects. Stress mode hides the lists from the fast path
// so that every allocation reaches allocate_slow.
//
// Sizing policy. --heap bounds B + L, where B is the bytes of blocks in use
// (empty ones included, until their pages are returned) and L the bytes of
// large-object pages. A collection starts when B + L would pass the trigger;
// after it the trigger is what the non-empty blocks and large objects
// occupy plus as much again as is live (at least kInitialHeapBytes, at most
// --heap), and empty blocks beyond it return their pages to the OS. After a
// collection an allocation may take B + L past the trigger up to --heap;
// when even that does not fit, it returns nullptr (out of memory).
//
// For collectors built on this heap (`gpu`, `accel`): derive from MarkSweep,
// override mark_phase(), and read the heap through the protected interface
// below: blocks() and their cells, large_objects(), the mark-bit helpers,
// gather_roots(), and the CPU marker's two entry points, mark_from_roots()
// and mark_from_gray() (the fallback when an accelerator's frontier grows
// narrow). The sweep, the allocator and the verifier support are shared.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/marksweep/size_classes.h"
#include "gc/heap/reservation.h"
#include "gc/parallel/overflow_set.h"
#include "gc/parallel/task_deque.h"
#include "gc/parallel/termination.h"
#include "gc/parallel/worker_pool.h"
#include "gc/parallel/worker_stats.h"
#include "gc/spaces/large_object_space.h"
#include "gc/verify/verifier.h"

namespace gc {

template <bool kParallel>
class Marker;
struct MarkPhaseWork;
class MarkSweepWeakResolver;

class MarkSweep : public Collector, public verify::VerifiableHeap {
 public:
  // One block of the block region: kBlockBytes at begin, cut into cells of
  // cell_words words when it has a size class.
  struct Block {
    static constexpr uint8_t kNoSizeClass = 0xFF;

    Word* begin = nullptr;
    // The block's free cells not yet handed to the mutator, linked through
    // their first word in address order (nullptr: none).
    Word* free_list = nullptr;
    uint32_t cell_words = 0;  // 0 while empty
    uint32_t cells = 0;
    // Free cells not yet handed to the mutator: the sweep's or the
    // formatting's count, 0 once the block's list is installed.
    uint32_t free_cells = 0;
    uint64_t live_words = 0;  // words of the objects in live cells, at the last sweep
    uint8_t size_class = kNoSizeClass;
    bool committed = false;  // its pages are part of the heap (not given back)

    bool empty() const { return size_class == kNoSizeClass; }
    // The end of the last whole cell; a tail shorter than a cell follows.
    Word* cells_end() const { return begin + static_cast<uint64_t>(cells) * cell_words; }
    Word* end() const { return begin + marksweep::kBlockWords; }
  };

  MarkSweep(RootSet& roots, const HeapOptions& options);
  ~MarkSweep() override;

  Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override;
  Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override;
  void collect(GcCause cause) override;

  const char* name() const override { return "marksweep"; }
  // Bytes in allocated cells (whole cells: their internal fragmentation
  // counts) plus large-object pages.
  uint64_t heap_used() const override;
  // B + L of the sizing policy.
  uint64_t heap_size() const override;
  bool in_heap(const void* addr) const override { return reservation_.contains(addr); }
  // Objects never move: the hash is the address's.
  uint64_t identity_hash(Word* header) override;
  void flush_stats() override;

  void describe_heap(verify::HeapShape& out) const override;
  void describe_spaces(std::vector<observe::SpaceUsage>& out) const override;

  // For tests and observability.
  unsigned gc_threads() const { return options_.gc_threads; }
  bool serial() const { return options_.gc_threads <= 1; }
  uint64_t trigger_bytes() const { return trigger_bytes_; }
  uint64_t committed_block_bytes() const { return committed_blocks_ * marksweep::kBlockBytes; }
  // Empty blocks (any class may take them), committed or not.
  size_t empty_block_count() const { return empty_blocks_.size(); }
  // Summed over all collections, per GC thread.
  const std::vector<parallel::WorkerStats>& worker_stats() const { return worker_totals_; }
  // The block holding addr, or nullptr outside the block region.
  const Block* block_containing(const void* addr) const;

  // --- the heap, for other markers and for tests
  const std::vector<Block>& blocks() const { return blocks_; }
  const LargeObjectSpace& large_objects() const { return los_; }
  const Reservation& reservation() const { return reservation_; }
  // Calls f(header) for every allocated object: cells walked block by block
  // (free cells skipped), then the large objects. Between collections, or in
  // mark_phase (the marks are then as far as marking has got).
  template <class F>
  void for_each_object(F&& f) const;

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
  // Marking shared with other threads: one fetch-or decides which thread
  // marked the object (and so owns its scan). True for that thread.
  static bool set_mark_atomic(Word* header) {
    std::atomic_ref<Word> h(*header);
    if (Header::is_marked(h.load(std::memory_order_relaxed))) return false;
    return !Header::is_marked(h.fetch_or(Header::kMarkBit, std::memory_order_relaxed));
  }

 protected:
  // The mark phase: on return every object reachable from the roots is
  // marked. The default is the CPU marker, mark_from_roots(). An override
  // may mark any way it likes (and may call the two entry points below,
  // for all the work or the rest of it); the sweep that follows frees every
  // unmarked cell.
  virtual void mark_phase();

  // The CPU marker from the roots: gathers them (gather_roots), marks their
  // targets and everything reachable, with --gc-threads threads.
  void mark_from_roots();
  // The CPU marker from grey objects: every header in `grey` is already
  // marked and its slots not yet scanned; marks everything reachable from
  // them that is not yet marked, with --gc-threads threads. Objects marked
  // and scanned before stay as they are (a scanned object's targets must be
  // marked or grey already: the tri-colour invariant).
  void mark_from_gray(std::span<Word* const> grey);
  // The root groups for this collection (gathered again on each call).
  const std::vector<RootGroup>& gather_roots();

  // Verify and stress modes: freed cells are poisoned.
  bool debug_poisoning() const { return options_.verify || options_.stress_interval > 0; }

 private:
  template <bool kParallel>
  friend class Marker;
  friend class MarkSweepWeakResolver;

  // --- one collection, in order
  void collect_for(GcCause cause, uint64_t pending_large_bytes);
  void retire_allocation_lists();
  void run_marker(std::span<const RootGroup> roots, std::span<Word* const> grey);
  void process_weak();
  void sweep_phase();
  void sweep_blocks_in_parallel();
  void rebuild_class_lists();
  void resize_heap(uint64_t pending_large_bytes);

  // --- slow paths
  Word* allocate_cell(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words);
  Word* take_cell(unsigned size_class, uint64_t limit_bytes);
  bool install_next_block(unsigned size_class, uint64_t limit_bytes);
  int64_t acquire_empty_block(uint64_t limit_bytes);
  void format_block(Block& b, unsigned size_class);
  Word* allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words, GcCause cause);
  Word* try_allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words,
                           uint64_t limit);
  void count_stress_allocation();
  void account_allocation_lists();
  void account_allocation_list(unsigned size_class);
  uint64_t unaccounted_cell_bytes() const;
  Word* out_of_memory();
  void note_heap_size();
  void describe_events();
  uint64_t hash_of_address(const Word* header) const;

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
  uint64_t stress_count_ = 0;

  // The marker's and the sweep's machinery, allocated once.
  std::vector<RootGroup> root_groups_;
  std::unique_ptr<parallel::WorkerPool> pool_;
  std::vector<std::unique_ptr<parallel::TaskDeque>> deques_;
  parallel::OverflowSet overflow_;
  parallel::Termination termination_;
  std::vector<parallel::Task> serial_stack_;
  std::vector<parallel::WorkerStats> worker_totals_;
  // Counter names of the per-class statistics ("cells 24 B: live", ...),
  // kept for the Recorder, which holds the pointers until the collection ends.
  std::vector<std::string> class_counter_names_;
};

template <class F>
void MarkSweep::for_each_object(F&& f) const {
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

std::unique_ptr<Collector> create_marksweep(RootSet& roots, const HeapOptions& options);

}  // namespace gc
