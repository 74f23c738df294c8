// template: the smallest correct mark-sweep collector (McCarthy 1960), for
// the course. It reads as the algorithm: allocate until the heap is full,
// then collect: mark everything reachable from the roots, then sweep
// everything else into free space.
//
// The heap. Small objects live in one linear region of the reservation: the
// mutator bumps through a buffer [top, limit) (the inline fast path,
// gc/mutator.h), which is a hole the last sweep left, or else a fresh chunk
// at the region's frontier. Objects of kLargeObjectBytes and more go to the
// shared large-object space (gc/spaces/large_object_space.h), page-aligned.
// Nothing ever moves.
//
// Invariants:
//   walkable     [base, top) and [limit, frontier) are objects and fillers
//                end to end (layout.h: a walk finds each header from an
//                object's first word); only the buffer is unformatted.
//   tri-colour   while marking, a marked object is grey if it is on the
//                grey stack and black once its slots are shaded; no black
//                object points to a white one, so when the stack is empty
//                every white (unmarked) object is unreachable.
//   unmarked     between collections no object carries a mark: the sweep
//                clears the marks it keeps.
#include "gc/collectors/template/template.h"

#include <algorithm>
#include <vector>

#include "gc/heap/identity_hash.h"
#include "gc/heap/lab.h"
#include "gc/heap/reservation.h"
#include "gc/observe/common_counters.h"
#include "gc/observe/recording.h"
#include "gc/spaces/large_object_space.h"
#include "gc/verify/verifier.h"

namespace gc {

namespace {

constexpr observe::Counter kObjectsFreed{"objects freed", observe::Unit::kObjects};
constexpr observe::Counter kHoles{"holes", observe::Unit::kAreas,
                                  observe::CounterKind::kPeak};  // after a sweep

// Room for startup (prelude, classes, interned strings) before the first
// collection; marksweep's value, so that the two collect equally often.
constexpr uint64_t kInitialHeapBytes = 8ull << 20;
// The smallest --heap honoured: tests of out of memory use tiny heaps.
constexpr uint64_t kMinHeapBytes = 128 << 10;
// Words taken at the frontier at a time: the fast path serves most
// allocations, and a short script touches little memory.
constexpr uint64_t kChunkWords = 4096;
// Address space for large objects, in heaps: a fragmented region must not
// refuse what the byte bound allows (marksweep's reason).
constexpr uint64_t kLargeRegionHeaps = 4;

class TemplateCollector final : public Collector {
 public:
  TemplateCollector(RootSet& roots, const HeapOptions& options)
      : Collector(roots, resolved_heap_options(options, kMinHeapBytes)),
        reservation_(options_.max_heap_bytes * (1 + kLargeRegionHeaps)),
        cards_(reservation_),
        frontier_(reservation_.base()),
        large_(reservation_.base() + options_.max_heap_bytes / kWordSize, reservation_.end()),
        trigger_bytes_(std::min(kInitialHeapBytes, options_.max_heap_bytes)),
        poison_(options_.poison_freed_memory()) {
    card_base = cards_.biased_base();  // the write barrier stores here; nothing reads it
    top = limit = counted_ = frontier_;
  }

  const char* name() const override { return "template"; }

  // --- allocation

  // Up to the trigger first; after a collection, up to --heap.
  Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override {
    if (stress_collection_due()) collect(GcCause::kStress);
    if (!representable(nrefs, raw_words)) return out_of_memory();
    uint64_t words = object_words(nrefs, raw_words);
    if (words * kWordSize >= kLargeObjectBytes) return allocate_large(class_id, nrefs, raw_words, words);
    Word* start = take_small(words, trigger_bytes_);
    if (!start) {
      collect(GcCause::kAllocationFailure);
      start = take_small(words, options_.max_heap_bytes);
      if (!start) return out_of_memory();
    }
    Word* header = format_object(start, class_id, nrefs, raw_words);
    // Stressed, every allocation must come here to be counted: no buffer.
    if (options_.hide_buffer()) retire_buffer();
    return header;
  }
  // Nothing moves, so any object is pinned.
  Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override {
    return allocate_slow(class_id, nrefs, raw_words);
  }

  // --- a collection

  void collect(GcCause cause) override {
    retire_buffer();
    run_collection(observe::CollectionKind::kFull, cause, [this] {
      events.phase(0, "mark", [&] { mark_from_roots(); });
      events.phase(0, "weak references", [&] {
        MarkedSurvives marked;
        roots_.process_weak(marked);
      });
      events.phase(0, "sweep", [&] { sweep(); });
      return true;
    });
  }

