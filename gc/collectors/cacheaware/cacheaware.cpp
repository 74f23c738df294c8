#include "gc/collectors/cacheaware/cacheaware.h"

#include <algorithm>

#include "gc/exit_status.h"
#include "gc/heap/identity_hash.h"
#include "gc/observe/common_counters.h"
#include "gc/observe/recording.h"

namespace gc {

namespace {

constexpr observe::Counter kMarkMessagesSent{"mark messages sent", observe::Unit::kMessages};
constexpr observe::Counter kMarkMessagesReceived{"mark messages received", observe::Unit::kMessages};
constexpr observe::Counter kMarkMessagesSuppressed{"mark messages suppressed", observe::Unit::kMessages};
constexpr observe::Counter kPtrqueryMessages{"ptrquery messages", observe::Unit::kMessages};
constexpr observe::Counter kFinishedMessages{"finished messages", observe::Unit::kMessages};
constexpr observe::Counter kObjectsMarkedAtHome{"objects marked at home", observe::Unit::kObjects};
constexpr observe::Counter kObjectsCompacted{"objects compacted", observe::Unit::kObjects};
constexpr observe::Counter kObjectsCompactedAtHome{"objects compacted at home", observe::Unit::kObjects};
constexpr observe::Counter kRequestListDrops{"request list drops", observe::Unit::kObjects};
constexpr observe::Counter kBytesBalanced{"bytes balanced", observe::Unit::kBytes};
constexpr observe::Counter kHugeBytesFreed{"huge bytes freed", observe::Unit::kBytes};
constexpr observe::Counter kHugeBytesCached{"huge bytes cached", observe::Unit::kBytes};
constexpr observe::Counter kHugeBytesMoved{"huge bytes moved", observe::Unit::kBytes};
constexpr observe::Counter kPinnedBytesFreed{"pinned bytes freed", observe::Unit::kBytes};
constexpr observe::Counter kBytesCleared{"bytes cleared", observe::Unit::kBytes};
constexpr observe::Counter kMarkLinesTouched{"mark lines touched", observe::Unit::kLines};
constexpr observe::Counter kCompactLinesTouched{"compact lines touched", observe::Unit::kLines};
constexpr observe::Counter kUpdateLinesTouched{"update lines touched", observe::Unit::kLines};
constexpr observe::Counter kMarkLineHops{"mark line hops", observe::Unit::kHops};
constexpr observe::Counter kCompactLineHops{"compact line hops", observe::Unit::kHops};
constexpr observe::Counter kUpdateLineHops{"update line hops", observe::Unit::kHops};
constexpr observe::Counter kBlocksLocal{"blocks local", observe::Unit::kBlocks};
constexpr observe::Counter kBlocksRing1{"blocks ring 1", observe::Unit::kBlocks};
constexpr observe::Counter kBlocksRing2{"blocks ring 2", observe::Unit::kBlocks};
constexpr observe::Counter kBlocksGlobal{"blocks global", observe::Unit::kBlocks};
constexpr observe::Sequence kMessagesSentPerCore{"mark messages sent per core"};
constexpr observe::Sequence kMessagesReceivedPerCore{"mark messages received per core"};
constexpr observe::Sequence kMessagesSuppressedPerCore{"mark messages suppressed per core"};
constexpr observe::Sequence kPartitionsBefore{"partitions before compaction"};
constexpr observe::Sequence kPartitionsAfter{"partitions after compaction"};
constexpr observe::Counter kVerifyRounds{"verify rounds", observe::Unit::kRounds};
constexpr observe::Counter kBalancingMoves{"balancing moves", observe::Unit::kDestinations};
constexpr observe::Counter kLastResortDestinations{"last-resort destinations", observe::Unit::kDestinations};
constexpr observe::Counter kForwardingTableBytes{"forwarding table bytes", observe::Unit::kBytes,
                                                 observe::CounterKind::kPeak};
constexpr observe::Counter kMeshHops{"mesh hops", observe::Unit::kHops};

using namespace cacheaware;

// The trigger is at least this much, and otherwise what is in use after a
// collection plus as much again (the other collectors' headroom).
constexpr uint64_t kInitialTriggerBytes = 4u << 20;
// The master's bound leaves this much slack over the average live data per
// core: a partition's tail that no object fits is waste.
constexpr double kBoundSlack = 1.05;
// The report's partition map shows at most this many bars.
constexpr uint32_t kMapBars = 512;

// The VM refuses such options before it creates the collector (the
// registry's check_configuration); this covers any other caller.
Options checked_options(const HeapOptions& heap) {
  std::string error;
  Options o = cacheaware_options(heap, &error);
  if (!error.empty()) throw CreationError(kExitUsage, "--gc=cacheaware: " + error);
  return o;
}

// Where each surviving object is now, from the forwarding map.
class MovedTo final : public WeakResolver {
 public:
  MovedTo(const PartitionMap& map, const ForwardingMap& forwarding) : map_(map), forwarding_(forwarding) {}
  Word* resolve(Word* header) override {
    return map_.contains(header) ? forwarding_.forward(header) : header;
  }

