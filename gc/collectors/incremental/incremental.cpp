#include "gc/collectors/incremental/incremental.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>

#include "gc/mutator.h"
#include "gc/observe/common_counters.h"
#include "gc/observe/log.h"
#include "gc/parallel/cpu_relax.h"
#include "gc/verify/verifier.h"

namespace gc {

namespace {

constexpr observe::Counter kSlotsScanned{"slots scanned", observe::Unit::kSlots};
constexpr observe::Counter kAllocatedMarked{"allocated marked", observe::Unit::kObjects};
constexpr observe::Counter kBarrierCalls{"barrier calls", observe::Unit::kEvents};
constexpr observe::Counter kBarrierShaded{"barrier shaded", observe::Unit::kObjects};
constexpr observe::Counter kBarrierReGreyed{"barrier re-greyed", observe::Unit::kObjects};
constexpr observe::Counter kUnbarrieredStoresIntoMarkedObjects{"unbarriered stores into marked objects",
                                                               observe::Unit::kEvents};
constexpr observe::Counter kStacksRescanned{"stacks rescanned", observe::Unit::kObjects};
constexpr observe::Counter kMarkSteps{"mark steps", observe::Unit::kEvents};
constexpr observe::Counter kSweepSteps{"sweep steps", observe::Unit::kEvents};
constexpr observe::Counter kCycles{"cycles", observe::Unit::kCollections};
constexpr observe::Counter kHeapInUseAtThePause{"heap in use at the pause", observe::Unit::kBytes,
                                                observe::CounterKind::kPeak};
constexpr observe::Counter kCycleTrigger{"cycle trigger", observe::Unit::kBytes, observe::CounterKind::kPeak};
constexpr observe::Counter kConcurrentRounds{"concurrent rounds", observe::Unit::kEvents};
constexpr observe::Counter kConcurrentMarkNs{"concurrent mark ns", observe::Unit::kNs};
constexpr observe::Counter kMarkAssists{"mark assists", observe::Unit::kEvents};
constexpr observe::Counter kAssistsWithoutWork{"assists without work", observe::Unit::kEvents};
constexpr observe::Counter kAssistTasksStolen{"assist tasks stolen", observe::Unit::kTasks};
constexpr observe::Counter kFloatingGarbage{"floating garbage", observe::Unit::kObjects};

// The first cycle starts when this much is in use (marksweep's first
// trigger too), so that a short script does not collect at all.
constexpr uint64_t kFirstThresholdBytes = 8ull << 20;
// A marking step is paid for by every 1K words allocated (Lua 5.4's
// stepsize, 2^13 bytes): short enough a pause, rare enough that the
// pause's own cost stays small beside its work.
constexpr uint64_t kStepWords = 1024;
// Under --gc-stress a step marks this many units at each allocation the
// countdown picks (or sweeps one block), so that a cycle spans many
// allocations and stores.
constexpr int64_t kStressStepUnits = 16;
constexpr int64_t kUnbounded = INT64_MAX;

const char* const kPhaseRoots = "roots";
const char* const kPhaseMark = "mark";
const char* const kPhaseAtomic = "atomic";
const char* const kPhaseAssist = "mark assist";
// Tries of the GC threads' deques after asking for their private tasks.
constexpr unsigned kAssistStealTries = 256;
const char* const kPhaseSweep = "sweep";

// Slot i of the object whose header is h, from the slot's address.
uint64_t slot_index(const Word* h, const Value* slot) {
  return static_cast<uint64_t>(reinterpret_cast<const Value*>(h - 1) - slot);
}

}  // namespace

// --gc-verify: the barrier reads the colour of the object it is given, so
// a store must name the object whose slot it writes (VM::write).
void Incremental::check_store(Word* object, const Value* slot) const {
  if (!options_.verify) return;
  Word header = std::atomic_ref<Word>(*object).load(std::memory_order_relaxed);
  if (slot_index(object, slot) < Header::nrefs(header)) return;
  verify::report_and_exit(
      {"a reference store names an object that does not hold the slot it writes, so the "
       "barrier reads the wrong object's colour",
       reinterpret_cast<uintptr_t>(object), -1, "-", stats_.collections});
}

Incremental::Incremental(RootSet& roots, const HeapOptions& options)
    : MarkSweepHeap(roots, options), inc_(incremental_options(options_)) {
  threshold_ = std::min(kFirstThresholdBytes, options_.max_heap_bytes);
  if (inc_.mode == IncrementalMode::kConcurrent)
    concurrent_ = std::make_unique<ConcurrentMarking>(pool(), options_.gc_deque_tasks);
  describe_incremental_events();
}

unsigned Incremental::gc_threads_in_use() const { return concurrent_ ? options_.gc_threads : 0; }

void Incremental::describe_incremental_events() {
  events.add_panel({"Barrier work per cycle",
                    "objects",
                    "What the write barrier did in each cycle's marking: objects it shaded (Dijkstra, Yuasa) "
                    "or made grey again (backward), beside the objects allocated marked meanwhile (black "
                    "under Yuasa's barrier, grey under the others).",
                    {{"shaded", &kBarrierShaded, nullptr, 1},
                     {"re-greyed", &kBarrierReGreyed, nullptr, 1},
                     {"allocated marked", &kAllocatedMarked, nullptr, 1}}});
  events.add_panel(
      {"Heap against the cycle's trigger",
       "MiB",
       "At each of the collector's pauses, the heap in use and the heap in use at which the next "
       "cycle starts (--inc-pause percent of what the last one left): the heap climbs to the "
       "trigger while idle, goes on climbing while a cycle marks (new objects are kept), and "
       "falls as the lazy sweep frees what the cycle found dead.",
       {{"in use", &kHeapInUseAtThePause, nullptr, 1.0 / (1 << 20)},
        {"trigger", &kCycleTrigger, nullptr, 1.0 / (1 << 20)}}});
}

// Frames

template <class Body>
void Incremental::increment(GcCause cause, Body&& body) {
  events.collection_start(observe::CollectionKind::kIncrement, cause, *this);
  events.count(0, kHeapInUseAtThePause, heap_used());
  events.count(0, kCycleTrigger, threshold_);
  body();
  note_heap_size();
  events.collection_end(*this);
}

// Allocation

Word* Incremental::allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  if (!representable(nrefs, raw_words)) return out_of_memory();
  return allocate(class_id, nrefs, raw_words, false);
}

