// The root set: how the VM hands its roots to a collector, and how a
// collector answers for weak references. A collector sees the VM only
// through this and the object layout (layout.h).
#pragma once

#include <cstddef>
#include <vector>

#include "gc/layout.h"

namespace gc {

// A contiguous run of root slots. The VM hands roots over as many small
// groups (static overpartitioning, Flood et al. 2001, L93-95 and L113) so
// that parallel collectors can claim them dynamically.
struct RootGroup {
  Value* slots;
  size_t count;
  // What the slots are ("globals"), for heap snapshots and messages.
  const char* name = "roots";
};

// Answers, after tracing, whether an object survived and where it now is.
class WeakResolver {
 public:
  virtual ~WeakResolver() = default;
  // The object's current header address, or nullptr if it died.
  virtual Word* resolve(Word* header) = 0;
};

// The answer after a mark that moves nothing: a marked object survives
// where it is.
class MarkedSurvives final : public WeakResolver {
 public:
  Word* resolve(Word* header) override { return Header::is_marked(*header) ? header : nullptr; }
};

class RootSet {
 public:
  virtual ~RootSet() = default;
  // Called on the mutator thread when a collection starts, before any root
  // is read (the VM clears dead stack slots here).
  virtual void prepare_for_collection() {}
  // Appends every root group. Groups must not overlap.
  virtual void root_groups(std::vector<RootGroup>& out) = 0;
  // After tracing: update or drop weak references (fibers' native state).
  virtual void process_weak(WeakResolver& resolver) = 0;
};

}  // namespace gc
