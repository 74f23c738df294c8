// The tag store of a set-associative structure with LRU replacement: the
// TLBs, the page-table walker's cache, and the CPU baseline's caches. It
// holds keys only (page numbers, line addresses): the simulation reads
// data from the real heap and needs from a cache only whether it hit.
#pragma once

#include <cstdint>
#include <vector>

namespace gc::accel {

class TagArray {
 public:
  // sets * ways entries; sets a power of two. One set: fully associative.
  TagArray(uint64_t sets, unsigned ways) : sets_(sets), ways_(ways), entries_(sets * ways) {}

  static TagArray fully_associative(unsigned entries) { return TagArray(1, entries); }

  // True if `key` is held, which makes it the set's most recently used.
  bool access(uint64_t key) {
    Entry* set = &entries_[set_of(key) * ways_];
    for (unsigned w = 0; w < ways_; ++w) {
      if (set[w].epoch == epoch_ && set[w].key == key) {
        set[w].last_use = ++clock_;
        return true;
      }
    }
    return false;
  }

  // Puts `key` in its set (not held already), replacing an invalid entry
  // or else the least recently used.
  void fill(uint64_t key) {
    Entry* set = &entries_[set_of(key) * ways_];
    Entry* victim = set;
    for (unsigned w = 0; w < ways_; ++w) {
      if (set[w].epoch != epoch_) {
        victim = &set[w];
        break;
      }
      if (set[w].last_use < victim->last_use) victim = &set[w];
    }
    *victim = Entry{key, ++clock_, epoch_};
  }

  // access(key), and fill(key) on a miss. True on a hit.
  bool access_or_fill(uint64_t key) {
    if (access(key)) return true;
    fill(key);
    return false;
  }

  void clear() { epoch_++; }
  uint64_t capacity() const { return entries_.size(); }

 private:
  // An entry is valid when its epoch is the array's: clear() moves the
  // array to a new epoch, which empties it without touching the entries.
  struct Entry {
    uint64_t key = 0;
    uint64_t last_use = 0;
    uint64_t epoch = 0;
  };

  uint64_t set_of(uint64_t key) const { return key & (sets_ - 1); }

  uint64_t sets_;
  unsigned ways_;
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
  uint64_t epoch_ = 1;  // entries start invalid, at epoch 0
};

}  // namespace gc::accel
