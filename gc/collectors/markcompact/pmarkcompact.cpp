// pMarkcompact (pmarkcompact.h), in the same order: the per-thread Worker's
// phases, then the collection that runs them.
#include "gc/collectors/markcompact/pmarkcompact.h"

#include <algorithm>
#include <cstring>

#include "gc/collectors/markcompact/markcompact_options.h"
#include "gc/heap/lab.h"
#include "gc/observe/common_counters.h"
#include "gc/parallel/clock.h"
#include "gc/parallel/tracer.h"

namespace gc {

namespace {

constexpr observe::Counter kObjectsForwarded{"objects forwarded", observe::Unit::kObjects};
constexpr observe::Counter kUnitsSwept{"units swept", observe::Unit::kUnits};
constexpr observe::Counter kDensePrefixUnits{"dense prefix units", observe::Unit::kUnits};
constexpr observe::Counter kDenseEndUnits{"dense end units", observe::Unit::kUnits};
constexpr observe::Counter kDensePrefixBytes{"dense prefix bytes", observe::Unit::kBytes,
                                             observe::CounterKind::kPeak};
constexpr observe::Counter kDenseEndBytes{"dense end bytes", observe::Unit::kBytes,
                                          observe::CounterKind::kPeak};
constexpr observe::Counter kDenseEndDeadBytes{"dense end dead bytes", observe::Unit::kBytes,
                                              observe::CounterKind::kPeak};
constexpr observe::Counter kSlotsRedirected{"slots redirected", observe::Unit::kSlots};
constexpr observe::Counter kCardsDirtied{"cards dirtied", observe::Unit::kCards};
constexpr observe::Counter kDensePrefixDecisionNs{"dense prefix decision ns", observe::Unit::kNs};

using parallel::now_ns;

// Objects up to this size are moved by a word loop: most objects are a few
// words, for which a call to memmove costs more than the copy.
constexpr uint64_t kInlineMoveWords = 8;

// Header words are read by many threads while one of them may set (mark)
// or clear (redirect) the mark bit: atomic, relaxed (plain moves on x86).
Word load_header(const Word* h) {
  return std::atomic_ref<Word>(*const_cast<Word*>(h)).load(std::memory_order_relaxed);
}
void store_header(Word* h, Word w) { std::atomic_ref<Word>(*h).store(w, std::memory_order_relaxed); }

}  // namespace

// A unit's effect on the gap between an object and its destination, in
// compaction order (pmarkcompact.h): g -> max(g + a, b).
struct GapFn {
  int64_t a = 0;
  int64_t b = 0;
  int64_t apply(int64_t g) const { return std::max(g + a, b); }
  // this, then next.
  GapFn then(GapFn next) const { return GapFn{a + next.a, std::max(b + next.a, next.b)}; }
  static GapFn dead(uint64_t words) { return GapFn{static_cast<int64_t>(words), 0}; }
  static GapFn hashed() { return GapFn{-1, 0}; }
};

struct ParallelMarkCompact::Space {
  Word* begin;
  Word* end;
  unsigned first_unit;
  unsigned units;
  uint64_t unit_words;
};

struct ParallelMarkCompact::Unit {
  Word* begin = nullptr;  // object aligned after combine_unit_starts
  Word* end = nullptr;
  uint64_t live_words = 0;
  uint64_t hashed = 0;  // live objects in state kHashed
  GapFn up_order;       // effect walking up (address order): regions that slide down
  GapFn down_order;     // effect walking down: regions that slide up
  bool slides_up = false;
  bool stays = false;          // dense: the prefix or a region's dense end, not compacted
  int64_t gap_in = 0;          // the gap where the unit's compaction starts
  Word* dest_begin = nullptr;  // new address of the unit's first live word
  uint64_t words() const { return static_cast<uint64_t>(end - begin); }
};

struct ParallelMarkCompact::Region {
  unsigned first_unit = 0;
  unsigned end_unit = 0;
  Word* begin = nullptr;
  Word* end = nullptr;
  bool slides_up = false;
  WordRange compacted;  // its live data after compaction, dense end included
  WordRange packed;     // where the live data of its moving units ends up
};

// One GC thread

class ParallelMarkCompact::Worker : public parallel::Tracer<Worker> {
 public:
  Worker(ParallelMarkCompact& mc, unsigned id)
      : Tracer(parallel::TraceShared{mc.deques_, mc.overflow_, mc.termination_}, id), mc_(mc) {}

  void prepare();
  void mark();
  void sweep();
  void forward();
  void redirect();
  void compact();

  std::vector<Word*> unit_min;  // per unit: the lowest live object start this thread marked
  uint64_t objects_marked = 0;
  uint64_t units_swept = 0;
  uint64_t objects_forwarded = 0;
  uint64_t slots_redirected = 0;
  uint64_t cards_dirtied = 0;

 private:
  friend class parallel::Tracer<Worker>;

