#include "gc/collectors/markcompact/markcompact_options.h"

#include "gc/collectors/semispace/semispace_options.h"

namespace gc {

namespace {

std::string check_dense_prefix(const std::string& value) {
  if (value == "off") return "";
  auto n = parse_count(value);
  if (!n || *n < 50 || *n > 100) return "bad dense prefix '" + value + "' (off, or 50 to 100 percent live)";
  return "";
}

constexpr OptionSpec kOptions[] = {
    kGcLabOption,
    {.name = "young",
     .kind = OptionKind::kSize,
     .value_name = "SIZE",
     .default_text = "16M, at most 1/8 of the heap",
     .help = "the young generation, both semispaces",
     .what = "young generation size",
     .hint = "at least 64K",
     .min = 64u << 10},
    {.name = "tenure",
     .kind = OptionKind::kCount,
     .value_name = "N",
     .default_text = "2",
     .help = "young collections an object survives before it is promoted (0 to 15)",
     .what = "tenuring threshold",
     .hint = "0 to 15",
     .max = 15},
    {.name = "card-strides",
     .kind = OptionKind::kCount,
     .value_name = "N",
     .default_text = "256",
     .help = "card-table scan tasks",
     .what = "card stride count",
     .hint = "1 to 1048576",
     .min = 1,
     .max = 1u << 20},
    {.name = "card-partition",
     .kind = OptionKind::kChoice,
     .value_name = "strides|blocks",
     .default_text = "strides",
     .help = "task i scans cards i, i+N, i+2N, ... (strides) or the i-th contiguous block",
     .what = "card partition",
     .hint = "strides or blocks",
     .choices = "strides|blocks"},
    {.name = "mc-units",
     .kind = OptionKind::kCount,
     .value_name = "N",
     .default_text = "4, the paper's m = 4n",
     .help = "old-space units per GC thread in full collections",
     .what = "unit count",
     .hint = "1 to 64 units per GC thread",
     .min = 1,
     .max = 64},
    {.name = "dense-prefix",
     .kind = OptionKind::kText,
     .value_name = "off|PERCENT",
     .default_text = "95",
     .help =
         "leave old-space units at least PERCENT live in place, or never: off leaves the leading ones, and "
         "those at the end each region slides towards",
     .check = check_dense_prefix},
};

}  // namespace

MarkCompactCollectorOptions markcompact_collector_options(const HeapOptions& heap) {
  const OptionValues& v = heap.collector_options;
  MarkCompactCollectorOptions o;
  o.gc_lab_bytes = option_size(v, kGcLabOption.name).value_or(0);
  o.young_bytes = option_size(v, "young").value_or(0);
  if (auto n = option_count(v, "tenure")) o.tenure_age = static_cast<int>(*n);
  o.card_tasks = static_cast<unsigned>(option_count(v, "card-strides").value_or(0));
  const std::string* partition = option_text(v, "card-partition");
  o.card_blocks = partition && *partition == "blocks";
  o.mc_units_per_thread = static_cast<unsigned>(option_count(v, "mc-units").value_or(0));
  if (const std::string* prefix = option_text(v, "dense-prefix")) {
    if (*prefix == "off")
      o.dense_prefix = false;
    else
      o.dense_prefix_percent = static_cast<unsigned>(parse_count(*prefix).value_or(0));
  }
  return o;
}

std::span<const OptionSpec> markcompact_option_table() { return kOptions; }

}  // namespace gc
