// The two-level allocator (Zhou and Demsky, section 3.4, L197-212).
//
// Second level, one per core: a bump allocator into at most two blocks,
// each the free remainder of one partition, which clears memory 4096 bytes
// at a time just ahead of the allocation (L203); holding two blocks means an
// object too big for what is left of one does not waste the rest (L203).
// The mutator's inline fast path bumps the current block of the core that
// hosts the running fiber, up to the cleared limit.
//
// Top level, one for the heap: hands a core a block, searching in order
//   1. the core's own partitions, lowest first;
//   2. ring 1, the 4 nearest cores on the mesh: the lowest partition;
//   3. ring 2, the next 8: the lowest partition;
//   4. the whole heap, the lowest partition, but only while the global
//      search flag is set: less than a threshold of the space free after the
//      last collection has been allocated since (set once, until the next
//      collection). Otherwise the allocation collects.
// Under --ca-homing=lines (the paper's dispar and base) only step 4 is
// taken, flag or no flag: with every partition's lines spread over all the
// cores, no core's partitions are nearer than another's.
// Blocks are handed out only within the sizing policy's trigger (below
// --heap); past it the allocation collects too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "gc/collectors/cacheaware/cacheaware_options.h"
#include "gc/collectors/cacheaware/mapping.h"
#include "gc/layout.h"

namespace gc::cacheaware {

// One partition now. Normal objects lie end to end in [floor, top). The
// partition-head table of section 4.1 is floor - begin, or -1 when a huge
// object covers the whole partition (floor == end).
struct PartitionState {
  Word* floor = nullptr;
  Word* top = nullptr;
  int32_t holder = -1;  // the core whose allocator holds [top, end) as a block
};

enum class SearchStep : uint8_t { kLocal, kRing1, kRing2, kGlobal, kNone };
const char* search_step_name(SearchStep step);

struct AllocatorCounters {
  uint64_t blocks[4] = {};  // by SearchStep, kLocal to kGlobal
  uint64_t bytes_cleared = 0;
  uint64_t refused = 0;  // block requests answered with a collection
};

class Allocator {
 public:
  struct Block {
    Word* top = nullptr;
    Word* end = nullptr;
    Word* cleared = nullptr;  // [top, cleared) is zeroed and may be bumped by the fast path
    Word* start = nullptr;    // where the block began: [start, top) is allocated
    int64_t partition = -1;   // -1: none
    uint64_t room() const { return static_cast<uint64_t>(end - top); }
  };
  struct Core {
    Block blocks[2];
    unsigned current = 0;
  };

  Allocator(const PartitionMap& map, const Mesh& mesh, std::vector<PartitionState>& partitions,
            unsigned global_search_percent);

  Core& core(unsigned c) { return cores_[c]; }
  const Core& core(unsigned c) const { return cores_[c]; }

  // Second level: `words` for core c, from its blocks or a new one, or
  // nullptr when the top level answers with a collection. `after_collection`
  // lets the top level search the whole heap whatever the flag says.
  Word* allocate(unsigned c, uint64_t words, bool after_collection);

  // Top level: the partition a block for `min_words` would come from, and
  // the step that found it, or kNone. Does not hand it out (tests use it).
  std::pair<SearchStep, uint32_t> search(unsigned c, uint64_t min_words, bool after_collection);

  // Charges `bytes` taken outside blocks (a huge object) to the budget the
  // trigger leaves, and sets `reserve` more aside until the next
  // collection (the free space --ca-huge=top keeps for caching huge
  // objects, L236); false when they do not fit it (after a collection,
  // they always do).
  bool charge(uint64_t bytes, uint64_t reserve, bool after_collection);

  // Every block goes back to its partition (its top becomes the
  // partition's), before a collection walks the heap.
  void retire_all();
  // After a collection: bytes in use, the trigger for the next one, and the
  // search cursors back to each core's first partition.
  void reset(uint64_t used_bytes, uint64_t trigger_bytes);

  // Partitions at and above the frontier have never held an object: the
  // phases that walk partitions stop there, so a collection's cost does not
  // grow with --heap.
  uint32_t frontier() const { return frontier_; }
  void extend_frontier(uint32_t end) { frontier_ = std::max(frontier_, end); }

  // Bytes allocated since the last collection: in blocks given back, in
  // the blocks held now (their tops as last synced), and in huge objects.
  uint64_t taken_bytes() const;
  uint64_t trigger_bytes() const { return trigger_bytes_; }
  bool global_search_flag() const { return global_flag_; }
  const AllocatorCounters& counters() const { return counters_; }
  AllocatorCounters take_counters();

 private:
  uint64_t budget() const;
  bool usable(uint32_t p, uint64_t min_words) const;
  std::optional<uint32_t> lowest_of(unsigned c, uint64_t min_words);
  std::optional<uint32_t> lowest_in_ring(unsigned c, unsigned distance, uint64_t min_words);
  std::pair<SearchStep, uint32_t> lowest_anywhere(uint64_t min_words);
  bool take_block(unsigned c, uint64_t words, bool after_collection);
  void clear_to(Block& b, Word* need);

  const PartitionMap& map_;
  const Mesh& mesh_;
  std::vector<PartitionState>& partitions_;
  unsigned global_search_percent_;
  std::vector<Core> cores_;
  std::vector<uint32_t> cursor_;  // per core: partitions before it in its list have no room
  uint64_t used_after_ = 0;       // bytes in use after the last collection
  uint64_t taken_bytes_ = 0;      // allocated since, in blocks given back and huge objects
  uint64_t reserved_bytes_ = 0;   // set aside since
  uint64_t trigger_bytes_ = 0;
  bool global_flag_ = false;
  uint32_t frontier_ = 0;
  AllocatorCounters counters_;
};

}  // namespace gc::cacheaware