  // --- mark (section 5.1): the shared tracer's mark-and-count policy.
  [[gnu::always_inline]] void trace_slot(const Value* slot) {
    uint64_t bits = slot->bits;
    if ((bits & Value::kTagMask) != Value::kRefTag) return;
    Word* h = reinterpret_cast<Word*>(bits & ~Value::kTagMask);
    Word hw = load_header(h);
    if (Header::is_marked(hw)) return;
    if (!note_live(h, hw)) return;
    // L194: "marking is idempotent and therefore requires no
    // synchronization". Two threads may both store the marked header (the
    // same word) and both scan the object, which changes nothing.
    store_header(h, hw | Header::kMarkBit);
    objects_marked++;
    if (recording_) [[unlikely]]
      recording_->grey(id(), h);
    if (uint64_t n = Header::nrefs(hw)) defer(parallel::Task::whole(h, n));
  }

  // Records a walkable space's live object start for its unit boundary;
  // false for an address in no collected space.
  bool note_live(Word* h, Word hw) {
    for (const Space& s : mc_.spaces_) {
      if (static_cast<uint64_t>(h - s.begin) < static_cast<uint64_t>(s.end - s.begin)) {
        Word* start = h - words_below(Header::nrefs(hw));
        Word*& m = unit_min[s.first_unit + static_cast<uint64_t>(start - s.begin) / s.unit_words];
        if (start < m) m = start;
        return true;
      }
    }
    if (static_cast<uint64_t>(h - los_begin_) < los_words_) {
      stats_.large_objects_marked++;
      return true;
    }
    return false;
  }

  // --- sweep, forward (section 5.2)
  void sweep_unit(Unit& u);
  void forward_unit(unsigned index);
  void forward_same_sizes(const Unit& u, std::vector<Word>& side);
  void forward_growing_down(const Unit& u, std::vector<Word>& side);
  void forward_growing_up(const Unit& u, std::vector<Word>& side);
  void install(Word* start, Word* h, Word hw, Word* new_start, std::vector<Word>& side);

  // --- redirect (section 5.3)
  template <bool kOldHolder>
  void redirect_slots(Word* h, Word* new_h, uint64_t nrefs) {
    Value* slots = ref_slots_begin(h, nrefs);
    uint64_t before = slots_redirected;
    for (uint64_t i = 0; i < nrefs; ++i) {
      uint64_t bits = slots[i].bits;
      if ((bits & Value::kTagMask) != Value::kRefTag) continue;
      Word* t = reinterpret_cast<Word*>(bits & ~Value::kTagMask);
      if (static_cast<uint64_t>(t - old_begin_) < old_words_) {
        Word w = load_header(t);
        if (Header::is_forwarded(w)) {
          slots[i].bits = Value::kRefTag | w;
          slots_redirected++;
        }
      } else if (kOldHolder && card_base_ && in_young(t)) {
        // The slot's card after compaction: the slot keeps its offset from
        // the header (slots[i] is slot nrefs - 1 - i, nrefs - i words below).
        uintptr_t at = reinterpret_cast<uintptr_t>(new_h - nrefs + i);
        std::atomic_ref<uint8_t>(card_base_[at >> kCardShift]).store(kCardDirty, std::memory_order_relaxed);
        cards_dirtied++;
      }
    }
    if (recording_) [[unlikely]]
      if (slots_redirected != before) recording_->redirect(id(), h, slots_redirected - before);
  }
  bool in_young(const Word* p) const {
    for (size_t s = 1; s < mc_.spaces_.size(); ++s)
      if (p >= mc_.spaces_[s].begin && p < mc_.spaces_[s].end) return true;
    return false;
  }
  void redirect_root_group(const RootGroup& g);
  void redirect_old_unit(unsigned index);
  void redirect_young_chunk(unsigned index);
  void redirect_large(const LargeObjectSpace::Object& o);

  // --- compact (section 5.4)
  void compact_region(Region& r);
  template <bool kUp>
  void move(Word* start, Word* h, Word hw, Word* new_h);

  // The object at `start` as the forward phase left it: its header address
  // and header, and, if it was forwarded, where it goes (an object hashed
  // at its address may be forwarded to itself: it grows in place).
  struct Found {
    Word* h;
    Word hw;
    Word* new_h;
    bool forwarded;
  };
  static Found decode(Word* start, const Word*& side) {
    Word w = *start;
    if ((w & Header::kTagMask) == Header::kCountTag) {
      Word* h = start + 1 + (w >> 2);
      return Found{h, *h, h, false};
    }
    if ((w & Header::kTagMask) == Header::kHeaderTag) {
      uint64_t n = Header::nrefs(w);
      if (n == 0) return Found{start, w, start, false};
      Word* h = start + 1 + n;  // a stashed header: the header slot holds the forwarding address
      return Found{h, w, reinterpret_cast<Word*>(*h), true};
    }
    return Found{start, *side++, reinterpret_cast<Word*>(w), true};
  }

  template <class Claim>
  void claim_each(size_t count, Claim&& claim) {
    for (;;) {
      size_t i = mc_.next_claim_.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) return;
      claim(i);
    }
  }

  ParallelMarkCompact& mc_;
  Word* old_begin_ = nullptr;
  uint64_t old_words_ = 0;
  Word* los_begin_ = nullptr;
  uint64_t los_words_ = 0;
  uint8_t* card_base_ = nullptr;
  // Scratch, kept between collections: a unit's objects in address order,
  // for walking it downward.
  struct Item {
    Word* start;
    Word* h;
    Word hw;
    Word* new_h;
  };
  std::vector<Item> items_;
};

