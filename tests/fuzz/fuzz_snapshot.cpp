// libFuzzer target: arbitrary bytes as a heap snapshot (docs/snapshot.md).
// The reader runs without its checksum check (decode's check_sum false),
// so that mutations reach the structural checks behind it; a snapshot that
// decodes is replayed under the collector a hash of the input picks, into
// a 16 MB heap with --gc-verify, collected once, and written again. Nothing
// may crash, hang, leak, trip ASan/UBSan or fail heap verification (exit
// 71, which libFuzzer reports as "fuzz target exited"), and a refusal
// always says why.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "gc/collector.h"
#include "gc/snapshot/replay.h"
#include "gc/snapshot/snapshot.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

constexpr uint64_t kHeapBytes = 16ull << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string error;
  std::optional<gc::snapshot::Snapshot> s = gc::snapshot::decode(bytes, &error, /*check_sum=*/false);
  if (!s) {
    if (error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  // Objects that cannot fit are refused by the build; skip the allocation
  // storm of trying when they plainly cannot.
  if (s->object_bytes() > kHeapBytes / 2) return 0;

  uint64_t h = fuzz::hash_input(data, size);
  const auto& collectors = gc::registered_collectors();
  const gc::CollectorInfo& info = collectors[(h >> 8) % collectors.size()];
  if (info.unavailable && !info.unavailable().empty()) return 0;
  gc::snapshot::Replay replay(*s);
  gc::HeapOptions options;
  options.max_heap_bytes = kHeapBytes;
  options.gc_threads = 1;
  options.verify = true;
  std::unique_ptr<gc::Collector> heap = info.create(replay, options);
  if (!replay.build(*heap)) return 0;
  heap->collect(gc::GcCause::kExplicit);
  gc::snapshot::Replay::Reachable reachable = replay.reachable();
  if (reachable.objects > s->objects.size()) std::abort();
  gc::snapshot::encode(replay, replay, s->origin);
  return 0;
}
