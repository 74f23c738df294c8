#include "gc/collectors/markcompact/card_scan.h"

#include <algorithm>
#include <cstring>

#include "gc/collectors/markcompact/promoting_scavenger.h"
#include "gc/collectors/markcompact/serial_scavenger.h"
#include "gc/observe/recording.h"

namespace gc {

namespace {

constexpr uint64_t kCardWords = OffsetTable::kCardWords;

uintptr_t card_of(const Word* p) { return reinterpret_cast<uintptr_t>(p) >> kCardShift; }
Word* card_start(uintptr_t card) { return reinterpret_cast<Word*>(card << kCardShift); }

}  // namespace

void CardScan::prepare(const std::vector<OldSpace::Run>& old_runs, const LargeObjectSpace& large,
                       const OffsetTable& offsets, uint8_t* card_base) {
  segments_.clear();
  total_cards_ = 0;
  auto add = [&](Word* begin, Word* end, bool one_object, bool never_clean) {
    if (end <= begin) return;
    uintptr_t first = card_of(begin);
    uint64_t cards = card_of(end - 1) - first + 1;
    segments_.push_back({begin, end, first, total_cards_, cards, one_object, never_clean});
    total_cards_ += cards;
  };
  for (const OldSpace::Run& r : old_runs) add(r.begin, r.end, false, false);
  for (const LargeObjectSpace::Object& o : large.objects()) {
    uint64_t n = Header::nrefs(*o.header);
    if (n == 0) continue;  // nothing in it can refer to a young object
    add(o.start, o.header, true, Header::class_id(*o.header) == kStackClass);
  }
  offsets_ = &offsets;
  card_base_ = card_base;
  next_task_.store(0, std::memory_order_relaxed);
  stats_.assign(tasks_, TaskStats{});
  index_dirty_cards();
}

namespace {

// Eight cards at a time: the card table is mostly clean, and a young
// collection reads all of it.
constexpr uint64_t kEightClean = 0x0101'0101'0101'0101ull * kCardClean;

template <class F>
void for_each_dirty(const uint8_t* cards, uint64_t count, F&& found) {
  uint64_t k = 0;
  for (; k < count && reinterpret_cast<uintptr_t>(cards + k) % 8 != 0; ++k)
    if (cards[k] == kCardDirty) found(k);
  for (; k + 8 <= count; k += 8) {
    uint64_t eight;
    std::memcpy(&eight, cards + k, 8);
    if (eight == kEightClean) continue;
    for (uint64_t j = k; j < k + 8; ++j)
      if (cards[j] == kCardDirty) found(j);
  }
  for (; k < count; ++k)
    if (cards[k] == kCardDirty) found(k);
}

}  // namespace

// The partition is the paper's, by each card's position v in the
// concatenation of the segments: task v mod N (strides) or the t with
// t*T/N <= v < (t+1)*T/N (blocks). Only the cards dirty before the phase
// are listed: during it, cards are dirtied only by promotion, for slots of
// promoted objects that the trace scans anyway.
void CardScan::index_dirty_cards() {
  uint64_t n = tasks_;
  // Block t holds t*T/N <= v < (t+1)*T/N (rounded down), so its index is
  // the largest t with t*T < (v+1)*N.
  auto task_of = [&](uint64_t v) { return blocks_ ? ((v + 1) * n - 1) / total_cards_ : v % n; };
  found_.clear();
  for (uint32_t i = 0; i < segments_.size(); ++i) {
    const Segment& seg = segments_[i];
    for_each_dirty(card_base_ + seg.first_card, seg.cards, [&](uint64_t k) {
      found_.push_back({static_cast<uint32_t>(task_of(seg.first + k)), i, seg.first_card + k});
    });
  }
  // A counting sort by task, stable: each task's cards in address order.
  task_begin_.assign(n + 1, 0);
  for (const DirtyCard& d : found_) task_begin_[d.task + 1]++;
  for (uint64_t t = 0; t < n; ++t) task_begin_[t + 1] += task_begin_[t];
  dirty_.resize(found_.size());
  cursor_.assign(task_begin_.begin(), task_begin_.end() - 1);
  for (const DirtyCard& d : found_) dirty_[cursor_[d.task]++] = d;
}

template <class Scavenger>
void CardScan::run(Scavenger& s) {
  observe::Recording* recording = observe::Recording::active();
  for (;;) {
    unsigned task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= tasks_) return;
    if (recording) [[unlikely]]
      scan_task<true>(task, s, recording);
    else
      scan_task<false>(task, s, nullptr);
  }
}

// Task t's dirty cards (index_dirty_cards).
template <bool kRecord, class Scavenger>
void CardScan::scan_task(unsigned task, Scavenger& s, observe::Recording* recording) {
  TaskStats& st = stats_[task];
  // The one thread of --gc-threads=0 is worker 0.
  if constexpr (requires { s.id(); }) st.worker = s.id();
  for (uint64_t i = task_begin_[task]; i < task_begin_[task + 1]; ++i)
    scan_dirty_card<kRecord>(segments_[dirty_[i].segment], dirty_[i].card, s, st, recording);
}

template <bool kRecord, class Scavenger>
void CardScan::scan_dirty_card(const Segment& seg, uintptr_t card, Scavenger& s, TaskStats& st,
                               [[maybe_unused]] observe::Recording* recording) {
  std::atomic_ref<uint8_t> entry(card_base_[card]);
  st.dirty++;
  Word* cs = card_start(card);
  Word* ce = cs + kCardWords;
  Value* lo = reinterpret_cast<Value*>(std::max(cs, seg.begin));
  Value* hi = reinterpret_cast<Value*>(std::min(ce, seg.end));
  bool may_clean = !seg.never_clean && cs >= seg.begin && ce <= seg.end;
  if (may_clean) entry.store(kCardClean, std::memory_order_relaxed);
  // The first object that reaches into the card: a large object is one
  // object from the segment's start; in the old space the offset table
  // says where the object covering the card's first word starts.
  Word* p = seg.one_object || cs < seg.begin ? seg.begin : offsets_->object_start_for_card(cs);
  bool young = false;
  uint64_t referred = 0;  // recorded only: slots whose young referent moved
  while (p < reinterpret_cast<Word*>(hi)) {
    Word* h = header_from_start(p);
    Word header = *h;
    uint64_t nrefs = Header::nrefs(header);
    Value* a = std::max(reinterpret_cast<Value*>(h - nrefs), lo);
    Value* b = std::min(reinterpret_cast<Value*>(h), hi);
    for (Value* slot = a; slot < b; ++slot) {
      // Every young survivor moves (copied or promoted), so a slot the
      // scavenge changed is one that referred to a young object.
      [[maybe_unused]] uint64_t before = slot->bits;
      young |= s.scavenge_old_slot(slot);
      if constexpr (kRecord) referred += slot->bits != before;
    }
    if (b > a) st.slots += static_cast<uint64_t>(b - a);
    p = h + 1 + Header::raw_words(header);
  }
  if (young) {
    st.kept++;
    if (may_clean) entry.store(kCardDirty, std::memory_order_relaxed);
  }
  if constexpr (kRecord)
    if (referred) recording->card(st.worker, cs, referred, young);
}

template void CardScan::run<PromotingScavenger>(PromotingScavenger&);
template void CardScan::run<SerialPromotingScavenger>(SerialPromotingScavenger&);

}  // namespace gc