void ParallelMarkCompact::Worker::prepare() {
  unit_min.assign(mc_.units_.size(), reinterpret_cast<Word*>(UINTPTR_MAX));
  begin_trace();
  objects_marked = units_swept = objects_forwarded = slots_redirected = cards_dirtied = 0;
  const Input& in = *mc_.in_;
  old_begin_ = in.old_space.begin;
  old_words_ = in.old_space.words();
  los_begin_ = in.large.begin();
  los_words_ = static_cast<uint64_t>(in.large.frontier() - los_begin_);
  card_base_ = in.card_base;
}

// --- mark ------------------------------------------------------------------

void ParallelMarkCompact::Worker::mark() {
  claim_roots(mc_.mark_roots_);
  trace();
  observe::Recorder& ev = mc_.events_;
  ev.count(id(), observe::kObjectsMarked, objects_marked);
  ev.count(id(), observe::kLargeObjectsMarked, stats_.large_objects_marked);
  ev.count(id(), observe::kRootGroups, stats_.root_groups_claimed);
  report_work_sharing(ev);
}

// --- sweep (pass A) ---------------------------------------------------------

void ParallelMarkCompact::Worker::sweep() {
  claim_each(mc_.old_units_, [&](size_t i) { sweep_unit(mc_.units_[i]); });
  mc_.events_.count(id(), kUnitsSwept, units_swept);
}

// L198-200: "for each unit, the thread traverses the objects, counting the
// number of bytes of live data in the unit, and coalescing contiguous
// regions of dead objects into single blocks traversable in constant time."
void ParallelMarkCompact::Worker::sweep_unit(Unit& u) {
  units_swept++;
  uint64_t live = 0;
  uint64_t hashed = 0;
  GapFn up, down;
  Word* dead = nullptr;
  auto end_dead_run = [&](Word* p) {
    fill_dead_space(dead, p);
    GapFn d = GapFn::dead(static_cast<uint64_t>(p - dead));
    up = up.then(d);
    down = d.then(down);
    dead = nullptr;
  };
  for (Word* p = u.begin; p < u.end;) {
    Word* h = header_from_start(p);
    Word hw = *h;
    uint64_t words = object_words(hw);
    if (Header::is_marked(hw)) {
      if (dead) end_dead_run(p);
      live += words;
      if (grows_when_moved(hw)) [[unlikely]] {
        hashed++;
        up = up.then(GapFn::hashed());
        down = GapFn::hashed().then(down);
      }
    } else if (!dead) {
      dead = p;
    }
    p += words;
  }
  if (dead) end_dead_run(u.end);
  u.live_words = live;
  u.hashed = hashed;
  u.up_order = up;
  u.down_order = down;
}

// --- forward (pass B) -------------------------------------------------------

void ParallelMarkCompact::Worker::forward() {
  unsigned first = mc_.dense_prefix_units_;
  claim_each(mc_.old_units_ - first, [&](size_t i) { forward_unit(first + static_cast<unsigned>(i)); });
  mc_.events_.count(id(), kObjectsForwarded, objects_forwarded);
}

// A moving object keeps its header where the forwarding address does not
// need it (pmarkcompact.h): in its count word, or in the unit's side list.
void ParallelMarkCompact::Worker::install(Word* start, Word* h, Word hw, Word* new_start,
                                          std::vector<Word>& side) {
  uint64_t n = Header::nrefs(hw);
  if (n) {
    *start = hw;
  } else {
    side.push_back(hw);
  }
  *h = reinterpret_cast<Word>(new_start + words_below(n));
  objects_forwarded++;
  if (recording_) [[unlikely]]
    recording_->forward(id(), h, new_start + words_below(n));
}

// L204: "GC threads dynamically claim units and install forwarding pointers
// in all live objects within the unit." After pass A a unit is live objects
// (marked) and fillers (unmarked). Where each goes depends on whether the
// unit holds objects hashed at their address, which grow when they move,
// and on the direction its region slides (L188).
void ParallelMarkCompact::Worker::forward_unit(unsigned index) {
  Unit& u = mc_.units_[index];
  if (u.stays) return;
  std::vector<Word>& side = mc_.side_headers_[index];
  if (u.hashed == 0) {
    forward_same_sizes(u, side);
  } else if (!u.slides_up) {
    forward_growing_down(u, side);
  } else {
    forward_growing_up(u, side);
  }
}

// Every object keeps its size: the live objects go end to end from the
// unit's destination (L202-204), in address order whichever way the region
// slides.
void ParallelMarkCompact::Worker::forward_same_sizes(const Unit& u, std::vector<Word>& side) {
  Word* dest = u.dest_begin;
  for (Word* p = u.begin; p < u.end;) {
    Word* h = header_from_start(p);
    Word hw = *h;
    uint64_t words = object_words(hw);
    if (Header::is_marked(hw)) {
      if (dest != p) install(p, h, hw, dest, side);
      dest += words;
    }
    p += words;
  }
}

