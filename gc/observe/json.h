// A small JSON writer for the observability outputs (stats, trace, report):
// commas and string escapes are handled here, nothing else is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gc::observe {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(uint64_t n);
  JsonWriter& value(int64_t n);
  JsonWriter& value(unsigned n) { return value(static_cast<uint64_t>(n)); }
  JsonWriter& value(int n) { return value(static_cast<int64_t>(n)); }
  // decimals < 0: up to 6 significant digits; otherwise fixed. NaN and
  // infinities become null.
  JsonWriter& value(double d, int decimals = -1);
  JsonWriter& value(bool b);
  JsonWriter& null();
  // Shorthands: key then value.
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  JsonWriter& field(std::string_view k, double v, int decimals) {
    key(k);
    return value(v, decimals);
  }
  // Raw text (already JSON) as a value.
  JsonWriter& raw(std::string_view json);

  // Appends s as a JSON string literal. Also escapes '<' as \u003c so that
  // JSON embedded in an HTML <script> can never close it.
  static void quote(std::string& out, std::string_view s);

 private:
  JsonWriter& open(char c);
  JsonWriter& close(char c);
  void separate();

  std::string& out_;
  std::vector<bool> first_{true};
  bool after_key_ = false;
};

}  // namespace gc::observe
