#include "gc/options.h"

#include <cassert>
#include <cstdlib>
#include <sstream>

namespace gc {

std::optional<uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t end = 0;
  double n;
  try {
    n = std::stod(text, &end);
  } catch (...) {
    return std::nullopt;
  }
  std::string suffix = text.substr(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  double scale = 1;
  if (suffix == "K" || suffix == "k")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "m")
    scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    return std::nullopt;
  if (!(n > 0) || n * scale > 1e15) return std::nullopt;
  return static_cast<uint64_t>(n * scale);
}

std::optional<uint64_t> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoull(text);
}

std::optional<double> parse_heap_multiple(const std::string& text) {
  if (text.size() < 2 || text.size() > 12 || text.back() != 'x') return std::nullopt;
  std::string number = text.substr(0, text.size() - 1);
  size_t point = number.find('.');
  if (number.find_first_not_of("0123456789.") != std::string::npos || point != number.rfind('.') ||
      point == 0 || point + 1 == number.size())
    return std::nullopt;
  double n = std::strtod(number.c_str(), nullptr);
  if (!(n >= kMinHeapMultiple && n <= kMaxHeapMultiple)) return std::nullopt;
  return n;
}

// A size in the largest unit that divides it.
std::string option_default_text(const OptionSpec& spec) {
  if (spec.default_text) return spec.default_text;
  if (!spec.has_default_value) return "";
  uint64_t v = spec.default_value;
  if (spec.kind == OptionKind::kSize && v != 0) {
    if (v % (1u << 30) == 0) return std::to_string(v >> 30) + "G";
    if (v % (1u << 20) == 0) return std::to_string(v >> 20) + "M";
    if (v % (1u << 10) == 0) return std::to_string(v >> 10) + "K";
  }
  return std::to_string(v);
}

std::string validate_option(const OptionSpec& spec, const std::string& value) {
  if (spec.check) return spec.check(value);
  bool ok = true;
  switch (spec.kind) {
    case OptionKind::kCount:
    case OptionKind::kSize: {
      auto n = spec.kind == OptionKind::kCount ? parse_count(value) : parse_size(value);
      ok = n && *n >= spec.min && *n <= spec.max;
      break;
    }
    case OptionKind::kChoice:
      ok = is_choice(spec.choices, value);
      break;
    case OptionKind::kFlag:
    case OptionKind::kText:
    case OptionKind::kAction:
      break;
  }
  if (ok) return "";
  std::string message = std::string("bad ") + spec.what + " '" + value + "'";
  if (spec.hint) message += std::string(" (") + spec.hint + ")";
  return message;
}

std::string describe_options(std::span<const OptionSpec> options) {
  constexpr size_t kHelpColumn = 21;  // where the help text starts, as in the usage line's layout
  constexpr size_t kWidth = 79;
  std::ostringstream out;
  for (const OptionSpec& o : options) {
    std::string flag = std::string("  --") + o.name;
    if (o.value_name)
      flag += std::string(o.value_optional ? "[=" : "=") + o.value_name + (o.value_optional ? "]" : "");
    std::string text = o.help;
    if (std::string shown = option_default_text(o); !shown.empty()) text += " (default " + shown + ")";
    std::string line = flag;
    if (line.size() + 1 > kHelpColumn) {
      out << line << "\n";
      line.clear();
    }
    line.resize(kHelpColumn, ' ');
    std::istringstream words(text);
    std::string word;
    bool first = true;
    while (words >> word) {
      if (!first && line.size() + 1 + word.size() > kWidth) {
        out << line << "\n";
        line.assign(kHelpColumn, ' ');
        first = true;
      }
      if (!first) line += ' ';
      line += word;
      first = false;
    }
    out << line << "\n";
  }
  return out.str();
}

const std::string* given_text(const OptionValues& values, const OptionSpec& spec) {
  auto it = values.find(spec.name);
  return it == values.end() ? nullptr : &it->second;
}

bool option_flag(const OptionValues& values, const OptionSpec& spec) { return values.count(spec.name) != 0; }

std::optional<uint64_t> given_count(const OptionValues& values, const OptionSpec& spec) {
  const std::string* text = given_text(values, spec);
  return text ? parse_count(*text) : std::nullopt;
}

std::optional<uint64_t> given_size(const OptionValues& values, const OptionSpec& spec) {
  const std::string* text = given_text(values, spec);
  return text ? parse_size(*text) : std::nullopt;
}

uint64_t option_count(const OptionValues& values, const OptionSpec& spec) {
  assert(spec.has_default_value && "an option whose default is worked out is read with given_count");
  return given_count(values, spec).value_or(spec.default_value);
}

uint64_t option_size(const OptionValues& values, const OptionSpec& spec) {
  assert(spec.has_default_value && "an option whose default is worked out is read with given_size");
  return given_size(values, spec).value_or(spec.default_value);
}

std::string_view option_choice(const OptionValues& values, const OptionSpec& spec) {
  assert(spec.kind == OptionKind::kChoice && spec.has_default_value &&
         "a choice whose default is worked out is read with given_text or option_is");
  const std::string* text = given_text(values, spec);
  return text ? std::string_view(*text) : std::string_view(spec.default_text);
}

bool option_is(const OptionValues& values, const OptionSpec& spec, std::string_view word) {
  assert(spec.kind == OptionKind::kChoice);
  const std::string* text = given_text(values, spec);
  if (text) return *text == word;
  return spec.has_default_value && spec.default_text == word;
}

}  // namespace gc
