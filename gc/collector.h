// The interface between the VM (the mutator) and a collector.
//
// The VM sees a collector through three things: the inline allocation fast
// path (a bump buffer the collector refills) and the write barrier (cards,
// or the collector's own barrier when it selects one), both in mutator.h,
// and this class's virtual slow paths. A
// collector sees the VM only through the object layout (layout.h) and the
// root set (roots.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gc/constants.h"
#include "gc/gc_stats.h"
#include "gc/heap_options.h"
#include "gc/layout.h"
#include "gc/observe/recorder.h"
#include "gc/options.h"
#include "gc/roots.h"

namespace gc {

namespace verify {
struct HeapShape;
}

class Collector;
// A collector's write barrier (Collector::write_barrier): a store of v into
// slot, a reference slot of the object whose header is `object`; *slot
// still holds the value overwritten. It stores v and dirties the slot's
// card where the collector needs cards (gc::store_and_dirty does both).
using WriteBarrier = void (*)(Collector& c, Word* object, Value* slot, Value v);

class Collector {
 public:
  virtual ~Collector() = default;

  // What the fast path (gc::allocate below) uses: the mutator's bump
  // buffer [top, limit) (limit == top shows a collector every allocation),
  // and, when size_class_of is set, free_lists[size_class_of[words]], lists
  // of free cells linked through their first word (nullptr: empty).
  Word* top = nullptr;
  Word* limit = nullptr;
  const uint8_t* size_class_of = nullptr;
  Word** free_lists = nullptr;

  // Biased card table: card_base[address >> kCardShift] is the card byte.
  uint8_t* card_base = nullptr;
  // The barrier selector (MMTk's): nullptr, and every reference store takes
  // the common path of gc::write_ref (the slot written, its card dirtied);
  // else every store calls this collector's own barrier instead, which
  // makes the store itself. A collector sets it for as long as it needs to
  // see stores (gpu's --gpu-graph=double-write always, incremental while a
  // cycle marks) and may change it between any two stores.
  WriteBarrier write_barrier = nullptr;