  // --- queries

  uint64_t heap_size() const override { return words_spanned() * kWordSize + large_.committed_bytes(); }
  uint64_t heap_used() const override {
    uint64_t free = free_words_ + static_cast<uint64_t>(limit - top);
    return (words_spanned() - free) * kWordSize + large_.committed_bytes();
  }
  void flush_stats() override {
    stats_.bytes_allocated += static_cast<uint64_t>(top - counted_) * kWordSize;
    counted_ = top;
  }
  bool in_heap(const void* addr) const override { return reservation_.contains(addr); }
  // Objects never move: the hash of the address stays the object's.
  uint64_t identity_hash(Word* header) override {
    *header = Header::with_hash_state(*header, HashState::kHashed);
    return address_hash(reservation_, header);
  }
  void describe_spaces(std::vector<observe::SpaceUsage>& out) const override {
    uint64_t used = heap_used() - large_.committed_bytes();
    out.push_back(
        {"small objects", "bump through the holes, then the frontier", words_spanned() * kWordSize, used});
    out.push_back(
        {"large objects", "large-object pages", large_.committed_bytes(), large_.committed_bytes()});
  }
  void describe_heap(verify::HeapShape& out) const override {
    out.linear_spaces.push_back({"small objects", reservation_.base(), top});
    out.linear_spaces.push_back({"small objects", limit, frontier_});
    out.large_space = {"large", large_.begin(), reservation_.end()};
    for (const LargeObjectSpace::Object& o : large_.objects()) out.large_objects.push_back(o.header);
  }

 private:
  struct Hole {
    Word* begin;
    Word* end;
  };

  uint64_t words_spanned() const { return static_cast<uint64_t>(frontier_ - reservation_.base()); }

  // Room for `words` at top: the buffer, else the next hole that fits
  // (smaller ones wait for the next sweep), else a chunk at the frontier
  // while the heap stays within limit_bytes.
  Word* take_small(uint64_t words, uint64_t limit_bytes) {
    while (static_cast<uint64_t>(limit - top) < words) {
      retire_buffer();
      if (next_hole_ < holes_.size()) {
        Hole h = holes_[next_hole_++];
        free_words_ -= static_cast<uint64_t>(h.end - h.begin);
        top = counted_ = h.begin;
        limit = h.end;
        continue;
      }
      uint64_t room = limit_bytes > heap_size() ? (limit_bytes - heap_size()) / kWordSize : 0;
      uint64_t grow = std::min(std::max(words, kChunkWords), room);
      if (grow < words) return nullptr;
      top = counted_ = frontier_;
      limit = frontier_ += grow;
      note_heap_size();
    }
    Word* start = top;
    top += words;
    return start;
  }

  // Ends the buffer: counts what was allocated in it, and makes its tail a
  // filler (walkable), or gives it back when it is the frontier's.
  void retire_buffer() {
    flush_stats();
    if (limit == frontier_) {
      frontier_ = top;
    } else {
      fill_dead_space(top, limit);
    }
    limit = top;
  }

  Word* allocate_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) {
    Word* header = take_large(class_id, nrefs, raw_words, trigger_bytes_);
    if (!header) {
      collect(GcCause::kLargeAllocation);
      header = take_large(class_id, nrefs, raw_words, options_.max_heap_bytes);
      if (!header) header = take_in_hole(class_id, nrefs, raw_words, words);
      if (!header) return out_of_memory();
    }
    stats_.bytes_allocated += words * kWordSize;
    note_heap_size();
    return header;
  }
  Word* take_large(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t limit_bytes) {
    uint64_t pages = LargeObjectSpace::pages_for(object_words(nrefs, raw_words));
    if (heap_size() + pages * kPageBytes > limit_bytes) return nullptr;
    return large_.allocate(class_id, nrefs, raw_words).header;
  }

  // Where --heap leaves no pages for a large object, the first hole of the
  // region that fits it: the region's holes are the heap's other free
  // memory, and nothing moves to merge them. The rest of the hole stays one.
  Word* take_in_hole(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words) {
    for (size_t i = next_hole_; i < holes_.size(); ++i) {
      Hole& h = holes_[i];
      if (static_cast<uint64_t>(h.end - h.begin) < words) continue;
      Word* start = h.begin;
      h.begin += words;
      free_words_ -= words;
      if (h.begin < h.end) fill_dead_space(h.begin, h.end);
      return format_object(start, class_id, nrefs, raw_words);
    }
    return nullptr;
  }

