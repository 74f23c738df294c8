// The heap verifier (docs/architecture.md, "How a collection runs"; --gc-verify).
//
// Independent of every collector (it shares no code with copying, marking
// or scanning), it sees a heap only through the description below, which a
// collector fills in. Run before and after a collection, it
//   1. walks every linear space, checking that it is well-formed objects
//      end to end, and every block of cells, checking that each allocated
//      cell (first word not a free-list link) holds one object that fits;
//   2. checks every live large object's header;
//   3. traces from the roots with its own stack and visited set, checking
//      that every reference is the header of an object found in 1 or 2,
//      never in an evacuated space;
//   4. for a generational heap, checks the card invariant (card_scan.h).
//
// check_heap returns the first failure (tests use this);
// verify_heap_or_exit prints it as
//   gc-verify: <what> (object 0x..., slot i, space ..., collection N)
// and exits with status kExitVerifyFailure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/exit_status.h"
#include "gc/layout.h"

namespace gc::verify {

struct SpaceRange {
  const char* name;
  const Word* begin;
  const Word* end;
};

// A run of equal-size cells (a non-moving collector's block): each cell is
// free, its first word a free-list link (tag 00), or holds one object
// starting at the cell's first word, with unused words after it.
struct CellRange {
  const char* name;
  const Word* begin;
  const Word* end;  // begin plus a whole number of cells
  uint64_t cell_words;
};

// What a collector tells the verifier about its heap right now.
struct HeapShape {
  // Spaces allocated by bumping, each walkable from begin to exactly end.
  std::vector<SpaceRange> linear_spaces;
  // Blocks of cells (segregated free lists).
  std::vector<CellRange> cell_spaces;
  // Spaces whose contents are stale (from-space): nothing may point there.
  std::vector<SpaceRange> evacuated_spaces;
  // Live large objects (header addresses) and the region they live in.
  std::vector<const Word*> large_objects;
  SpaceRange large_space{"large", nullptr, nullptr};
  // Generational heaps: the young spaces and the biased card table, for
  // the card invariant (card_scan.h); no card table: not checked.
  std::vector<SpaceRange> young_spaces;
  const uint8_t* card_base = nullptr;
  // Class ids above this are corrupt headers.
  uint32_t max_class_id = kMaxClassId;
};

struct Failure {
  std::string what;
  uintptr_t object = 0;  // header address of the object holding the slot
  int64_t slot = -1;     // slot index, -1 when not about a slot
  std::string space;     // the space the object (or root group) lies in
  uint64_t collection = 0;

  std::string message() const;
};

std::optional<Failure> check_heap(const HeapShape& shape, RootSet& roots, uint64_t collection);
// Between a collector's mark and sweep (for gpu and accel, whose marks come
// from a device): the same walks and trace, with mark bits expected, and
// the mark set compared with the trace's: every reachable object marked,
// no unreachable one.
std::optional<Failure> check_marks(const HeapShape& shape, RootSet& roots, uint64_t collection);
// The --gc-verify form of check_marks: prints and exits like
// verify_heap_or_exit.
void verify_marks_or_exit(const Collector& heap, RootSet& roots, uint64_t collection);
// Prints a failure found elsewhere (a collector's own structure) the same
// way, and exits with kExitVerifyFailure.
[[noreturn]] void report_and_exit(const Failure& failure);
// The --gc-verify path: on failure prints Failure::message() (prefixed with
// `when`, e.g. "before" or "after") and exits with kExitVerifyFailure.
void verify_heap_or_exit(const Collector& heap, RootSet& roots, uint64_t collection, const char* when);

}  // namespace gc::verify
