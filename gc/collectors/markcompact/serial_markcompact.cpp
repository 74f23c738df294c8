#include "gc/collectors/markcompact/serial_markcompact.h"

#include <algorithm>
#include <cstring>

#include "gc/heap/bit_count.h"
#include "gc/heap/lab.h"
#include "gc/observe/common_counters.h"
#include "gc/spaces/copy_space.h"
#include "gc/spaces/offset_table.h"

namespace gc {

namespace {

constexpr uint64_t kCardWords = OffsetTable::kCardWords;
static_assert(kCardWords == 64, "one word of the live bitmap per card");

// The bits of a card's live-word word below `offset` (0 to 63).
uint64_t bits_below(uint64_t offset) { return (uint64_t{1} << offset) - 1; }

Word* next_start(Word* start) {
  Word* h = header_from_start(start);
  return h + 1 + Header::raw_words(*h);
}

}  // namespace

class SerialMarkCompact::WeakResolver final : public gc::WeakResolver {
 public:
  explicit WeakResolver(SerialMarkCompact& c) : c_(c) {}
  Word* resolve(Word* h) override {
    if (c_.in_old(h)) return Header::is_marked(*h) ? c_.forward(h) : nullptr;
    if (c_.in_->large.contains(h)) return Header::is_marked(*h) ? h : nullptr;
    return h;
  }

