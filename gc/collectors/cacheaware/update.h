// The reference update phase (Zhou and Demsky, section 2.3, L130-140).
// Each core updates the roots it claims and the objects in the partitions
// it hosts. For a reference into one of its own partitions it computes the
// new address from the forwarding map (the paper's local table); into another core's, in that core's shared
// table (the objects it marked on request); on a miss it sends the host a `ptrquery` and patches the slot
// when the `response` comes back, going on with other slots meanwhile. An object missing from its host's own
// table did not move. A core is completed when its slots are done and every query it sent is answered; it
// keeps answering other cores' queries until every core is completed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/cacheaware/address_table.h"
#include "gc/collectors/cacheaware/allocator.h"
#include "gc/collectors/cacheaware/forwarding_map.h"
#include "gc/collectors/cacheaware/mapping.h"
#include "gc/observe/recorder.h"
#include "gc/parallel/mailbox.h"
#include "gc/parallel/worker_pool.h"

namespace gc::cacheaware {

struct UpdateCounters {
  uint64_t slots = 0;        // references looked up
  uint64_t local_hits = 0;   // into the core's own partitions, to an object that moved
  uint64_t shared_hits = 0;  // found in another core's shared table
  uint64_t queries = 0;      // ptrquery messages sent
  uint64_t queries_answered = 0;
  uint64_t lines = 0;      // cache lines of the objects whose slots the core updated
  uint64_t line_hops = 0;  // mesh hops from the core to those lines' homes
};

class UpdatePhase {
 public:
  static constexpr unsigned kBatchQueries = 31;

  UpdatePhase(const PartitionMap& map, const Mesh& mesh, const std::vector<PartitionState>& partitions);
  ~UpdatePhase();

  // `forwarding` is every core's local table, `shared` each core's shared
  // table; `extra` are objects
  // outside the partitions (pinned large objects, huge objects' headers)
  // whose slots are updated too, claimed by any thread.
  // Partitions from `frontier` up are empty.
  void run(parallel::WorkerPool& pool, uint32_t frontier, std::span<const RootGroup> roots,
           std::span<Word* const> extra, const ForwardingMap& forwarding,
           const std::vector<const AddressTable*>& shared, observe::Recorder& events);

  const UpdateCounters& counters(unsigned core) const { return cores_[core]->counters; }

 private:
  struct Query {
    Value* slot;
    Word* old;
  };
  struct Batch {
    Batch* next = nullptr;
    unsigned from = 0;
    uint32_t count = 0;
    Query queries[kBatchQueries];
  };
  struct Core {
    parallel::Mailbox<Batch> queries;    // ptrquery messages to answer
    parallel::Mailbox<Batch> responses;  // answers to this core's queries
    uint64_t outstanding = 0;            // batches sent and not answered
    bool completed = false;
    UpdateCounters counters;
  };
  class Runner;

  const PartitionMap& map_;
  const Mesh& mesh_;
  const std::vector<PartitionState>& partitions_;
  std::vector<std::unique_ptr<Core>> cores_;
  uint32_t frontier_ = 0;
};

}  // namespace gc::cacheaware
