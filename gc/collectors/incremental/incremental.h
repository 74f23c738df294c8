// incremental: mark-sweep whose marking and sweeping run in steps between
// the program's allocations (Dijkstra et al. 1978; Lua 5.4's lgc.c is the
// model of the pacing), on the mark-sweep heap (gc/plan/marksweep_heap.h).
// docs/collectors/incremental.md describes it; in brief, a cycle:
//
//   idle        the program allocates through the inline fast path; when
//               the heap in use reaches --inc-pause percent of what was in
//               use at the last cycle's end, the cycle starts
//   start       a pause: the roots' targets marked (with --barrier=yuasa,
//               every fiber stack scanned too: the snapshot), the barrier
//               selected, the fast path hidden so that every allocation
//               comes here, to be marked (black under Yuasa's barrier,
//               grey under the others) and to pay for marking
//   mark        steps: each allocation of 1K words pays for a step of
//               --inc-stepmul percent as many units (slots scanned,
//               objects marked) from the grey objects
//   atomic      a pause once no grey object is left: the roots and the
//               marked fiber stacks scanned again (the interpreter writes
//               stacks without a barrier) unless the barrier is Yuasa's,
//               marking finished, --gc-verify's tri-colour check, weak
//               references, the large objects swept; the barrier cleared
//   sweep       steps: the blocks swept lazily a few at a time as the
//               program's allocation pays for them, the fast path back
//   end         the next cycle's threshold, from the heap in use
//
// Each step is a pause of its own (CollectionKind::kIncrement). A full
// collection (gc(), or an allocation that fails) first finishes the cycle
// in progress in one pause, then collects the whole heap at once.
//
// With --inc-mode=concurrent the marking runs on the GC threads instead
// (concurrent_marking.h), under Yuasa's snapshot barrier, and the program's
// pauses while a cycle marks are two handshakes:
//
//   start       as above, every stack scanned; the grey objects handed to
//               a round of marking on the GC threads, and the program runs
//   round over  at the first allocation after the GC threads finish, a
//               pause: the objects the barrier shaded meanwhile go to
//               another round, or, with none, the atomic phase (nothing to
//               rescan: the snapshot covers the roots and stacks) and the
//               lazy sweep as above
//   assist      once the program has allocated, while a round runs, as
//               much as it did before the cycle started, each 1K words
//               pay for a pause of marking on its own thread (Go's mark
//               assist, --inc-assist): the barrier's greys, then tasks
//               stolen from the GC threads
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "gc/collectors/incremental/concurrent_marking.h"
#include "gc/collectors/incremental/incremental_options.h"
#include "gc/plan/marksweep_heap.h"

namespace gc {

class Incremental final : public MarkSweepHeap {
 public:
  Incremental(RootSet& roots, const HeapOptions& options);
  const char* name() const override { return "incremental"; }

  Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override;
  Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override;
  void collect(GcCause cause) override;
  // GC threads mark only in concurrent mode.
  unsigned gc_threads_in_use() const override;

  enum class Phase : uint8_t { kIdle, kMark, kSweep };
  // For tests and observability.
  Phase phase() const { return phase_; }
  const IncrementalOptions& incremental() const { return inc_; }
  // The heap in use at which the next cycle starts.
  uint64_t threshold_bytes() const { return threshold_; }
  uint64_t cycles_completed() const { return cycles_; }
  // Objects the barriers shaded (marked and made grey), and re-greyed, since the start.
  uint64_t barrier_shaded() const { return total_shaded_; }
  uint64_t barrier_regreyed() const { return total_regreyed_; }

 private:
  // A grey object: marked, its slots from `next` on not yet scanned.
  struct Grey {
    Word* object;
    uint64_t next;
  };
  // A store into a marked object of a white target with --barrier=none, as
  // --gc-verify's tri-colour check names it.
  struct UnbarrieredStore {
    Word* object = nullptr;
    uint64_t slot = 0;
    Value value{};
    uint64_t number = 0;  // the cycle's stores counted from 1
  };

  // --- a full collection through the mark-sweep heap's frame
  void mark() override;
  void sweep() override;

  // --- the cycle
  void start_cycle(GcCause cause);
  void mark_roots();
  void scan_all_stacks();
  // Marks up to `budget` units from the grey objects; true when none is left.
  bool mark_some(int64_t budget);
  void atomic();
  void finish_sweep_if_done(bool done);
  void end_cycle();
  // Runs the cycle in progress to its end (marking, atomic phase, sweep)
  // in one Increment pause.
  void finish_cycle(GcCause cause);
  // A full collection through the heap's frame (MarkSweepHeap's
  // collect_making_room), the cycle in progress finished first; request_bytes and
  // large as collect_making_room takes them.
  void full_collection(GcCause cause, uint64_t request_bytes, bool large);
  // One Increment pause around body (the recorder's frame; the heap's
  // frame, Collector::run_collection, verifies an unmarked heap, which a
  // heap mid-cycle is not).
  template <class Body>
  void increment(GcCause cause, Body&& body);
  // The pacing: what the program allocated since the last step, words,
  // for an object of `size_class` (marksweep::kNoCellClass: a large one),
  // whose blocks a sweep step sweeps first.
  void pay(uint64_t words, unsigned size_class);
  void step(GcCause cause, uint64_t words, unsigned size_class = marksweep::kNoCellClass);
  // A step's units of work for `words` allocated (under stress, a fixed few).
  int64_t step_units(uint64_t words) const;