Word* Incremental::allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  if (!representable(nrefs, raw_words)) return out_of_memory();
  return allocate(class_id, nrefs, raw_words, true);
}

// The step first, so that the object takes the colour of the phase the
// step leaves: unmarked (white) unless a cycle marks (the sweep gives out
// only swept cells, MarkSweepSpace::begin_lazy_sweep). While a cycle
// marks, black under Yuasa's barrier, whose snapshot needs nothing from a
// new object (its slots hold nil until a store, which the barrier sees);
// grey under the others. The interpreter initialises a fresh object's
// slots without the barrier, before its next allocation (vm/interpreter.cpp,
// "initialising stores"), and a grey object is scanned no sooner than the
// next step, which runs at an allocation: what it was initialised with is
// marked then.
Word* Incremental::allocate(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, bool pinned) {
  uint64_t words = object_words(nrefs, raw_words);
  bool large = pinned || words > marksweep::kMaxCellObjectWords;
  unsigned size_class = large ? marksweep::kNoCellClass : marksweep::kSizeClassOfWords[words];
  Phase began_in = phase_;
  if (stress_collection_due()) {
    if (options_.stress_full) {
      collect(GcCause::kStress);
    } else if (phase_ == Phase::kIdle) {
      start_cycle(GcCause::kStress);
    } else if (concurrent_ && phase_ == Phase::kMark) {
      // Due now: an assist beside the GC threads, so that every stressed
      // allocation races them; then the program waits for the round,
      // which ran beside it since the last due allocation, so that cycles
      // end as often as the countdown asks.
      if (inc_.assist) assist(GcCause::kStress, kStressStepUnits);
      handshake(GcCause::kStress);
    } else {
      step(GcCause::kStress, 0, size_class);
    }
  } else if (!options_.stress_interval) {
    pay(words, size_class);
  }
  // The pause that began the sweep swept nothing: a sweep step now, its
  // class first, rather than an empty block while the class's own blocks
  // wait with free cells (MarkSweepSpace::sweep_some). Later steps come
  // from the pacing, which sweeps the class that ran out first.
  if (began_in == Phase::kMark && phase_ == Phase::kSweep && space().awaits_sweep(size_class))
    step(GcCause::kAllocationDebt, 0, size_class);
  Word* h = try_allocate(class_id, nrefs, raw_words, words, size_class);
  if (!h) {
    GcCause cause = large ? GcCause::kLargeAllocation : GcCause::kAllocationFailure;
    if (phase_ != Phase::kIdle) {
      finish_cycle(cause);
      h = try_allocate(class_id, nrefs, raw_words, words, size_class);
    }
    if (!h) {
      uint64_t request = large ? LargeObjectSpace::pages_for(words) * kPageBytes
                               : marksweep::kClassWords[size_class] * kWordSize;
      full_collection(cause, request, large);
      h = try_allocate(class_id, nrefs, raw_words, words, size_class);
    }
    if (!h) return out_of_memory();
  }
  if (recording_) [[unlikely]]
    recording_->allocate(0, h);
  if (phase_ == Phase::kMark) {
    if (recording_) [[unlikely]] {
      recording_->grey(0, h);
      if (concurrent_ || inc_.barrier == IncrementalBarrier::kYuasa) recording_->scan(0, h);
    }
    allocated_marked_++;
    if (concurrent_ || inc_.barrier == IncrementalBarrier::kYuasa) {
      *h |= Header::kMarkBit;
    } else {
      *h |= Header::kMarkBit;
      if (nrefs) grey_.push_back({h, 0});
    }
  }
  return h;
}

