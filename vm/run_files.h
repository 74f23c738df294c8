// The files a run of the VM reads and writes beside the program's own
// output: the script or snapshot it reads, and the outputs named on the
// command line (docs/observability.md, docs/snapshot.md), written once the
// run or the replay is over.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gc/collector.h"
#include "gc/observe/log.h"
#include "gc/observe/recording.h"
#include "gc/observe/stats.h"
#include "gc/snapshot/snapshot.h"
#include "vm/vm.h"

namespace vm {

// --gc-log, --gc-stats, --gc-trace, --gc-report (docs/observability.md).
struct ObserveOptions {
  bool log = false;
  bool log_debug = false;
  std::string log_file;  // empty: stderr
  bool stats = false;
  bool stats_json = false;
  std::string stats_file;  // empty: stderr
  std::string trace_file;
  std::string report_file;
  std::optional<gc::observe::Summary::HeapLimit> heap_limit;  // --heap=Nx, for --gc-stats
  bool needs_history() const { return stats || !trace_file.empty() || !report_file.empty(); }
};

// --heap-snapshot=FILE[@N]: the file and the collection (none: the last).
struct SnapshotTarget {
  std::string path;
  std::optional<uint64_t> collection;
};
// --gc-animate=FILE[@N|@full]: the collection to record, GC(N) or the
// first full one; none: the first collection.
struct AnimateTarget {
  std::string path;
  gc::observe::Recording::Target collection;
};

// Reads a whole regular file; on failure returns why.
std::optional<std::string> read_file(const std::string& path, std::string* out);

// Exits 73 with the reason: no hint to --help, since the command line is
// right and the file system refuses.
[[noreturn]] void cannot_write(const std::string& what, const std::string& path, const std::string& why);

// --gc-log's sink, on stderr or in its file (exit 73 where that cannot be
// opened), announcing the collector and its variant.
std::unique_ptr<gc::observe::Log> open_log(const ObserveOptions& observe, const VMOptions& options);

// The end-of-run outputs; false if one could not be written.
bool write_observe_outputs(gc::Collector& heap, const ObserveOptions& o);

// --heap-snapshot's file; false, with a message, if the collection it
// names never ran or the file cannot be written.
bool write_heap_snapshot(const gc::snapshot::Request& snapshot, const std::string& path, gc::Collector& heap);

// --gc-animate's page; false, with a message, if the collection never ran,
// was too large to record, or the file cannot be written.
bool write_animation(const gc::observe::Recording& recording, const std::string& path, gc::Collector& heap);

}  // namespace vm