  // --- mark: from the roots, with an explicit grey stack (no recursion, so
  // a long list cannot overflow the C++ stack)

  // A white object becomes grey: marked, and pushed to have its slots shaded.
  void shade(Value v) {
    if (!v.is_ref()) return;
    Word* header = v.as_ref();
    if (Header::is_marked(*header)) return;
    *header |= Header::kMarkBit;
    grey_.push_back(header);
    if (recording_) recording_->grey(0, header);
  }

  // A recorded collection (--gc-animate) is told each step of marking and
  // sweeping (gc/observe/recording.h); recording_ is null otherwise.
  void mark_from_roots() {
    recording_ = observe::Recording::active();
    root_groups_.clear();
    roots_.root_groups(root_groups_);
    for (const RootGroup& g : root_groups_)
      for (size_t i = 0; i < g.count; ++i) shade(g.slots[i]);
    uint64_t scanned = 0;
    while (!grey_.empty()) {
      Word* header = grey_.back();  // grey; black once its slots are shaded
      grey_.pop_back();
      if (recording_) recording_->scan(0, header);
      uint64_t nrefs = Header::nrefs(*header);
      Value* slots = ref_slots_begin(header, nrefs);
      for (uint64_t i = 0; i < nrefs; ++i) shade(slots[i]);
      ++scanned;
    }
    events.count(0, observe::kObjectsMarked, scanned);
  }

  // --- sweep: one walk of the small-object region, object by object. A
  // marked object is unmarked and kept; each run of unmarked objects and
  // fillers becomes one hole (a filler, poisoned inside in verify and
  // stress modes); a run at the end gives its words back to the frontier.
  // Then the large-object space sweeps its own.

  void sweep() {
    holes_.clear();
    next_hole_ = 0;
    free_words_ = 0;
    uint64_t live_words = 0;
    uint64_t freed = 0;
    Word* run = nullptr;  // the start of the run of free words being crossed
    for (Word* p = reservation_.base(); p < frontier_;) {
      Word* header = header_from_start(p);
      uint64_t words = object_words(*header);
      if (Header::is_marked(*header)) {
        *header &= ~Header::kMarkBit;
        live_words += words;
        if (run) add_hole(run, p);
        run = nullptr;
      } else {
        if (Header::class_id(*header) != kFillerClass) {
          ++freed;
          if (recording_) recording_->free(0, p, words);
        }
        if (poison_) std::fill(p, p + words, Header::kPoison);
        if (!run) run = p;
      }
      p += words;
    }
    if (run) frontier_ = run;
    top = limit = counted_ = frontier_;
    large_.sweep(poison_);
    events.count(0, kObjectsFreed, freed);
    events.count(0, kHoles, holes_.size());

    // The next collection starts when the heap holds twice what is live
    // (marksweep's rule: a collection's work follows the live data, so
    // allocating as much again between collections bounds its cost per
    // allocated byte); within the heap, the holes come first.
    stats_.last_live_bytes = live_words * kWordSize + large_.committed_bytes();
    trigger_bytes_ =
        std::min(options_.max_heap_bytes, std::max(kInitialHeapBytes, 2 * stats_.last_live_bytes));
  }

  void add_hole(Word* begin, Word* end) {
    fill_dead_space(begin, end);
    holes_.push_back({begin, end});
    free_words_ += static_cast<uint64_t>(end - begin);
  }

  Reservation reservation_;  // small objects, then kLargeRegionHeaps heaps of large ones
  CardTable cards_;
  Word* frontier_;  // small objects end here; above it, never used or given back
  Word* counted_;   // the buffer's allocation below this is in stats_
  LargeObjectSpace large_;
  uint64_t trigger_bytes_;
  bool poison_;              // verify and stress modes: freed memory is poisoned
  std::vector<Hole> holes_;  // the last sweep's, in address order
  size_t next_hole_ = 0;
  uint64_t free_words_ = 0;  // in holes_ from next_hole_ on
  std::vector<Word*> grey_;
  std::vector<RootGroup> root_groups_;
  observe::Recording* recording_ = nullptr;
};

}  // namespace

std::unique_ptr<Collector> create_template(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<TemplateCollector>(roots, options);
}

}  // namespace gc