// Up to --heap: when a cycle starts is the pacing's business (pay).
Word* Incremental::try_allocate(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words,
                                unsigned size_class) {
  MarkSweepSpace& space = mutable_space();
  if (size_class == marksweep::kNoCellClass)
    return space.allocate_large(class_id, nrefs, raw_words, words, space.max_heap_bytes());
  Word* cell = space.take_cell(size_class, space.max_heap_bytes());
  return cell ? format_object(cell, class_id, nrefs, raw_words) : nullptr;
}

// The pacing (Lua 5.4's): idle, a cycle starts once the heap in use
// reaches the threshold (nothing is freed while idle, so it is what was in
// use at the last cycle's end plus what was allocated since); marking,
// every kStepWords allocated pay for a step (in concurrent mode, each
// allocation looks whether the GC threads' round is over); sweeping, each
// visit here (a size class's list ran out) pays for what was allocated
// since the last.
void Incremental::pay(uint64_t words, unsigned size_class) {
  switch (phase_) {
    case Phase::kIdle:
      if (base_bytes_ + (stats_.bytes_allocated - allocated_at_base_) >= threshold_)
        start_cycle(GcCause::kHeapThreshold);
      return;
    case Phase::kMark:
      if (concurrent_) {
        if (concurrent_->over()) {
          handshake(GcCause::kMarkingDone);
          return;
        }
        // Within the cycle's allowance the GC threads mark for free.
        if (!inc_.assist || stats_.bytes_allocated < assist_from_bytes_) return;
      }
      unpaid_words_ += words;
      if (unpaid_words_ >= kStepWords) {
        uint64_t due = unpaid_words_;
        unpaid_words_ = 0;
        if (concurrent_) {
          assist(GcCause::kMarkAssist, step_units(due));
        } else {
          step(GcCause::kAllocationDebt, due);
        }
      }
      return;
    case Phase::kSweep: {
      uint64_t due = (stats_.bytes_allocated - allocated_at_last_step_) / kWordSize + words;
      allocated_at_last_step_ = stats_.bytes_allocated;
      step(GcCause::kAllocationDebt, due, size_class);
      return;
    }
  }
}

// One Increment pause of `words * stepmul / 100` units (under stress, a
// fixed few).
int64_t Incremental::step_units(uint64_t words) const {
  if (options_.stress_interval) return kStressStepUnits;
  return static_cast<int64_t>(std::min<uint64_t>(words * inc_.stepmul_percent / 100, kUnbounded));
}

void Incremental::step(GcCause cause, uint64_t words, unsigned size_class) {
  int64_t budget = step_units(words);
  increment(cause, [&] {
    if (phase_ == Phase::kMark) {
      mark_steps_++;
      uint64_t marked = objects_marked_, scanned = slots_scanned_;
      bool done = false;
      events.phase(0, kPhaseMark, [&] { done = mark_some(budget); });
      events.count(0, kMarkSteps, 1);
      events.count(0, observe::kObjectsMarked, objects_marked_ - marked);
      events.count(0, kSlotsScanned, slots_scanned_ - scanned);
      if (done) atomic();
    } else if (phase_ == Phase::kSweep) {
      sweep_steps_++;
      bool done = false;
      events.phase(0, kPhaseSweep,
                   [&] { done = mutable_space().sweep_some(static_cast<uint64_t>(budget), size_class); });
      events.count(0, kSweepSteps, 1);
      if (done) end_cycle();
    }
  });
}

