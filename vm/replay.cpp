#include "vm/replay.h"

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>

#include "gc/exit_status.h"
#include "gc/snapshot/replay.h"

namespace vm {

int replay(const std::string& path, const VMOptions& run, const ObserveOptions& observe,
           const std::optional<SnapshotTarget>& heap_snapshot, const std::optional<AnimateTarget>& animate,
           uint64_t animate_limit) {
  std::string bytes;
  if (auto why = read_file(path, &bytes)) {
    std::cerr << "vm: cannot read '" << path << "': " << *why << "\nTry 'vm --help' for more information.\n";
    return gc::kExitNoInput;
  }
  std::string error;
  std::optional<gc::snapshot::Snapshot> decoded = gc::snapshot::decode(bytes, &error);
  if (!decoded) {
    std::cerr << "vm: " << path << ": " << error << "\n";
    return gc::kExitDataError;
  }
  bytes = {};
  const gc::snapshot::Snapshot& s = *decoded;
  gc::snapshot::Replay heap_builder(s);

  VMOptions options = run;
  std::unique_ptr<gc::observe::Log> log;
  if (observe.log) log = open_log(observe, options);
  options.heap.log = log.get();
  options.heap.record_events = true;
  options.heap.keep_event_history = true;
  std::optional<gc::snapshot::Request> snapshot;
  if (heap_snapshot) {
    snapshot.emplace(heap_snapshot->collection, &heap_builder, s.origin);
    options.heap.heap_snapshot = &*snapshot;
  }
  // Without @N or @full, the replay's own collection: none until the heap is built.
  std::optional<gc::observe::Recording> recording;
  bool record_the_replay = animate && !animate->collection.collection && !animate->collection.first_full;
  if (animate) {
    recording.emplace(record_the_replay
                          ? gc::observe::Recording::Target{.collection = UINT64_MAX, .first_full = false}
                          : animate->collection,
                      animate_limit);
    options.heap.recording = &*recording;
  }
  std::unique_ptr<gc::Collector> heap =
      gc::find_collector(options.collector)->create(heap_builder, options.heap);

  std::cout << "replay: " << path << ": the heap of " << s.origin.program << " at GC(" << s.origin.collection
            << ") under " << s.origin.collector << ": " << s.objects.size() << " objects, "
            << s.object_bytes() << " bytes, " << s.groups.size() << " root groups\n";
  if (!heap_builder.build(*heap)) {
    std::cout.flush();
    std::cerr << "error: out of memory: the snapshot's " << s.object_bytes() << " bytes do not fit in "
              << options.collector << "'s heap of " << heap->max_heap() << " bytes (--heap)\n";
    return gc::kExitSoftware;
  }
  std::cout << "rebuilt under " << options.collector << " with " << heap_builder.build_collections()
            << " collections during the build\n";
  if (record_the_replay)
    recording->retarget({.collection = heap->events.next_collection(), .first_full = false});
  heap->collect(gc::GcCause::kExplicit);
  const gc::observe::CollectionRecord& c = heap->events.records().back();
  gc::snapshot::Replay::Reachable reachable = heap_builder.reachable();
  std::printf(
      "GC(%llu) %s: pause %.3f ms; live after: %llu bytes (%s's count); reachable: %llu objects, %llu "
      "bytes\n",
      static_cast<unsigned long long>(c.id), gc::observe::kind_name(c.kind),
      static_cast<double>(c.end_ns - c.start_ns) / 1e6, static_cast<unsigned long long>(c.live_after),
      options.collector.c_str(), static_cast<unsigned long long>(reachable.objects),
      static_cast<unsigned long long>(reachable.bytes));
  std::fflush(stdout);
  int status = 0;
  if (!write_observe_outputs(*heap, observe)) status = gc::kExitSoftware;
  if (snapshot && !write_heap_snapshot(*snapshot, heap_snapshot->path, *heap)) status = gc::kExitSoftware;
  if (recording && !write_animation(*recording, animate->path, *heap)) status = gc::kExitSoftware;
  return status;
}

}  // namespace vm
