#include "gc/collectors/cacheaware/cacheaware_options.h"

#include <cmath>

namespace gc::cacheaware {

namespace {

// Partitions of 256 KB by default (smaller in a small heap on a big mesh,
// default_partition_bytes): the paper left the size open, choosing
// pages large enough that "most heap partitions contain exactly one memory
// page" (L302). 256 KB holds every ordinary object (large ones start at 16
// KB) many times over, so huge objects stay rare, and a 512 MB heap still
// has 2,048 partitions, many more than any mesh gclab simulates.
constexpr uint64_t kDefaultPartitionBytes = 256 * 1024;
constexpr uint64_t kMinPartitionBytes = 16 * 1024;
constexpr unsigned kMaxMeshSide = 64;
// A 256-entry table suppresses repeats of the references sent most
// recently (L120; the size is left open). 2 KB per core.
constexpr unsigned kDefaultRefCache = 256;
// Mark requests kept per core for the update phase's shared table (L103:
// "we therefore fix the maximum size of the list").
constexpr unsigned kDefaultRequestList = 4096;
constexpr unsigned kDefaultGlobalSearchPercent = 50;

std::string check_partition_size(const std::string& value) {
  auto n = parse_size(value);
  if (!n || *n < kMinPartitionBytes || *n % kClearBlockBytes != 0 || *n > (uint64_t{1} << 36))
    return "bad partition size '" + value + "' (a multiple of the 4K clearing block, at least 16K)";
  return "";
}

bool parse_mesh(const std::string& value, unsigned& width, unsigned& height) {
  size_t x = value.find('x');
  if (x == std::string::npos) return false;
  auto w = parse_count(value.substr(0, x));
  auto h = parse_count(value.substr(x + 1));
  if (!w || !h || *w < 1 || *h < 1 || *w > kMaxMeshSide || *h > kMaxMeshSide) return false;
  width = static_cast<unsigned>(*w);
  height = static_cast<unsigned>(*h);
  return true;
}

std::string check_mesh(const std::string& value) {
  unsigned w = 0, h = 0;
  if (!parse_mesh(value, w, h)) return "bad mesh '" + value + "' (WxH, each side 1 to 64, e.g. 8x8)";
  return "";
}

std::string check_ref_cache(const std::string& value) {
  auto n = parse_count(value);
  if (!n || *n < 1 || *n > (1u << 20) || (*n & (*n - 1)) != 0)
    return "bad reference cache size '" + value + "' (a power of two, 1 to 1048576 entries)";
  return "";
}

constexpr OptionSpec kPartitionSizeOption =
    text_option("ca-partition-size", "SIZE",
                "256K (halved down to 16K until each core hosts 4), or --heap / --ca-partitions",
                "each heap partition's size, a multiple of the 4K clearing block", check_partition_size);
constexpr OptionSpec kPartitionsOption =
    count_option("ca-partitions", WorkedOutDefault{"--heap / --ca-partition-size"},
                 "the number of heap partitions (N)", "partition count", "1 to 16777216", 1, 1u << 24);
constexpr OptionSpec kMeshOption = text_option("ca-mesh", "WxH", "the squarest mesh of --gc-threads cores",
                                               "the virtual mesh of cores hosting the partitions; more cores "
                                               "than GC threads makes each thread host several",
                                               check_mesh);
constexpr OptionSpec kRefCacheOption = checked(
    count_option("ca-ref-cache", kDefaultRefCache, "entries of each core's cache of recently sent references",
                 "reference cache size", "a power of two, 1 to 1048576 entries", 1, 1u << 20),
    check_ref_cache);
constexpr OptionSpec kRequestsOption =
    count_option("ca-requests", kDefaultRequestList, "mark requests each core keeps for the update phase",
                 "request list size", "0 to 16777216", 0, 1u << 24);
constexpr OptionSpec kGlobalSearchOption =
    count_option("ca-global-search", kDefaultGlobalSearchPercent,
                 "search the whole heap for a block while less than this percent of the space free "
                 "after the last collection is allocated; past it, collect",
                 "global search threshold", "0 to 100 percent", 0, 100);
constexpr OptionSpec kHugeOption =
    choice_option("ca-huge", "top|sequential", "top",
                  "how a collection that needs their space compacts huge objects: cached at the top of "
                  "the heap first, keeping that much free (the paper's choice), or slid down in place "
                  "after the normal objects (its alternative)",
                  "huge object compaction", "top or sequential");
constexpr OptionSpec kHomingOption =
    choice_option("ca-homing", "partition|lines", "partition",
                  "where the heap's cache lines are homed: each partition's on the core hosting it (the "
                  "paper's cacheaware), or line i on core i mod C with the allocator preferring no core "
                  "(its dispar; with --ca-mesh=1x1 --gc-threads=1, its base)",
                  "cache line homing", "partition or lines");
constexpr OptionSpec kTriggerOption =
    choice_option("ca-trigger", "sizing|full", "sizing",
                  "when to collect: also once the program has allocated about twice what was in use after "
                  "the last collection (sizing, gclab's), or only when no allocator finds room in the heap "
                  "(full, the paper's)",
                  "collection trigger", "sizing or full");
constexpr OptionSpec kOptions[] = {kPartitionSizeOption, kPartitionsOption, kMeshOption,
                                   kRefCacheOption,      kRequestsOption,   kGlobalSearchOption,
                                   kHugeOption,          kHomingOption,     kTriggerOption};

// The squarest width x height = n, width <= height.
void square_mesh(unsigned n, unsigned& width, unsigned& height) {
  width = static_cast<unsigned>(std::sqrt(static_cast<double>(n)));
  while (width > 1 && n % width != 0) --width;
  width = std::max(width, 1u);
  height = n / width;
}

// 256 KB, halved (down to 16 KB) until every core hosts at least
// kMinPartitionsPerCore partitions: N must be much larger than C (L152).
constexpr unsigned kMinPartitionsPerCore = 4;
uint64_t default_partition_bytes(uint64_t limit, unsigned cores) {
  uint64_t bytes = kDefaultPartitionBytes;
  while (bytes > kMinPartitionBytes && limit / bytes < uint64_t{kMinPartitionsPerCore} * cores) bytes /= 2;
  return bytes;
}

std::string bytes_text(uint64_t bytes) {
  if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

}  // namespace

Options cacheaware_options(const HeapOptions& heap, std::string* error) {
  const OptionValues& v = heap.collector_options;
  Options o;
  uint64_t limit = heap.max_heap_bytes;
  if (const std::string* mesh = given_text(v, kMeshOption))
    parse_mesh(*mesh, o.mesh_width, o.mesh_height);
  else
    square_mesh(std::max(1u, heap.gc_threads), o.mesh_width, o.mesh_height);
  const std::string* size_text = given_text(v, kPartitionSizeOption);
  auto count = given_count(v, kPartitionsOption);
  if (size_text) o.partition_bytes = parse_size(*size_text).value_or(kDefaultPartitionBytes);
  if (count && !size_text) {
    o.partition_bytes = limit / *count / kClearBlockBytes * kClearBlockBytes;
    o.partitions = static_cast<uint32_t>(*count);
    if (o.partition_bytes < kMinPartitionBytes && error)
      *error = "--ca-partitions=" + std::to_string(*count) + " leaves partitions under 16K in a heap of " +
               bytes_text(limit);
  } else {
    if (!size_text) o.partition_bytes = default_partition_bytes(limit, o.cores());
    uint64_t fit = limit / o.partition_bytes;
    o.partitions = static_cast<uint32_t>(count ? *count : std::min<uint64_t>(fit, 1u << 24));
    if (count && *count * o.partition_bytes > limit && error)
      *error = "--ca-partitions=" + std::to_string(*count) + " of " + bytes_text(o.partition_bytes) +
               " need more than the heap limit of " + bytes_text(limit);
    if (o.partitions == 0 && error)
      *error = "the heap limit of " + bytes_text(limit) + " holds no partition of " +
               bytes_text(o.partition_bytes) + " (zero partitions)";
  }
  if (error && error->empty() && o.cores() > o.partitions)
    *error = "a mesh of " + std::to_string(o.cores()) +
             " cores needs at least as many partitions; there are " + std::to_string(o.partitions);
  o.ref_cache_entries = static_cast<unsigned>(option_count(v, kRefCacheOption));
  o.request_list = static_cast<unsigned>(option_count(v, kRequestsOption));
  o.global_search_percent = static_cast<unsigned>(option_count(v, kGlobalSearchOption));
  o.huge_cached_at_top = option_is(v, kHugeOption, "top");
  o.homing = option_is(v, kHomingOption, "lines") ? Homing::kLines : Homing::kPartition;
  o.sizing_trigger = option_is(v, kTriggerOption, "sizing");
  return o;
}

Variant cacheaware_variant(const HeapOptions& heap) {
  Options o = cacheaware_options(heap, nullptr);
  // The paper's three collectors are homings of one (L264-268): base is
  // dispar on one core.
  bool one_core = o.cores() == 1 && heap.gc_threads <= 1;
  Variant v{o.homing == Homing::kPartition ? "cacheaware"
            : one_core                     ? "base (the paper's one-core baseline)"
                                           : "dispar (cache lines homed by address)",
            {}};
  if (o.sizing_trigger)
    v.departures.push_back(
        "a sizing trigger at twice the data in use (the paper: collect when the heap is full)");
  return v;
}

OptionValues cacheaware_paper_configuration(const HeapOptions&) { return {{kTriggerOption.name, "full"}}; }

std::string cacheaware_check_configuration(const HeapOptions& heap) {
  std::string error;
  cacheaware_options(heap, &error);
  return error;
}

std::span<const OptionSpec> cacheaware_option_table() { return kOptions; }

}  // namespace gc::cacheaware
