#include "gc/collectors/cacheaware/compact.h"

#include <algorithm>
#include <cstring>

#include "gc/heap/identity_hash.h"
#include "gc/heap/lab.h"
#include "gc/observe/recording.h"
#include "gc/parallel/backoff.h"
#include "gc/spaces/copy_space.h"

namespace gc::cacheaware {

namespace {

bool covered(const PartitionState& s, Word* end) { return s.floor >= end; }

// What a core counts while it slides, kept in registers: the words it
// moves could otherwise alias its counters in memory.
struct Tally {
  uint64_t objects_placed = 0, placed_at_home = 0, objects_moved = 0, bytes_moved = 0, balanced_bytes = 0,
           lines = 0, line_hops = 0;
  void add_to(CompactCounters& counters) const {
    counters.objects_placed += objects_placed;
    counters.placed_at_home += placed_at_home;
    counters.objects_moved += objects_moved;
    counters.bytes_moved += bytes_moved;
    counters.balanced_bytes += balanced_bytes;
    counters.lines += lines;
    counters.line_hops += line_hops;
  }
};

}  // namespace

// The master's table of free space (section 3.3).
class CompactPhase::Balancer {
 public:
  struct Destination {
    bool local = false;  // go on past the bound in the core's own partitions
    uint32_t partition = 0;
    Word* begin = nullptr;
    Word* end = nullptr;
    bool last_resort = false;
  };

  Balancer(CompactPhase& phase, uint32_t bound) : c_(phase), bound_(bound), offers_(phase.mesh_.cores()) {}

  // `finishedLocal` from a core that finished with room: its compacted top
  // is in its partition of rank `rank`, at `top`.
  void finished_local(unsigned core, uint32_t rank, Word* top) {
    std::lock_guard<std::mutex> lock(mutex_);
    Offer& o = offers_[core];
    o.finished = true;
    o.rank = rank;
    o.top = top;
    responded_++;
  }

  // `finishedLocal` from a core at its bound, its answer to the first
  // subphase; every such core reports before any core of its thread waits
  // in request().
  void out_of_room() {
    std::lock_guard<std::mutex> lock(mutex_);
    responded_++;
  }

  // One past the highest partition handed out.
  uint32_t frontier() const { return frontier_; }

  // Space for at least `words`; waits while none is free and some core has
  // not answered (L195). The wait ends: each thread answers for all of its
  // cores (finished_local or out_of_room) in its first pass, which waits for
  // nothing, before any of them requests.
  Destination request(unsigned core, uint64_t words, CompactCounters& counters) {
    bool waited = false;
    parallel::Backoff backoff;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto d = below_bounds(core, words)) return *d;
        if (responded_ == offers_.size()) {
          counters.last_resorts++;
          if (auto d = first_free(words)) return *d;
          return Destination{.local = true};
        }
      }
      if (!waited) counters.waits++;
      waited = true;
      backoff.wait();
    }
  }

 private:
  struct Offer {
    bool finished = false;
    uint32_t rank = 0;    // the next partition it offers, in its list
    Word* top = nullptr;  // where the free part of that partition starts
  };

  // The next partition with room for `words` from a finished core, up to
  // `limit` (its bound, or the end of its list).
  std::optional<Destination> take(unsigned core, uint64_t words, uint32_t limit) {
    Offer& o = offers_[core];
    if (!o.finished) return std::nullopt;
    const std::vector<uint32_t>& hosted = c_.map_.hosted_by(core);
    for (; o.rank < std::min<uint32_t>(limit, static_cast<uint32_t>(hosted.size())); ++o.rank) {
      uint32_t p = hosted[o.rank];
      Word* end = c_.map_.end(p);
      PartitionState& s = c_.partitions_[p];
      if (covered(s, end)) continue;
      Word* begin = std::max(o.top, s.top);
      if (static_cast<uint64_t>(end - begin) < words) {
        o.top = nullptr;
        continue;
      }
      o.rank++;
      o.top = nullptr;
      frontier_ = std::max(frontier_, p + 1);
      return Destination{.partition = p, .begin = begin, .end = end};
    }
    return std::nullopt;
  }

  // Neighbours first (ring 1, then ring 2), then any finished core's offer
  // (L193).
  std::optional<Destination> below_bounds(unsigned core, uint64_t words) {
    for (unsigned distance = 1; distance <= 2; ++distance)
      for (unsigned n : c_.mesh_.ring(core, distance))
        if (auto d = take(n, words, bound_)) return d;
    for (unsigned n = 0; n < offers_.size(); ++n)
      if (n != core)
        if (auto d = take(n, words, bound_)) return d;
    return std::nullopt;
  }

  // L195: "a pointer to the first free block of memory in the heap".
  std::optional<Destination> first_free(uint64_t words) {
    std::optional<Destination> best;
    unsigned best_core = 0;
    for (unsigned n = 0; n < offers_.size(); ++n) {
      Offer saved = offers_[n];
      if (auto d = take(n, words, UINT32_MAX)) {
        if (!best || d->partition < best->partition) {
          if (best) offers_[best_core] = best_saved_;
          best = d;
          best_core = n;
          best_saved_ = saved;
        } else {
          offers_[n] = saved;
        }
      }
    }
    if (best) best->last_resort = true;
    return best;
  }

  CompactPhase& c_;
  uint32_t bound_;
  uint32_t frontier_ = 0;
  std::mutex mutex_;
  std::vector<Offer> offers_;
  Offer best_saved_;
  size_t responded_ = 0;
};

