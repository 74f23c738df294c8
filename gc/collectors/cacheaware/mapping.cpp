#include "gc/collectors/cacheaware/mapping.h"

#include <algorithm>
#include <bit>
#include <cstdlib>

namespace gc::cacheaware {

namespace {

// |c - x| summed over x = 0 .. s-1: the distances along one axis.
uint64_t distances_below(uint64_t c, uint64_t s) {
  if (s <= c) return s * c - s * (s - 1) / 2;
  return c * (c + 1) / 2 + (s - c - 1) * (s - c) / 2;
}

}  // namespace

Mesh::Mesh(unsigned width, unsigned height)
    : width_(width), height_(height), ring1_(width * height), ring2_(width * height) {
  for (unsigned y = 0; y < height; ++y)
    for (unsigned i = 0; i < width; ++i) snake_.push_back(y * width + (y % 2 == 0 ? i : width - 1 - i));
  for (unsigned a = 0; a < cores(); ++a)
    for (unsigned b = 0; b < cores(); ++b) {
      unsigned d = hops(a, b);
      if (d == 1) ring1_[a].push_back(b);
      if (d == 2) ring2_[a].push_back(b);
    }
}

unsigned Mesh::hops(unsigned a, unsigned b) const {
  int dx = static_cast<int>(x(a)) - static_cast<int>(x(b));
  int dy = static_cast<int>(y(a)) - static_cast<int>(y(b));
  return static_cast<unsigned>(std::abs(dx) + std::abs(dy));
}

PartitionMap::PartitionMap(Word* base, uint64_t partition_words, uint32_t partitions, const Mesh& mesh,
                           Homing homing)
    : base_(base),
      words_(partition_words),
      count_(partitions),
      host_(partitions),
      lookup_(base, partition_words, partitions, host_.data()),
      rank_(partitions),
      hosted_(mesh.cores()),
      homing_(homing),
      width_(mesh.width()),
      cores_(mesh.cores()) {
  const std::vector<unsigned>& order = mesh.snake();
  unsigned cores = mesh.cores();
  for (uint32_t p = 0; p < partitions; ++p) {
    uint32_t round = p / cores, k = p % cores;
    unsigned core = order[round % 2 == 0 ? k : cores - 1 - k];
    host_[p] = static_cast<uint16_t>(core);
    rank_[p] = static_cast<uint32_t>(hosted_[core].size());
    hosted_[core].push_back(p);
  }
}

unsigned PartitionMap::line_home(uint64_t line) const {
  if (homing_ == Homing::kLines) return static_cast<unsigned>(line % cores_);
  return host(static_cast<uint32_t>(line * kCacheLineWords / words_));
}

unsigned PartitionMap::hops(unsigned a, unsigned b) const {
  int dx = static_cast<int>(a % width_) - static_cast<int>(b % width_);
  int dy = static_cast<int>(a / width_) - static_cast<int>(b / width_);
  return static_cast<unsigned>(std::abs(dx) + std::abs(dy));
}

// Cores 0 to k-1 are q whole rows and s cores of row q: each whole row
// adds the x distances of a row and width times its y distance.
uint64_t PartitionMap::hops_below(unsigned core, uint64_t k) const {
  uint64_t x = core % width_, y = core / width_, q = k / width_, s = k % width_;
  uint64_t row_y = q > y ? q - y : y - q;
  return q * distances_below(x, width_) + width_ * distances_below(y, q) + distances_below(x, s) + s * row_y;
}

uint64_t PartitionMap::line_hops(unsigned core, const Word* begin, uint64_t words) const {
  uint64_t first = line_of(begin), n = lines(begin, words);
  if (homing_ == Homing::kPartition) {
    // A partition is whole clearing blocks, so no line straddles two.
    uint64_t sum = 0;
    for (uint32_t p = partition_of(begin); n > 0; ++p) {
      uint64_t here = std::min(n, line_of(end(p)) - first);
      sum += here * hops(core, host(p));
      first += here;
      n -= here;
    }
    return sum;
  }
  // The homes run through the cores in order, n / C times round and then
  // the rest, which may wrap past core C-1.
  uint64_t from = first % cores_, rest = n % cores_, all = hops_below(core, cores_);
  uint64_t sum = n / cores_ * all;
  if (from + rest <= cores_) return sum + hops_below(core, from + rest) - hops_below(core, from);
  return sum + all - hops_below(core, from) + hops_below(core, from + rest - cores_);
}

}  // namespace gc::cacheaware
