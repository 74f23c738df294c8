// What one GC thread did, for every parallel collector (docs/observability.md,
// "--gc-stats": per-thread balance and the collector's own counters). Each
// worker owns one and writes it without synchronisation; the collector adds
// them up after the phase.
#pragma once

#include <cstdint>

namespace gc::parallel {

struct WorkerStats {
  // Not side by side: incremented together on the copy path, adjacent
  // counters are combined by the compiler into a vector load, add and
  // store, longer than the two scalar adds.
  uint64_t objects_copied = 0;
  uint64_t root_groups_claimed = 0;
  uint64_t bytes_copied = 0;
  uint64_t steal_attempts = 0;      // CAS attempts on another thread's top
  uint64_t steals = 0;              // ... that won a task
  uint64_t overflow_events = 0;     // full deque: bottom half to the overflow set
  uint64_t overflow_tasks = 0;      // tasks moved there
  uint64_t refills = 0;             // empty deque refilled from the overflow set
  uint64_t cas_forwardings = 0;     // forwarding pointers installed by a CAS (not by an owner's store)
  uint64_t cas_failures = 0;        // lost a forwarding race (another thread copied first)
  uint64_t undone_allocations = 0;  // speculative copies retracted from the LAB
  uint64_t labs_taken = 0;
  uint64_t survivor_overflows = 0;  // survivors kept young reached the limit: the rest promoted
  uint64_t direct_allocations = 0;  // objects too big for a LAB's tail, bumped in to-space directly
  uint64_t lab_waste_bytes = 0;     // LAB tails left as filler, and undos that could not retract
  uint64_t large_objects_marked = 0;
  uint64_t chunk_tasks = 0;  // large-array slot ranges pushed
  uint64_t tasks_processed = 0;
  uint64_t tasks_sent = 0;  // to the owner of the chunk they work on (ownership.h)
  uint64_t idle_ns = 0;     // in the termination protocol

  void add(const WorkerStats& o) {
    objects_copied += o.objects_copied;
    bytes_copied += o.bytes_copied;
    root_groups_claimed += o.root_groups_claimed;
    steal_attempts += o.steal_attempts;
    steals += o.steals;
    overflow_events += o.overflow_events;
    overflow_tasks += o.overflow_tasks;
    refills += o.refills;
    cas_forwardings += o.cas_forwardings;
    cas_failures += o.cas_failures;
    undone_allocations += o.undone_allocations;
    labs_taken += o.labs_taken;
    survivor_overflows += o.survivor_overflows;
    direct_allocations += o.direct_allocations;
    lab_waste_bytes += o.lab_waste_bytes;
    large_objects_marked += o.large_objects_marked;
    chunk_tasks += o.chunk_tasks;
    tasks_processed += o.tasks_processed;
    tasks_sent += o.tasks_sent;
    idle_ns += o.idle_ns;
  }
};

}  // namespace gc::parallel
