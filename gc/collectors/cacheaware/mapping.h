// Heap mapping (Zhou and Demsky, section 3.1, L150-163): the heap is N
// partitions of equal size, N much larger than the C cores, each hosted by
// one core of a virtual W x H mesh. The address space is striped across the
// cores in snake order, so that partitions adjacent in address are hosted
// by the same or neighbouring cores (Figure 2):
//
//   3x3 mesh, cores in snake order     partitions 0-8: 0 1 2 5 4 3 6 7 8
//      0 1 2                           partitions 9-17: the same, reversed
//      5 4 3                           partitions 18-26: as 0-8, and so on
//      6 7 8
//
// Each GC thread hosts the virtual cores c with c % threads == its index.
// A core's host responsibilities (marking and compacting its partitions)
// are the paper's; "mesh hops" between two cores are their Manhattan
// distance, the figure the 2-core machine can report of a 62-core network.
//
// Where the heap's 64-byte cache lines are homed (section 5.1, L264-268) is
// a separate choice, --ca-homing: the paper's cacheaware collector homes a
// partition's lines on its host; its base and dispar collectors home them
// "based on lower-order bits to evenly distribute memory requests", which
// gclab models as line i (counted from the heap's base) homed on core
// i mod C, cores numbered y * width + x. The hosts, and so the collector's
// work, are the same either way; the homes say what each access costs.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "gc/layout.h"

namespace gc::cacheaware {

// The locality scores (docs/collectors/cacheaware.md, "Seeing it") count
// the objects that live on a core other than the host of the partition
// they were allocated in: balancing moved them. Such an object carries
// this header bit, the lowest of the age field, which a collector without
// generations leaves unused. (One that balancing later moves back still
// counts as displaced.)
constexpr uint64_t kDisplacedBit = uint64_t{1} << Header::kAgeShift;

constexpr uint64_t kCacheLineWords = 64 / kWordSize;

enum class Homing : uint8_t {
  kPartition,  // a partition's lines on its host (the paper's cacheaware)
  kLines,      // line i on core i mod C (its base and dispar)
};

class Mesh {
 public:
  Mesh(unsigned width, unsigned height);

  unsigned cores() const { return width_ * height_; }
  unsigned width() const { return width_; }
  unsigned height() const { return height_; }
  unsigned x(unsigned core) const { return core % width_; }
  unsigned y(unsigned core) const { return core / width_; }
  unsigned hops(unsigned a, unsigned b) const;
  // The cores at exactly `distance` hops from `core` (Figure 5: ring 1 is
  // the 4 nearest neighbours, ring 2 the next 8), fewer at the mesh's edge.
  const std::vector<unsigned>& ring(unsigned core, unsigned distance) const {
    return distance == 1 ? ring1_[core] : ring2_[core];
  }
  // The cores in snake order (row 0 left to right, row 1 right to left...).
  const std::vector<unsigned>& snake() const { return snake_; }

 private:
  unsigned width_, height_;
  std::vector<unsigned> snake_;
  std::vector<std::vector<unsigned>> ring1_, ring2_;
};

// Which partition an address lies in and which core hosts it, as plain
// values: the loops that store into the heap keep a copy in registers,
// where a store could otherwise alias the map's fields and force them to
// be loaded again for every reference.
class HostLookup {
 public:
  HostLookup(Word* base, uint64_t partition_words, uint32_t partitions, const uint16_t* hosts)
      : base_(base),
        extent_(partition_words * partitions),
        words_(partition_words),
        shift_(std::has_single_bit(partition_words) ? static_cast<unsigned>(std::countr_zero(partition_words))
                                                    : 0),
        hosts_(hosts) {}

  bool contains(const void* p) const {
    return static_cast<uint64_t>(static_cast<const Word*>(p) - base_) < extent_ && p >= base_;
  }
  uint32_t partition_of(const void* p) const {
    uint64_t offset = static_cast<uint64_t>(static_cast<const Word*>(p) - base_);
    return static_cast<uint32_t>(shift_ ? offset >> shift_ : offset / words_);
  }
  unsigned host_of(const void* p) const { return hosts_[partition_of(p)]; }

 private:
  Word* base_;
  uint64_t extent_;
  uint64_t words_;
  unsigned shift_;  // log2(words_) when a power of two, else 0
  const uint16_t* hosts_;
};

// Where each partition is and which core hosts it. The partitions are
// contiguous, from base, each partition_words long.
class PartitionMap {
 public:
  PartitionMap(Word* base, uint64_t partition_words, uint32_t partitions, const Mesh& mesh,
               Homing homing = Homing::kPartition);
  PartitionMap(const PartitionMap&) = delete;  // lookup_ points into host_
  PartitionMap& operator=(const PartitionMap&) = delete;

  uint32_t count() const { return count_; }
  uint64_t partition_words() const { return words_; }
  Word* base() const { return base_; }
  Word* limit() const { return base_ + words_ * count_; }
  bool contains(const void* p) const { return lookup_.contains(p); }
  uint32_t partition_of(const void* p) const { return lookup_.partition_of(p); }
  const HostLookup& lookup() const { return lookup_; }
  Word* begin(uint32_t partition) const { return base_ + words_ * partition; }
  Word* end(uint32_t partition) const { return begin(partition) + words_; }
  unsigned host(uint32_t partition) const { return host_[partition]; }
  // The partitions a core hosts, ascending in address.
  const std::vector<uint32_t>& hosted_by(unsigned core) const { return hosted_[core]; }
  // Where a partition comes in its host's list.
  uint32_t rank(uint32_t partition) const { return rank_[partition]; }

  Homing homing() const { return homing_; }
  // The core that homes cache line `line`, counted from base.
  unsigned line_home(uint64_t line) const;
  // The cache lines [begin, begin + words) touches, and the mesh hops from
  // `core` to each one's home, summed: the network traffic of one access
  // to each. The range lies in the partitions and words > 0. In closed
  // form, not a loop over the lines: a few divisions under line homing, a
  // step per partition spanned under partition homing.
  uint64_t lines(const Word* begin, uint64_t words) const {
    return line_of(begin + words - 1) - line_of(begin) + 1;
  }
  uint64_t line_hops(unsigned core, const Word* begin, uint64_t words) const;

 private:
  uint64_t line_of(const Word* p) const { return static_cast<uint64_t>(p - base_) / kCacheLineWords; }
  unsigned hops(unsigned a, unsigned b) const;
  // The hops from `core` to cores 0 to k-1, summed (k <= C).
  uint64_t hops_below(unsigned core, uint64_t k) const;

  Word* base_;
  uint64_t words_;
  uint32_t count_;
  std::vector<uint16_t> host_;
  HostLookup lookup_;
  std::vector<uint32_t> rank_;
  std::vector<std::vector<uint32_t>> hosted_;
  Homing homing_;
  unsigned width_, cores_;
};

}  // namespace gc::cacheaware