// A region sliding down with hashed objects: follow the gap in address
// order, from the gap the unit starts with; dead words widen it, a hashed
// object that moves grows one word and narrows it.
void ParallelMarkCompact::Worker::forward_growing_down(const Unit& u, std::vector<Word>& side) {
  int64_t gap = u.gap_in;
  for (Word* p = u.begin; p < u.end;) {
    Word* h = header_from_start(p);
    Word hw = *h;
    uint64_t words = object_words(hw);
    if (!Header::is_marked(hw)) {
      gap += static_cast<int64_t>(words);
    } else if (gap > 0) {
      install(p, h, hw, p - gap, side);
      if (grows_when_moved(hw)) gap--;
    }
    p += words;
  }
}

// A region sliding up with hashed objects: the gap is followed downward
// over the unit's objects, listed first (a walk only goes up); forwarding
// is installed afterwards, in address order like the side list.
void ParallelMarkCompact::Worker::forward_growing_up(const Unit& u, std::vector<Word>& side) {
  items_.clear();
  for (Word* p = u.begin; p < u.end;) {
    Word* h = header_from_start(p);
    Word hw = *h;
    items_.push_back(Item{p, h, hw, nullptr});
    p += object_words(hw);
  }
  int64_t gap = u.gap_in;
  Word* above = u.end;  // the start of the object above, in the old layout
  for (size_t k = items_.size(); k-- > 0;) {
    Item& it = items_[k];
    uint64_t words = static_cast<uint64_t>(above - it.start);
    above = it.start;
    if (!Header::is_marked(it.hw)) {
      gap += static_cast<int64_t>(words);
      continue;
    }
    if (gap == 0) continue;
    // With a gap of one word, a hashed object grows into it in place.
    bool grows = grows_when_moved(it.hw);
    it.new_h = it.start + gap - (grows ? 1 : 0);  // the new start
    if (grows) gap--;
  }
  for (const Item& it : items_)
    if (it.new_h) install(it.start, it.h, it.hw, it.new_h, side);
}

// --- redirect ---------------------------------------------------------------

// Task kinds in ParallelMarkCompact::redirect_tasks_ (kind in the top bits).
enum : uint32_t { kOldUnitTask = 0, kYoungChunkTask = 1u << 30, kLargeTask = 2u << 30, kRootTask = 3u << 30 };
constexpr uint32_t kTaskIndexMask = (1u << 30) - 1;

void ParallelMarkCompact::Worker::redirect() {
  const std::vector<uint32_t>& tasks = mc_.redirect_tasks_;
  claim_each(tasks.size(), [&](size_t i) {
    uint32_t t = tasks[i];
    uint32_t index = t & kTaskIndexMask;
    switch (t & ~kTaskIndexMask) {
      case kOldUnitTask:
        redirect_old_unit(index);
        break;
      case kYoungChunkTask:
        redirect_young_chunk(index);
        break;
      case kLargeTask:
        redirect_large(mc_.in_->large.objects()[index]);
        break;
      default:
        redirect_root_group(mc_.root_groups_[index]);
        break;
    }
  });
  mc_.events_.count(id(), kSlotsRedirected, slots_redirected);
  mc_.events_.count(id(), kCardsDirtied, cards_dirtied);
}

void ParallelMarkCompact::Worker::redirect_root_group(const RootGroup& g) {
  for (size_t k = 0; k < g.count; ++k) {
    Value* slot = g.slots + k;
    if (!slot->is_ref()) continue;
    Word* t = slot->as_ref();
    if (static_cast<uint64_t>(t - old_begin_) >= old_words_) continue;
    Word w = load_header(t);
    if (Header::is_forwarded(w)) {
      slot->bits = Value::kRefTag | w;
      slots_redirected++;
    }
  }
}

// Objects that stay have their mark cleared here (threads reading them as
// targets only test the tag); objects that move get theirs back unmarked
// when they are moved.
void ParallelMarkCompact::Worker::redirect_old_unit(unsigned index) {
  Unit& u = mc_.units_[index];
  const Word* side = mc_.side_headers_[index].data();
  for (Word* p = u.begin; p < u.end;) {
    Found f = decode(p, side);
    if (!f.forwarded) {
      if (Header::is_marked(f.hw)) {
        store_header(f.h, f.hw & ~Header::kMarkBit);
        redirect_slots<true>(f.h, f.h, Header::nrefs(f.hw));
      }
    } else {
      redirect_slots<true>(f.h, f.new_h, Header::nrefs(f.hw));
    }
    p = f.h + 1 + Header::raw_words(f.hw);
  }
}

void ParallelMarkCompact::Worker::redirect_young_chunk(unsigned index) {
  Unit& u = mc_.units_[index];
  for (Word* p = u.begin; p < u.end;) {
    Word* h = header_from_start(p);
    Word hw = *h;
    if (Header::is_marked(hw)) {
      *h = hw & ~Header::kMarkBit;
      redirect_slots<false>(h, h, Header::nrefs(hw));
    }
    p = h + 1 + Header::raw_words(hw);
  }
}

void ParallelMarkCompact::Worker::redirect_large(const LargeObjectSpace::Object& o) {
  Word hw = *o.header;
  if (Header::is_marked(hw)) redirect_slots<false>(o.header, o.header, Header::nrefs(hw));
}

// --- compact ----------------------------------------------------------------

