// Replaying a heap snapshot (docs/snapshot.md): the snapshot's objects
// rebuilt under any collector, through its allocator and write barrier as
// a program would build them, with the snapshot's root groups as the roots.
#pragma once

#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/snapshot/snapshot.h"

namespace gc::snapshot {

class Replay final : public RootSet, public HeapSchema {
 public:
  explicit Replay(const Snapshot& snapshot) : snapshot_(snapshot) {}

  // Allocates every object (fiber stacks pinned, as the VM does), then
  // fills in its slots and raw words and its header's age and hash state.
  // While it builds, every object is a root, so a collection the build
  // needs (a young generation filling up) keeps them all. Returns false
  // when the heap ran out.
  bool build(Collector& heap);
  // Collections the build needed.
  uint64_t build_collections() const { return build_collections_; }

  // Objects and bytes reachable from the roots now (an independent count,
  // not the collector's).
  struct Reachable {
    uint64_t objects = 0;
    uint64_t bytes = 0;
  };
  Reachable reachable();

  // --- RootSet: the snapshot's groups (and, while building, every object)
  void root_groups(std::vector<RootGroup>& out) override;
  void process_weak(WeakResolver&) override {}

  // --- HeapSchema: the snapshot's class names; its native words are
  // already zero.
  std::string name_of_class(uint32_t class_id) const override { return snapshot_.class_name(class_id); }
  uint32_t native_raw_words(uint32_t) const override { return 0; }

 private:
  Value resolved(Value v) const { return v.is_ref() ? objects_[ref_index(v)] : v; }

  const Snapshot& snapshot_;
  std::vector<Value> objects_;  // by index, while building
  std::vector<Value> roots_;    // the groups' slots, one after another
  bool building_ = false;
  uint64_t build_collections_ = 0;
};

}  // namespace gc::snapshot