 private:
  const PartitionMap& map_;
  const ForwardingMap& forwarding_;
};

}  // namespace

CacheAwareCollector::CacheAwareCollector(RootSet& roots, const HeapOptions& options)
    : Collector(roots, resolved_heap_options(options, 0)),
      ca_(checked_options(options_)),
      reservation_(ca_.partition_bytes * ca_.partitions + round_up_pages(options_.max_heap_bytes)),
      cards_(reservation_),
      mesh_(ca_.mesh_width, ca_.mesh_height),
      map_(reservation_.base(), ca_.partition_bytes / kWordSize, ca_.partitions, mesh_, ca_.homing),
      partitions_(ca_.partitions),
      allocator_(map_, mesh_, partitions_, ca_.global_search_percent),
      huge_(map_, mesh_, partitions_),
      los_(map_.limit(), reservation_.end()),
      pool_(std::make_unique<parallel::WorkerPool>(std::max(1u, options_.gc_threads))),
      mark_(map_, mesh_, pool_->size(), ca_.ref_cache_entries, ca_.request_list),
      compact_(map_, mesh_, partitions_, reservation_),
      update_(map_, mesh_, partitions_) {
  card_base = cards_.biased_base();
  for (uint32_t p = 0; p < ca_.partitions; ++p) partitions_[p].floor = partitions_[p].top = map_.begin(p);
  allocator_.reset(0, ca_.sizing_trigger ? std::min(kInitialTriggerBytes, options_.max_heap_bytes)
                                         : options_.max_heap_bytes);
  los_.set_growth_budget(0);  // large objects count toward collections (LargeObjectSpace)
  hide_buffer_ = options_.hide_buffer();
  describe_events();
}

CacheAwareCollector::~CacheAwareCollector() = default;

void CacheAwareCollector::describe_events() {
  events.describe_ratio({"messages per marked object", &kMarkMessagesSent, &observe::kObjectsMarked});
  events.describe_ratio({"mesh hops per message", &kMeshHops, &kMarkMessagesSent});
  events.describe_ratio({"mark line hops per line", &kMarkLineHops, &kMarkLinesTouched});
  events.describe_ratio({"compact line hops per line", &kCompactLineHops, &kCompactLinesTouched});
  events.describe_ratio({"update line hops per line", &kUpdateLineHops, &kUpdateLinesTouched});
  events.add_sequence_panel({"Mark messages per core",
                             "messages",
                             "The mark messages each core of the mesh sent in one collection: references "
                             "into partitions another core hosts, less those its reference cache "
                             "suppressed. --gc-stats lists received and suppressed per core too.",
                             &kMessagesSentPerCore,
                             "core (y * width + x)",
                             {}});
  std::string ticks =
      "partition, in address order up to the highest ever used (neighbours share a bar past " +
      std::to_string(kMapBars) + ")";
  for (auto [when, map] : {std::pair{"before", &kPartitionsBefore}, std::pair{"after", &kPartitionsAfter}}) {
    events.add_sequence_panel({std::string("Partitions ") + when + " compaction",
                               "KB in objects",
                               std::string("Each partition's occupancy ") + when +
                                   " compaction, in address order (huge objects included). Partitions "
                                   "n, n+C, ... alternate between the cores in snake order (mapping.h); "
                                   "after compaction each core's live data sits in its lowest partitions "
                                   "and the top of the heap is free.",
                               map,
                               ticks,
                               {}});
  }
  events.describe_ratio({"mark locality", &kObjectsMarkedAtHome, &observe::kObjectsMarked});
  events.describe_ratio({"compact locality", &kObjectsCompactedAtHome, &kObjectsCompacted});
  events.describe_ratio({"suppressed per message", &kMarkMessagesSuppressed, &kMarkMessagesSent});
}

// The mutator's buffer: the home core's current block, up to what is
// cleared (hidden under --gc-stress, so every allocation is counted).

void CacheAwareCollector::sync_buffer() {
  if (hide_buffer_ || !top) return;
  Allocator::Block& b = allocator_.core(core_).blocks[allocator_.core(core_).current];
  stats_.bytes_allocated += static_cast<uint64_t>(top - b.top) * kWordSize;
  b.top = top;
}

void CacheAwareCollector::install_buffer() {
  if (hide_buffer_) {
    top = limit = nullptr;
    return;
  }
  Allocator::Core& core = allocator_.core(core_);
  Allocator::Block& b = core.blocks[core.current];
  if (b.partition < 0) {
    top = limit = nullptr;
    return;
  }
  top = b.top;
  limit = b.cleared;
}

void CacheAwareCollector::mutator_switched(uint64_t mutator) {
  sync_buffer();
  core_ = static_cast<unsigned>(mutator % mesh_.cores());
  install_buffer();
}

void CacheAwareCollector::flush_stats() { sync_buffer(); }

// Slow paths

Word* CacheAwareCollector::format_or_oom(Word* p, uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  if (!p) return out_of_memory();
  stats_.bytes_allocated += object_words(nrefs, raw_words) * kWordSize;
  return format_object(p, class_id, nrefs, raw_words);
}

Word* CacheAwareCollector::allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  if (stress_collection_due()) collect(GcCause::kStress);
  if (!representable(nrefs, raw_words)) return out_of_memory();
  uint64_t words = object_words(nrefs, raw_words);
  if (words > map_.partition_words()) return allocate_huge(class_id, nrefs, raw_words);
  sync_buffer();
  Word* p = allocator_.allocate(core_, words, false);
  if (!p) {
    collect(GcCause::kAllocationFailure);
    p = allocator_.allocate(core_, words, true);
  }
  Word* h = format_or_oom(p, class_id, nrefs, raw_words);
  install_buffer();
  return h;
}

