#include "gc/collectors/cacheaware/mark.h"

#include <atomic>

#include "gc/observe/recording.h"
#include "gc/parallel/backoff.h"

namespace gc::cacheaware {

namespace {

// Objects a core scans before it looks at its mailbox again and lets the
// thread's other cores run: messages wait at most this long.
constexpr unsigned kScanSlice = 256;

// What a core counts while it marks, kept in registers: the headers it
// writes could otherwise alias its counters in memory.
struct Tally {
  uint64_t objects = 0, objects_at_home = 0, words = 0, lines = 0, line_hops = 0;
  void add_to(MarkCounters& counters) const {
    counters.objects += objects;
    counters.objects_at_home += objects_at_home;
    counters.words += words;
    counters.lines += lines;
    counters.line_hops += line_hops;
  }
};

size_t cache_index(const Word* ref, unsigned mask) {
  uint64_t x = reinterpret_cast<uintptr_t>(ref) >> 3;
  x *= 0x9E37'79B9'7F4A'7C15ull;
  return static_cast<size_t>(x >> 32) & mask;
}

}  // namespace

// One GC thread, running the cores c with c % threads == its index.
class MarkPhase::Runner {
 public:
  Runner(MarkPhase& phase, unsigned index)
      : m_(phase),
        index_(index),
        out_(phase.mesh_.cores(), nullptr),
        recording_(observe::Recording::active()) {
    for (unsigned c = index; c < phase.mesh_.cores(); c += phase.threads_) mine_.push_back(c);
  }
  ~Runner() {
    for (Batch* b : out_) delete b;
  }

  void run(std::span<const RootGroup> roots) {
    if (mine_.empty()) return;
    scan_roots(roots);
    loop();
  }

 private:
  // L101: "the collector on the core begins the mark phase by scanning its
  // local heap roots". The VM's roots are not any core's, so root group i
  // is core i mod C's: a fixed share, so that the messages a collection
  // sends do not depend on which thread got to a group first.
  void scan_roots(std::span<const RootGroup> roots) {
    unsigned cores = m_.mesh_.cores();
    HostLookup hosts = m_.map_.lookup();
    for (unsigned c : mine_)
      for (size_t i = c; i < roots.size(); i += cores)
        for (size_t k = 0; k < roots[i].count; ++k) reach(c, roots[i].slots[k], hosts);
  }

  void loop() {
    parallel::FinishedVerify& term = m_.termination_;
    bool master = mine_.front() == 0;
    parallel::Backoff backoff;
    for (;;) {
      bool busy = false;
      for (unsigned c : mine_) {
        receive(c);
        busy |= scan(c, kScanSlice);
      }
      if (!busy) flush();
      for (unsigned c : mine_) {
        Core& core = *m_.cores_[c];
        bool idle = !busy && !core.has_work() && core.inbox.looks_empty();
        parallel::FinishedVerify::Counts counts{core.counters.sent, core.counters.received};
        if (idle && c != 0 && (!core.has_reported || !(counts == core.reported))) {
          term.finished(c, counts);
          core.reported = counts;
          core.has_reported = true;
        }
        term.answer_verify(c, idle, counts);
      }
      if (master) {
        Core& core = *m_.cores_[0];
        bool idle = !busy && !core.has_work() && core.inbox.looks_empty();
        if (term.master_poll(idle, {core.counters.sent, core.counters.received})) return;
      }
      if (term.terminated()) return;
      if (busy || received_)
        backoff.reset();
      else
        backoff.wait();
      received_ = false;
    }
  }

  // L101: a `mark` message for an object not yet marked queues it and is
  // recorded, up to the list's bound.
  void receive(unsigned c) {
    Core& core = *m_.cores_[c];
    for (Batch* b = core.inbox.take_all(); b;) {
      core.counters.received += b->count;
      received_ = true;
      Tally tally;
      for (uint32_t i = 0; i < b->count; ++i) {
        Word* h = b->refs[i];
        if (mark_local(c, h, tally)) {
          if (Header::nrefs(*h)) core.queue.push_back(reinterpret_cast<uintptr_t>(h) | kMarkedEntry);
          if (core.requests.size() < m_.request_list_) {
            core.requests.push_back(h);
            core.counters.requests_kept++;
          } else {
            core.counters.requests_dropped++;
          }
        }
      }
      tally.add_to(core.counters);
      Batch* next = b->next;
      delete b;
      b = next;
    }
  }

  // Scans up to `budget` queued objects; true if some are left.
  bool scan(unsigned c, unsigned budget) {
    Core& core = *m_.cores_[c];
    Tally tally;
    bool left = scan_slice(c, core, budget, tally);
    tally.add_to(core.counters);
    return left;
  }

  bool scan_slice(unsigned c, Core& core, unsigned budget, Tally& tally) {
    HostLookup hosts = m_.map_.lookup();
    for (;;) {
      while (core.window_count < kWindow && !core.queue.empty()) {
        uintptr_t e = core.queue.back();
        core.queue.pop_back();
        __builtin_prefetch(reinterpret_cast<const void*>(e & ~kMarkedEntry), 1);
        core.window[(core.window_head + core.window_count++) % kWindow] = e;
      }
      if (!core.window_count) return false;
      if (budget == 0) return true;
      uintptr_t e = core.window[core.window_head];
      core.window_head = (core.window_head + 1) % kWindow;
      core.window_count--;
      Word* h = reinterpret_cast<Word*>(e & ~kMarkedEntry);
      if (!(e & kMarkedEntry) && !mark_local(c, h, tally)) continue;
      budget--;
      if (recording_) [[unlikely]]
        recording_->scan(c, h);
      // Atomic: a pinned object's header may be getting another thread's
      // mark bit (mark_unhosted) while this one scans it.
      uint64_t n = Header::nrefs(std::atomic_ref<Word>(*h).load(std::memory_order_relaxed));
      Value* slots = ref_slots_begin(h, n);
      for (uint64_t i = n; i-- > 0;) reach(c, slots[i], hosts);
    }
  }