void ParallelMarkCompact::Worker::compact() {
  std::vector<Region>& regions = mc_.regions_;
  const Input& in = *mc_.in_;
  // One task per region, then one per unit left in place (sweep's fillers
  // changed where objects start there, so the hook walks it too; per unit,
  // so that a large dense prefix is not one thread's walk).
  claim_each(regions.size() + mc_.old_units_, [&](size_t i) {
    if (i >= regions.size()) {
      const Unit& u = mc_.units_[i - regions.size()];
      if (u.stays && u.begin < u.end && in.on_occupied_run) in.on_occupied_run(id(), u.begin, u.end);
      return;
    }
    compact_region(regions[i]);
    if (!regions[i].packed.empty() && in.on_occupied_run)
      in.on_occupied_run(id(), regions[i].packed.begin, regions[i].packed.end);
  });
  mc_.events_.count(id(), observe::kObjectsMoved, stats_.objects_copied);
  mc_.events_.count(id(), observe::kBytesMoved, stats_.bytes_copied);
}

// Section 5.4: "Each thread claims a region and slides live objects in its
// own region only." A region sliding down is walked up, so every object's
// destination lies below what is still to be moved; a region sliding up is
// walked down, unit by unit (each unit is walked up first to find its
// objects: a linear walk only goes up).
void ParallelMarkCompact::Worker::compact_region(Region& r) {
  if (!r.slides_up) {
    for (unsigned k = r.first_unit; k < r.end_unit; ++k) {
      Unit& u = mc_.units_[k];
      if (u.stays) continue;
      const Word* side = mc_.side_headers_[k].data();
      for (Word* p = u.begin; p < u.end;) {
        Found f = decode(p, side);
        Word* next = f.h + 1 + Header::raw_words(f.hw);
        if (f.forwarded) move<false>(p, f.h, f.hw, f.new_h);
        p = next;
      }
    }
    return;
  }
  for (unsigned k = r.end_unit; k-- > r.first_unit;) {
    Unit& u = mc_.units_[k];
    if (u.stays) continue;
    const Word* side = mc_.side_headers_[k].data();
    items_.clear();
    for (Word* p = u.begin; p < u.end;) {
      Found f = decode(p, side);
      if (f.forwarded) items_.push_back(Item{p, f.h, f.hw, f.new_h});
      p = f.h + 1 + Header::raw_words(f.hw);
    }
    for (size_t i = items_.size(); i-- > 0;)
      move<true>(items_[i].start, items_[i].h, items_[i].hw, items_[i].new_h);
  }
}

// The whole object moves (it may overlap itself: a small one word by word
// in the direction of the slide, a bigger one with memmove); then its count
// word and its unmarked header are put back, and an object hashed at its
// old address gets that hash as a new last raw word.
template <bool kUp>
void ParallelMarkCompact::Worker::move(Word* start, Word* h, Word hw, Word* new_h) {
  uint64_t n = Header::nrefs(hw);
  uint64_t words = object_words(hw);
  Word* new_start = new_h - words_below(n);
  if (words <= kInlineMoveWords) {
    if (kUp) {
      for (uint64_t i = words; i-- > 0;) new_start[i] = start[i];
    } else {
      for (uint64_t i = 0; i < words; ++i) new_start[i] = start[i];
    }
  } else {
    std::memmove(new_start, start, words * kWordSize);
  }
  if (n) *new_start = Header::count_word(n);
  hw &= ~Header::kMarkBit;
  if (grows_when_moved(hw)) [[unlikely]] {
    words += growth_when_moved(hw);
    hw = grow_hash_word(new_h, hw, mc_.in_->hash_of_address(h));
  }
  *new_h = hw;
  stats_.objects_copied++;
  stats_.bytes_copied += words * kWordSize;
  if (recording_) [[unlikely]]
    recording_->move(id(), h, new_h);
}

// The collection

ParallelMarkCompact::ParallelMarkCompact(parallel::WorkerPool& pool, observe::Recorder& events,
                                         const MarkCompactOptions& options)
    : pool_(pool), events_(events), options_(options) {
  if (options_.units_per_thread == 0) options_.units_per_thread = 1;
  uint64_t tasks = parallel::deque_capacity(options_.deque_tasks);
  unsigned n = pool_.size();
  for (unsigned w = 0; w < n; ++w) deques_.push_back(std::make_unique<parallel::TaskDeque>(tasks));
  for (unsigned w = 0; w < n; ++w) workers_.push_back(std::make_unique<Worker>(*this, w));
  worker_totals_.resize(n);
  events_.add_panel({"Old generation: free areas after compaction",
                     "free areas",
                     "pMarkcompact slides even regions down and odd regions up, so n regions leave "
                     "floor((n + 1) / 2) free areas (Flood et al. 2001, Figure 2).",
                     {{"free areas", &kFreeAreas, nullptr, 1}}});
  events_.add_panel(
      {"Old generation: dense prefix and dense ends",
       "KiB",
       "What was left in place because it was nearly all live, and the dead space it keeps: the leading "
       "part of the old space, and the units at the end each region slides towards.",
       {{"prefix", &kDensePrefixBytes, nullptr, 1.0 / 1024},
        {"dead in prefix", &kDensePrefixDeadBytes, nullptr, 1.0 / 1024},
        {"dense ends", &kDenseEndBytes, nullptr, 1.0 / 1024},
        {"dead in dense ends", &kDenseEndDeadBytes, nullptr, 1.0 / 1024}}});
}

