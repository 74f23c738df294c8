#include "gc/collectors/cacheaware/mapping.h"

#include <bit>
#include <cstdlib>

namespace gc::cacheaware {

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

PartitionMap::PartitionMap(Word* base, uint64_t partition_words, uint32_t partitions, const Mesh& mesh)
    : base_(base),
      words_(partition_words),
      count_(partitions),
      host_(partitions),
      rank_(partitions),
      hosted_(mesh.cores()) {
  if (std::has_single_bit(words_)) shift_ = static_cast<unsigned>(std::countr_zero(words_));
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

}  // namespace gc::cacheaware