// Past the budget, a collection; with no run of free partitions for it, a
// collection that compacts the huge objects too (L242-244), which is also
// what follows an ordinary collection that left no run.
Word* CacheAwareCollector::allocate_huge(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  uint64_t bytes = object_words(nrefs, raw_words) * kWordSize;
  if (bytes > ca_.partition_bytes * ca_.partitions) return out_of_memory();
  uint64_t reserve = ca_.huge_cached_at_top ? bytes : 0;
  bool compact_huge = false;
  if (allocator_.charge(bytes, reserve, false)) {
    if (Word* h = huge_.allocate(core_, class_id, nrefs, raw_words)) return allocated_huge(h, bytes);
    compact_huge = true;
  }
  for (;;) {
    compact_huge_next_ = compact_huge;
    collect(GcCause::kLargeAllocation);
    allocator_.charge(bytes, reserve, true);
    if (Word* h = huge_.allocate(core_, class_id, nrefs, raw_words)) return allocated_huge(h, bytes);
    if (compact_huge) return out_of_memory();
    compact_huge = true;
  }
}

Word* CacheAwareCollector::allocated_huge(Word* header, uint64_t bytes) {
  stats_.bytes_allocated += bytes;
  allocator_.extend_frontier(huge_.objects().back().last + 1);
  return header;
}

// Pinned objects (fiber stacks) never move: the large-object space, beside
// the partitions, within --heap.
Word* CacheAwareCollector::allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  if (stress_collection_due()) collect(GcCause::kStress);
  if (!representable(nrefs, raw_words)) return out_of_memory();
  uint64_t words = object_words(nrefs, raw_words);
  uint64_t pages = LargeObjectSpace::pages_for(words);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (heap_used() + pages * kPageBytes <= options_.max_heap_bytes)
      if (Word* h = los_.allocate(class_id, nrefs, raw_words).header) {
        stats_.bytes_allocated += pages * kPageBytes;
        return h;
      }
    if (attempt == 0) collect(GcCause::kLargeAllocation);
  }
  return out_of_memory();
}

