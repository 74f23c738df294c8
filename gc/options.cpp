#include "gc/options.h"

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

namespace {

bool is_choice(const char* choices, const std::string& value) {
  std::string all = choices;
  size_t start = 0;
  while (true) {
    size_t bar = all.find('|', start);
    if (all.compare(start, bar == std::string::npos ? std::string::npos : bar - start, value) == 0)
      return true;
    if (bar == std::string::npos) return false;
    start = bar + 1;
  }
}

}  // namespace

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
    if (o.default_text) text += std::string(" (default ") + o.default_text + ")";
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

const std::string* option_text(const OptionValues& values, const char* name) {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

bool option_flag(const OptionValues& values, const char* name) { return values.count(name) != 0; }

std::optional<uint64_t> option_count(const OptionValues& values, const char* name) {
  const std::string* text = option_text(values, name);
  return text ? parse_count(*text) : std::nullopt;
}

std::optional<uint64_t> option_size(const OptionValues& values, const char* name) {
  const std::string* text = option_text(values, name);
  return text ? parse_size(*text) : std::nullopt;
}

}  // namespace gc