// The cycle

void Incremental::start_cycle(GcCause cause) {
  increment(cause, [&] {
    roots_.prepare_for_collection();
    if (options_.verify)
      events.phase(0, "verify before",
                   [&] { verify::verify_heap_or_exit(*this, roots_, stats_.collections, "before"); });
    // The whole cycle is recorded, the program's allocations and the
    // barrier's work between its pauses included.
    if (start_recording(observe::CollectionKind::kIncrement, true)) {
      recording_ = observe::Recording::active();
      recording_->spans_a_cycle();
    }
    phase_ = Phase::kMark;
    objects_marked_ = slots_scanned_ = allocated_marked_ = 0;
    barrier_calls_ = shaded_ = regreyed_ = stores_ = unbarriered_ = 0;
    mark_steps_ = sweep_steps_ = 0;
    unpaid_words_ = 0;
    // The allowance: what the program allocated between the last cycle's
    // end and this start, which the GC threads' marking may take to run.
    assist_from_bytes_ = stats_.bytes_allocated + (stats_.bytes_allocated - allocated_at_base_);
    recorded_ = {};
    uint64_t marked = 0;
    events.phase(0, kPhaseRoots, [&] {
      mark_roots();
      // The snapshot at the beginning covers the stacks too: written
      // without a barrier, they must be scanned before the program runs on.
      if (inc_.barrier == IncrementalBarrier::kYuasa || concurrent_) scan_all_stacks();
      marked = objects_marked_;
    });
    events.count(0, observe::kObjectsMarked, marked);
    select_barrier();
    hide_fast_path(true);
    if (concurrent_) events.phase(0, "start round", [&] { start_round(); });
    if (events.enabled()) [[unlikely]]
      events.cycle_event(observe::CyclePart::kMarking,
                         "Cycle " + std::to_string(cycles_ + 1) + " starts marking: heap " +
                             observe::log_size(heap_used()) + ", trigger " + observe::log_size(threshold_) +
                             ", " + std::to_string(marked) + " objects marked from the roots");
  });
  if (concurrent_) concurrent_->wake();
}

// Concurrent mode

// Stacks, scanned at the cycle's start, stay the program's: it writes them
// without a barrier, so no GC thread may read them.
void Incremental::start_round() {
  for (const Grey& g : grey_)
    if (Header::class_id(*g.object) != kStackClass) round_grey_.push_back(g.object);
  grey_.clear();
  concurrent_->start(std::move(round_grey_));
  round_grey_ = {};
  // Ends as ConcurrentMarking::wait says: the program, waiting, greys
  // nothing.
  if (recording_) [[unlikely]]
    concurrent_->wait();
}

void Incremental::take_round() {
  ConcurrentMarking::RoundFigures f = concurrent_->finish(events);
  events.count(0, kConcurrentRounds, 1);
  events.count(0, kConcurrentMarkNs, static_cast<uint64_t>(f.wall_ns));
}

// The snapshot barrier shades each object at most once a cycle and new
// objects are black, so the rounds end: each has fewer white objects to
// find than the last.
void Incremental::handshake(GcCause cause) {
  increment(cause, [&] {
    // Over already, but under --gc-stress; then it ends as
    // ConcurrentMarking::wait says.
    concurrent_->wait();
    take_round();
    hand_over_assist_work();
    if (!round_grey_.empty()) {
      start_round();
      return;
    }
    atomic();
  });
  concurrent_->wake();
}

// The program marks as a GC thread does (fetch-or marks; the slots it
// reads are its own to write, so it reads them plainly), taking the
// barrier's greys first, which are its alone, then the GC threads' tasks.
// A recorded cycle's rounds are over before the program runs on, so none
// is left to assist.
void Incremental::assist(GcCause cause, int64_t budget) {
  if (recording_) return;
  increment(cause, [&] {
    uint64_t marked = objects_marked_, scanned = slots_scanned_, stolen = 0;
    events.phase(0, kPhaseAssist, [&] {
      parallel::Task task;
      // Ends: each turn spends budget or breaks.
      while (budget > 0) {
        if (!assist_partial_.empty()) {
          parallel::Task rest = assist_partial_;
          assist_partial_ = {};
          assist_scan(rest.object, rest.begin, rest.end, budget);
        } else if (!round_grey_.empty()) {
          Word* h = round_grey_.back();
          round_grey_.pop_back();
          budget--;
          assist_scan(h, 0, Header::nrefs(std::atomic_ref<Word>(*h).load(std::memory_order_relaxed)), budget);
        } else if (steal_for_assist(task)) {
          stolen++;
          budget--;
          assist_scan(task.object, task.begin, task.end, budget);
        } else {
          // The GC threads hold what is left, or the round has ended.
          if (stolen == 0 && objects_marked_ == marked) events.count(0, kAssistsWithoutWork, 1);
          break;
        }
      }
    });
    events.count(0, kMarkAssists, 1);
    events.count(0, kAssistTasksStolen, stolen);
    events.count(0, observe::kObjectsMarked, objects_marked_ - marked);
    events.count(0, kSlotsScanned, slots_scanned_ - scanned);
  });
}

