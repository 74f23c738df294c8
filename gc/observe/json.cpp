#include "gc/observe/json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <utility>

namespace gc::observe {

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.back()) out_ += ',';
  first_.back() = false;
}

JsonWriter& JsonWriter::open(char c) {
  separate();
  out_ += c;
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::close(char c) {
  first_.pop_back();
  out_ += c;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  separate();
  quote(out_, k);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  separate();
  quote(out_, s);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t n) { return raw(std::to_string(n)); }

JsonWriter& JsonWriter::value(int64_t n) { return raw(std::to_string(n)); }

JsonWriter& JsonWriter::value(double d, int decimals) {
  if (!std::isfinite(d)) return null();
  char buf[64];
  if (decimals < 0)
    std::snprintf(buf, sizeof buf, "%.6g", d);
  else
    std::snprintf(buf, sizeof buf, "%.*f", decimals, d);
  return raw(buf);
}

JsonWriter& JsonWriter::value(bool b) { return raw(b ? "true" : "false"); }

JsonWriter& JsonWriter::null() { return raw("null"); }

JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_ += json;
  return *this;
}

void JsonWriter::quote(std::string& out, std::string_view s) {
  static constexpr std::pair<char, const char*> kEscapes[] = {
      {'"', "\\\""}, {'\\', "\\\\"}, {'\n', "\\n"}, {'\r', "\\r"}, {'\t', "\\t"}, {'<', "\\u003c"}};
  out += '"';
  for (unsigned char c : s) {
    auto e =
        std::find_if(std::begin(kEscapes), std::end(kEscapes), [c](const auto& p) { return p.first == c; });
    if (e != std::end(kEscapes)) {
      out += e->second;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

}  // namespace gc::observe
