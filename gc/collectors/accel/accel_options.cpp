#include "gc/collectors/accel/accel_options.h"

#include <bit>
#include <string>
#include <string_view>

namespace gc {

namespace {

// Sizes of set-associative structures must give a power-of-two count of sets.
std::string check_l2_tlb(const std::string& value) {
  auto n = parse_count(value);
  if (!n || *n < 4 || *n > 65536 || !std::has_single_bit(*n))
    return "bad --accel-l2-tlb '" + value + "' (a power of two from 4 to 65536 entries)";
  return "";
}

std::string check_walker_cache(const std::string& value) {
  auto n = parse_size(value);
  if (!n || *n < 256 || *n > (64u << 20) || !std::has_single_bit(*n))
    return "bad --accel-walker-cache '" + value + "' (a power of two from 256 to 64M bytes, e.g. 8K)";
  return "";
}

constexpr OptionSpec kMemoryOption =
    choice_option("accel-memory", "dram|ideal", "dram",
                  "DDR3-2000 DRAM (14-14-14-47 ns, 8 banks, open page), or an ideal pipe of 1 cycle and "
                  "8 GB/s",
                  "--accel-memory", "dram or ideal");
constexpr OptionSpec kSchedulerOption =
    choice_option("accel-scheduler", "frfcfs|fifo", "frfcfs", "the DRAM controller's scheduling",
                  "--accel-scheduler", "frfcfs or fifo");
constexpr OptionSpec kInflightOption =
    count_option("accel-inflight", accel::DramConfig{}.max_in_flight,
                 "DRAM requests the controller holds at once", "--accel-inflight", "1 to 1024", 1, 1024);
constexpr OptionSpec kQueueOption = count_option("accel-queue", accel::MarkQueueConfig{}.entries,
                                                 "mark-queue entries (64-bit; twice as many compressed)",
                                                 "--accel-queue", "1 to 1048576 entries", 1, 1u << 20);
constexpr OptionSpec kCompressOption =
    choice_option("accel-compress", "on|off", "off", "32-bit references in the mark queue and its spills",
                  "--accel-compress", "on or off");
constexpr OptionSpec kSpillOption =
    size_option("accel-spill", accel::MarkQueueConfig{}.spill_bytes, "the mark queue's spill region",
                "--accel-spill", "64 to 1G bytes, e.g. 4M", 64, 1u << 30);
constexpr OptionSpec kSlotsOption =
    count_option("accel-slots", accel::MarkerConfig{}.slots, "the marker's request slots", "--accel-slots",
                 "1 to 1024", 1, 1024);
constexpr OptionSpec kMarkCacheOption =
    count_option("accel-mark-cache", accel::MarkerConfig{}.mark_cache_entries,
                 "entries of the marker's mark-bit cache; 0: none", "--accel-mark-cache", "0 to 64", 0, 64);
constexpr OptionSpec kTracerQueueOption = count_option(
    "accel-tracer-queue", accel::TraversalConfig{}.tracer_queue_entries,
    "objects waiting between the marker and the tracer", "--accel-tracer-queue", "1 to 65536", 1, 65536);
constexpr OptionSpec kTlbOption =
    count_option("accel-tlb", accel::TranslationConfig{}.l1_entries,
                 "entries of the marker's and of the tracer's TLB", "--accel-tlb", "1 to 4096", 1, 4096);
constexpr OptionSpec kL2TlbOption =
    checked(count_option("accel-l2-tlb", accel::TranslationConfig{}.l2_entries,
                         "entries of the shared L2 TLB (4-way)", "--accel-l2-tlb",
                         "a power of two from 4 to 65536 entries", 4, 65536),
            check_l2_tlb);
constexpr OptionSpec kWalkerOption = choice_option("accel-walker", "blocking|nonblocking|off", "blocking",
                                                   "the page-table walker; off translates at no cost",
                                                   "--accel-walker", "blocking, nonblocking or off");
constexpr OptionSpec kWalkerCacheOption =
    checked(size_option("accel-walker-cache", accel::TranslationConfig{}.walker_cache_bytes,
                        "the page-table walker's cache", "--accel-walker-cache",
                        "a power of two from 256 to 64M bytes, e.g. 8K", 256, 64u << 20),
            check_walker_cache);
constexpr OptionSpec kSweepersOption =
    count_option("accel-sweepers", accel::ReclamationConfig{}.sweepers,
                 "the reclamation unit's block sweepers", "--accel-sweepers", "1 to 64", 1, 64);
constexpr OptionSpec kBaselineOption = choice_option(
    "accel-baseline", "on|off", WorkedOutDefault{"on; off under --gc-stress"},
    "replay mark and sweep on the in-order CPU model too, for the speedups", "--accel-baseline", "on or off");
constexpr OptionSpec kOptions[] = {kMemoryOption,      kSchedulerOption, kInflightOption, kQueueOption,
                                   kCompressOption,    kSpillOption,     kSlotsOption,    kMarkCacheOption,
                                   kTracerQueueOption, kTlbOption,       kL2TlbOption,    kWalkerOption,
                                   kWalkerCacheOption, kSweepersOption,  kBaselineOption};

unsigned count_of(const OptionValues& v, const OptionSpec& spec) {
  return static_cast<unsigned>(option_count(v, spec));
}

}  // namespace

AccelOptions accel_options(const HeapOptions& heap) {
  const OptionValues& v = heap.collector_options;
  AccelOptions o;
  o.ideal_memory = option_is(v, kMemoryOption, "ideal");
  if (option_is(v, kSchedulerOption, "fifo")) o.dram.scheduler = accel::DramScheduler::kFifo;
  o.dram.max_in_flight = count_of(v, kInflightOption);
  accel::TraversalConfig& t = o.traversal;
  t.queue.entries = count_of(v, kQueueOption);
  t.queue.compressed = option_is(v, kCompressOption, "on");
  t.queue.spill_bytes = option_size(v, kSpillOption);
  t.marker.slots = count_of(v, kSlotsOption);
  t.marker.mark_cache_entries = count_of(v, kMarkCacheOption);
  t.tracer_queue_entries = count_of(v, kTracerQueueOption);
  t.translation.l1_entries = count_of(v, kTlbOption);
  t.translation.l2_entries = count_of(v, kL2TlbOption);
  if (option_is(v, kWalkerOption, "nonblocking")) t.translation.walker = accel::WalkerMode::kNonBlocking;
  if (option_is(v, kWalkerOption, "off")) t.translation.walker = accel::WalkerMode::kOff;
  t.translation.walker_cache_bytes = option_size(v, kWalkerCacheOption);
  o.reclamation.sweepers = count_of(v, kSweepersOption);
  // Stress mode collects for correctness, at every allocation: the CPU's
  // replay, which times the software collector and changes nothing in the
  // heap, would take two thirds of each collection.
  const std::string* baseline = given_text(v, kBaselineOption);
  o.baseline = baseline ? *baseline == "on" : heap.stress_interval == 0;
  return o;
}

std::span<const OptionSpec> accel_option_table() { return kOptions; }

Variant accel_variant(const HeapOptions& heap) {
  Variant v{"the simulated GC unit of Maas et al. 2018", {}};
  for (const OptionSpec& spec : kOptions) {
    const std::string* value = given_text(heap.collector_options, spec);
    // The CPU's replay only times the software collector for the speedups.
    if (!value || std::string_view(spec.name) == kBaselineOption.name) continue;
    std::string model = option_default_text(spec);
    bool same = spec.kind == OptionKind::kChoice
                    ? *value == model
                    : *(spec.kind == OptionKind::kSize ? parse_size(*value) : parse_count(*value)) ==
                          spec.default_value;
    if (!same)
      v.departures.push_back("--" + std::string(spec.name) + "=" + *value +
                             " (the model's default: " + model + ")");
  }
  return v;
}

OptionValues accel_paper_configuration(const HeapOptions&) { return {}; }

}  // namespace gc
