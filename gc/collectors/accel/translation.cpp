#include "gc/collectors/accel/translation.h"

#include <algorithm>

namespace gc::accel {

namespace {

constexpr uint64_t kLineBytes = 64;
constexpr uint64_t kSv39Mask = (uint64_t{1} << 39) - 1;
constexpr uint64_t kEntriesPerTable = 512;

}  // namespace

uint64_t pte_address(uint64_t vaddr, unsigned level) {
  uint64_t va = vaddr & kSv39Mask;
  uint64_t vpn2 = va >> 30 & (kEntriesPerTable - 1);
  uint64_t vpn1 = va >> 21 & (kEntriesPerTable - 1);
  uint64_t vpn0 = va >> 12 & (kEntriesPerTable - 1);
  uint64_t table = 0;
  uint64_t entry = vpn2;
  if (level == 1) {
    table = 1 + vpn2;
    entry = vpn1;
  } else if (level == 0) {
    table = 1 + kEntriesPerTable + vpn2 * kEntriesPerTable + vpn1;
    entry = vpn0;
  }
  return kPageTableBase + (table << kPageShift) + entry * 8;
}

Translation::Translation(const TranslationConfig& config)
    : config_(config),
      l1_{TagArray::fully_associative(config.l1_entries), TagArray::fully_associative(config.l1_entries)},
      l2_(config.l2_entries / config.l2_ways, config.l2_ways),
      walker_cache_(config.walker_cache_bytes / kLineBytes / config.walker_cache_ways,
                    config.walker_cache_ways) {}

Translation::Outcome Translation::translate(Port port, uint64_t vaddr, uint64_t tag, Cycle now,
                                            Cycle* ready) {
  if (config_.walker == WalkerMode::kOff) {
    *ready = now;
    return Outcome::kNow;
  }
  if (blocked(port)) return Outcome::kBlocked;
  unsigned p = index(port);
  uint64_t vpn = vaddr >> kPageShift;
  if (l1_[p].access(vpn)) {
    stats_.l1_hits[p]++;
    *ready = now;
    return Outcome::kNow;
  }
  stats_.l1_misses[p]++;
  if (l2_.access(vpn)) {
    stats_.l2_hits++;
    l1_[p].fill(vpn);
    *ready = now + config_.l2_hit_cycles;
    return Outcome::kNow;
  }
  stats_.l2_misses++;
  parked_requests_.push_back(Parked{port, vpn, tag});
  parked_[p]++;
  if (!walking(vpn) && std::find(waiting_.begin(), waiting_.end(), vpn) == waiting_.end())
    waiting_.push_back(vpn);
  start_walks(now);
  return Outcome::kParked;
}

bool Translation::walking(uint64_t vpn) const {
  return std::any_of(active_.begin(), active_.end(), [vpn](const Walk& w) { return w.vpn == vpn; });
}

void Translation::start_walks(Cycle now) {
  while (active_.size() < walk_limit() && !waiting_.empty()) {
    active_.push_back(Walk{waiting_.front(), kPageTableLevels - 1, Step::kLookup, now});
    waiting_.erase(waiting_.begin());
    stats_.walks++;
  }
}

Cycle Translation::next_walk_event() const {
  Cycle next = kNever;
  for (const Walk& w : active_)
    if (w.step == Step::kLookup || w.step == Step::kDone ||
        (w.step == Step::kNeedMemory && !memory_was_full_))
      next = std::min(next, w.at);
  return next;
}

// Each walk reads one entry a level: from the walker cache when its line
// is there, else from memory (a 64-byte line, which then fills the
// cache). The last level's entry completes the walk.
void Translation::advance_walks(Cycle now, MemoryModel& memory) {
  memory_was_full_ = false;
  for (size_t i = 0; i < active_.size();) {
    Walk& w = active_[i];
    while (w.step == Step::kLookup && w.at <= now) {
      uint64_t line = pte_address(w.vpn << kPageShift, w.level) / kLineBytes;
      if (!walker_cache_.access(line)) {
        stats_.walker_cache_misses++;
        w.step = Step::kNeedMemory;
        break;
      }
      stats_.walker_cache_hits++;
      entry_read(w, w.at + config_.walker_cache_hit_cycles);
    }
    if (w.step == Step::kNeedMemory) {
      if (memory.can_accept()) {
        uint64_t line = pte_address(w.vpn << kPageShift, w.level) / kLineBytes;
        memory.submit(MemRequest{line * kLineBytes, kLineBytes, false, Source::kWalker, w.vpn}, now);
        w.step = Step::kMemory;
      } else {
        memory_was_full_ = true;
      }
    }
    if (w.step == Step::kDone && w.at <= now) {
      Walk finished = w;
      active_.erase(active_.begin() + static_cast<ptrdiff_t>(i));
      complete(finished.vpn, finished.at);
      continue;  // start_walks may have appended walks, which this loop reaches
    }
    ++i;
  }
}

void Translation::on_response(const MemResponse& response) {
  uint64_t vpn = response.request.tag;
  for (Walk& w : active_) {
    if (w.vpn == vpn && w.step == Step::kMemory) {
      walker_cache_.access_or_fill(response.request.addr / kLineBytes);
      entry_read(w, response.at);
      return;
    }
  }
}

// The walk's entry at w.level is known at `at`: on to the next level, or
// done after the last.
void Translation::entry_read(Walk& w, Cycle at) {
  w.at = at;
  if (w.level == 0) {
    w.step = Step::kDone;
  } else {
    w.level--;
    w.step = Step::kLookup;
  }
}

// The page is translated at `at`: into the L2 TLB and the TLB of every
// port that waits for it, and those requests go back to their ports.
void Translation::complete(uint64_t vpn, Cycle at) {
  l2_.access_or_fill(vpn);
  auto waits_for_page = [vpn](const Parked& r) { return r.vpn == vpn; };
  for (const Parked& r : parked_requests_) {
    if (!waits_for_page(r)) continue;
    unsigned p = index(r.port);
    l1_[p].access_or_fill(vpn);
    done_[p].push_back(Done{r.tag, at});
    parked_[p]--;
  }
  std::erase_if(parked_requests_, waits_for_page);
  start_walks(at);
}

}  // namespace gc::accel
