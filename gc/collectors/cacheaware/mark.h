// The mark phase by message passing (Zhou and Demsky, section 2.1,
// L99-120). Each core marks only the objects in the partitions it hosts,
// from a mark queue of its own. A reference into a partition another core
// hosts becomes a `mark` message to that core, unless the sender's
// reference cache shows it sent one for the same object recently (L120).
// A core receiving a `mark` message for an object it has not marked yet
// marks and queues it and records the request in a bounded list, which the
// compaction phase turns into a table other cores can read (L101-103, L128). Termination
// is the finished/verify protocol (gc/parallel/finished_verify.h).
//
// Objects outside the partitions (the pinned large-object space) have no
// host: whichever core reaches one marks it with a compare-and-swap and
// scans it.
//
// Messages are batched per destination (up to kBatchRefs references per
// mailbox push), but each reference is counted as one message, as on the
// paper's network; a thread flushes its batches whenever it runs out of
// work, before any of its cores says it is finished.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/cacheaware/mapping.h"
#include "gc/observe/recorder.h"
#include "gc/parallel/finished_verify.h"
#include "gc/parallel/mailbox.h"
#include "gc/parallel/worker_pool.h"

namespace gc::cacheaware {

struct MarkCounters {
  uint64_t sent = 0;  // mark messages
  uint64_t received = 0;
  uint64_t suppressed = 0;  // by the reference cache
  uint64_t hops = 0;        // mesh hops of the messages sent
  // The cache lines of the objects this core marked (header and reference
  // slots, once each), and the hops from it to their homes: zero under
  // partition homing, where the host marks (mapping.h).
  uint64_t lines = 0;
  uint64_t line_hops = 0;
  uint64_t objects = 0;          // objects this core marked
  uint64_t objects_at_home = 0;  // of which not displaced (kDisplacedBit)
  uint64_t words = 0;            // their size, with the word a hashed object grows when it moves
  uint64_t requests_kept = 0;
  uint64_t requests_dropped = 0;  // past the request list's bound
};

class MarkPhase {
 public:
  static constexpr unsigned kBatchRefs = 62;  // a batch is 64 words

  MarkPhase(const PartitionMap& map, const Mesh& mesh, unsigned threads, unsigned ref_cache_entries,
            unsigned request_list);
  ~MarkPhase();

  // Marks everything reachable from the roots; every core's counters and
  // request list are this collection's afterwards.
  void run(parallel::WorkerPool& pool, std::span<const RootGroup> roots, observe::Recorder& events);

  const MarkCounters& counters(unsigned core) const { return cores_[core]->counters; }
  // The old addresses of objects marked on a remote core's request.
  const std::vector<Word*>& requests(unsigned core) const { return cores_[core]->requests; }
  uint64_t verify_rounds() const { return termination_.verify_rounds(); }
  uint64_t finished_messages() const { return termination_.finished_messages(); }

  // The marking a core would do for one reference, without messages: tests
  // of the reference cache use it.
  bool cache_hit_or_insert(unsigned core, const Word* ref);

 private:
  struct Batch {
    Batch* next = nullptr;
    uint32_t count = 0;
    Word* refs[kBatchRefs];
  };
  // Objects leave the queue through a short window, prefetched as they
  // enter it, so that the header misses of the next few overlap.
  static constexpr unsigned kWindow = 16;
  struct Core {
    // A local reference found by scanning, whose header is read (and
    // marked) only as it leaves the window; or, tagged kMarkedEntry, an
    // object already marked (on a message, or pinned) to scan.
    std::vector<uintptr_t> queue;
    uintptr_t window[kWindow];
    unsigned window_head = 0;
    unsigned window_count = 0;
    parallel::Mailbox<Batch> inbox;
    std::vector<const Word*> cache;  // direct mapped, ref_cache_entries
    std::vector<Word*> requests;
    MarkCounters counters;
    parallel::FinishedVerify::Counts reported;
    bool has_reported = false;
    bool has_work() const { return !queue.empty() || window_count; }
  };
  static constexpr uintptr_t kMarkedEntry = 1;
  class Runner;

  const PartitionMap& map_;
  const Mesh& mesh_;
  unsigned threads_;
  unsigned cache_mask_;
  unsigned request_list_;
  std::vector<std::unique_ptr<Core>> cores_;
  parallel::FinishedVerify termination_;
};

}  // namespace gc::cacheaware
