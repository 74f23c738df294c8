// cacheaware: Zhou and Demsky's cache-aware many-core collector
// (docs/collectors/cacheaware.md). A mark-compact collector over a
// heap of many partitions, each hosted by one core of a virtual mesh
// (mapping.h); the GC threads run the cores. A collection, in order:
//
//   mark              message passing between hosts, finished/verify
//                     termination (mark.h)
//   weak references   dead fibers dropped (the mark bits say which)
//   huge and pinned   dead huge objects give back their partitions
//                     (huge.h); the pinned large-object space is swept
//   compact           huge objects cached at the top when this collection
//                     compacts them (huge.h); local sliding up to the
//                     master's bound, then balancing (compact.h); huge
//                     objects compacted last
//   update            local tables, shared tables, ptrquery (update.h)
//   weak references   surviving fibers' objects follow their moves
//   resize            the trigger for the next collection (allocator.h)
//
// The mutator's fibers are the paper's per-core mutator threads: fiber k
// (the main program is 0) has home core k mod C, and allocates through
// that core's second-level allocator (allocator.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/cacheaware/allocator.h"
#include "gc/collectors/cacheaware/cacheaware_options.h"
#include "gc/collectors/cacheaware/compact.h"
#include "gc/collectors/cacheaware/huge.h"
#include "gc/collectors/cacheaware/mapping.h"
#include "gc/collectors/cacheaware/mark.h"
#include "gc/collectors/cacheaware/update.h"
#include "gc/heap/reservation.h"
#include "gc/parallel/worker_pool.h"
#include "gc/spaces/large_object_space.h"
#include "gc/verify/verifier.h"

namespace gc {

class CacheAwareCollector : public Collector {
 public:
  CacheAwareCollector(RootSet& roots, const HeapOptions& options);
  ~CacheAwareCollector() override;

  Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override;
  Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override;
  void collect(GcCause cause) override;
  void mutator_switched(uint64_t mutator) override;

  const char* name() const override { return "cacheaware"; }
  uint64_t heap_used() const override;
  uint64_t heap_size() const override;
  bool in_heap(const void* addr) const override { return reservation_.contains(addr); }
  uint64_t identity_hash(Word* header) override;
  void flush_stats() override;
  void describe_spaces(std::vector<observe::SpaceUsage>& out) const override;
  void describe_heap(verify::HeapShape& out) const override;

  // For tests.
  const cacheaware::Options& ca_options() const { return ca_; }
  const cacheaware::Mesh& mesh() const { return mesh_; }
  const cacheaware::PartitionMap& partition_map() const { return map_; }
  const std::vector<cacheaware::PartitionState>& partitions() const { return partitions_; }
  const cacheaware::Allocator& allocator() const { return allocator_; }
  const cacheaware::MarkPhase& mark_phase() const { return mark_; }
  const cacheaware::CompactPhase& compact_phase() const { return compact_; }
  const cacheaware::HugeObjects& huge_objects() const { return huge_; }
  unsigned current_core() const { return core_; }

 private:
  // --- one collection, in order
  void mark();
  void drop_dead_weak();
  void sweep_huge_and_pinned();
  uint32_t compaction_bound() const;
  void compact(bool compact_huge);
  void update();
  void follow_weak();
  void resize();

  // --- the mutator's buffer
  void sync_buffer();
  void install_buffer();
  void describe_events();
  void record_partition_map(const observe::Sequence& name);
  void report(uint64_t huge_freed, uint64_t pinned_freed);
  Word* allocate_huge(uint32_t class_id, uint64_t nrefs, uint64_t raw_words);
  Word* allocated_huge(Word* header, uint64_t bytes);
  Word* format_or_oom(Word* p, uint32_t class_id, uint64_t nrefs, uint64_t raw_words);

  cacheaware::Options ca_;
  Reservation reservation_;
  CardTable cards_;
  cacheaware::Mesh mesh_;
  cacheaware::PartitionMap map_;
  std::vector<cacheaware::PartitionState> partitions_;
  cacheaware::Allocator allocator_;
  cacheaware::HugeObjects huge_;
  LargeObjectSpace los_;
  std::unique_ptr<parallel::WorkerPool> pool_;
  cacheaware::MarkPhase mark_;
  cacheaware::CompactPhase compact_;
  cacheaware::UpdatePhase update_;
  std::vector<RootGroup> root_groups_;
  std::vector<Word*> unpartitioned_;  // pinned and huge objects' headers, for the update phase
  unsigned core_ = 0;                 // the running fiber's home core
  bool compact_huge_next_ = false;    // the next collection compacts huge objects
  uint64_t huge_bytes_cached_ = 0;    // this collection's
  uint64_t huge_bytes_moved_ = 0;
  bool hide_buffer_ = false;
};

std::unique_ptr<Collector> create_cacheaware(RootSet& roots, const HeapOptions& options);

}  // namespace gc