// A marker asked shares its private tasks before its next one, so a few
// hundred tries find them where a marker runs.
bool Incremental::steal_for_assist(parallel::Task& task) {
  if (concurrent_->steal(task)) return true;
  concurrent_->ask_for_work(true);
  bool found = false;
  // Ends after kAssistStealTries tries whether or not a marker runs: where
  // none does (the program, the coordinator and the pool's threads on one
  // core, which tests/cli/incremental_test.sh runs) no task appears, and
  // the assist gives up rather than wait for one.
  for (unsigned k = 0; k < kAssistStealTries && !found && !concurrent_->over(); ++k) {
    parallel::cpu_relax();
    found = concurrent_->steal(task);
  }
  concurrent_->ask_for_work(false);
  return found;
}

void Incremental::assist_scan(Word* h, uint64_t begin, uint64_t end, int64_t& budget) {
  uint64_t stop = std::min<uint64_t>(end, begin + static_cast<uint64_t>(std::max<int64_t>(budget, 1)));
  for (uint64_t i = begin; i < stop; ++i) {
    Value v = ref_slot(h, i);
    if (v.is_ref()) shade_concurrently(v.as_ref());
  }
  slots_scanned_ += stop - begin;
  budget -= static_cast<int64_t>(stop - begin);
  // The rest waits for the next assist, or goes whole to the next round.
  if (stop < end)
    assist_partial_ = parallel::Task::slots(h, static_cast<uint32_t>(stop), static_cast<uint32_t>(end));
}

bool Incremental::shade_concurrently(Word* h) {
  std::atomic_ref<Word> header(*h);
  if (Header::is_marked(header.load(std::memory_order_relaxed))) return false;
  Word before = header.fetch_or(Header::kMarkBit, std::memory_order_relaxed);
  if (Header::is_marked(before)) return false;
  objects_marked_++;
  if (Header::nrefs(before)) round_grey_.push_back(h);
  if (recording_) [[unlikely]]
    recording_->grey(0, h);
  return true;
}

void Incremental::hand_over_assist_work() {
  if (assist_partial_.empty()) return;
  round_grey_.push_back(assist_partial_.object);
  assist_partial_ = {};
}

void Incremental::mark_roots() {
  for (const RootGroup& g : gather_roots())
    for (size_t k = 0; k < g.count; ++k) shade_value(g.slots[k]);
}

// Every fiber stack (pinned, so in the large-object space) marked and
// scanned now.
void Incremental::scan_all_stacks() {
  for (const LargeObjectSpace::Object& o : space().large_objects().objects()) {
    Word* h = o.header;
    if (Header::class_id(*h) != kStackClass) continue;
    if (!Header::is_marked(*h)) {
      *h |= Header::kMarkBit;
      objects_marked_++;
      if (recording_) [[unlikely]]
        recording_->grey(0, h);
    }
    uint64_t n = Header::nrefs(*h);
    for (uint64_t i = 0; i < n; ++i) shade_value(ref_slot(h, i));
    if (recording_) [[unlikely]]
      recording_->scan(0, h);
    slots_scanned_ += n;
  }
}

