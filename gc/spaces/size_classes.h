// The mark-sweep space's geometry (marksweep_space.h): size classes and blocks.
//
// Every object below kLargeObjectBytes lives in a cell of one of
// kSizeClasses sizes; a block holds cells of one size only, so a block can
// be walked cell by cell (Maas et al. 2018, L211-219: "Memory is divided
// into blocks, and each block is assigned a size class, which determines
// the size of the cells that the block is divided into"). The papers give
// no sizes; gclab's choices and their reasons are in "The paper's
// parameters and gclab's" (docs/collectors/marksweep.md): 16 KB blocks, every word
// count up to 8, four classes per doubling up to 256 words, then the cells
// that cut a block into 7 ... 2, objects above 1024 words large.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "gc/constants.h"
#include "gc/layout.h"

namespace gc::marksweep {

constexpr size_t kBlockBytes = 16 * 1024;
constexpr size_t kBlockWords = kBlockBytes / kWordSize;

constexpr unsigned kSizeClasses = 34;
constexpr std::array<uint32_t, kSizeClasses> kClassWords = {
    1,  2,  3,  4,  5,  6,   7,   8,   10,  12,  14,  16,  20,  24,  28,  32,  40,
    48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 292, 341, 409, 512, 682, 1024};

// The largest object that lives in a cell; bigger ones go to the
// large-object space.
constexpr uint64_t kMaxCellObjectWords = kClassWords[kSizeClasses - 1];
static_assert(kBlockWords % kMaxCellObjectWords == 0);

// The inline allocation path's index for objects above kMaxCellObjectWords
// and below constants.h's kLargeObjectBytes: a list that is always empty,
// so that they take the slow path to the large-object space.
constexpr unsigned kNoCellClass = kSizeClasses;

// The size class of an object of `words` words (index 0 unused) for every
// size the inline path sees, as a table so that it finds it with one load.
using SizeClassTable = std::array<uint8_t, kLargeObjectBytes / kWordSize>;
constexpr SizeClassTable make_size_class_table() {
  SizeClassTable t{};
  unsigned c = 0;
  for (uint64_t w = 1; w < t.size(); ++w) {
    while (c < kSizeClasses && kClassWords[c] < w) ++c;
    t[w] = static_cast<uint8_t>(c);
  }
  return t;
}
inline constexpr SizeClassTable kSizeClassOfWords = make_size_class_table();

constexpr uint32_t cells_per_block(unsigned size_class) {
  return static_cast<uint32_t>(kBlockWords / kClassWords[size_class]);
}

}  // namespace gc::marksweep