ParallelMarkCompact::~ParallelMarkCompact() = default;

void ParallelMarkCompact::run_phase(unsigned index, void (Worker::*phase)()) {
  next_claim_.store(0, std::memory_order_relaxed);
  const char* name = kPhaseNames[index];
  std::vector<uint64_t>& ns = report_.phase_ns[index];
  auto job = [&](unsigned w) {
    uint64_t start = now_ns();
    events_.phase(w, name, [&] { (workers_[w].get()->*phase)(); });
    ns[w] = now_ns() - start;
  };
  pool_.run(job);
}

ParallelMarkCompact::Result ParallelMarkCompact::collect(const Input& in) {
  set_up(in);
  in.roots.root_groups(root_groups_);
  mark_roots_.groups = root_groups_;
  mark_roots_.next.store(0, std::memory_order_relaxed);

  termination_.reset(pool_.size());
  run_phase(0, &Worker::mark);
  combine_unit_starts();

  run_phase(1, &Worker::sweep);

  uint64_t decide = now_ns();
  choose_dense_prefix();
  partition_regions();
  compute_destinations();
  report_.dense_prefix_decision_ns = now_ns() - decide;

  // The old space's cards are rebuilt by the redirect phase (Input).
  if (in.card_base && !in.old_space.empty()) {
    uintptr_t first = reinterpret_cast<uintptr_t>(in.old_space.begin) >> kCardShift;
    uintptr_t last = (reinterpret_cast<uintptr_t>(in.old_space.end) - 1) >> kCardShift;
    std::memset(in.card_base + first, kCardClean, last - first + 1);
  }
  run_phase(2, &Worker::forward);

  events_.phase(0, "weak references", [&] { process_weak(in.roots); });

  build_redirect_tasks();
  run_phase(3, &Worker::redirect);

  run_phase(4, &Worker::compact);

  Result out;
  finish(out);
  in_ = nullptr;
  return out;
}

// Units: the old space in m = units_per_thread * n, each young space in as
// many chunks; nominal boundaries until marking says where objects start.
void ParallelMarkCompact::set_up(const Input& in) {
  in_ = &in;
  unsigned n = pool_.size();
  unsigned m = options_.units_per_thread * n;
  spaces_.clear();
  units_.clear();
  root_groups_.clear();
  auto add_space = [&](WordRange r) {
    uint64_t words = r.words();
    unsigned count = static_cast<unsigned>(std::min<uint64_t>(m, words));
    uint64_t unit_words = count ? (words + count - 1) / count : 1;
    if (count) count = static_cast<unsigned>((words + unit_words - 1) / unit_words);
    spaces_.push_back(Space{r.begin, r.end, static_cast<unsigned>(units_.size()), count, unit_words});
    for (unsigned k = 0; k < count; ++k) units_.push_back(Unit{});
  };
  add_space(in.old_space);
  old_units_ = spaces_[0].units;
  for (const WordRange& y : in.young_spaces) add_space(y);
  if (side_headers_.size() < old_units_) side_headers_.resize(old_units_);
  for (std::vector<Word>& s : side_headers_) s.clear();
  report_.threads = n;
  for (std::vector<uint64_t>& v : report_.phase_ns) v.assign(n, 0);
  for (auto& w : workers_) w->prepare();
}

// "We ensure that unit boundaries are object-aligned" (L198): a unit starts
// at the lowest live object start at or after its nominal boundary, which
// the markers recorded; dead objects before it belong to the unit below.
// A unit in which no live object starts is empty.
void ParallelMarkCompact::combine_unit_starts() {
  for (const Space& s : spaces_) {
    Word* next = s.end;
    for (unsigned k = s.units; k-- > 0;) {
      unsigned i = s.first_unit + k;
      Word* lowest = reinterpret_cast<Word*>(UINTPTR_MAX);
      for (auto& w : workers_) lowest = std::min(lowest, w->unit_min[i]);
      if (k == 0) {
        next = s.begin;
      } else if (lowest != reinterpret_cast<Word*>(UINTPTR_MAX)) {
        next = lowest;
      }
      units_[i].begin = next;
      units_[i].end = k + 1 < s.units ? units_[i + 1].begin : s.end;
    }
  }
}

bool ParallelMarkCompact::is_dense(const Unit& u) const {
  return options_.dense_prefix &&
         static_cast<double>(u.live_words) >= options_.dense_prefix_min_live * static_cast<double>(u.words());
}

// The dense prefix (pmarkcompact.h).
void ParallelMarkCompact::choose_dense_prefix() {
  unsigned p = 0;
  while (p < old_units_ && is_dense(units_[p])) units_[p++].stays = true;
  dense_prefix_units_ = p;
}

