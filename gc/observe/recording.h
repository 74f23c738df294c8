// Recording one collection object by object, for its animation
// (--gc-animate; docs/observability.md, "Watching a collection").
//
// The collection frame (Collector::run_collection) asks the Recording at
// every collection's start whether this is the one wanted; if so it takes
// the heap as it is (every object and free cell, through the collector's
// describe_heap, and the roots) and becomes the Recorder's active recording
// (Recorder::recording()) until the collection ends. While it is active the
// shared machinery reports each step it takes on an object, on the thread
// that takes it:
//
//   grey(worker, h)          h reached: marked or copied, not yet scanned
//   scan(worker, h)          h's slots traced: h is black
//   copy(worker, from, to)   the object at header `from` copied to `to`
//   forward(worker, h, to)   h's new address decided (a compactor's plan)
//   move(worker, from, to)   the object slid from `from` to `to`
//   free(worker, cell, w)    a cell of w words freed by the sweep
//   steal(worker, victim, h) a task (on object h) taken from another
//                            thread's deque
//   level(worker, k, n)      an accelerator's level k of a breadth-first
//                            mark begins, n objects in it
//   message(worker, h, to, what)
//                            a message about h sent to core `to` of a
//                            collector's mesh: a mark message, or a
//                            ptrquery for h's new address
//   card(worker, card, n, young)
//                            a young collection's scan of the dirty card
//                            starting at `card` found n slots referring to
//                            young objects; whether one still does after
//   redirect(worker, h, n)   n of h's slots updated to their referents'
//                            forwarding addresses (a compactor's redirect)
//   balance(worker, at, host, p)
//                            a core at its bound given room at `at`, in
//                            partition p, which core `host` hosts
//
// A collection whose cycle spans several pauses (the incremental
// collector's) stays recorded from its first pause to its last, and adds
// what the program does meanwhile:
//
//   allocate(worker, h)      an object allocated during the cycle
//   barrier(worker, into, h) a store into `into` that made the write
//                            barrier shade h (or grey `into` again)
//
// A step an accelerator took (a GPU's marking) has the worker kDevice. A
// collector whose actors are not its GC threads (cacheaware's cores, each
// always run by the same thread) says so with use_actors before its
// phases, and its steps then name an actor as `worker`.
//
// and the Recorder adds the start and end of every phase. The machinery
// finds the recording itself (Recording::active(), set by the frame for the
// recorded collection only), so a collector built on it records without
// writing anything. Nothing of this runs when no recording is active: each
// hook is a test of a pointer the machinery loads once per phase.
//
// The recording refuses what no one could watch: a heap of more objects,
// or a collection of more steps, than its limit allows (it then keeps no
// steps and says why).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gc/layout.h"
#include "gc/roots.h"
#include "gc/verify/heap_shape.h"

namespace gc::observe {

enum class StepKind : uint8_t {
  kPhaseStart,
  kPhaseEnd,
  kGrey,
  kScan,
  kCopy,
  kForward,
  kMove,
  kFree,
  kSteal,
  kLevel,
  kMessage,
  kAllocate,
  kBarrier,
  kCard,
  kRedirect,
  kBalance
};
inline constexpr int kStepKinds = static_cast<int>(StepKind::kBalance) + 1;

// What a message step's message asks of the core it is sent to.
enum class MessageKind : uint8_t { kMark, kPtrQuery };

struct RecordedStep {
  int64_t ns;  // on the Recorder's clock
  uint64_t a;
  uint64_t b;
  const char* phase;  // kPhaseStart and kPhaseEnd
  StepKind kind;
  uint8_t worker;
};

// An object of the heap when the recorded collection started.
struct RecordedObject {
  uint64_t start;   // its first word (the count word of an object with references)
  uint64_t header;  // its header, the address references hold
  uint32_t words;
  uint32_t nrefs;
  uint32_t class_id;
  uint32_t space;         // index into RecordedHeap::spaces
  uint64_t first_target;  // into RecordedHeap::targets: its slots' referents, 0 where none
};

struct RecordedSpace {
  std::string name;
  uint64_t begin;
  uint64_t end;
};

struct RecordedHeap {
  std::vector<RecordedSpace> spaces;
  std::vector<RecordedObject> objects;
  std::vector<uint64_t> targets;
  std::vector<std::pair<uint64_t, uint32_t>> free_cells;  // start and words
  std::vector<uint64_t> roots;                            // the headers the roots refer to
};

class Recording {
 public:
  // Which collection: GC(N), or the first full one; nullopt and not
  // first_full: the first collection.
  struct Target {
    std::optional<uint64_t> collection;
    bool first_full = false;
  };
  static constexpr uint64_t kDefaultLimit = 20000;
  // The worker of a step taken by an accelerator, not by a GC thread.
  static constexpr unsigned kDevice = 255;
  // At most `limit` objects in the heap, and 8 steps per object of the
  // limit in the collection.
  static constexpr uint64_t kStepsPerObject = 8;

  Recording(Target target, uint64_t limit) : target_(target), limit_(limit) {}