// Depth first; a large array is scanned in parts, each within a step's
// budget. The backward barrier's objects are marked again when taken.
bool Incremental::mark_some(int64_t budget) {
  while (budget > 0) {
    if (!regrey_.empty()) {
      Word* h = regrey_.back();
      regrey_.pop_back();
      budget--;
      // Marked since: someone shaded it, and it is grey again already.
      if (Header::is_marked(*h)) continue;
      *h |= Header::kMarkBit;
      if (recording_) [[unlikely]]
        recording_->grey(0, h);
      grey_.push_back({h, 0});
      continue;
    }
    if (grey_.empty()) return true;
    Grey& g = grey_.back();
    Word* h = g.object;
    uint64_t n = Header::nrefs(*h);
    uint64_t begin = g.next;
    uint64_t end = std::min<uint64_t>(n, begin + static_cast<uint64_t>(budget));
    // Before scanning, which pushes and may move grey_.
    if (end < n) {
      g.next = end;
    } else {
      grey_.pop_back();
    }
    for (uint64_t i = begin; i < end; ++i) shade_value(ref_slot(h, i));
    if (recording_ && end == n) [[unlikely]]
      recording_->scan(0, h);
    slots_scanned_ += end - begin;
    budget -= static_cast<int64_t>(end - begin) + 1;
  }
  return grey_.empty() && regrey_.empty();
}

// In the last mark step's pause, or the pause that finishes the cycle.
void Incremental::atomic() {
  uint64_t marked = objects_marked_, scanned = slots_scanned_;
  uint64_t rescanned = 0;
  events.phase(0, kPhaseAtomic, [&] {
    roots_.prepare_for_collection();
    // Roots and stacks change without a barrier: but for the snapshot's,
    // what they hold now must be marked too (Dijkstra et al.'s rescan).
    if (inc_.barrier != IncrementalBarrier::kYuasa) {
      mark_roots();
      for (const LargeObjectSpace::Object& o : space().large_objects().objects()) {
        Word* h = o.header;
        if (Header::class_id(*h) != kStackClass || !Header::is_marked(*h)) continue;
        uint64_t n = Header::nrefs(*h);
        for (uint64_t i = 0; i < n; ++i) shade_value(ref_slot(h, i));
        slots_scanned_ += n;
        rescanned++;
      }
    }
    mark_some(kUnbounded);
  });
  write_barrier = nullptr;
  events.count(0, observe::kObjectsMarked, objects_marked_ - marked);
  events.count(0, kSlotsScanned, slots_scanned_ - scanned);
  events.count(0, kStacksRescanned, rescanned);
  if (options_.verify) events.phase(0, "verify marks", [&] { check_tricolour(); });
  events.phase(0, "weak references", [&] {
    MarkedSurvives resolver;
    roots_.process_weak(resolver);
  });
  report_cycle_counters();
  if (events.enabled()) [[unlikely]]
    events.cycle_event(observe::CyclePart::kSweeping,
                       "Cycle " + std::to_string(cycles_ + 1) + " atomic phase: marking done, " +
                           std::to_string(objects_marked_) + " objects marked, " + std::to_string(rescanned) +
                           (rescanned == 1 ? " stack" : " stacks") + " rescanned; sweeping starts");
  mutable_space().begin_lazy_sweep();
  allocated_at_last_step_ = stats_.bytes_allocated;
  phase_ = Phase::kSweep;
  hide_fast_path(false);
}

void Incremental::report_cycle_counters() {
  events.count(0, kAllocatedMarked, allocated_marked_);
  events.count(0, kBarrierCalls, barrier_calls_);
  events.count(0, kBarrierShaded, shaded_);
  events.count(0, kBarrierReGreyed, regreyed_);
  events.count(0, kUnbarrieredStoresIntoMarkedObjects, unbarriered_);
  total_shaded_ += shaded_;
  total_regreyed_ += regreyed_;
}

// The space's sizing policy is not run here: giving back the pages of
// hundreds of empty blocks takes milliseconds of system calls, a pause of
// its own. Empty blocks keep their pages for the next cycle's allocation;
// a full collection gives back what is beyond the space's target.
void Incremental::end_cycle() {
  phase_ = Phase::kIdle;
  if (recording_) {
    finish_recording();
    recording_ = nullptr;
  }
  base_bytes_ = heap_used();
  allocated_at_base_ = stats_.bytes_allocated;
  threshold_ = std::min(options_.max_heap_bytes,
                        std::max(kFirstThresholdBytes, base_bytes_ / 100 * inc_.pause_percent));
  cycles_++;
  events.count(0, kCycles, 1);
  if (events.enabled()) [[unlikely]]
    events.cycle_event(observe::CyclePart::kIdle, "Cycle " + std::to_string(cycles_) + " ends: swept, heap " +
                                                      observe::log_size(base_bytes_) +
                                                      ", the next starts at " +
                                                      observe::log_size(threshold_));
  if (options_.verify)
    events.phase(0, "verify after",
                 [&] { verify::verify_heap_or_exit(*this, roots_, stats_.collections, "after"); });
  stats_.collections++;
}