// One core's compaction: the walk over its partitions (the source) and
// where the next object goes (the destination).
class CompactPhase::Slider {
 public:
  Slider(CompactPhase& phase, Balancer& balancer, unsigned core, uint32_t bound)
      : c_(phase),
        balancer_(balancer),
        core_(core),
        counters_(phase.cores_[core]->counters),
        forwarding_(phase.forwarding_.writer(core)),
        hosted_(phase.map_.hosted_by(core)),
        ranks_(static_cast<uint32_t>(std::lower_bound(hosted_.begin(), hosted_.end(), phase.frontier_) -
                                     hosted_.begin())),
        recording_(observe::Recording::active()) {
    set_bound(bound);
  }

  // Local compaction; false when the core stopped at its bound with
  // objects left (the balancing subphase follows).
  bool compact_locally() {
    dest_rank_ = 0;
    dest_ = nullptr;
    open_local(0);
    src_rank_ = 0;
    src_ = hosted_.empty() ? nullptr : c_.partitions_[hosted_[0]].floor;
    return slide();
  }

  // The balancing subphase: destinations from the master until every
  // object is placed.
  // The core has already reported that it stopped at its bound
  // (Balancer::out_of_room).
  void balance() {
    while (!slide()) {
      Balancer::Destination d = balancer_.request(core_, pending_words_, counters_);
      if (d.local) {
        set_bound(UINT32_MAX);
        continue;
      }
      counters_.balancing_moves++;
      if (recording_) [[unlikely]]
        recording_->balance(core_, d.begin, c_.map_.host(d.partition), d.partition);
      foreign_ = true;
      foreign_partition_ = d.partition;
      dest_ = d.begin;
      dest_end_ = d.end;
    }
  }

  // After the walk: the tops of the partitions the core used, and its
  // evacuated ones emptied. Returns what the master's table needs.
  void finish(uint32_t& rank, Word*& top) {
    close_foreign();
    for (uint32_t r = 0; r < ranks_; ++r) {
      PartitionState& s = c_.partitions_[hosted_[r]];
      if (covered(s, c_.map_.end(hosted_[r]))) continue;
      if (r == dest_rank_)
        s.top = local_dest_;
      else if (r > dest_rank_)
        s.top = s.floor;
    }
    rank = dest_rank_;
    top = local_dest_;
  }

 private:
  // Walks the source from where it stopped; false if an object found no
  // room below the bound (pending_words_ says how much it needs).
  bool slide() {
    Tally tally;
    bool done = slide(tally);
    tally.add_to(counters_);
    return done;
  }

  bool slide(Tally& tally) {
    while (src_rank_ < ranks_) {
      uint32_t p = hosted_[src_rank_];
      PartitionState& s = c_.partitions_[p];
      Word* end = covered(s, c_.map_.end(p)) ? src_ : s.top;
      while (src_ < end) {
        Word* h = header_from_start(src_);
        Word hw = *h;
        uint64_t words = object_words(hw);
        if (Header::is_marked(hw) && !place(src_, h, hw, words, tally)) return false;
        src_ += words;
      }
      if (++src_rank_ < ranks_) src_ = c_.partitions_[hosted_[src_rank_]].floor;
    }
    return true;
  }

