// vm --replay=FILE: the heap of a snapshot (docs/snapshot.md) rebuilt
// under one collector, one full collection, its report on standard output,
// then the usual outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vm/run_files.h"
#include "vm/vm.h"

namespace vm {

// The snapshot at `path` replayed under `run`'s collector and options;
// returns the exit status: 66 for a file that cannot be read, 65 for a
// damaged one, 70 where the heap does not fit or an output cannot be
// written.
int replay(const std::string& path, const VMOptions& run, const ObserveOptions& observe,
           const std::optional<SnapshotTarget>& heap_snapshot, const std::optional<AnimateTarget>& animate,
           uint64_t animate_limit);

}  // namespace vm
