#include "gc/collectors/incremental/concurrent_marking.h"

#include <sched.h>

#include "gc/observe/common_counters.h"
#include "gc/parallel/clock.h"
#include "gc/parallel/futex.h"
#include "gc/parallel/steal.h"
#include "gc/parallel/thread_cpu.h"

namespace gc {

namespace {

// A GC thread woken for a round must not take the program's core at the
// wake (the kernel's wakeup preemption would stop the program inside the
// pause that wakes it, for a time slice): SCHED_BATCH threads never
// preempt on waking, and share the cores as fairly as any other otherwise.
// Where the system refuses, the thread keeps its policy.
void run_in_background() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  sched_param param{};
  sched_setscheduler(0, SCHED_BATCH, &param);
}

}  // namespace

void ConcurrentMarker::run(MarkPhaseWork& work) {
  begin_trace();
  objects_marked_ = 0;
  claim_grey(work, [this](parallel::Task t) { push(t); });
  trace();
}

void ConcurrentMarker::report(observe::Recorder& events) const {
  if (!events.enabled()) return;
  events.count(id(), observe::kObjectsMarked, objects_marked_);
  report_work_sharing(events);
}

ConcurrentMarking::ConcurrentMarking(parallel::WorkerPool& pool, uint64_t deque_tasks)
    : pool_(pool), overflow_(0) {
  for (unsigned w = 0; w < pool.size(); ++w)
    deques_.push_back(std::make_unique<parallel::TaskDeque>(parallel::deque_capacity(deque_tasks)));
  markers_.reserve(pool.size());
  for (unsigned w = 0; w < pool.size(); ++w)
    markers_.emplace_back(parallel::TraceShared{deques_, overflow_, termination_}, w);
  // Now, not in the first cycle's start pause, which would wait for it.
  coordinator_ = std::thread([this] { coordinate(); });
}

ConcurrentMarking::~ConcurrentMarking() {
  // Ends as every wait() does (below): the round's markers read the heap,
  // which must outlive them.
  if (in_progress_) wait();
  stopping_.store(true, std::memory_order_release);
  requests_.fetch_add(1, std::memory_order_release);
  parallel::futex_wake_all(&requests_);
  // Ends: the coordinator, idle between rounds, sees the changed word at
  // once or within its sleep's bound, and then stopping_, and returns.
  coordinator_.join();
}

void ConcurrentMarking::start(std::vector<Word*> grey) {
  grey_ = std::move(grey);
  in_progress_ = true;
  rounds_started_++;
  requests_.fetch_add(1, std::memory_order_release);
  wake_pending_ = true;
}

void ConcurrentMarking::wake() {
  if (!wake_pending_) return;
  wake_pending_ = false;
  parallel::futex_wake_all(&requests_);
}

// The wait ends: the coordinator always runs the round it was asked for
// (coordinate; woken here if it was not yet), and a round ends, because
// its markers only mark objects that are white, none turns white again,
// and the program, waiting here, greys nothing meanwhile. The wait is a
// sleep, not a spin, so where the program, the coordinator and every pool
// thread share one core (--gc-threads=1, where the coordinator is the
// only marker, or a process confined to one CPU) the markers get that core
// while the program sleeps. A wake lost between the load and the sleep
// costs at most the sleep's bound.
void ConcurrentMarking::wait() {
  wake();
  for (;;) {
    uint32_t done = rounds_done_.load(std::memory_order_acquire);
    if (done == rounds_started_) return;
    parallel::futex_wait(&rounds_done_, done, parallel::kPoolSleepUs);
  }
}

bool ConcurrentMarking::steal(parallel::Task& out) {
  return parallel::steal_from_others(deques_, parallel::kNoOwnDeque, assist_seed_, assist_stats_, out);
}

ConcurrentMarking::RoundFigures ConcurrentMarking::finish(observe::Recorder& events) {
  for (const ConcurrentMarker& m : markers_) m.report(events);
  in_progress_ = false;
  return figures_;
}

// The coordinator's wait ends: start() asks for each round, and the
// destructor for the end, by changing the word it sleeps on and waking it
// (wake(), or wait() before it waits; the sleep is bounded, as the pool's
// are, so a request whose wake comes late is seen within the bound). The
// program never waits for the coordinator to be idle, only for a round to
// end, so the coordinator's sleep holds nobody up.
void ConcurrentMarking::coordinate() {
  parallel::GcThreadCpu counted_as_gc_thread;
  run_in_background();
  uint32_t seen = 0;
  for (;;) {
    uint32_t asked = requests_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) return;
    if (asked == seen) {
      parallel::futex_wait(&requests_, seen, parallel::kPoolSleepUs);
      continue;
    }
    seen = asked;
    run_round();
    rounds_done_.fetch_add(1, std::memory_order_release);
    parallel::futex_wake_all(&rounds_done_);
  }
}

// A closed phase on the pool: every worker takes part, this thread as
// worker 0, so no grey object waits for a thread the round did not admit.
// pool_.run waits for every pool thread to finish its part; each is an
// operating-system thread the pool wakes (with a bounded sleep), so it
// runs even where all share one core, and its part ends with the tracer's
// termination (gc/parallel/termination.h: the program adds nothing to a
// round under way, its barrier's greys wait for the next, so the work is
// finite, and the backoff yields and sleeps rather than spins). With one
// GC thread the coordinator is the round's only marker and the pool has no
// thread to wait for.
void ConcurrentMarking::run_round() {
  int64_t start = parallel::now_ns();
  MarkPhaseWork work{{}, grey_};
  termination_.reset(pool_.size());
  auto job = [&](unsigned worker) {
    run_in_background();
    markers_[worker].run(work);
  };
  pool_.run(job);
  figures_.wall_ns = parallel::now_ns() - start;
  figures_.objects_marked = 0;
  for (const ConcurrentMarker& m : markers_) figures_.objects_marked += m.objects_marked();
}

}  // namespace gc