  // Allocates and formats an object (layout.h: format_object), collecting
  // if needed. Returns nullptr when the heap is exhausted even after a full
  // collection; the caller reports out of memory. Sizes are already rounded.
  virtual Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) = 0;
  // In the large-object space whatever the size: fiber value stacks never move.
  virtual Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) = 0;
  // A full collection now.
  virtual void collect(GcCause cause) = 0;

  virtual const char* name() const = 0;
  // The heap's spaces for --gc-verify's checks (gc/verify/verifier.h):
  // which are walkable, which hold cells, which are evacuated or young,
  // and the card table.
  virtual void describe_heap(verify::HeapShape& out) const = 0;
  virtual uint64_t heap_used() const = 0;  // bytes in objects and buffers now
  virtual uint64_t heap_size() const = 0;  // bytes the heap currently spans
  // The most live data the heap limit lets this collector hold (a copying
  // collector keeps room to copy into); the GC overhead limit measures
  // free space against it.
  virtual uint64_t live_capacity() const { return options_.max_heap_bytes; }
  uint64_t max_heap() const { return options_.max_heap_bytes; }
  // Up to date, including what the fast path allocated without counting.
  const GcStats& stats() {
    flush_stats();
    return stats_;
  }
  // Brings stats_ up to date with the fast path's allocation.
  virtual void flush_stats() {}
  // Live bytes at the last failed allocation, for the out-of-memory message.
  uint64_t live_at_exhaustion() const { return live_at_exhaustion_; }

  // The GC overhead limit (HotSpot's UseGCOverheadLimit, with its
  // thresholds): after kOverheadLimitCollections full collections in a row
  // that the heap asked for (not gc(); never under --gc-stress, whose
  // collections take nearly all the time by design), each taking more
  // than kGcTimeLimitPercent of the time since the previous full
  // collection ended (young collections count as collection time), and
  // each leaving less than kHeapFreeLimitPercent of live_capacity() free,
  // allocation fails: the program is out of memory in all but name, and
  // would otherwise crawl for minutes before it says so.
  static constexpr uint64_t kGcTimeLimitPercent = 98;
  static constexpr uint64_t kHeapFreeLimitPercent = 2;
  static constexpr unsigned kOverheadLimitCollections = 5;
  bool overhead_limit_exceeded() const { return overhead_limit_exceeded_; }
  // After the out-of-memory error has been reported (the REPL goes on).
  void clear_overhead_limit() {
    overhead_limit_exceeded_ = false;
    costly_collections_ = 0;
  }
  // True if addr lies in the reservation (any space, live or not).
  virtual bool in_heap(const void* addr) const = 0;
  // Identity hash: stable across moves (layout.h, HashState).
  virtual uint64_t identity_hash(Word* header) = 0;
  // The spaces and their occupancy now, for the heap map (--gc-report, the
  // REPL's :heap). Called between collections and at a collection's end.
  virtual void describe_spaces(std::vector<observe::SpaceUsage>& out) const {}
  // The mutator switched to another of its contexts (a fiber), numbered by
  // the VM in creation order with the main program as 0. A collector whose
  // allocation follows the mutator (cacheaware's per-core allocators)
  // swaps its buffer here; the others ignore it.
  virtual void mutator_switched(uint64_t mutator) {}
  // The GC threads the collector runs its work on (--gc-stats); 0: it
  // collects on the program's thread alone.
  virtual unsigned gc_threads_in_use() const { return options_.gc_threads; }
  // stats_ without flushing (during a collection, already accounted).
  const GcStats& stats_as_recorded() const { return stats_; }
  const HeapOptions& options() const { return options_; }

  // Every collector reports collections, phases and counters here.
  observe::Recorder events;

 protected:
  friend class BumpAllocator;

  Collector(RootSet& roots, const HeapOptions& options) : roots_(roots), options_(options) {
    events.set_workers(options.gc_threads ? options.gc_threads : 1);
    if (options.record_events) events.enable(options.keep_event_history);
    events.set_log(options.log);
  }

  // One collection's frame, the same for every collector: the recorder's
  // start, the roots' preparation, --gc-verify, body, the counts, the
  // recorder's end. The caller has accounted the mutator's allocation
  // first. body returns false when it gave up before changing the heap:
  // the frame then ends without verifying or counting.
  void run_collection(observe::CollectionKind kind, GcCause cause, const std::function<bool()>& body);
  // --gc-animate (gc/observe/recording.h): begins recording the collection
  // under way if it is the one wanted, taking the heap as it is; true if it
  // did. run_collection records its body; a collector whose cycle spans
  // several pauses calls these at the cycle's first and last.
  bool start_recording(observe::CollectionKind kind, bool cycle_start = false);
  void finish_recording();
  void note_heap_size() { stats_.peak_heap_bytes = std::max(stats_.peak_heap_bytes, heap_size()); }
  // --gc-stress=N's countdown, which every slow path (allocate_slow and
  // allocate_pinned) runs first: counts the allocation and says whether a
  // collection is due before it, at every Nth.
  bool stress_collection_due() {
    return options_.stress_interval && ++stress_allocations_ % options_.stress_interval == 0;
  }
  // The stressed collections asked for so far, from 1.
  uint64_t stress_collections() const { return stress_allocations_ / options_.stress_interval; }
  // The allocation's answer when the heap is exhausted, with the live bytes
  // the out-of-memory message reports.
  Word* out_of_memory() {
    live_at_exhaustion_ = heap_used();
    return nullptr;
  }

  RootSet& roots_;
  HeapOptions options_;
  GcStats stats_;
  uint64_t live_at_exhaustion_ = 0;

 private:
  void note_overhead(observe::CollectionKind kind, GcCause cause);
  uint64_t stress_allocations_ = 0;
  int64_t last_full_collection_end_ns_ = 0;
  int64_t gc_ns_since_full_ = 0;     // pauses since the last full collection ended
  unsigned costly_collections_ = 0;  // in a row
  bool overhead_limit_exceeded_ = false;
};