// "partition the heap into regions with approximately equal amounts
// of live data ... regions are unit-aligned" (L200-204). Region r ends at the unit
// boundary nearest to (r + 1) / n of the live words (before unit k when the
// middle of k's live data reaches it); even regions slide down, odd ones up
// (L188).
void ParallelMarkCompact::partition_regions() {
  unsigned n = pool_.size();
  regions_.assign(n, Region{});
  uint64_t total = 0;
  for (unsigned k = dense_prefix_units_; k < old_units_; ++k) total += units_[k].live_words;
  Word* top = in_->old_space.end;
  unsigned r = 0;
  uint64_t so_far = 0;
  regions_[0].first_unit = dense_prefix_units_;
  for (unsigned k = dense_prefix_units_; k < old_units_; ++k) {
    uint64_t middle = 2 * so_far + units_[k].live_words;
    while (r + 1 < n && k > regions_[r].first_unit &&
           static_cast<unsigned __int128>(middle) * n >=
               static_cast<unsigned __int128>(2 * total) * (r + 1)) {
      regions_[r].end_unit = k;
      regions_[++r].first_unit = k;
    }
    so_far += units_[k].live_words;
  }
  regions_[r].end_unit = old_units_;
  for (unsigned q = r + 1; q < n; ++q) regions_[q].first_unit = regions_[q].end_unit = old_units_;
  for (unsigned q = 0; q < n; ++q) {
    Region& g = regions_[q];
    g.slides_up = q % 2 == 1;
    g.begin = g.first_unit < old_units_ ? units_[g.first_unit].begin : top;
    g.end = g.end_unit < old_units_ ? units_[g.end_unit].begin : top;
  }
}

// L202-204: each unit's destination follows from the live data of the units
// before it in its region's compaction order, through the gap functions
// (pmarkcompact.h, identity hashes). Each region first leaves its dense end
// in place: else a region sliding up would move everything below its
// highest gap, although the last collection packed it against its top.
void ParallelMarkCompact::compute_destinations() {
  for (Region& g : regions_) {
    int64_t gap = 0;
    if (!g.slides_up) {
      unsigned first = g.first_unit;
      while (first < g.end_unit && is_dense(units_[first])) units_[first++].stays = true;
      for (unsigned k = first; k < g.end_unit; ++k) {
        Unit& u = units_[k];
        u.slides_up = false;
        u.gap_in = gap;
        u.dest_begin = u.begin - gap;
        gap = u.up_order.apply(gap);
      }
      g.compacted = WordRange{g.begin, g.end - gap};
      g.packed = WordRange{first < g.end_unit ? units_[first].begin : g.end, g.compacted.end};
    } else {
      unsigned end = g.end_unit;
      while (end > g.first_unit && is_dense(units_[end - 1])) units_[--end].stays = true;
      for (unsigned k = end; k-- > g.first_unit;) {
        Unit& u = units_[k];
        u.slides_up = true;
        u.gap_in = gap;
        int64_t out = u.down_order.apply(gap);
        u.dest_begin = u.begin + out;  // the unit's live words end at u.end + gap
        gap = out;
      }
      g.compacted = WordRange{g.begin + gap, g.end};
      g.packed = WordRange{g.compacted.begin, end < g.end_unit ? units_[end].begin : g.end};
    }
  }
}

// Weak references see the result of marking and forwarding: a moved object
// answers with its forwarding address, a marked one with itself.
void ParallelMarkCompact::process_weak(RootSet& roots) {
  struct Resolver final : WeakResolver {
    const ParallelMarkCompact& mc;
    explicit Resolver(const ParallelMarkCompact& m) : mc(m) {}
    Word* resolve(Word* h) override {
      const WordRange& old = mc.in_->old_space;
      Word w = *h;
      if (h >= old.begin && h < old.end && Header::is_forwarded(w)) return reinterpret_cast<Word*>(w);
      return Header::is_marked(w) ? h : nullptr;
    }
  } resolver(*this);
  roots.process_weak(resolver);
}

// Section 5.3 with the young generation in chunks: the biggest tasks
// (old units) first, the root groups, which are many and small, last.
void ParallelMarkCompact::build_redirect_tasks() {
  redirect_tasks_.clear();
  for (unsigned k = 0; k < old_units_; ++k) redirect_tasks_.push_back(kOldUnitTask | k);
  for (unsigned k = old_units_; k < units_.size(); ++k) redirect_tasks_.push_back(kYoungChunkTask | k);
  for (size_t k = 0; k < in_->large.objects().size(); ++k)
    redirect_tasks_.push_back(kLargeTask | static_cast<uint32_t>(k));
  for (size_t k = 0; k < root_groups_.size(); ++k)
    redirect_tasks_.push_back(kRootTask | static_cast<uint32_t>(k));
}

// After compaction, on the program's thread.
void ParallelMarkCompact::finish(Result& out) {
  DenseParts dense = measure_dense_parts(out);
  lay_out_free_areas(out);
  out.large_freed_bytes = in_->large.sweep(options_.poison_free_areas);
  add_worker_stats(out);
  record_report(dense);
  if (events_.enabled()) report_collection(out, dense);
}

// The dense prefix and the regions' dense ends stayed in place with their
// dead words (fillers): how much of each.
ParallelMarkCompact::DenseParts ParallelMarkCompact::measure_dense_parts(Result& out) const {
  const WordRange& old = in_->old_space;
  DenseParts d;
  d.prefix_end = dense_prefix_units_ == old_units_ ? old.end : units_[dense_prefix_units_].begin;
  out.dense_prefix_end = d.prefix_end;
  uint64_t prefix_live = 0;
  for (unsigned k = 0; k < dense_prefix_units_; ++k) prefix_live += units_[k].live_words;
  out.prefix_dead_bytes = (static_cast<uint64_t>(d.prefix_end - old.begin) - prefix_live) * kWordSize;
  d.region_dead_words.assign(regions_.size(), 0);
  for (size_t q = 0; q < regions_.size(); ++q) {
    for (unsigned k = regions_[q].first_unit; k < regions_[q].end_unit; ++k) {
      if (!units_[k].stays) continue;
      d.end_units++;
      d.end_words += units_[k].words();
      d.region_dead_words[q] += units_[k].words() - units_[k].live_words;
    }
    out.dense_end_dead_bytes += d.region_dead_words[q] * kWordSize;
  }
  return d;
}

