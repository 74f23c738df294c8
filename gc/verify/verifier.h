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

#include "gc/exit_status.h"
#include "gc/layout.h"
#include "gc/roots.h"
#include "gc/verify/heap_shape.h"

namespace gc {
// The collection frame (collector.cpp) calls the verifier as a hook, with
// itself as the heap to describe: known here by name only, so the
// verifier includes nothing of the interface that calls it.
class Collector;
}  // namespace gc

namespace gc::verify {

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
// At an incremental collector's atomic phase (the tri-colour invariant):
// the same walks and trace, with every reachable object marked; a marked
// object the trace does not reach is floating garbage, allowed and
// counted. On failure, `failure` names the marked object that holds the
// unmarked one (or a root group) and the slot, and `unmarked` is it.
struct ReachableMarked {
  std::optional<Failure> failure;
  uintptr_t unmarked = 0;
  uint64_t floating = 0;  // marked, unreached objects
};
ReachableMarked check_reachable_marked(const HeapShape& shape, RootSet& roots, uint64_t collection);
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
