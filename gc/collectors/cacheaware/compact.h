// The compaction phase with balancing (Zhou and Demsky, sections 2.2 and
// 3.3, L122-128 and L176-195).
//
// Local compaction: each core walks the partitions it hosts in address
// order and slides each marked object down into the same sequence of
// partitions, so objects stay on the core that hosts them (Figure 3). It
// stops at the upper bound the master computed from the live sizes the mark
// phase measured: the average number of partitions a core fills.
//
// Balancing: a core that reaches the bound with objects left says so
// (`finishedLocal` with what remains); a core that finishes below it gives
// the master the top of its compacted partitions. The master answers a
// request with space from a finished core, neighbours on the mesh first
// (ring 1, then ring 2), then anywhere in the heap (`resumecompacting` with
// a partition and its free bytes). With no such space it waits while some
// core has not answered yet; after that it gives the first free partition
// of the heap, and when there is none, lets the core go on past its bound.
// In gclab the master's table is a structure under a lock that each core
// consults where the paper's core sends a message; the decisions are the
// paper's.
//
// Every object that moves is recorded in the forwarding map by its old
// host (forwarding_map.h, the paper's local table), and each core then
// builds its shared table, a hash table, from the mark requests it
// received, moved or not (L128).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "gc/collectors/cacheaware/address_table.h"
#include "gc/collectors/cacheaware/allocator.h"
#include "gc/collectors/cacheaware/forwarding_map.h"
#include "gc/collectors/cacheaware/mapping.h"
#include "gc/heap/reservation.h"
#include "gc/observe/recorder.h"
#include "gc/parallel/worker_pool.h"

namespace gc::cacheaware {

struct CompactCounters {
  uint64_t objects_placed = 0;  // moved or left in place
  // Of which placed in a partition of the host of the partition they were
  // allocated in (neither balanced away now nor displaced before).
  uint64_t placed_at_home = 0;
  uint64_t objects_moved = 0;
  uint64_t bytes_moved = 0;
  uint64_t balancing_moves = 0;  // destinations the master gave this core
  uint64_t balanced_bytes = 0;   // moved into another core's partition
  uint64_t last_resorts = 0;     // destinations past every bound
  uint64_t waits = 0;            // requests that found no space at first
  uint64_t lines = 0;            // cache lines of the moved objects, read and written
  uint64_t line_hops = 0;        // mesh hops from the core to those lines' homes
};

class CompactPhase {
 public:
  CompactPhase(const PartitionMap& map, const Mesh& mesh, std::vector<PartitionState>& partitions,
               const Reservation& reservation);
  ~CompactPhase();

  // Compacts every core's partitions, local then balancing, with each core
  // filling at most `bound` partitions before it asks for space elsewhere.
  // requests[c] are the objects other cores asked c to mark.
  // Partitions from `frontier` up are empty; returns the frontier after
  // compaction (balancing may have filled partitions above it).
  uint32_t run(parallel::WorkerPool& pool, uint32_t bound, uint32_t frontier,
               const std::vector<const std::vector<Word*>*>& requests, observe::Recorder& events);

  const ForwardingMap& forwarding() const { return forwarding_; }
  const AddressTable& shared_table(unsigned core) const { return cores_[core]->shared; }
  const CompactCounters& counters(unsigned core) const { return cores_[core]->counters; }
  // A move made after the phase (a huge object): in the forwarding map,
  // and in its old host's shared table if another core asked for it.
  void record_move(unsigned host, const Word* from, Word* to) {
    forwarding_.huge_moved(from, to);
    if (cores_[host]->shared.find(from)) cores_[host]->shared.insert(from, to);
  }
  // The forwarding map's and the shared tables' memory.
  uint64_t table_bytes() const;

 private:
  class Balancer;
  struct Core {
    AddressTable shared;
    CompactCounters counters;
  };
  class Slider;

  const PartitionMap& map_;
  const Mesh& mesh_;
  std::vector<PartitionState>& partitions_;
  const Reservation& reservation_;
  std::vector<std::unique_ptr<Core>> cores_;
  ForwardingMap forwarding_;
  uint32_t frontier_ = 0;  // this collection's, before balancing
};

}  // namespace gc::cacheaware