// One collection

void CacheAwareCollector::collect(GcCause cause) {
  bool compact_huge = compact_huge_next_ || cause == GcCause::kExplicit || cause == GcCause::kStress;
  compact_huge_next_ = false;
  sync_buffer();
  allocator_.retire_all();
  run_collection(observe::CollectionKind::kFull, cause, [this, compact_huge] {
    // A recorded collection's steps are the cores' (--gc-animate).
    if (observe::Recording* recording = observe::Recording::active())
      recording->use_actors(mesh_.cores(), "core");
    root_groups_.clear();
    roots_.root_groups(root_groups_);
    mark();
    events.phase(0, "weak references", [&] { drop_dead_weak(); });
    uint64_t huge_freed = 0, pinned_freed = 0;
    events.phase(0, "huge and pinned objects", [&] {
      huge_freed = huge_.sweep();
      pinned_freed = los_.sweep(options_.poison_freed_memory());
    });
    record_partition_map(kPartitionsBefore);
    compact(compact_huge);
    record_partition_map(kPartitionsAfter);
    update();
    events.phase(0, "weak references", [&] { follow_weak(); });
    events.phase(0, "resize", [&] { resize(); });
    report(huge_freed, pinned_freed);
    return true;
  });
  install_buffer();
}

// One bar per partition (or per group of neighbours in a big heap): the
// kilobytes in objects, huge objects counted where they lie.
void CacheAwareCollector::record_partition_map(const observe::Sequence& name) {
  if (!events.enabled()) return;
  uint32_t used = std::max(allocator_.frontier(), 1u);
  uint32_t per_bar = (used + kMapBars - 1) / kMapBars;
  std::vector<uint64_t> kb((used + per_bar - 1) / per_bar, 0);
  for (uint32_t p = 0; p < allocator_.frontier(); ++p) {
    const PartitionState& s = partitions_[p];
    uint64_t words = s.top > s.floor ? static_cast<uint64_t>(s.top - s.floor) : 0;
    if (s.floor > map_.begin(p))
      words += static_cast<uint64_t>(std::min(s.floor, map_.end(p)) - map_.begin(p));
    kb[p / per_bar] += words * kWordSize / 1024;
  }
  events.sequence(0, name, kb);
}

void CacheAwareCollector::mark() { mark_.run(*pool_, root_groups_, events); }

void CacheAwareCollector::drop_dead_weak() {
  MarkedSurvives resolver;
  roots_.process_weak(resolver);
}

// Section 3.3 (L185-187): the master estimates from the live sizes how many
// partitions each core fills on average; that is each core's initial bound.
uint32_t CacheAwareCollector::compaction_bound() const {
  uint64_t live_words = 0;
  for (unsigned c = 0; c < mesh_.cores(); ++c) live_words += mark_.counters(c).words;
  double per_core = static_cast<double>(live_words) / mesh_.cores() * kBoundSlack;
  uint64_t bound = static_cast<uint64_t>(per_core / static_cast<double>(map_.partition_words())) + 1;
  return static_cast<uint32_t>(std::min<uint64_t>(bound, UINT32_MAX));
}

// Huge objects, when this collection compacts them, are cached at the top
// first (--ca-huge=top) and compacted last (huge.h).
void CacheAwareCollector::compact(bool compact_huge) {
  huge_bytes_cached_ = huge_bytes_moved_ = 0;
  if (compact_huge && ca_.huge_cached_at_top)
    events.phase(0, "huge objects cached", [&] { huge_bytes_cached_ = huge_.cache(); });
  std::vector<const std::vector<Word*>*> requests(mesh_.cores());
  for (unsigned c = 0; c < mesh_.cores(); ++c) requests[c] = &mark_.requests(c);
  allocator_.extend_frontier(
      compact_.run(*pool_, compaction_bound(), allocator_.frontier(), requests, events));
  if (compact_huge)
    events.phase(0, "huge compaction", [&] {
      huge_bytes_moved_ = huge_.compact([this](const Word* from, Word* to) {
        compact_.record_move(map_.host(map_.partition_of(from)), from, to);
      });
    });
  for (const HugeObject& o : huge_.objects()) allocator_.extend_frontier(o.last + 1);
}

