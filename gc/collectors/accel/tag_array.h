// The tag store of a set-associative structure with LRU replacement: the
// TLBs, the page-table walker's cache, and the CPU baseline's caches. It
// holds keys only (page numbers, line addresses): the simulation reads
// data from the real heap and needs from a cache only whether it hit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gc::accel {

class TagArray {
 public:
  // sets * ways entries; sets a power of two. One set: fully associative.
  TagArray(uint64_t sets, unsigned ways) : sets_(sets), ways_(ways), entries_(sets * ways), held_(sets) {}

  static TagArray fully_associative(unsigned entries) { return TagArray(1, entries); }

  // True if `key` is held, which makes it the set's most recently used.
  bool access(uint64_t key) {
    // Accesses come in runs to one key (a page, a line), often two runs
    // interleaved (the mark stack's page and the heap's): the entries the
    // last two used are tried first. Keys are held once, so either is the
    // entry the walk over the set would find.
    if (last_valid_ && entries_[last_].key == key) {
      entries_[last_].last_use = ++clock_;
      return true;
    }
    if (previous_valid_ && entries_[previous_].key == key) {
      entries_[previous_].last_use = ++clock_;
      use(previous_);
      return true;
    }
    uint64_t set = set_of(key);
    size_t base = set * ways_;
    size_t end = base + held(set);
    for (size_t i = base; i < end; ++i) {
      if (entries_[i].key == key) {
        entries_[i].last_use = ++clock_;
        use(i);
        return true;
      }
    }
    return false;
  }

  // Puts `key` in its set (not held already), in its first empty way, or
  // else in place of the least recently used.
  void fill(uint64_t key) {
    uint64_t set = set_of(key);
    Held& h = held_[set];
    if (h.epoch != epoch_) h = Held{epoch_, 0};
    size_t base = set * ways_;
    size_t victim = base;
    if (h.ways < ways_) {
      victim += h.ways++;
    } else {
      for (size_t i = base + 1; i < base + ways_; ++i)
        if (entries_[i].last_use < entries_[victim].last_use) victim = i;
    }
    entries_[victim] = Entry{key, ++clock_};
    use(victim);
  }

  // access(key), and fill(key) on a miss. True on a hit.
  bool access_or_fill(uint64_t key) {
    if (access(key)) return true;
    fill(key);
    return false;
  }

  void clear() {
    epoch_++;
    last_valid_ = previous_valid_ = false;
  }
  uint64_t capacity() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t key = 0;
    uint64_t last_use = 0;
  };
  // Ways fill in order and empty only all at once, so a set holds its
  // first `ways` entries, if `epoch` is the array's: clear() moves the
  // array to a new epoch, which empties every set without touching it.
  struct Held {
    uint64_t epoch = 0;
    unsigned ways = 0;
  };

  uint64_t set_of(uint64_t key) const { return key & (sets_ - 1); }
  // Entry i is now the last used; the one before it, if another, the previous.
  void use(size_t i) {
    if (last_valid_ && last_ != i) {
      previous_ = last_;
      previous_valid_ = true;
    }
    last_ = i;
    last_valid_ = true;
  }
  unsigned held(uint64_t set) const { return held_[set].epoch == epoch_ ? held_[set].ways : 0; }

  uint64_t sets_;
  unsigned ways_;
  std::vector<Entry> entries_;
  std::vector<Held> held_;
  uint64_t clock_ = 0;
  uint64_t epoch_ = 1;   // sets start empty, at epoch 0
  size_t last_ = 0;      // the entry the last hit or fill used, if valid
  size_t previous_ = 0;  // the entry used before it, if valid
  bool last_valid_ = false;
  bool previous_valid_ = false;
};

}  // namespace gc::accel
