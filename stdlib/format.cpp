// Value formatting (print, str, join), type names and == semantics.
//
// Formatting never allocates on the managed heap, so raw Word* pointers stay
// valid for the whole call. It walks containers with an explicit stack rather
// than C++ recursion, so a deeply nested structure (a million arrays inside
// each other) cannot overflow the native stack.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_set>
#include <vector>

#include "vm/arith.h"
#include "vm/vm.h"

namespace vm {

// JavaScript's Number::toString (ECMA-262 6.1.6.1.20): std::to_chars gives
// the shortest digit string that round-trips; this lays those digits out
// the way JavaScript does.
std::string format_number(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return "0";  // -0 too, as in JavaScript
  // Integers below 2^53 have at most 16 digits, which JavaScript writes out
  // in full: the integer's own digits, without the scientific detour.
  if (d > -kExactIntegerLimit && d < kExactIntegerLimit && d == std::trunc(d)) {
    char digits[24];
    auto res = std::to_chars(digits, digits + sizeof digits, static_cast<int64_t>(d));
    return std::string(digits, res.ptr);
  }

  std::string out;
  if (d < 0) {
    out += '-';
    d = -d;
  }
  // Scientific form "D.DDDDe+XX" or "De-XX": shortest round-trip digits.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos))
    if (c != '.') digits += c;
  int exp10 = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());

  // JavaScript's names: k digits, value = 0.digits * 10^n.
  const int k = static_cast<int>(digits.size());
  const int n = exp10 + 1;
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, 0, static_cast<size_t>(n));
    out += '.';
    out.append(digits, static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-n), '0');
    out += digits;
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += 'e';
    out += n - 1 >= 0 ? '+' : '-';
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

const char* type_name(Value v) {
  if (v.is_num()) return "num";
  if (v.is_nil()) return "nil";
  if (v.is_bool()) return "bool";
  if (!v.is_ref()) return "internal";  // undefined, tombstone: never visible
  uint32_t cls = class_id_of(v.as_ref());
  if (cls >= gc::kFirstUserClass) return "instance";
  switch (cls) {
    case gc::kStringClass:
      return "string";
    case gc::kArrayClass:
      return "array";
    case gc::kNumArrayClass:
      return "numarray";
    case gc::kMapClass:
      return "map";
    case gc::kClosureClass:
    case gc::kBoundMethodClass:
    case gc::kBuiltinClass:
      return "function";
    case gc::kClassClass:
      return "class";
    case gc::kFiberClass:
      return "fiber";
    default:
      return "internal";
  }
}

// Two distinct references: equal only when both are strings with the same
// bytes.
bool strings_equal(Value a, Value b) {
  if (is_kind(a, gc::kStringClass) && is_kind(b, gc::kStringClass)) {
    Word* x = a.as_ref();
    Word* y = b.as_ref();
    // Hashes already known tell unequal strings apart without a pass over
    // their bytes; computing them here would cost more than the compare.
    uint64_t hx = known_string_hash(x), hy = known_string_hash(y);
    if (hx != kHashNotComputed && hy != kHashNotComputed && hx != hy) return false;
    return string_length(x) == string_length(y) &&
           std::memcmp(string_chars(x), string_chars(y), string_length(x)) == 0;
  }
  return false;
}

namespace {

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// One container being printed: where we are in it.
struct Frame {
  Word* obj;
  bool is_map;
  bool first = true;
  bool at_value = false;  // maps: the key of entry `index` is out, its value is next
  uint64_t index = 0;
};

class Formatter {
 public:
  explicit Formatter(VM& vm) : vm_(vm) {}

  std::string run(Value v) {
    if (is_kind(v, gc::kStringClass)) return std::string(string_view_of(v));  // raw at top level
    emit(v);
    while (!frames_.empty()) step();
    return std::move(out_);
  }

 private:
  // Writes a leaf, or opens a container by pushing a frame. Inside any
  // container strings are quoted, so this is only used below the top.
  void emit(Value v) {
    if (v.is_num()) {
      out_ += format_number(v.as_num());
      return;
    }
    if (v.is_nil()) return void(out_ += "nil");
    if (v.is_bool()) return void(out_ += v.as_bool() ? "true" : "false");
    if (!v.is_ref()) return void(out_ += "<internal>");
    Word* h = v.as_ref();
    uint32_t cls = class_id_of(h);
    if (cls >= gc::kFirstUserClass) {
      out_ += '<';
      out_ += vm_.class_name_of(h);
      out_ += " instance>";
      return;
    }
    switch (cls) {
      case gc::kStringClass:
        return append_quoted(out_, string_view_of(h));
      case gc::kArrayClass:
      case gc::kMapClass: {
        bool is_map = cls == gc::kMapClass;
        // A container already open on the path prints as [...] / {...}.
        if (!open_.insert(h).second) return void(out_ += is_map ? "{...}" : "[...]");
        out_ += is_map ? '{' : '[';
        frames_.push_back(Frame{h, is_map});
        return;
      }
      case gc::kNumArrayClass: {
        out_ += '[';
        for (uint64_t i = 0, n = numarray_length(h); i < n; ++i) {
          if (i) out_ += ", ";
          out_ += format_number(numarray_data(h)[i]);
        }
        out_ += ']';
        return;
      }
      case gc::kClosureClass:
      case gc::kBoundMethodClass:
      case gc::kBuiltinClass: {
        std::string name = vm_.function_name(v);
        if (name.empty() || name == "<fn>") return void(out_ += "<fn>");
        out_ += "<fn ";
        out_ += name;
        out_ += '>';
        return;
      }
      case gc::kClassClass: {
        out_ += "<class ";
        Value name = class_name(h);
        if (is_kind(name, gc::kStringClass)) out_ += string_view_of(name);
        out_ += '>';
        return;
      }
      case gc::kFiberClass:
        return void(out_ += "<fiber>");
      default:
        return void(out_ += "<internal>");
    }
  }

  // Advances the innermost open container by one element (or closes it).
  // emit() may push a frame, so the frame is not used after calling it.
  void step() {
    Frame& f = frames_.back();
    if (!f.is_map) {
      if (f.index >= array_length(f.obj)) return close();
      if (f.index) out_ += ", ";
      Value elem = array_elements(f.obj)[f.index++];
      return emit(elem);
    }
    Value key, value;
    if (f.at_value) {
      map_entry(f.obj, f.index++, &key, &value);
      f.at_value = false;
      out_ += ": ";
      return emit(value);
    }
    uint64_t n = map_entry_count(f.obj);
    while (f.index < n && !map_entry(f.obj, f.index, &key, &value)) ++f.index;  // skip deleted
    if (f.index >= n) return close();
    if (!f.first) out_ += ", ";
    f.first = false;
    f.at_value = true;
    emit(key);
  }

  void close() {
    Frame f = frames_.back();
    frames_.pop_back();
    open_.erase(f.obj);
    out_ += f.is_map ? '}' : ']';
  }

  VM& vm_;
  std::string out_;
  std::vector<Frame> frames_;
  std::unordered_set<Word*> open_;  // containers on the current path
};

}  // namespace

std::string format_value(VM& vm, Value v) { return Formatter(vm).run(v); }

}  // namespace vm