void CacheAwareCollector::update() {
  unpartitioned_.clear();
  for (const LargeObjectSpace::Object& o : los_.objects()) unpartitioned_.push_back(o.header);
  for (const HugeObject& o : huge_.objects()) unpartitioned_.push_back(o.header);
  std::vector<const AddressTable*> shared(mesh_.cores());
  for (unsigned c = 0; c < mesh_.cores(); ++c) shared[c] = &compact_.shared_table(c);
  update_.run(*pool_, allocator_.frontier(), root_groups_, unpartitioned_, compact_.forwarding(), shared,
              events);
}

void CacheAwareCollector::follow_weak() {
  MovedTo resolver(map_, compact_.forwarding());
  roots_.process_weak(resolver);
}

void CacheAwareCollector::resize() {
  uint64_t used = heap_used();
  stats_.last_live_bytes = used;
  los_.set_growth_budget(used);
  uint64_t cap =
      options_.max_heap_bytes > los_.committed_bytes() ? options_.max_heap_bytes - los_.committed_bytes() : 0;
  // --ca-huge=top keeps free space for caching every huge object (L236),
  // unless that would leave less than a partition to allocate in; then the
  // ones that find no room at the top stay in place and slide (huge.h).
  uint64_t limit = cap;
  if (ca_.huge_cached_at_top && cap >= used + huge_.bytes() + ca_.partition_bytes)
    limit = cap - huge_.bytes();
  allocator_.reset(used,
                   ca_.sizing_trigger ? std::min(std::max(kInitialTriggerBytes, 2 * used), limit) : limit);
}

void CacheAwareCollector::report(uint64_t huge_freed, uint64_t pinned_freed) {
  if (!events.enabled()) return;
  for (unsigned c = 0; c < mesh_.cores(); ++c) {
    unsigned w = c % pool_->size();
    const MarkCounters& m = mark_.counters(c);
    const CompactCounters& k = compact_.counters(c);
    const UpdateCounters& u = update_.counters(c);
    events.count(w, kMarkMessagesSent, m.sent);
    events.count(w, kMarkMessagesReceived, m.received);
    events.count(w, kMarkMessagesSuppressed, m.suppressed);
    events.count(w, kMeshHops, m.hops);
    events.count(w, kMarkLinesTouched, m.lines);
    events.count(w, kMarkLineHops, m.line_hops);
    events.count(w, kCompactLinesTouched, k.lines);
    events.count(w, kCompactLineHops, k.line_hops);
    events.count(w, kUpdateLinesTouched, u.lines);
    events.count(w, kUpdateLineHops, u.line_hops);
    events.count(w, observe::kObjectsMarked, m.objects);
    events.count(w, kObjectsMarkedAtHome, m.objects_at_home);
    events.count(w, kObjectsCompacted, k.objects_placed);
    events.count(w, kObjectsCompactedAtHome, k.placed_at_home);
    events.count(w, kRequestListDrops, m.requests_dropped);
    events.count(w, observe::kObjectsMoved, k.objects_moved);
    events.count(w, observe::kBytesMoved, k.bytes_moved);
    events.count(w, kBalancingMoves, k.balancing_moves);
    events.count(w, kBytesBalanced, k.balanced_bytes);
    events.count(w, kLastResortDestinations, k.last_resorts);
    events.count(w, kPtrqueryMessages, u.queries);
  }
  std::vector<uint64_t> sent(mesh_.cores()), received(mesh_.cores()), suppressed(mesh_.cores());
  for (unsigned c = 0; c < mesh_.cores(); ++c) {
    sent[c] = mark_.counters(c).sent;
    received[c] = mark_.counters(c).received;
    suppressed[c] = mark_.counters(c).suppressed;
  }
  events.sequence(0, kMessagesSentPerCore, sent);
  events.sequence(0, kMessagesReceivedPerCore, received);
  events.sequence(0, kMessagesSuppressedPerCore, suppressed);
  events.count(0, kVerifyRounds, mark_.verify_rounds());
  events.count(0, kFinishedMessages, mark_.finished_messages());
  events.count(0, kHugeBytesFreed, huge_freed);
  events.count(0, kHugeBytesCached, huge_bytes_cached_);
  events.count(0, kHugeBytesMoved, huge_bytes_moved_);
  events.count(0, kPinnedBytesFreed, pinned_freed);
  events.count(0, kForwardingTableBytes, compact_.table_bytes());
  AllocatorCounters a = allocator_.take_counters();
  events.count(0, kBytesCleared, a.bytes_cleared);
  events.count(0, kBlocksLocal, a.blocks[0]);
  events.count(0, kBlocksRing1, a.blocks[1]);
  events.count(0, kBlocksRing2, a.blocks[2]);
  events.count(0, kBlocksGlobal, a.blocks[3]);
}

