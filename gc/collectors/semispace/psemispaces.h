// pSemispaces (Flood, Detlefs, Shavit and Zhang 2001, section 4) for
// semispace: the collector's phase (SemispaceCollector::scavenge_in_parallel,
// psemispaces.cpp) runs ParallelScavenger::run on every GC thread at once
// (gc/plan/scavenge_threads.h). The copy policy is the plans' shared one
// (gc/plan/copy_scavenger.h); this scavenger only says where a survivor
// goes: into to-space, with no promotion to decide.
#pragma once

#include <cstdint>

#include "gc/plan/copy_scavenger.h"

namespace gc {

// pSemispaces for semispace: every survivor is copied into to-space.
class ParallelScavenger final : public CopyScavenger<ParallelScavenger> {
 public:
  using CopyScavenger::CopyScavenger;
  static constexpr bool kOwnedForwarding = true;

 private:
  friend class CopyScavenger<ParallelScavenger>;

  [[gnu::always_inline]] Word* allocate_copy(Word, uint64_t words, Word&) { return allocate(words); }
  void undo_copy(Word* p, uint64_t words) { undo_allocation(p, words); }
  void copied(Word*, uint64_t) {}
};

}  // namespace gc