  // The recording of the collection under way, or nullptr (almost always).
  // Set and cleared by the collection frame on the collecting thread,
  // before and after the collection's phases hand work to GC threads.
  static Recording* active() { return active_recording_; }

  // A replay's target is its own collection, known once the heap is built.
  void retarget(Target target) { target_ = target; }

  // --- by the collection frame
  // Whether collection `id` (full or not) is the one to record; a cycle
  // that starts at `id` is wanted when GC(N) is one of its pauses or came
  // before it (a cycle's pauses past its first start none).
  bool wants(uint64_t id, bool full, bool cycle_start = false) const;
  // Whether what is recorded spans several pauses (a cycle).
  void spans_a_cycle() { cycle_ = true; }
  // Takes the heap and becomes active: workers 0..workers-1 may report.
  void start(uint64_t id, bool full, const char* collector, const verify::HeapShape& shape, RootSet& roots,
             unsigned workers);
  // At the collection's (or cycle's) end, with the heap as it is then:
  // its objects' headers are kept, so that the page can check its final
  // state against them.
  void finish(const verify::HeapShape& after);
  bool in_progress() const { return active_; }
  bool done() const { return done_; }
  // Why nothing can be drawn (the limit was passed), or empty.
  const std::string& refused() const { return refused_; }

  // --- by the shared machinery, while active
  void grey(unsigned worker, const Word* h) { add(worker, StepKind::kGrey, addr(h), 0); }
  void scan(unsigned worker, const Word* h) { add(worker, StepKind::kScan, addr(h), 0); }
  void copy(unsigned worker, const Word* from, const Word* to) {
    add(worker, StepKind::kCopy, addr(from), addr(to));
  }
  void forward(unsigned worker, const Word* h, const Word* to) {
    add(worker, StepKind::kForward, addr(h), addr(to));
  }
  void move(unsigned worker, const Word* from, const Word* to) {
    add(worker, StepKind::kMove, addr(from), addr(to));
  }
  void free(unsigned worker, const Word* cell, uint64_t words) {
    add(worker, StepKind::kFree, addr(cell), words);
  }
  void steal(unsigned worker, unsigned victim, const Word* h) {
    add(worker, StepKind::kSteal, victim, addr(h));
  }
  void level(unsigned worker, uint64_t k, uint64_t objects) { add(worker, StepKind::kLevel, k, objects); }
  // The message's kind travels in b above the core (core low).
  void message(unsigned worker, const Word* h, unsigned to, MessageKind what) {
    add(worker, StepKind::kMessage, addr(h), to | static_cast<uint64_t>(what) << 32);
  }
  // Whether a slot still refers to a young object travels in b above the
  // count (count low).
  void card(unsigned worker, const Word* card, uint64_t young_slots, bool still_young) {
    add(worker, StepKind::kCard, addr(card), young_slots | static_cast<uint64_t>(still_young) << 32);
  }
  void redirect(unsigned worker, const Word* h, uint64_t slots) {
    add(worker, StepKind::kRedirect, addr(h), slots);
  }
  // The partition travels in b above the host (host low).
  void balance(unsigned worker, const Word* at, unsigned host, uint32_t partition) {
    add(worker, StepKind::kBalance, addr(at), host | static_cast<uint64_t>(partition) << 32);
  }
  // The object's words and reference count travel in b (words low).
  void allocate(unsigned worker, const Word* h) {
    add(worker, StepKind::kAllocate, addr(h), object_words(*h) | Header::nrefs(*h) << 32);
  }
  void barrier(unsigned worker, const Word* into, const Word* h) {
    add(worker, StepKind::kBarrier, addr(into), addr(h));
  }
  // On the collecting thread, before any worker reports: the steps come
  // from n actors called `noun` ("core"), each reported by one thread only.
  void use_actors(unsigned n, const char* noun);
  // By the Recorder, for every phase.
  void phase(unsigned worker, const char* name, bool start);

  // --- for the page
  // The recording as JSON (the animation page's data).
  std::string json() const;
  // The page that plays it back: one self-contained HTML file.
  std::string html() const;
  uint64_t collection() const { return collection_; }

 private:
  static uint64_t addr(const Word* p) { return reinterpret_cast<uint64_t>(p); }
  void add(unsigned worker, StepKind kind, uint64_t a, uint64_t b);
  // The objects and free cells of `shape`, and with roots their referents.
  void take_heap(const verify::HeapShape& shape, RootSet* roots);

  static inline Recording* active_recording_ = nullptr;

  Target target_;
  uint64_t limit_;
  bool active_ = false;
  bool done_ = false;
  std::string refused_;
  uint64_t collection_ = 0;
  bool full_ = false;
  bool cycle_ = false;
  std::string collector_;
  int64_t start_ns_ = 0;
  RecordedHeap heap_;
  std::vector<uint64_t> after_;  // the headers of the objects in the heap at the end
  unsigned workers_ = 0;         // actors: GC threads, or use_actors'
  const char* actor_noun_ = "thread";
  std::vector<std::vector<RecordedStep>>
      steps_;  // per worker and the device, each written by its own thread only
  std::atomic<uint64_t> step_count_{0};
  std::atomic<bool> over_limit_{false};
};

}  // namespace gc::observe