// Queries

uint64_t CacheAwareCollector::heap_used() const {
  uint64_t words = 0;
  for (uint32_t p = 0; p < allocator_.frontier(); ++p)
    if (const PartitionState& s = partitions_[p]; s.top > s.floor)
      words += static_cast<uint64_t>(s.top - s.floor);
  for (unsigned c = 0; c < mesh_.cores(); ++c)
    for (const Allocator::Block& b : allocator_.core(c).blocks)
      if (b.partition >= 0) {
        Word* t = (c == core_ && &b == &allocator_.core(c).blocks[allocator_.core(c).current] && top &&
                   !hide_buffer_)
                      ? top
                      : b.top;
        words += static_cast<uint64_t>(t - partitions_[static_cast<uint32_t>(b.partition)].top);
      }
  return words * kWordSize + huge_.bytes() + los_.committed_bytes();
}

uint64_t CacheAwareCollector::heap_size() const {
  uint64_t partitions = 0;
  for (uint32_t p = 0; p < allocator_.frontier(); ++p) {
    const PartitionState& s = partitions_[p];
    if (s.top != map_.begin(p) || s.holder >= 0) partitions++;
  }
  return partitions * ca_.partition_bytes + los_.committed_bytes();
}

uint64_t CacheAwareCollector::identity_hash(Word* header) {
  bool first = false;
  return moving_identity_hash(reservation_, header, first);
}

void CacheAwareCollector::describe_spaces(std::vector<observe::SpaceUsage>& out) const {
  uint64_t used = heap_used() - los_.committed_bytes();
  out.push_back({"partitions",
                 std::to_string(ca_.partitions) + " of " + std::to_string(ca_.partition_bytes >> 10) +
                     " KB on " + std::to_string(mesh_.width()) + "x" + std::to_string(mesh_.height()) +
                     " cores",
                 allocator_.trigger_bytes(), used});
  out.push_back({"large", "pinned objects", los_.committed_bytes(), los_.committed_bytes()});
  // Beside the heap, not in it: what compaction's tables hold.
  uint64_t tables = compact_.table_bytes();
  out.push_back({"tables", "forwarding map and shared tables, outside --heap", tables, tables});
}

void CacheAwareCollector::describe_heap(verify::HeapShape& out) const {
  for (uint32_t p = 0; p < allocator_.frontier(); ++p) {
    const PartitionState& s = partitions_[p];
    Word* top = s.top;
    if (s.holder >= 0) {
      const Allocator::Core& core = allocator_.core(static_cast<unsigned>(s.holder));
      for (unsigned k = 0; k < 2; ++k)
        if (core.blocks[k].partition == p) {
          top = core.blocks[k].top;
          if (static_cast<unsigned>(s.holder) == core_ && k == core.current && this->top && !hide_buffer_)
            top = this->top;
        }
    }
    if (top > s.floor) out.linear_spaces.push_back({"partition", s.floor, top});
  }
  for (const HugeObject& o : huge_.objects())
    out.linear_spaces.push_back({"huge", o.start, o.start + o.words});
  for (const LargeObjectSpace::Object& o : los_.objects()) out.large_objects.push_back(o.header);
  out.large_space = {"large", los_.begin(), los_.frontier()};
}

std::unique_ptr<Collector> create_cacheaware(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<CacheAwareCollector>(roots, options);
}

}  // namespace gc