 private:
  SerialMarkCompact& c_;
};

SerialMarkCompact::SerialMarkCompact(observe::Recorder& events, const MarkCompactOptions& options)
    : events_(events),
      poison_(options.poison_free_areas),
      dense_prefix_(options.dense_prefix),
      dense_prefix_min_live_(options.dense_prefix_min_live) {}

ParallelMarkCompact::Result SerialMarkCompact::collect(const ParallelMarkCompact::Input& in) {
  in_ = &in;
  has_young_ = false;
  for (const WordRange& r : in.young_spaces) has_young_ |= r.end > r.begin;
  begin_ = in.old_space.begin;
  end_ = in.old_space.end;
  moved_bytes_ = moved_objects_ = 0;
  events_.phase(0, "mark", [&] { mark(in); });
  events_.phase(0, "dense prefix", [&] { find_dense_prefix(); });
  events_.phase(0, "forward", [&] { install_forwarding(); });
  events_.phase(0, "redirect", [&] {
    redirect(in);
    WeakResolver resolver(*this);
    in.roots.process_weak(resolver);
  });
  ParallelMarkCompact::Result out = events_.phase(0, "compact", [&] {
    Word* top = compact(in);
    ParallelMarkCompact::Result out;
    out.dense_prefix_end = prefix_end_;
    if (top > begin_) out.occupied.push_back({begin_, top});
    if (top < end_) out.free_areas.push_back({top, end_});
    out.prefix_dead_bytes = prefix_dead_words_ * kWordSize;
    out.old_live_bytes = static_cast<uint64_t>(top - begin_) * kWordSize - out.prefix_dead_bytes;
    out.bytes_moved = moved_bytes_;
    out.objects_moved = moved_objects_;
    out.large_freed_bytes = in.large.sweep(poison_);
    if (in.on_occupied_run && top > begin_) in.on_occupied_run(0, begin_, top);
    return out;
  });
  // The counters pMarkcompact reports, under the same names.
  events_.count(0, kOldLiveBytes, out.old_live_bytes);
  events_.count(0, observe::kBytesMoved, out.bytes_moved);
  events_.count(0, observe::kObjectsMoved, out.objects_moved);
  events_.count(0, kFreeAreas, out.free_areas.size());
  events_.count(0, kLargeBytesFreed, out.large_freed_bytes);
  events_.count(0, kDensePrefixDeadBytes, out.prefix_dead_bytes);
  return out;
}

bool SerialMarkCompact::in_young(const Word* p) const {
  for (const WordRange& r : in_->young_spaces)
    if (p >= r.begin && p < r.end) return true;
  return false;
}

uint64_t SerialMarkCompact::size_at(Word* start, Word header, const Word* dest) {
  return dest == start ? object_words(header) : object_words_when_moved(header);
}

// --- mark: from the roots and every young object, old and large objects
// get the header's mark bit.

void SerialMarkCompact::mark_value(Value v) {
  if (!v.is_ref()) return;
  Word* h = v.as_ref();
  if (!in_old(h) && !in_->large.contains(h)) return;
  Word w = *h;
  if (Header::is_marked(w)) return;
  *h = w | Header::kMarkBit;
  if (recording_) recording_->grey(0, h);
  if (Header::nrefs(w)) stack_.push_back(h);
}

void SerialMarkCompact::mark_slots(Word* h) {
  uint64_t n = Header::nrefs(*h);
  Value* slots = ref_slots_begin(h, n);
  for (uint64_t i = 0; i < n; ++i) mark_value(slots[i]);
}

void SerialMarkCompact::mark(const ParallelMarkCompact::Input& in) {
  recording_ = observe::Recording::active();
  std::vector<RootGroup> groups;
  in.roots.root_groups(groups);
  for (const RootGroup& g : groups)
    for (size_t i = 0; i < g.count; ++i) mark_value(g.slots[i]);
  for (const WordRange& r : in.young_spaces)
    for (Word* p = r.begin; p < r.end; p = next_start(p)) mark_slots(header_from_start(p));
  while (!stack_.empty()) {
    Word* h = stack_.back();
    stack_.pop_back();
    if (recording_) recording_->scan(0, h);
    mark_slots(h);
  }
}

// --- the dense prefix (serial_markcompact.h): leading objects stay while
// the dead words before them fit the budget; a prefix that would reach the
// end stops after the last live object, so that the dead tail is free.

void SerialMarkCompact::find_dense_prefix() {
  prefix_end_ = begin_;
  prefix_dead_words_ = 0;
  if (!dense_prefix_) return;
  double budget = (1 - dense_prefix_min_live_) * static_cast<double>(end_ - begin_);
  uint64_t dead = 0, dead_at_last_live = 0;
  Word* last_live_end = begin_;
  for (Word* p = begin_; p < end_;) {
    Word* h = header_from_start(p);
    Word* next = h + 1 + Header::raw_words(*h);
    if (Header::is_marked(*h)) {
      last_live_end = next;
      dead_at_last_live = dead;
    } else {
      dead += static_cast<uint64_t>(next - p);
      if (static_cast<double>(dead) > budget) {
        prefix_end_ = p;
        prefix_dead_words_ = dead - static_cast<uint64_t>(next - p);
        return;
      }
    }
    p = next;
  }
  prefix_end_ = last_live_end;
  prefix_dead_words_ = dead_at_last_live;
}

// --- install forwarding addresses: one walk of the old space after the
// dense prefix assigns every live object its destination in address order;
// what is kept is each card's first object and its destination, and a bit
// per live word. Cards where an object grows as it moves (a hash word)
// are flagged: their live words do not give the distance.

void SerialMarkCompact::install_forwarding() {
  uint64_t cards = (static_cast<uint64_t>(end_ - begin_) + kCardWords - 1) / kCardWords;
  card_first_.assign(cards + 1, end_);
  card_dest_.assign(cards + 1, nullptr);
  live_words_.assign(cards + 1, 0);
  card_grows_.assign(cards + 1, 0);
  uint64_t next = static_cast<uint64_t>(prefix_end_ - begin_) / kCardWords;
  Word* dest = prefix_end_;
  for (Word* p = prefix_end_; p < end_;) {
    for (; next < cards && begin_ + next * kCardWords <= p; ++next) {
      card_first_[next] = p;
      card_dest_[next] = dest;
    }
    Word* h = header_from_start(p);
    Word w = *h;
    Word* after = h + 1 + Header::raw_words(w);
    if (Header::is_marked(w)) {
      if (recording_ && dest != p) recording_->forward(0, h, dest + words_below(Header::nrefs(w)));
      uint64_t words = size_at(p, w, dest);
      if (words != static_cast<uint64_t>(after - p))
        card_grows_[static_cast<uint64_t>(p - begin_) / kCardWords] = 1;
      mark_live_words(p, after);
      dest += words;
    }
    p = after;
  }
  for (; next <= cards; ++next) card_dest_[next] = dest;
}

void SerialMarkCompact::mark_live_words(Word* from, Word* to) {
  uint64_t a = static_cast<uint64_t>(from - begin_), b = static_cast<uint64_t>(to - begin_);
  while (a < b) {
    uint64_t card = a / kCardWords, lo = a % kCardWords;
    uint64_t hi = std::min(b - card * kCardWords, kCardWords);
    live_words_[card] |= (hi == kCardWords ? ~uint64_t{0} : bits_below(hi)) & ~bits_below(lo);
    a = card * kCardWords + hi;
  }
}

// A moving object's destination: its card's first object's, plus the live
// words between that object and it, counted in the card's live bitmap word
// (where an object grows as it moves, walked instead).
Word* SerialMarkCompact::forward(Word* h) const {
  if (!in_old(h) || h < prefix_end_) return h;
  Word* start = object_start(h, *h);
  uint64_t offset = static_cast<uint64_t>(start - begin_);
  uint64_t card = offset / kCardWords;
  Word* p = card_first_[card];
  Word* dest = card_dest_[card];
  if (!card_grows_[card]) [[likely]] {
    uint64_t from = static_cast<uint64_t>(p - begin_) % kCardWords;
    uint64_t between = live_words_[card] & bits_below(offset % kCardWords) & ~bits_below(from);
    return dest + bit_count(between) + words_below(Header::nrefs(*h));
  }
  while (p < start) {
    Word* ph = header_from_start(p);
    Word w = *ph;
    if (Header::is_marked(w)) dest += size_at(p, w, dest);
    p = ph + 1 + Header::raw_words(w);
  }
  return dest + words_below(Header::nrefs(*h));
}

// --- redirect: every reference to an old object, from the roots, young
// objects, live large objects and live old objects.

void SerialMarkCompact::redirect_slots(Word* h) {
  uint64_t n = Header::nrefs(*h);
  Value* slots = ref_slots_begin(h, n);
  uint64_t redirected = 0;  // for --gc-animate: the slots whose referent moves
  for (uint64_t i = 0; i < n; ++i) {
    if (!slots[i].is_ref() || !in_old(slots[i].as_ref())) continue;
    Word* to = forward(slots[i].as_ref());
    redirected += to != slots[i].as_ref();
    slots[i] = Value::ref(to);
  }
  if (recording_ && redirected) [[unlikely]]
    recording_->redirect(0, h, redirected);
}

void SerialMarkCompact::redirect(const ParallelMarkCompact::Input& in) {
  std::vector<RootGroup> groups;
  in.roots.root_groups(groups);
  for (const RootGroup& g : groups)
    for (size_t i = 0; i < g.count; ++i)
      if (g.slots[i].is_ref() && in_old(g.slots[i].as_ref()))
        g.slots[i] = Value::ref(forward(g.slots[i].as_ref()));
  for (const WordRange& r : in.young_spaces)
    for (Word* p = r.begin; p < r.end; p = next_start(p)) redirect_slots(header_from_start(p));
  for (const LargeObjectSpace::Object& o : in.large.objects())
    if (Header::is_marked(*o.header)) redirect_slots(o.header);
  for (Word* p = begin_; p < end_; p = next_start(p)) {
    Word* h = header_from_start(p);
    if (Header::is_marked(*h)) redirect_slots(h);
  }
}

// The card invariant (card_scan.h) for an old object's slots, after the
// cards were cleaned.
void SerialMarkCompact::dirty_young_cards(const ParallelMarkCompact::Input& in, Word* h) const {
  if (!in.card_base || !has_young_) return;
  uint64_t n = Header::nrefs(*h);
  Value* slots = ref_slots_begin(h, n);
  for (uint64_t i = 0; i < n; ++i)
    if (slots[i].is_ref() && in_young(slots[i].as_ref()))
      in.card_base[reinterpret_cast<uintptr_t>(slots + i) >> kCardShift] = kCardDirty;
}

// --- compact: slide every live object to its destination, in address
// order (a destination never lies above its source, so nothing is
// overwritten before it has moved); rebuild the old space's cards.

Word* SerialMarkCompact::compact(const ParallelMarkCompact::Input& in) {
  if (in.card_base) {
    uintptr_t first = reinterpret_cast<uintptr_t>(begin_) >> kCardShift;
    uintptr_t last = reinterpret_cast<uintptr_t>(end_ - 1) >> kCardShift;
    std::memset(in.card_base + first, kCardClean, last - first + 1);
  }
  // The dense prefix: its live objects unmarked where they are (their
  // young references dirtying their cards again), its dead ones fillers.
  for (Word* p = begin_; p < prefix_end_;) {
    Word* h = header_from_start(p);
    Word* next = h + 1 + Header::raw_words(*h);
    if (Header::is_marked(*h)) {
      *h &= ~Header::kMarkBit;
      dirty_young_cards(in, h);
    } else {
      if (poison_) std::fill(p, next, Header::kPoison);
      fill_dead_space(p, next);
    }
    p = next;
  }
  Word* dest = prefix_end_;
  for (Word* p = prefix_end_; p < end_;) {
    Word* h = header_from_start(p);
    Word w = *h;
    Word* next = h + 1 + Header::raw_words(w);
    if (Header::is_marked(w)) {
      w &= ~Header::kMarkBit;
      uint64_t words = object_words(w);
      uint64_t below = words_below(Header::nrefs(w));
      Word* moved = dest + below;
      bool grows = dest != p && grows_when_moved(w);
      uint64_t hash = grows ? in.hash_of_address(h) : 0;
      if (dest != p) {
        // Small objects slide by more than their size almost always: then
        // inline moves, not a libc call per object.
        if (static_cast<uint64_t>(p - dest) >= words) {
          copy_words(dest, p, words);
        } else {
          std::memmove(dest, p, words * kWordSize);
        }
        moved_bytes_ += words * kWordSize;
        moved_objects_++;
        if (recording_) recording_->move(0, h, moved);
      }
      if (grows) {
        words = object_words_when_moved(w);
        w = grow_hash_word(moved, w, hash);
      }
      *moved = w;
      dirty_young_cards(in, moved);
      dest += words;
    }
    p = next;
  }
  if (dest < end_) {
    if (poison_) std::fill(dest, end_, Header::kPoison);
    fill_dead_space(dest, end_);
  }
  return dest;
}

}  // namespace gc