  [[gnu::always_inline]] void reach(unsigned c, Value v, const HostLookup& hosts) {
    if (!v.is_ref()) return;
    Word* h = v.as_ref();
    if (!hosts.contains(h)) {
      mark_unhosted(c, h);
      return;
    }
    unsigned host = hosts.host_of(h);
    if (host == c) {
      m_.cores_[c]->queue.push_back(reinterpret_cast<uintptr_t>(h));
      return;
    }
    if (m_.cache_hit_or_insert(c, h)) {
      m_.cores_[c]->counters.suppressed++;
      return;
    }
    send(c, host, h);
  }

  // Only the host marks an object in a partition, so its mark bit needs no
  // atomic operation (L194 of Flood et al. makes the same point).
  // The lines counted are what marking reads and writes: the header and
  // the slots below it. Under partition homing their home is this core,
  // the host, so the hops are zero without asking.
  [[gnu::always_inline]] bool mark_local(unsigned c, Word* h, Tally& tally) {
    Word hw = *h;
    if (Header::is_marked(hw)) return false;
    *h = hw | Header::kMarkBit;
    if (recording_) [[unlikely]]
      recording_->grey(c, h);
    tally.objects++;
    tally.objects_at_home += (hw & kDisplacedBit) == 0;
    tally.words += object_words_when_moved(hw);
    uint64_t n = Header::nrefs(hw);
    tally.lines += m_.map_.lines(h - n, n + 1);
    if (m_.map_.homing() == Homing::kLines) tally.line_hops += m_.map_.line_hops(c, h - n, n + 1);
    return true;
  }

  void mark_unhosted(unsigned c, Word* h) {
    Core& core = *m_.cores_[c];
    Word old = std::atomic_ref<Word>(*h).fetch_or(Header::kMarkBit, std::memory_order_relaxed);
    if (Header::is_marked(old)) return;
    if (recording_) [[unlikely]]
      recording_->grey(c, h);
    if (Header::nrefs(old)) core.queue.push_back(reinterpret_cast<uintptr_t>(h) | kMarkedEntry);
  }

  void send(unsigned from, unsigned to, Word* h) {
    if (recording_) [[unlikely]]
      recording_->message(from, h, to, observe::MessageKind::kMark);
    MarkCounters& counters = m_.cores_[from]->counters;
    counters.sent++;
    counters.hops += m_.mesh_.hops(from, to);
    Batch*& b = out_[to];
    if (!b) b = new Batch;
    b->refs[b->count++] = h;
    if (b->count == kBatchRefs) {
      m_.cores_[to]->inbox.send(b);
      b = nullptr;
    }
  }

  void flush() {
    for (unsigned to = 0; to < out_.size(); ++to)
      if (Batch* b = out_[to]) {
        m_.cores_[to]->inbox.send(b);
        out_[to] = nullptr;
      }
  }

  MarkPhase& m_;
  unsigned index_;
  std::vector<unsigned> mine_;
  std::vector<Batch*> out_;        // per destination core, the batch being filled
  bool received_ = false;          // since the last wait
  observe::Recording* recording_;  // the collection's, if it is recorded (--gc-animate)
};

MarkPhase::MarkPhase(const PartitionMap& map, const Mesh& mesh, unsigned threads, unsigned ref_cache_entries,
                     unsigned request_list)
    : map_(map),
      mesh_(mesh),
      threads_(threads),
      cache_mask_(ref_cache_entries - 1),
      request_list_(request_list) {
  for (unsigned c = 0; c < mesh.cores(); ++c) {
    cores_.push_back(std::make_unique<Core>());
    cores_.back()->cache.assign(ref_cache_entries, nullptr);
  }
}

MarkPhase::~MarkPhase() = default;

bool MarkPhase::cache_hit_or_insert(unsigned core, const Word* ref) {
  const Word*& entry = cores_[core]->cache[cache_index(ref, cache_mask_)];
  if (entry == ref) return true;
  entry = ref;
  return false;
}

void MarkPhase::run(parallel::WorkerPool& pool, std::span<const RootGroup> roots, observe::Recorder& events) {
  for (auto& core : cores_) {
    core->queue.clear();
    core->window_head = core->window_count = 0;
    std::fill(core->cache.begin(), core->cache.end(), nullptr);
    core->requests.clear();
    core->counters = MarkCounters{};
    core->has_reported = false;
    core->reported = {};
  }
  termination_.start(mesh_.cores());
  std::vector<std::unique_ptr<Runner>> runners;
  for (unsigned t = 0; t < pool.size(); ++t) runners.push_back(std::make_unique<Runner>(*this, t));
  auto job = [&](unsigned w) { events.phase(w, "mark", [&] { runners[w]->run(roots); }); };
  pool.run(job);
}

}  // namespace gc::cacheaware
