#include "gc/collectors/markcompact/card_scan.h"

#include <algorithm>

#include "gc/collectors/markcompact/serial_scavenger.h"

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
}

template <class Scavenger>
void CardScan::run(void* self, Scavenger& s) {
  CardScan& scan = *static_cast<CardScan*>(self);
  for (;;) {
    unsigned task = scan.next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= scan.tasks_) return;
    scan.scan_task(task, s);
  }
}

// Task t's cards, by their position v in the concatenation of the
// segments: v = t, t + N, t + 2N, ... (strides) or t*T/N <= v < (t+1)*T/N
// (blocks).
template <class Scavenger>
void CardScan::scan_task(unsigned task, Scavenger& s) {
  TaskStats& st = stats_[task];
  uint64_t n = tasks_;
  uint64_t lo = blocks_ ? total_cards_ * task / n : 0;
  uint64_t hi = blocks_ ? total_cards_ * (task + 1) / n : total_cards_;
  for (const Segment& seg : segments_) {
    uint64_t seg_end = seg.first + seg.cards;
    if (seg_end <= lo || seg.first >= hi) continue;
    if (blocks_) {
      for (uint64_t v = std::max(lo, seg.first); v < std::min(hi, seg_end); ++v)
        if (dirty(seg.first_card + (v - seg.first)))
          scan_dirty_card(seg, seg.first_card + (v - seg.first), s, st);
    } else {
      // The first v >= seg.first with v % n == task.
      uint64_t v = seg.first + (task + n - seg.first % n) % n;
      for (; v < seg_end; v += n)
        if (dirty(seg.first_card + (v - seg.first)))
          scan_dirty_card(seg, seg.first_card + (v - seg.first), s, st);
    }
  }
}

template <class Scavenger>
void CardScan::scan_dirty_card(const Segment& seg, uintptr_t card, Scavenger& s, TaskStats& st) {
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
  while (p < reinterpret_cast<Word*>(hi)) {
    Word* h = header_from_start(p);
    Word header = *h;
    uint64_t nrefs = Header::nrefs(header);
    Value* a = std::max(reinterpret_cast<Value*>(h - nrefs), lo);
    Value* b = std::min(reinterpret_cast<Value*>(h), hi);
    for (Value* slot = a; slot < b; ++slot) young |= s.scavenge_old_slot(slot);
    if (b > a) st.slots += static_cast<uint64_t>(b - a);
    p = h + 1 + Header::raw_words(header);
  }
  if (young) {
    st.kept++;
    if (may_clean) entry.store(kCardDirty, std::memory_order_relaxed);
  }
}

template void CardScan::run<PromotingScavenger>(void*, PromotingScavenger&);
template void CardScan::run<SerialPromotingScavenger>(void*, SerialPromotingScavenger&);

}  // namespace gc