  // --- concurrent mode
  // Hands the grey objects (with the snapshot barrier's since the last
  // round) to a round on the GC threads; a recorded cycle's rounds run
  // while the program waits, so that the recording sees them whole.
  void start_round();
  // The round's figures to the events; the round is over.
  void take_round();
  // The pause at a round's end (waited for, under --gc-stress): another
  // round, or the atomic phase.
  void handshake(GcCause cause);
  // Mark assist: a pause of `budget` units of marking on the program's
  // thread while a round runs, from the barrier's grey objects, then from
  // the GC threads' deques; what it cannot scan within the budget waits
  // for the next round.
  void assist(GcCause cause, int64_t budget);
  // Scans slots [begin, end) of h, at most `budget` of them (at least
  // one); the rest is left in assist_partial_.
  void assist_scan(Word* h, uint64_t begin, uint64_t end, int64_t& budget);
  // A task from the GC threads for the assist, asking them to share.
  bool steal_for_assist(parallel::Task& task);
  // Marks h by fetch-or, as a GC thread would; true when this thread's bit
  // set it, and then h waits in round_grey_ if it has slots.
  bool shade_concurrently(Word* h);
  // The assist's partly scanned object goes whole to the next round.
  void hand_over_assist_work();

  // --- marking
  void shade(Word* h) {
    Word w = *h;
    if (Header::is_marked(w)) return;
    *h = w | Header::kMarkBit;
    objects_marked_++;
    if (recording_) [[unlikely]]
      recording_->grey(0, h);
    if (Header::nrefs(w)) grey_.push_back({h, 0});
  }
  void shade_value(Value v) {
    if (v.is_ref()) shade(v.as_ref());
  }
  void hide_fast_path(bool hide);
  void select_barrier();
  // The barriers (Collector::write_barrier), one per --barrier.
  static void dijkstra_barrier(Collector& c, Word* object, Value* slot, Value v);
  static void yuasa_barrier(Collector& c, Word* object, Value* slot, Value v);
  static void backward_barrier(Collector& c, Word* object, Value* slot, Value v);
  static void recording_barrier(Collector& c, Word* object, Value* slot, Value v);
  // Concurrent mode's: Yuasa's with atomic marking and a release store.
  static void snapshot_barrier(Collector& c, Word* object, Value* slot, Value v);
  void check_store(Word* object, const Value* slot) const;

  // --- allocation
  Word* allocate(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, bool pinned);
  Word* try_allocate(uint32_t class_id, uint64_t nrefs, uint64_t raw_words, uint64_t words,
                     unsigned size_class);

  // --- --gc-verify's tri-colour check, before anything is swept
  void check_tricolour();

  void describe_incremental_events();
  void report_cycle_counters();

  IncrementalOptions inc_;
  Phase phase_ = Phase::kIdle;
  std::vector<Grey> grey_;
  // The cycle being recorded (--gc-animate), from its first pause to its
  // last, or null.
  observe::Recording* recording_ = nullptr;
  // Concurrent mode: the marking on GC threads, and the grey objects for
  // its next round (the snapshot barrier's, between rounds).
  std::unique_ptr<ConcurrentMarking> concurrent_;
  std::vector<Word*> round_grey_;
  // The allocation (stats_.bytes_allocated) from which the program
  // assists, and the slots an assist left unscanned (empty: none).
  uint64_t assist_from_bytes_ = 0;
  parallel::Task assist_partial_;
  // Objects the backward barrier unmarked to scan again (marked once more
  // when taken).
  std::vector<Word*> regrey_;
  uint64_t unpaid_words_ = 0;  // allocated since the last step
  uint64_t allocated_at_last_step_ = 0;
  // The heap in use at the last cycle's end, the allocation then, and the
  // next cycle's threshold.
  uint64_t base_bytes_ = 0;
  uint64_t allocated_at_base_ = 0;
  uint64_t threshold_ = 0;
  uint64_t cycles_ = 0;
  // This cycle's counts, reported at its atomic phase and end.
  uint64_t objects_marked_ = 0;
  uint64_t slots_scanned_ = 0;
  uint64_t allocated_marked_ = 0;
  uint64_t barrier_calls_ = 0;
  uint64_t shaded_ = 0;
  uint64_t regreyed_ = 0;
  uint64_t mark_steps_ = 0;
  uint64_t sweep_steps_ = 0;
  uint64_t total_shaded_ = 0;
  uint64_t total_regreyed_ = 0;
  // --barrier=none under --gc-verify: the last stores that broke the invariant.
  static constexpr size_t kRecordedStores = 64;
  std::array<UnbarrieredStore, kRecordedStores> recorded_{};
  uint64_t stores_ = 0;
  uint64_t unbarriered_ = 0;
};

std::unique_ptr<Collector> create_incremental(RootSet& roots, const HeapOptions& options);

}  // namespace gc
