// Command-line options described as tables: the VM's own, and each
// collector's, carried by its registry entry. The command line and --help
// are built from the tables, so a collector's options live in its folder
// and the VM knows none of them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>

namespace gc {

enum class OptionKind {
  kCount,   // --NAME=N, a decimal count
  kSize,    // --NAME=SIZE, bytes with an optional K, M or G suffix
  kChoice,  // --NAME=WORD, one of `choices` ("a|b")
  kFlag,    // --NAME, no value
  kText,    // --NAME=TEXT, any text unless `check` refuses it (a custom parser)
  kAction,  // --NAME runs `action`, which prints; then the VM exits 0
};

struct OptionSpec {
  const char* name;  // the flag's spelling without "--"
  OptionKind kind;
  const char* value_name = nullptr;    // shown in --help (--NAME=VALUE_NAME); nullptr for flags and actions
  const char* default_text = nullptr;  // the default, as --help shows it; nullptr: none to show
  const char* help = "";
  // The usage error "bad WHAT 'VALUE' (HINT)" for a count, size or word
  // outside [min, max] or `choices`.
  const char* what = nullptr;
  const char* hint = nullptr;
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
  const char* choices = nullptr;
  // Replaces the check above where the option's values need more: returns
  // the usage error, or empty.
  std::string (*check)(const std::string& value) = nullptr;
  void (*action)() = nullptr;
  bool value_optional = false;  // --NAME alone is accepted too (kText)
};

// Table entries for the common shapes: --NAME=N, --NAME=SIZE and
// --NAME=WORD bounded as `what` and `hint` describe (validate_option), and
// --NAME=VALUE_NAME checked by `check`.
constexpr OptionSpec count_option(const char* name, const char* default_text, const char* help,
                                  const char* what, const char* hint, uint64_t min, uint64_t max) {
  return {.name = name,
          .kind = OptionKind::kCount,
          .value_name = "N",
          .default_text = default_text,
          .help = help,
          .what = what,
          .hint = hint,
          .min = min,
          .max = max};
}

constexpr OptionSpec size_option(const char* name, const char* default_text, const char* help,
                                 const char* what, const char* hint, uint64_t min, uint64_t max) {
  OptionSpec spec = count_option(name, default_text, help, what, hint, min, max);
  spec.kind = OptionKind::kSize;
  spec.value_name = "SIZE";
  return spec;
}

constexpr OptionSpec choice_option(const char* name, const char* choices, const char* default_text,
                                   const char* help, const char* what, const char* hint) {
  OptionSpec spec = count_option(name, default_text, help, what, hint, 0, UINT64_MAX);
  spec.kind = OptionKind::kChoice;
  spec.value_name = spec.choices = choices;
  return spec;
}

constexpr OptionSpec text_option(const char* name, const char* value_name, const char* default_text,
                                 const char* help, std::string (*check)(const std::string& value)) {
  return {.name = name,
          .kind = OptionKind::kText,
          .value_name = value_name,
          .default_text = default_text,
          .help = help,
          .check = check};
}

// The usage error for `value` given to `spec`, or empty when it is valid.
std::string validate_option(const OptionSpec& spec, const std::string& value);

// --help's lines for a table: one option each, help wrapped at 79 columns.
std::string describe_options(std::span<const OptionSpec> options);

// Collector options as given on the command line, by name: the text after
// "=" ("" for a flag), already validated. Each collector reads its own
// through the readers below, with its own defaults.
using OptionValues = std::map<std::string, std::string>;

const std::string* option_text(const OptionValues& values, const char* name);
bool option_flag(const OptionValues& values, const char* name);
std::optional<uint64_t> option_count(const OptionValues& values, const char* name);
std::optional<uint64_t> option_size(const OptionValues& values, const char* name);

// The value parsers the option kinds use; nullopt for text that is not one.
std::optional<uint64_t> parse_size(const std::string& text);
std::optional<uint64_t> parse_count(const std::string& text);

// --heap=Nx: N times a reference collector's minimum heap. N is digits with
// an optional fraction (no sign, exponent, inf or nan) from 1, the minimum
// itself, to 100, past which the heap stops mattering to a collector.
inline constexpr double kMinHeapMultiple = 1;
inline constexpr double kMaxHeapMultiple = 100;
std::optional<double> parse_heap_multiple(const std::string& text);

}  // namespace gc