// The occupied runs (the prefix, each region's compacted data), merged
// where they touch; the holes between them are the free areas, formatted
// as fillers: floor((n + 1) / 2) of them plus the space's tail (L188,
// Figure 2).
void ParallelMarkCompact::lay_out_free_areas(Result& out) const {
  const WordRange& old = in_->old_space;
  std::vector<WordRange> runs;
  if (out.dense_prefix_end > old.begin) runs.push_back(WordRange{old.begin, out.dense_prefix_end});
  for (const Region& g : regions_) {
    if (g.compacted.empty()) continue;
    if (!runs.empty() && runs.back().end == g.compacted.begin) {
      runs.back().end = g.compacted.end;
    } else {
      runs.push_back(g.compacted);
    }
  }
  Word* cursor = old.begin;
  for (const WordRange& run : runs) {
    if (run.begin > cursor) out.free_areas.push_back(WordRange{cursor, run.begin});
    out.old_live_bytes += run.words() * kWordSize;
    cursor = run.end;
  }
  if (old.end > cursor) out.free_areas.push_back(WordRange{cursor, old.end});
  out.old_live_bytes -= out.prefix_dead_bytes + out.dense_end_dead_bytes;
  out.occupied = std::move(runs);
  for (const WordRange& f : out.free_areas) {
    if (options_.poison_free_areas) std::fill(f.begin, f.end, Header::kPoison);
    fill_dead_space(f.begin, f.end);
  }
}

void ParallelMarkCompact::add_worker_stats(Result& out) {
  for (unsigned w = 0; w < workers_.size(); ++w) {
    const Worker& wk = *workers_[w];
    out.bytes_moved += wk.stats().bytes_copied;
    out.objects_moved += wk.stats().objects_copied;
    worker_totals_[w].add(wk.stats());
  }
}

void ParallelMarkCompact::record_report(const DenseParts& dense) {
  report_.units.clear();
  report_.unit_live_bytes.clear();
  for (unsigned k = 0; k < old_units_; ++k) {
    report_.units.push_back(WordRange{units_[k].begin, units_[k].end});
    report_.unit_live_bytes.push_back(units_[k].live_words * kWordSize);
  }
  report_.regions.clear();
  report_.region_live_bytes.clear();
  for (size_t q = 0; q < regions_.size(); ++q) {
    const Region& g = regions_[q];
    report_.regions.push_back(WordRange{g.begin, g.end});
    report_.region_live_bytes.push_back((g.compacted.words() - dense.region_dead_words[q]) * kWordSize);
  }
  report_.dense_prefix_units = dense_prefix_units_;
  report_.dense_end_units = dense.end_units;
}

void ParallelMarkCompact::report_collection(const Result& out, const DenseParts& dense) {
  const WordRange& old = in_->old_space;
  events_.count(0, kOldLiveBytes, out.old_live_bytes);
  events_.count(0, kFreeAreas, out.free_areas.size());
  events_.count(0, kLargeBytesFreed, out.large_freed_bytes);
  events_.count(0, kDensePrefixUnits, dense_prefix_units_);
  events_.count(0, kDensePrefixBytes, static_cast<uint64_t>(dense.prefix_end - old.begin) * kWordSize);
  events_.count(0, kDensePrefixDeadBytes, out.prefix_dead_bytes);
  events_.count(0, kDenseEndUnits, dense.end_units);
  events_.count(0, kDenseEndBytes, dense.end_words * kWordSize);
  events_.count(0, kDenseEndDeadBytes, out.dense_end_dead_bytes);
  events_.count(0, kDensePrefixDecisionNs, report_.dense_prefix_decision_ns);
  report_counters();
}

// Live bytes per unit and per region, as numbered counters.
void ParallelMarkCompact::report_counters() {
  auto numbered = [&](size_t i) -> const observe::Counter& {
    while (numbered_counters_.size() <= i) {
      size_t k = numbered_counters_.size();
      auto c = std::make_unique<NumberedCounter>();
      c->name = k % 2 == 0 ? "unit " + std::to_string(k / 2) + " live bytes"
                           : "region " + std::to_string(k / 2) + " live bytes";
      c->counter = {c->name.c_str(), observe::Unit::kBytes, observe::CounterKind::kPeak};
      numbered_counters_.push_back(std::move(c));
    }
    return numbered_counters_[i]->counter;
  };
  for (size_t k = 0; k < report_.unit_live_bytes.size(); ++k)
    events_.count(0, numbered(2 * k), report_.unit_live_bytes[k]);
  for (size_t k = 0; k < report_.region_live_bytes.size(); ++k)
    events_.count(0, numbered(2 * k + 1), report_.region_live_bytes[k]);
}

}  // namespace gc
