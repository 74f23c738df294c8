#include "gc/collectors/cacheaware/update.h"

#include <atomic>

#include "gc/observe/recording.h"
#include "gc/parallel/backoff.h"
#include "gc/parallel/tracer.h"

namespace gc::cacheaware {

class UpdatePhase::Runner {
 public:
  Runner(UpdatePhase& phase, unsigned index, unsigned threads, const ForwardingMap& forwarding,
         const std::vector<const AddressTable*>& shared, std::atomic<unsigned>& completed)
      : u_(phase),
        forwarding_(forwarding),
        shared_(shared),
        completed_(completed),
        out_(phase.mesh_.cores(), nullptr),
        recording_(observe::Recording::active()) {
    for (unsigned c = index; c < phase.mesh_.cores(); c += threads) mine_.push_back(c);
  }
  ~Runner() {
    for (Batch* b : out_) delete b;
  }

  void run(parallel::RootClaim& roots, std::span<Word* const> extra, std::atomic<size_t>& next_extra) {
    if (mine_.empty()) return;
    unsigned first = mine_.front();
    Tally roots_tally;
    Lookups at(u_.map_, forwarding_);
    for (;;) {
      size_t i = roots.next.fetch_add(1, std::memory_order_relaxed);
      if (i >= roots.groups.size()) break;
      const RootGroup& g = roots.groups[i];
      for (size_t k = 0; k < g.count; ++k) update(first, g.slots + k, at, roots_tally);
    }
    for (;;) {
      size_t i = next_extra.fetch_add(1, std::memory_order_relaxed);
      if (i >= extra.size()) break;
      Word* h = extra[i];
      uint64_t n = Header::nrefs(*h);
      count_lines(first, h - n, n + 1, roots_tally);
      update_slots(first, h, n, at, roots_tally);
    }
    roots_tally.add_to(u_.cores_[first]->counters);
    // Queries are answered after each partition, not only at the end, so
    // that a core whose partitions refer into a busy core's does not idle
    // until that core has updated all of its own.
    for (unsigned c : mine_) {
      for (uint32_t p : u_.map_.hosted_by(c)) {
        if (p >= u_.frontier_) break;
        update_partition(c, u_.partitions_[p]);
        for (unsigned k : mine_) answer(k);
      }
    }
    flush();
    parallel::Backoff backoff;
    for (;;) {
      for (unsigned c : mine_) {
        answer(c);
        take_responses(c);
        Core& core = *u_.cores_[c];
        if (!core.completed && core.outstanding == 0) {
          core.completed = true;
          completed_.fetch_add(1, std::memory_order_acq_rel);
        }
      }
      if (completed_.load(std::memory_order_acquire) == u_.mesh_.cores()) break;
      backoff.wait();
    }
  }

 private:
  // What a core counts while it updates, kept in registers: the slots it
  // writes could otherwise alias its counters in memory.
  // The maps the slot loop reads, as values (HostLookup, ForwardingMap::Reader).
  struct Lookups {
    Lookups(const PartitionMap& map, const ForwardingMap& forwarding)
        : hosts(map.lookup()), moves(forwarding) {}
    HostLookup hosts;
    ForwardingMap::Reader moves;
  };

  struct Tally {
    uint64_t slots = 0, local_hits = 0, shared_hits = 0, lines = 0, line_hops = 0;
    void add_to(UpdateCounters& counters) const {
      counters.slots += slots;
      counters.local_hits += local_hits;
      counters.shared_hits += shared_hits;
      counters.lines += lines;
      counters.line_hops += line_hops;
    }
  };

  // A partition of the core's own, compacted: its objects lie from floor
  // to top, each within the partition (huge objects cover theirs and are
  // updated as extra objects), so under partition homing their lines are
  // the core's.
  void update_partition(unsigned c, const PartitionState& s) {
    const PartitionMap& map = u_.map_;
    bool lines_homed_apart = map.homing() == Homing::kLines;
    Lookups at(map, forwarding_);
    Tally tally;
    for (Word* w = s.floor; w < s.top;) {
      Word* h = header_from_start(w);
      Word hw = *h;
      uint64_t n = Header::nrefs(hw);
      tally.lines += map.lines(h - n, n + 1);
      if (lines_homed_apart) tally.line_hops += map.line_hops(c, h - n, n + 1);
      update_slots(c, h, n, at, tally);
      w = h + 1 + Header::raw_words(hw);
    }
    tally.add_to(u_.cores_[c]->counters);
  }

  [[gnu::always_inline]] void update_slots(unsigned c, Word* h, uint64_t n, const Lookups& at, Tally& tally) {
    Value* slots = ref_slots_begin(h, n);
    for (uint64_t i = 0; i < n; ++i) update(c, slots + i, at, tally);
  }

