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

constexpr OptionSpec kOptions[] = {
    choice_option("accel-memory", "dram|ideal", "dram",
                  "DDR3-2000 DRAM (14-14-14-47 ns, 8 banks, open page), or an ideal pipe of 1 cycle and "
                  "8 GB/s",
                  "--accel-memory", "dram or ideal"),
    choice_option("accel-scheduler", "frfcfs|fifo", "frfcfs", "the DRAM controller's scheduling",
                  "--accel-scheduler", "frfcfs or fifo"),
    count_option("accel-inflight", "16", "DRAM requests the controller holds at once", "--accel-inflight",
                 "1 to 1024", 1, 1024),
    count_option("accel-queue", "1024", "mark-queue entries (64-bit; twice as many compressed)",
                 "--accel-queue", "1 to 1048576 entries", 1, 1u << 20),
    choice_option("accel-compress", "on|off", "off", "32-bit references in the mark queue and its spills",
                  "--accel-compress", "on or off"),
    size_option("accel-spill", "4M", "the mark queue's spill region", "--accel-spill",
                "64 to 1G bytes, e.g. 4M", 64, 1u << 30),
    count_option("accel-slots", "16", "the marker's request slots", "--accel-slots", "1 to 1024", 1, 1024),
    count_option("accel-mark-cache", "0: none", "entries of the marker's mark-bit cache",
                 "--accel-mark-cache", "0 to 64", 0, 64),
    count_option("accel-tracer-queue", "32", "objects waiting between the marker and the tracer",
                 "--accel-tracer-queue", "1 to 65536", 1, 65536),
    count_option("accel-tlb", "32", "entries of the marker's and of the tracer's TLB", "--accel-tlb",
                 "1 to 4096", 1, 4096),
    text_option("accel-l2-tlb", "N", "128", "entries of the shared L2 TLB (4-way)", check_l2_tlb),
    choice_option("accel-walker", "blocking|nonblocking|off", "blocking",
                  "the page-table walker; off translates at no cost", "--accel-walker",
                  "blocking, nonblocking or off"),
    text_option("accel-walker-cache", "SIZE", "8K", "the page-table walker's cache", check_walker_cache),
    count_option("accel-sweepers", "2", "the reclamation unit's block sweepers", "--accel-sweepers",
                 "1 to 64", 1, 64),
    choice_option("accel-baseline", "on|off", "on; off under --gc-stress",
                  "replay mark and sweep on the in-order CPU model too, for the speedups", "--accel-baseline",
                  "on or off"),
};

bool is(const OptionValues& v, const char* name, const char* word) {
  const std::string* text = option_text(v, name);
  return text && *text == word;
}

unsigned count_or(const OptionValues& v, const char* name, unsigned fallback) {
  auto n = option_count(v, name);
  return n ? static_cast<unsigned>(*n) : fallback;
}

}  // namespace

AccelOptions accel_options(const HeapOptions& heap) {
  const OptionValues& v = heap.collector_options;
  AccelOptions o;
  o.ideal_memory = is(v, "accel-memory", "ideal");
  if (is(v, "accel-scheduler", "fifo")) o.dram.scheduler = accel::DramScheduler::kFifo;
  o.dram.max_in_flight = count_or(v, "accel-inflight", o.dram.max_in_flight);
  accel::TraversalConfig& t = o.traversal;
  t.queue.entries = count_or(v, "accel-queue", t.queue.entries);
  t.queue.compressed = is(v, "accel-compress", "on");
  if (auto bytes = option_size(v, "accel-spill")) t.queue.spill_bytes = *bytes;
  t.marker.slots = count_or(v, "accel-slots", t.marker.slots);
  t.marker.mark_cache_entries = count_or(v, "accel-mark-cache", t.marker.mark_cache_entries);
  t.tracer_queue_entries = count_or(v, "accel-tracer-queue", t.tracer_queue_entries);
  t.translation.l1_entries = count_or(v, "accel-tlb", t.translation.l1_entries);
  if (auto n = option_text(v, "accel-l2-tlb"))
    t.translation.l2_entries = static_cast<unsigned>(*parse_count(*n));
  if (is(v, "accel-walker", "nonblocking")) t.translation.walker = accel::WalkerMode::kNonBlocking;
  if (is(v, "accel-walker", "off")) t.translation.walker = accel::WalkerMode::kOff;
  if (auto n = option_text(v, "accel-walker-cache")) t.translation.walker_cache_bytes = *parse_size(*n);
  o.reclamation.sweepers = count_or(v, "accel-sweepers", o.reclamation.sweepers);
  // Stress mode collects for correctness, at every allocation: the CPU's
  // replay, which times the software collector and changes nothing in the
  // heap, would take two thirds of each collection.
  const std::string* baseline = option_text(v, "accel-baseline");
  o.baseline = baseline ? *baseline == "on" : heap.stress_interval == 0;
  return o;
}

std::span<const OptionSpec> accel_option_table() { return kOptions; }

Variant accel_variant(const HeapOptions& heap) {
  Variant v{"the simulated GC unit of Maas et al. 2018", {}};
  for (const OptionSpec& spec : kOptions) {
    const std::string* value = option_text(heap.collector_options, spec.name);
    // The CPU's replay only times the software collector for the speedups.
    if (!value || std::string_view(spec.name) == "accel-baseline") continue;
    std::string_view shown(spec.default_text);
    std::string model(shown.substr(0, shown.find(':')));
    auto a = parse_size(*value), b = parse_size(model);
    if (a && b ? *a == *b : *value == model) continue;
    v.departures.push_back("--" + std::string(spec.name) + "=" + *value + " (the model's default: " + model +
                           ")");
  }
  return v;
}

OptionValues accel_paper_configuration(const HeapOptions&) { return {}; }

}  // namespace gc