  // One marked object at `start`: moved to the destination, or left where
  // it is when the destination has caught up with it.
  bool place(Word* start, Word* h, Word hw, uint64_t words, Tally& tally) {
    uint64_t need = words + growth_when_moved(hw);
    bool at_home = (hw & kDisplacedBit) == 0;
    for (;;) {
      if (foreign_) {
        if (static_cast<uint64_t>(dest_end_ - dest_) >= need) {
          tally.balanced_bytes += need * kWordSize;
          count_placed(false, tally);
          move(start, h, hw | kDisplacedBit, words, tally);
          return true;
        }
        close_foreign();
        pending_words_ = need;
        return false;
      }
      if (dest_rank_ >= rank_limit_) {
        pending_words_ = need;
        return false;
      }
      if (dest_rank_ == src_rank_) {
        if (dest_ == start || dest_ + (need - words) > start) {
          if (dest_ < start) fill_dead_space(dest_, start);
          *h = hw & ~Header::kMarkBit;
          dest_ = start + words;
          local_dest_ = dest_;
          count_placed(at_home, tally);
          return true;
        }
        count_placed(at_home, tally);
        move(start, h, hw, words, tally);
        local_dest_ = dest_;
        return true;
      }
      if (static_cast<uint64_t>(dest_end_ - dest_) >= need) {
        count_placed(at_home, tally);
        move(start, h, hw, words, tally);
        local_dest_ = dest_;
        return true;
      }
      if (!advance_local()) {
        pending_words_ = need;
        return false;
      }
    }
  }

  // The next local destination partition, up to the bound and never past
  // the source.
  bool advance_local() {
    c_.partitions_[hosted_[dest_rank_]].top = dest_;
    uint32_t r = dest_rank_ + 1;
    while (r < src_rank_ && covered(c_.partitions_[hosted_[r]], c_.map_.end(hosted_[r]))) ++r;
    if (r >= rank_limit_) return false;
    open_local(r);
    return true;
  }

  // The first rank past `bound` partitions of the core's list: covered
  // partitions hold huge objects and do not count.
  void set_bound(uint32_t bound) {
    rank_limit_ = UINT32_MAX;
    if (bound == UINT32_MAX) return;
    uint32_t open = 0;
    for (uint32_t r = 0; r < hosted_.size(); ++r) {
      if (covered(c_.partitions_[hosted_[r]], c_.map_.end(hosted_[r]))) continue;
      if (open++ == bound) {
        rank_limit_ = r;
        return;
      }
    }
  }

  void open_local(uint32_t rank) {
    while (rank < hosted_.size() && covered(c_.partitions_[hosted_[rank]], c_.map_.end(hosted_[rank])))
      ++rank;
    if (rank >= hosted_.size()) rank = static_cast<uint32_t>(hosted_.size()) - 1;
    dest_rank_ = rank;
    dest_ = local_dest_ = c_.partitions_[hosted_[rank]].floor;
    dest_end_ = c_.map_.end(hosted_[rank]);
  }

  void close_foreign() {
    if (!foreign_) return;
    c_.partitions_[foreign_partition_].top = dest_;
    foreign_ = false;
    dest_ = local_dest_;
    dest_end_ = c_.map_.end(hosted_[dest_rank_]);
  }

  static void count_placed(bool at_home, Tally& tally) {
    tally.objects_placed++;
    tally.placed_at_home += at_home;
  }

  // The lines a move reads and writes. Under partition homing the source
  // is this core's, and so is a local destination: only a balancing
  // destination is remote.
  void count_lines(const Word* from, uint64_t words, const Word* to, uint64_t total, Tally& tally) {
    const PartitionMap& map = c_.map_;
    tally.lines += map.lines(from, words) + map.lines(to, total);
    if (map.homing() == Homing::kLines)
      tally.line_hops += map.line_hops(core_, from, words) + map.line_hops(core_, to, total);
    else if (foreign_)
      tally.line_hops += map.line_hops(core_, to, total);
  }

