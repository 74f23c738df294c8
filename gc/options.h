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
#include <string_view>

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
  const char* value_name = nullptr;  // shown in --help (--NAME=VALUE_NAME); nullptr for flags and actions
  // The default as --help shows it, where it is not a plain value (one the
  // collector works out, e.g. "the squarest mesh of --gc-threads cores");
  // nullptr: default_value's, or none to show.
  const char* default_text = nullptr;
  // A count's or size's default (default_text then is generated from it),
  // read by option_count and option_size when the option is not given; for
  // a choice, that default_text is one of the choices (option_choice).
  bool has_default_value = false;
  uint64_t default_value = 0;
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

// A default that the collector works out when the option is not given,
// described for --help.
struct WorkedOutDefault {
  const char* text;
};

// Table entries for the common shapes: --NAME=N, --NAME=SIZE and
// --NAME=WORD bounded as `what` and `hint` describe (validate_option), and
// --NAME=VALUE_NAME checked by `check`. They are consteval so that a
// default outside the option's own bounds or choices does not compile.
consteval OptionSpec count_option(const char* name, WorkedOutDefault default_text, const char* help,
                                  const char* what, const char* hint, uint64_t min, uint64_t max) {
  return {.name = name,
          .kind = OptionKind::kCount,
          .value_name = "N",
          .default_text = default_text.text,
          .help = help,
          .what = what,
          .hint = hint,
          .min = min,
          .max = max};
}

consteval OptionSpec count_option(const char* name, uint64_t default_value, const char* help,
                                  const char* what, const char* hint, uint64_t min, uint64_t max) {
  if (default_value < min || default_value > max) throw "an option's default lies outside its bounds";
  OptionSpec spec = count_option(name, WorkedOutDefault{nullptr}, help, what, hint, min, max);
  spec.has_default_value = true;
  spec.default_value = default_value;
  return spec;
}

consteval OptionSpec size_option(const char* name, uint64_t default_value, const char* help, const char* what,
                                 const char* hint, uint64_t min, uint64_t max) {
  OptionSpec spec = count_option(name, default_value, help, what, hint, min, max);
  spec.kind = OptionKind::kSize;
  spec.value_name = "SIZE";
  return spec;
}

consteval OptionSpec size_option(const char* name, WorkedOutDefault default_text, const char* help,
                                 const char* what, const char* hint, uint64_t min, uint64_t max) {
  OptionSpec spec = count_option(name, default_text, help, what, hint, min, max);
  spec.kind = OptionKind::kSize;
  spec.value_name = "SIZE";
  return spec;
}

// Whether `word` is one of `choices` ("a|b|c").
constexpr bool is_choice(const char* choices, std::string_view word) {
  std::string_view all = choices;
  for (size_t start = 0;;) {
    size_t bar = all.find('|', start);
    if (all.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start) == word)
      return true;
    if (bar == std::string_view::npos) return false;
    start = bar + 1;
  }
}

consteval OptionSpec choice_option(const char* name, const char* choices, const char* default_choice,
                                   const char* help, const char* what, const char* hint) {
  if (!is_choice(choices, default_choice)) throw "an option's default is not one of its choices";
  OptionSpec spec = count_option(name, WorkedOutDefault{default_choice}, help, what, hint, 0, UINT64_MAX);
  spec.kind = OptionKind::kChoice;
  spec.value_name = spec.choices = choices;
  spec.has_default_value = true;  // the word default_text names
  return spec;
}

consteval OptionSpec choice_option(const char* name, const char* choices, WorkedOutDefault default_text,
                                   const char* help, const char* what, const char* hint) {
  OptionSpec spec = count_option(name, default_text, help, what, hint, 0, UINT64_MAX);
  spec.kind = OptionKind::kChoice;
  spec.value_name = spec.choices = choices;
  return spec;
}

// A count or size whose values need more than bounds (a power of two):
// `check` replaces the bounds' check, and the typed default stays.
consteval OptionSpec checked(OptionSpec spec, std::string (*check)(const std::string& value)) {
  spec.check = check;
  return spec;
}

// A count also spelled another way (off, W,I), shown as `value_name`:
// `check` accepts every spelling, and the typed default stays.
consteval OptionSpec checked(OptionSpec spec, const char* value_name,
                             std::string (*check)(const std::string& value)) {
  spec.value_name = value_name;
  return checked(spec, check);
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

// The default as --help shows it ("" where there is none to show).
std::string option_default_text(const OptionSpec& spec);

// --help's lines for a table: one option each, help wrapped at 79 columns.
std::string describe_options(std::span<const OptionSpec> options);

// Collector options as given on the command line, by name: the text after
// "=" ("" for a flag), already validated. Each collector reads its own
// through the readers below, by the spec in its table, so that a reader
// cannot name an option that does not exist.
using OptionValues = std::map<std::string, std::string>;

// The text given, or nullptr.
const std::string* given_text(const OptionValues& values, const OptionSpec& spec);
bool option_flag(const OptionValues& values, const OptionSpec& spec);
// A count or size given, or nullopt: for an option whose default the
// collector works out.
std::optional<uint64_t> given_count(const OptionValues& values, const OptionSpec& spec);
std::optional<uint64_t> given_size(const OptionValues& values, const OptionSpec& spec);
// A count or size given, or the spec's default_value.
uint64_t option_count(const OptionValues& values, const OptionSpec& spec);
uint64_t option_size(const OptionValues& values, const OptionSpec& spec);
// The word given to a choice option, or its default word; whether that
// word is `word` (a worked-out default is no word: false).
std::string_view option_choice(const OptionValues& values, const OptionSpec& spec);
bool option_is(const OptionValues& values, const OptionSpec& spec, std::string_view word);

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
