// Unit tests for accel's tag array (gc/collectors/accel/tag_array.h), the
// TLBs' and caches' tag store: its shortcuts (the entries the last two
// accesses used, the sets emptied by epoch) must answer as a plain LRU
// set-associative store does, hit for hit and victim for victim, since
// every simulated latency follows from them.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gc/collectors/accel/tag_array.h"

using namespace gc::accel;

namespace {

// The reference: each set a list of (key, last use), searched whole.
class PlainLru {
 public:
  PlainLru(uint64_t sets, unsigned ways) : sets_(sets), ways_(ways), held_(sets) {}

  bool access(uint64_t key) {
    for (Entry& e : held_[key & (sets_ - 1)]) {
      if (e.key == key) {
        e.last_use = ++clock_;
        return true;
      }
    }
    return false;
  }
  void fill(uint64_t key) {
    std::vector<Entry>& set = held_[key & (sets_ - 1)];
    if (set.size() < ways_) {
      set.push_back(Entry{key, ++clock_});
      return;
    }
    Entry* victim = &set[0];
    for (Entry& e : set)
      if (e.last_use < victim->last_use) victim = &e;
    *victim = Entry{key, ++clock_};
  }
  void clear() {
    for (std::vector<Entry>& set : held_) set.clear();
  }

 private:
  struct Entry {
    uint64_t key;
    uint64_t last_use;
  };
  uint64_t sets_;
  unsigned ways_;
  std::vector<std::vector<Entry>> held_;
  uint64_t clock_ = 0;
};

// Runs of accesses to a few keys, two runs often interleaved (as the CPU's
// mark alternates between the mark stack's page and the heap's), with a
// clear now and then; every access must hit or miss in both.
void check_against_plain(uint64_t sets, unsigned ways, uint64_t keys) {
  TagArray tags(sets, ways);
  PlainLru plain(sets, ways);
  std::mt19937_64 random(sets * 31 + ways);
  uint64_t a = 0, b = 1;
  for (int i = 0; i < 200000; ++i) {
    switch (random() % 16) {
      case 0:
        a = random() % keys;
        break;
      case 1:
        b = random() % keys;
        break;
      case 2:
        if (random() % 64 == 0) {
          tags.clear();
          plain.clear();
        }
        break;
      default:
        break;
    }
    uint64_t key = random() % 4 == 0 ? random() % keys : (random() % 2 ? a : b);
    bool hit = tags.access(key);
    REQUIRE(hit == plain.access(key));
    if (!hit) {
      tags.fill(key);
      plain.fill(key);
    }
  }
}

}  // namespace

TEST_CASE("accel tag array: a fully associative one answers as plain LRU") {
  check_against_plain(1, 32, 48);
  check_against_plain(1, 4, 6);
}

TEST_CASE("accel tag array: a set-associative one answers as plain LRU") {
  check_against_plain(64, 4, 400);
  check_against_plain(16, 8, 200);
}

TEST_CASE("accel tag array: access_or_fill is access, then fill on a miss") {
  TagArray tags(1, 2);
  CHECK_FALSE(tags.access_or_fill(1));
  CHECK_FALSE(tags.access_or_fill(2));
  CHECK(tags.access_or_fill(1));
  CHECK_FALSE(tags.access_or_fill(3));  // evicts 2, the least recently used
  CHECK(tags.access(1));
  CHECK_FALSE(tags.access(2));
  CHECK(tags.access(3));
}
