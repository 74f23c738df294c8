// Option tables (gc/options.h) and the registry's use of them.
#include <doctest/doctest.h>

#include <string>

#include "gc/collector.h"
#include "gc/collectors/gpu/gpu_options.h"
#include "gc/collectors/markcompact/markcompact_options.h"
#include "gc/collectors/semispace/semispace_options.h"
#include "gc/options.h"

using namespace gc;

namespace {

constexpr OptionSpec kCount{
    .name = "n", .kind = OptionKind::kCount, .what = "count", .hint = "1 to 9", .min = 1, .max = 9};
constexpr OptionSpec kSize{.name = "s", .kind = OptionKind::kSize, .what = "size", .min = 1024};
constexpr OptionSpec kChoice{
    .name = "c", .kind = OptionKind::kChoice, .what = "word", .hint = "a or bb", .choices = "a|bb"};

const OptionSpec* find_in(std::span<const OptionSpec> table, const std::string& name) {
  for (const OptionSpec& s : table)
    if (name == s.name) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("options: each kind checks its values and says why it refuses one") {
  CHECK(validate_option(kCount, "9").empty());
  CHECK(validate_option(kCount, "10") == "bad count '10' (1 to 9)");
  CHECK(validate_option(kCount, "x") == "bad count 'x' (1 to 9)");
  CHECK(validate_option(kSize, "1K").empty());
  CHECK(validate_option(kSize, "1000") == "bad size '1000'");
  CHECK(validate_option(kChoice, "bb").empty());
  CHECK(validate_option(kChoice, "b") == "bad word 'b' (a or bb)");
  CHECK(validate_option(kChoice, "a|bb") == "bad word 'a|bb' (a or bb)");
}

TEST_CASE("options: sizes take K, M and G suffixes; counts are plain digits") {
  CHECK(parse_size("64M") == 64ull << 20);
  CHECK(parse_size("2g") == 2ull << 30);
  CHECK(parse_size("512") == 512);
  CHECK(!parse_size("0"));
  CHECK(!parse_size("1Q"));
  CHECK(parse_count("15") == 15);
  CHECK(!parse_count("-1"));
  CHECK(!parse_count(""));
}

TEST_CASE("options: --help lines wrap the help under the flag's column") {
  std::string text = describe_options(std::span<const OptionSpec>(&kCount, 1));
  CHECK(text.rfind("  --n ", 0) == 0);  // no value name, no "="
  constexpr OptionSpec long_help{.name = "long-option-name",
                                 .kind = OptionKind::kText,
                                 .value_name = "VALUE",
                                 .default_text = "none",
                                 .help =
                                     "a help text long enough that it must wrap onto a second line of "
                                     "the usage message"};
  text = describe_options(std::span<const OptionSpec>(&long_help, 1));
  CHECK(text.rfind("  --long-option-name=VALUE\n", 0) == 0);
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    CHECK(end - start <= 79);
  CHECK(text.find("(default none)") != std::string::npos);
}

TEST_CASE("options: the registry's tables; --gc-lab is one definition in two") {
  const CollectorInfo* semispace = find_collector("semispace");
  const CollectorInfo* markcompact = find_collector("markcompact");
  const CollectorInfo* gpu = find_collector("gpu");
  REQUIRE((semispace->options != nullptr));
  REQUIRE((markcompact->options != nullptr));
  REQUIRE((gpu->options != nullptr));
  CHECK(find_in(semispace->options(), "gc-lab"));
  CHECK(find_in(markcompact->options(), "gc-lab"));
  CHECK(find_in(markcompact->options(), "young"));
  CHECK(!find_in(markcompact->options(), "gpu-heap"));
  const OptionSpec* list = find_in(gpu->options(), "cl-list");
  REQUIRE(list);
  CHECK(list->kind == OptionKind::kAction);
  CHECK((list->action != nullptr));
}

TEST_CASE("options: each collector reads its own values, with its own defaults") {
  HeapOptions heap;
  CHECK(semispace_options(heap).gc_lab_bytes == 32u << 10);
  MarkCompactOptions mc = markcompact_options(heap);
  CHECK(mc.tenure_age == 2);
  CHECK(mc.card_tasks == 256);
  CHECK(mc.units_per_thread == 4);
  CHECK(mc.dense_prefix);
  CHECK(!mc.card_blocks);
  heap.collector_options = {{"gc-lab", "64K"},       {"young", "2M"},
                            {"tenure", "0"},         {"card-partition", "blocks"},
                            {"dense-prefix", "off"}, {"mc-units", "8"}};
  CHECK(semispace_options(heap).gc_lab_bytes == 64u << 10);
  mc = markcompact_options(heap);
  CHECK(mc.gc_lab_bytes == 64u << 10);
  CHECK(mc.young_bytes == 2u << 20);
  CHECK(mc.tenure_age == 0);
  CHECK(mc.card_blocks);
  CHECK(!mc.dense_prefix);
  CHECK(mc.units_per_thread == 8);
  heap.collector_options = {
      {"gpu-tail", "7"}, {"gpu-heap", "graph"}, {"gpu-vector", "off"}, {"cl-device", "1"}};
  GpuOptions g = gpu_options(heap);
  CHECK(g.tail_width == 7);
  CHECK(g.tail_min_iterations == 5);
  CHECK(g.graph);
  CHECK(!g.vector_loads);
  CHECK(g.device == "1");
  CHECK(g.work_group_size == 256);
  CHECK(!g.launch_per_level);
  CHECK(g.offsets == Offsets::kAuto);
  CHECK(!g.shared_heap);
  heap.collector_options = {{"gpu-launch", "level"}, {"gpu-offsets", "atomic"}, {"gpu-heap", "shared"}};
  g = gpu_options(heap);
  CHECK(g.launch_per_level);
  CHECK(g.offsets == Offsets::kAtomic);
  CHECK(g.shared_heap);
  CHECK(!g.graph);
}