  void move(Word* start, Word* h, Word hw, uint64_t words, Tally& tally) {
    uint64_t n = Header::nrefs(hw);
    Word* new_start = dest_;
    Word* new_h = new_start + words_below(n);
    // Small objects slide by more than their size almost always: then
    // inline moves, not a libc call per object.
    if (static_cast<uint64_t>(start - new_start) >= words)
      copy_words(new_start, start, words);
    else
      std::memmove(new_start, start, words * kWordSize);
    hw &= ~Header::kMarkBit;
    uint64_t total = words;
    if (grows_when_moved(hw)) [[unlikely]] {
      total += growth_when_moved(hw);
      hw = grow_hash_word(new_h, hw, address_hash(c_.reservation_, h));
    }
    *new_h = hw;
    if (recording_) [[unlikely]]
      recording_->move(core_, h, new_h);
    forwarding_.moved(start, words, new_start);
    count_lines(start, words, new_start, total, tally);
    dest_ += total;
    tally.objects_moved++;
    tally.bytes_moved += total * kWordSize;
  }

  CompactPhase& c_;
  Balancer& balancer_;
  unsigned core_;
  CompactCounters& counters_;
  ForwardingMap::Writer& forwarding_;
  const std::vector<uint32_t>& hosted_;
  uint32_t ranks_;                    // hosted_[ranks_] and later lie at or above the frontier
  uint32_t rank_limit_ = UINT32_MAX;  // local destinations stay below it
  observe::Recording* recording_;     // the collection's, if it is recorded (--gc-animate)

  uint32_t src_rank_ = 0;
  Word* src_ = nullptr;
  uint32_t dest_rank_ = 0;  // the local destination partition, in hosted_
  Word* local_dest_ = nullptr;
  Word* dest_ = nullptr;  // where the next object goes: local, or foreign
  Word* dest_end_ = nullptr;
  bool foreign_ = false;
  uint32_t foreign_partition_ = 0;
  uint64_t pending_words_ = 0;
};

CompactPhase::CompactPhase(const PartitionMap& map, const Mesh& mesh, std::vector<PartitionState>& partitions,
                           const Reservation& reservation)
    : map_(map),
      mesh_(mesh),
      partitions_(partitions),
      reservation_(reservation),
      forwarding_(map.base(), map.partition_words() * map.count(), mesh.cores()) {
  for (unsigned c = 0; c < mesh.cores(); ++c) cores_.push_back(std::make_unique<Core>());
}

uint64_t CompactPhase::table_bytes() const {
  uint64_t bytes = forwarding_.bytes();
  for (const auto& core : cores_) bytes += core->shared.bytes();
  return bytes;
}

CompactPhase::~CompactPhase() = default;

uint32_t CompactPhase::run(parallel::WorkerPool& pool, uint32_t bound, uint32_t frontier,
                           const std::vector<const std::vector<Word*>*>& requests,
                           observe::Recorder& events) {
  frontier_ = frontier;
  unsigned cores = mesh_.cores();
  unsigned threads = pool.size();
  for (unsigned c = 0; c < cores; ++c) cores_[c]->counters = CompactCounters{};
  forwarding_.reset();
  Balancer balancer(*this, bound);
  auto work = [&](unsigned w) {
    std::vector<std::unique_ptr<Slider>> sliders;
    std::vector<unsigned> waiting;
    for (unsigned c = w; c < cores; c += threads)
      for (uint32_t p : map_.hosted_by(c)) {
        if (p >= frontier) break;
        forwarding_.writer(c).clear(map_.begin(p), map_.end(p));
      }
    for (unsigned c = w; c < cores; c += threads) {
      sliders.push_back(std::make_unique<Slider>(*this, balancer, c, bound));
      if (sliders.back()->compact_locally()) {
        uint32_t rank;
        Word* top;
        sliders.back()->finish(rank, top);
        balancer.finished_local(c, rank, top);
      } else {
        // Reported before any core of this thread waits in request(): the
        // wait ends only when every core has answered, and this thread's
        // other cores answer only through this loop.
        balancer.out_of_room();
        waiting.push_back(static_cast<unsigned>(sliders.size() - 1));
      }
    }
    for (unsigned i : waiting) {
      sliders[i]->balance();
      uint32_t rank;
      Word* top;
      sliders[i]->finish(rank, top);
    }
    for (unsigned c = w; c < cores; c += threads) {
      Core& core = *cores_[c];
      const std::vector<Word*>& asked = *requests[c];
      core.shared.clear(asked.size());
      for (Word* old : asked) core.shared.insert(old, forwarding_.forward(old));
    }
  };
  auto job = [&](unsigned w) { events.phase(w, "compact", [&] { work(w); }); };
  pool.run(job);
  return std::max(frontier, balancer.frontier());
}

}  // namespace gc::cacheaware