// Which configuration of its paper a collector runs, as the options in
// force select it: the first line of --gc-stats, the --gc-log start line,
// the report's header and --compare's table print it.
struct Variant {
  // The algorithm as the paper names it ("pSemispaces").
  std::string name;
  // Each departure from the paper, in a few words with the paper's choice
  // beside it; none: the paper's configuration.
  std::vector<std::string> departures;
};

// The registry: one line per collector in registry.cpp.
struct CollectorInfo {
  const char* name;
  const char* description;
  // Throws CreationError (gc/exit_status.h) when the collector cannot be
  // made: the VM reports it and exits with its status.
  std::unique_ptr<Collector> (*create)(RootSet& roots, const HeapOptions& options);
  // Why the collector cannot run on this machine (--list-gcs says so and
  // the test suite skips it), or empty; nullptr: it always can.
  std::string (*unavailable)() = nullptr;
  // The collector's own command-line options (gc/options.h), or nullptr.
  std::span<const OptionSpec> (*options)() = nullptr;
  // False for a collector that runs only on the collecting thread whatever
  // --gc-threads says (--list-gcs says so; CI's TSan run, which checks the
  // GC threads, leaves it out).
  bool uses_gc_threads = true;
  // For one that uses them only under an option (incremental's
  // --inc-mode=concurrent), that option: its default configuration uses
  // none, and --list-gcs says "(GC threads with OPTION)".
  const char* gc_threads_with = nullptr;
  // False for a collector that never collects (none): --list-gcs says
  // "never collects", the test runners leave out by its rule what needs
  // collection, and what needs a collection (--gc-stress, --heap-snapshot,
  // --replay) is refused, and --compare under --gc-stress leaves it out.
  bool collects = true;
  // What is wrong with the collector's options taken together with the
  // VM's (--heap, --gc-threads), as a usage error, or empty; checked once
  // the command line is read (exit 64). nullptr: nothing to check.
  std::string (*check_configuration)(const HeapOptions& options) = nullptr;
  // The variant the options select, derived from their values (so that a
  // changed option changes what is printed); nullptr: the collector
  // implements no paper.
  Variant (*variant)(const HeapOptions& options) = nullptr;
  // The collector options that put it in its paper's configuration
  // (--paper-config), which may depend on the VM's (--heap, --gc-threads);
  // empty: the defaults are the paper's. nullptr: it has no paper
  // configuration, and --paper-config is refused.
  OptionValues (*paper_configuration)(const HeapOptions& options) = nullptr;
  // The heap limit when --heap is not given, and why it is not the usual
  // one (usual_max_heap_bytes); 0: the usual one.
  uint64_t default_heap_bytes = 0;
  const char* default_heap_reason = nullptr;
};

// The heap limit a run of `c` without --heap gets.
uint64_t default_heap_bytes(const CollectorInfo& c);

// What --list-gcs and the manual add to a collector's description about
// its GC threads: "", " (no GC threads)" or " (GC threads with OPTION)".
inline std::string gc_threads_note(const CollectorInfo& c) {
  if (!c.uses_gc_threads) return " (no GC threads)";
  if (c.gc_threads_with) return std::string(" (GC threads with ") + c.gc_threads_with + ")";
  return "";
}

// The variant that `info` runs under `options`, or none for a collector
// that implements no paper.
std::optional<Variant> variant_of(const CollectorInfo& info, const HeapOptions& options);
// The same for a running collector (none for one the registry lacks).
std::optional<Variant> variant_of(const Collector& heap);
// One line for the outputs: "pSemispaces: the paper's configuration",
// "pSemispaces: departures from the paper: A; B", or "implements no paper".
std::string variant_line(const std::optional<Variant>& variant);
// --paper-config's options as "--NAME=VALUE ..." ("the defaults" when
// there are none), for --list-gcs and messages.
std::string options_text(const OptionValues& values);
const std::vector<CollectorInfo>& registered_collectors();
const CollectorInfo* find_collector(const std::string& name);

}  // namespace gc