void Incremental::finish_cycle(GcCause cause) {
  increment(cause, [&] {
    // The rest of the marking on this thread: the GC threads are idle once
    // their round is over.
    if (phase_ == Phase::kMark && concurrent_) {
      if (concurrent_->in_progress()) {
        // Ends as ConcurrentMarking::wait says: the program stores nothing
        // while it finishes the cycle.
        concurrent_->wait();
        take_round();
      }
      hand_over_assist_work();
      for (Word* h : round_grey_) grey_.push_back({h, 0});
      round_grey_.clear();
    }
    if (phase_ == Phase::kMark) {
      events.phase(0, kPhaseMark, [&] { mark_some(kUnbounded); });
      atomic();
    }
    if (phase_ == Phase::kSweep) {
      events.phase(0, kPhaseSweep, [&] { mutable_space().sweep_some(UINT64_MAX); });
      end_cycle();
    }
  });
}

// A full collection

void Incremental::collect(GcCause cause) {
  // gc() collects everything unreachable now: the cycle in progress keeps
  // what it marked before the program dropped it.
  if (phase_ != Phase::kIdle) finish_cycle(cause);
  full_collection(cause, 0, false);
}

void Incremental::full_collection(GcCause cause, uint64_t request_bytes, bool large) {
  if (phase_ != Phase::kIdle) finish_cycle(cause);
  collect_making_room(cause, request_bytes, large);
  base_bytes_ = heap_used();
  allocated_at_base_ = stats_.bytes_allocated;
  threshold_ = std::min(options_.max_heap_bytes,
                        std::max(kFirstThresholdBytes, base_bytes_ / 100 * inc_.pause_percent));
}

// The heap's frame runs these with the program stopped: no barrier is
// needed, and the whole heap is marked and swept at once.
void Incremental::mark() {
  uint64_t before = objects_marked_;
  // A recorded full collection (--gc-animate) sees this marking too.
  recording_ = observe::Recording::active();
  events.phase(0, kPhaseMark, [&] {
    mark_roots();
    mark_some(kUnbounded);
  });
  recording_ = nullptr;
  events.count(0, observe::kObjectsMarked, objects_marked_ - before);
}

void Incremental::sweep() {
  MarkSweepSpace& space = mutable_space();
  space.begin_lazy_sweep();
  events.phase(0, kPhaseSweep, [&] { space.sweep_some(UINT64_MAX); });
}

// The mutator's side

void Incremental::hide_fast_path(bool hide) {
  // Under --gc-stress the heap keeps it hidden throughout.
  if (options_.hide_buffer()) return;
  size_class_of = hide ? nullptr : marksweep::kSizeClassOfWords.data();
}

void Incremental::select_barrier() {
  if (concurrent_) {
    write_barrier = inc_.barrier == IncrementalBarrier::kYuasa ? snapshot_barrier : recording_barrier;
    return;
  }
  switch (inc_.barrier) {
    case IncrementalBarrier::kDijkstra:
      write_barrier = dijkstra_barrier;
      break;
    case IncrementalBarrier::kYuasa:
      write_barrier = yuasa_barrier;
      break;
    case IncrementalBarrier::kBackward:
      write_barrier = backward_barrier;
      break;
    case IncrementalBarrier::kNone:
      // Only so that --gc-verify can name the store that lost an object.
      write_barrier = options_.verify ? recording_barrier : nullptr;
      break;
  }
}

// Marked means grey or black here (one mark bit): a store into a grey
// object is treated as one into a black object, which shades a little more
// than needed and never less.
void Incremental::dijkstra_barrier(Collector& c, Word* object, Value* slot, Value v) {
  Incremental& self = static_cast<Incremental&>(c);
  self.check_store(object, slot);
  self.barrier_calls_++;
  if (Header::is_marked(*object) && v.is_ref() && !Header::is_marked(*v.as_ref())) {
    self.shade(v.as_ref());
    self.shaded_++;
    if (self.recording_) [[unlikely]]
      self.recording_->barrier(0, object, v.as_ref());
  }
  store_and_dirty(c, slot, v);
}

void Incremental::yuasa_barrier(Collector& c, Word* object, Value* slot, Value v) {
  Incremental& self = static_cast<Incremental&>(c);
  self.check_store(object, slot);
  self.barrier_calls_++;
  Value old = *slot;
  if (old.is_ref() && !Header::is_marked(*old.as_ref())) {
    self.shade(old.as_ref());
    self.shaded_++;
    if (self.recording_) [[unlikely]]
      self.recording_->barrier(0, object, old.as_ref());
  }
  store_and_dirty(c, slot, v);
}