  // The lines of the header and slots of an object outside the core's
  // partitions: the pinned and huge objects any thread claims, whose lines
  // may be homed elsewhere even under partition homing.
  void count_lines(unsigned c, const Word* begin, uint64_t words, Tally& tally) {
    const PartitionMap& map = u_.map_;
    if (!map.contains(begin)) return;  // pinned objects lie outside the partitions
    tally.lines += map.lines(begin, words);
    uint32_t p = map.partition_of(begin);
    if (map.homing() == Homing::kLines || map.host(p) != c || p != map.partition_of(begin + words - 1))
      tally.line_hops += map.line_hops(c, begin, words);
  }

  [[gnu::always_inline]] void update(unsigned c, Value* slot, const Lookups& at, Tally& tally) {
    Value v = *slot;
    if (!v.is_ref()) return;
    Word* h = v.as_ref();
    if (!at.hosts.contains(h)) return;
    tally.slots++;
    unsigned host = at.hosts.host_of(h);
    if (host == c) {
      Word* moved = at.moves.forward(h);
      if (moved != h) {
        *slot = Value::ref(moved);
        tally.local_hits++;
      }
      return;
    }
    if (Word* moved = shared_[host]->find(h)) {
      *slot = Value::ref(moved);
      tally.shared_hits++;
      return;
    }
    query(c, host, slot, h);
  }

  void query(unsigned from, unsigned to, Value* slot, Word* old) {
    if (recording_) [[unlikely]]
      recording_->message(from, old, to, observe::MessageKind::kPtrQuery);
    u_.cores_[from]->counters.queries++;
    Batch*& b = out_[to];
    if (b && b->from != from) send(to);
    if (!b) {
      b = new Batch;
      b->from = from;
      u_.cores_[from]->outstanding++;
    }
    b->queries[b->count++] = {slot, old};
    if (b->count == kBatchQueries) send(to);
  }

  void send(unsigned to) {
    u_.cores_[to]->queries.send(out_[to]);
    out_[to] = nullptr;
  }

  void flush() {
    for (unsigned to = 0; to < out_.size(); ++to)
      if (out_[to]) send(to);
  }

  // `ptrquery`: the old address's new location from this core's full table.
  void answer(unsigned c) {
    Core& core = *u_.cores_[c];
    for (Batch* b = core.queries.take_all(); b;) {
      Batch* next = b->next;
      for (uint32_t i = 0; i < b->count; ++i) b->queries[i].old = forwarding_.forward(b->queries[i].old);
      core.counters.queries_answered += b->count;
      u_.cores_[b->from]->responses.send(b);
      b = next;
    }
  }

  void take_responses(unsigned c) {
    Core& core = *u_.cores_[c];
    for (Batch* b = core.responses.take_all(); b;) {
      Batch* next = b->next;
      for (uint32_t i = 0; i < b->count; ++i) *b->queries[i].slot = Value::ref(b->queries[i].old);
      core.outstanding--;
      delete b;
      b = next;
    }
  }

  UpdatePhase& u_;
  const ForwardingMap& forwarding_;
  const std::vector<const AddressTable*>& shared_;
  std::atomic<unsigned>& completed_;
  std::vector<unsigned> mine_;
  std::vector<Batch*> out_;        // per destination core, the batch being filled
  observe::Recording* recording_;  // the collection's, if it is recorded (--gc-animate)
};

UpdatePhase::UpdatePhase(const PartitionMap& map, const Mesh& mesh,
                         const std::vector<PartitionState>& partitions)
    : map_(map), mesh_(mesh), partitions_(partitions) {
  for (unsigned c = 0; c < mesh.cores(); ++c) cores_.push_back(std::make_unique<Core>());
}

UpdatePhase::~UpdatePhase() = default;

void UpdatePhase::run(parallel::WorkerPool& pool, uint32_t frontier, std::span<const RootGroup> roots,
                      std::span<Word* const> extra, const ForwardingMap& forwarding,
                      const std::vector<const AddressTable*>& shared, observe::Recorder& events) {
  frontier_ = frontier;
  for (auto& core : cores_) {
    core->counters = UpdateCounters{};
    core->outstanding = 0;
    core->completed = false;
  }
  std::atomic<unsigned> completed{0};
  std::atomic<size_t> next_extra{0};
  parallel::RootClaim claim{roots};
  std::vector<std::unique_ptr<Runner>> runners;
  for (unsigned t = 0; t < pool.size(); ++t)
    runners.push_back(std::make_unique<Runner>(*this, t, pool.size(), forwarding, shared, completed));
  auto job = [&](unsigned w) {
    events.phase(w, "update", [&] { runners[w]->run(claim, extra, next_extra); });
  };
  pool.run(job);
}

}  // namespace gc::cacheaware
