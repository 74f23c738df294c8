// Address translation for the traversal unit (L236, L307, L319): a TLB
// for the marker and one for the tracer (32 entries each), a shared L2 TLB
// (128 entries), and a page-table walker backed by an 8 KB cache that
// holds the upper levels of the page table. The paper's walker is
// blocking, and names that as a bottleneck (L313-316: "TLB misses can
// serialize execution"); gclab can also make it non-blocking (hits under
// misses, several walks at once) or turn translation off (the paper's
// DRAMSim runs without virtual memory, L312).
//
// What the paper leaves open, gclab chose (docs/collectors/accel.md):
// RISC-V Sv39 pages of 4 KiB and a three-level walk over the low 39 bits
// of the address, a simulated page table laid out densely above the
// heap's addresses, physical addresses equal to virtual ones (so the
// DRAM sees the heap's own locality), fully associative L1 TLBs, a 4-way
// L2 TLB whose hit costs 2 cycles, a 4-way walker cache of 64-byte lines
// whose hit costs 1 cycle, and at most 4 walks at once when non-blocking.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "gc/collectors/accel/memory.h"
#include "gc/collectors/accel/sim.h"
#include "gc/collectors/accel/tag_array.h"

namespace gc::accel {

inline constexpr unsigned kPageShift = 12;
inline constexpr unsigned kPageTableLevels = 3;
// Where the simulated page table lives: above any user-space heap address.
inline constexpr uint64_t kPageTableBase = uint64_t{1} << 47;

// The address of the level's page-table entry for `vaddr` (level 2 is the
// root): the root table, then one level-1 table per root entry, then one
// level-0 table per level-1 entry, each a 4 KiB page of 512 entries.
uint64_t pte_address(uint64_t vaddr, unsigned level);

enum class Port : uint8_t { kMarker, kTracer };
inline constexpr unsigned kPortCount = 2;

enum class WalkerMode : uint8_t { kBlocking, kNonBlocking, kOff };

struct TranslationConfig {
  unsigned l1_entries = 32;
  unsigned l2_entries = 128;
  unsigned l2_ways = 4;
  Cycle l2_hit_cycles = 2;
  WalkerMode walker = WalkerMode::kBlocking;
  uint64_t walker_cache_bytes = 8192;
  unsigned walker_cache_ways = 4;
  Cycle walker_cache_hit_cycles = 1;
  unsigned max_walks = 4;  // non-blocking only
};

struct TranslationStats {
  std::array<uint64_t, kPortCount> l1_hits{};
  std::array<uint64_t, kPortCount> l1_misses{};
  uint64_t l2_hits = 0;
  uint64_t l2_misses = 0;
  uint64_t walks = 0;
  uint64_t walker_cache_hits = 0;
  uint64_t walker_cache_misses = 0;
};

class Translation {
 public:
  explicit Translation(const TranslationConfig& config);

  enum class Outcome : uint8_t {
    kNow,     // translated: usable at *ready (now, or after the L2 TLB)
    kParked,  // a walk will translate it: take_done() hands it back
    kBlocked  // blocking walker, and this port waits for a walk: try later
  };

  // The page of `vaddr` for a request of `port`, identified by `tag`.
  Outcome translate(Port port, uint64_t vaddr, uint64_t tag, Cycle now, Cycle* ready);

  // Under the blocking walker, a port with a request parked is stalled.
  bool blocked(Port port) const {
    return config_.walker == WalkerMode::kBlocking && parked_[index(port)] > 0;
  }

  struct Done {
    uint64_t tag;
    Cycle at;
  };
  // The port's parked requests whose walks have finished. (The ports ask
  // every cycle; most of the time there are none.)
  void take_done(Port port, std::vector<Done>& out) {
    std::vector<Done>& done = done_[index(port)];
    if (done.empty()) return;
    out.insert(out.end(), done.begin(), done.end());
    done.clear();
  }

  // Whether a port has finished walks to take.
  bool has_done(Port port) const { return !done_[index(port)].empty(); }

  // The simulation loop's side: the next cycle with work (kNever: none
  // without a memory response), time moving on, and the walker's responses.
  // Without a walk there is nothing to do.
  Cycle next_event() const { return active_.empty() ? kNever : next_walk_event(); }
  void advance(Cycle now, MemoryModel& memory) {
    if (active_.empty()) {
      memory_was_full_ = false;
      return;
    }
    advance_walks(now, memory);
  }
  void on_response(const MemResponse& response);

  const TranslationStats& stats() const { return stats_; }

 private:
  enum class Step : uint8_t {
    kLookup,      // reads the walker cache at `at`
    kNeedMemory,  // missed: waits for the memory to take its request
    kMemory,      // waits for the line
    kDone         // the last entry is known at `at`
  };
  struct Walk {
    uint64_t vpn;
    unsigned level;  // the entry being read: 2, 1, then 0
    Step step;
    Cycle at;
  };
  struct Parked {
    Port port;
    uint64_t vpn;
    uint64_t tag;
  };

  static unsigned index(Port p) { return static_cast<unsigned>(p); }
  unsigned walk_limit() const { return config_.walker == WalkerMode::kNonBlocking ? config_.max_walks : 1; }
  Cycle next_walk_event() const;
  void advance_walks(Cycle now, MemoryModel& memory);
  bool walking(uint64_t vpn) const;
  void start_walks(Cycle now);
  void entry_read(Walk& w, Cycle at);
  void complete(uint64_t vpn, Cycle at);

  TranslationConfig config_;
  std::array<TagArray, kPortCount> l1_;
  TagArray l2_;
  TagArray walker_cache_;
  std::vector<Walk> active_;
  std::vector<uint64_t> waiting_;  // pages to walk, in order of their first miss
  std::vector<Parked> parked_requests_;
  std::array<unsigned, kPortCount> parked_{};
  std::array<std::vector<Done>, kPortCount> done_;
  bool memory_was_full_ = false;  // a walk could not submit at the last advance
  TranslationStats stats_;
};

}  // namespace gc::accel