// Grey again: unmarked and queued, so that it is marked and scanned once
// more; unmarked, it does not come here again before it is.
void Incremental::backward_barrier(Collector& c, Word* object, Value* slot, Value v) {
  Incremental& self = static_cast<Incremental&>(c);
  self.check_store(object, slot);
  self.barrier_calls_++;
  if (Header::is_marked(*object) && v.is_ref() && !Header::is_marked(*v.as_ref())) {
    *object &= ~Header::kMarkBit;
    self.regrey_.push_back(object);
    self.regreyed_++;
    if (self.recording_) [[unlikely]]
      self.recording_->barrier(0, object, object);
  }
  store_and_dirty(c, slot, v);
}

// The GC threads may be reading the old value's header and the slot: the
// mark is a fetch-or (the thread whose bit it set greys the object), and
// the store is released, so that a GC thread that loads the new value
// finds its object formatted.
void Incremental::snapshot_barrier(Collector& c, Word* object, Value* slot, Value v) {
  Incremental& self = static_cast<Incremental&>(c);
  self.check_store(object, slot);
  self.barrier_calls_++;
  Value old = *slot;
  if (old.is_ref() && self.shade_concurrently(old.as_ref())) {
    self.shaded_++;
    if (self.recording_) [[unlikely]]
      self.recording_->barrier(0, object, old.as_ref());
  }
  store_released_and_dirty(c, slot, v);
}

// --barrier=none: under --gc-verify the stores that broke the invariant
// are recorded; in concurrent mode the store is released as the snapshot
// barrier's (the headers are then read atomically too).
void Incremental::recording_barrier(Collector& c, Word* object, Value* slot, Value v) {
  Incremental& self = static_cast<Incremental&>(c);
  self.check_store(object, slot);
  self.stores_++;
  auto marked = [](Word* h) {
    return Header::is_marked(std::atomic_ref<Word>(*h).load(std::memory_order_relaxed));
  };
  if (self.options_.verify && marked(object) && v.is_ref() && !marked(v.as_ref())) {
    self.unbarriered_++;
    self.recorded_[self.unbarriered_ % kRecordedStores] = {object, slot_index(object, slot), v, self.stores_};
  }
  store_released_and_dirty(c, slot, v);
}

// --gc-verify's tri-colour check (verify::check_reachable_marked), before
// weak references or the sweep: every object reachable from the roots
// must be marked (else the sweep frees a live object: the barrier let the
// program hide it behind a black one). The marked objects it does not
// reach are the cycle's floating garbage. A failure names the store that
// hid the object when it is among those recorded.
void Incremental::check_tricolour() {
  verify::HeapShape shape;
  describe_heap(shape);
  verify::ReachableMarked r = verify::check_reachable_marked(shape, roots_, stats_.collections);
  if (!r.failure) {
    events.count(0, kFloatingGarbage, r.floating);
    return;
  }
  verify::Failure f = *r.failure;
  char what[200];
  std::snprintf(what, sizeof what,
                "reachable object 0x%" PRIxPTR
                " is not marked at the atomic phase, so the sweep would free it: the tri-colour invariant "
                "was broken",
                r.unmarked);
  f.what = what;
  if (f.object) {
    auto* holder = reinterpret_cast<Word*>(f.object);
    auto slot = static_cast<uint64_t>(f.slot);
    Value v = ref_slot(holder, slot);
    f.what += "; it is held in slot " + std::to_string(slot) + " of the marked object named below";
    const UnbarrieredStore* store = nullptr;
    for (const UnbarrieredStore& s : recorded_)
      if (s.object == holder && s.slot == slot && s.value == v && (!store || s.number > store->number))
        store = &s;
    if (store) {
      f.what += ", put there by store " + std::to_string(store->number) +
                " of the cycle's marking, of a white object into a marked one with --barrier=" +
                barrier_name(inc_.barrier);
    } else if (inc_.barrier == IncrementalBarrier::kNone) {
      f.what += " (the store that put it there is not among the last " + std::to_string(kRecordedStores) +
                " recorded)";
    }
  }
  verify::report_and_exit(f);
}

std::unique_ptr<Collector> create_incremental(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<Incremental>(roots, options);
}

}  // namespace gc
