// The built-in functions of docs/language.md ("Built-ins").
//
// The interpreter checks argument counts against min_args/max_args; each
// builtin checks its argument types and raises an error naming itself.
//
// GC safety: args[] live on the VM's value stack (a root). Any allocation may
// move every object, so a builtin computes sizes first, allocates, and only
// then takes raw pointers, re-reading args[i]; intermediate results that must
// survive a further allocation are kept in RootSlots.
#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "gc/observe/stats.h"
#include "vm/strings.h"
#include "vm/vm.h"

namespace vm {

namespace {

// ---------------------------------------------------------------------------
// Helpers

// n root slots for calls that take Value* (map_set, array_push). They live at
// the end of vm.handles, so a pointer from at() is only good until something
// creates a Handle (which may reallocate the vector): call at() afresh after
// every allocating call.
class RootSlots {
 public:
  RootSlots(VM& vm, size_t n) : vm_(vm), base_(vm.handles.size()) {
    vm.handles.resize(base_ + n, Value::nil());
  }
  ~RootSlots() { vm_.handles.resize(base_); }
  RootSlots(const RootSlots&) = delete;
  RootSlots& operator=(const RootSlots&) = delete;
  Value* at(size_t i) { return &vm_.handles[base_ + i]; }

 private:
  VM& vm_;
  size_t base_;
};

// "NAME: argument K must be EXPECTED, got TYPE" (K counts from 1).
[[noreturn]] void type_error(VM& vm, const char* fn, int k, const char* expected, Value got) {
  vm.error(std::string(fn) + ": argument " + std::to_string(k + 1) + " must be " + expected + ", got " +
           type_name(got));
}

double num_arg(VM& vm, const char* fn, Value* args, int k) {
  if (!args[k].is_num()) type_error(vm, fn, k, "a num", args[k]);
  return args[k].as_num();
}
Word* kind_arg(VM& vm, const char* fn, Value* args, int k, uint32_t cls, const char* expected) {
  if (!is_kind(args[k], cls)) type_error(vm, fn, k, expected, args[k]);
  return args[k].as_ref();
}
Word* string_arg(VM& vm, const char* fn, Value* args, int k) {
  return kind_arg(vm, fn, args, k, gc::kStringClass, "a string");
}
Word* array_arg(VM& vm, const char* fn, Value* args, int k) {
  return kind_arg(vm, fn, args, k, gc::kArrayClass, "an array");
}
Word* map_arg(VM& vm, const char* fn, Value* args, int k) {
  return kind_arg(vm, fn, args, k, gc::kMapClass, "a map");
}
Word* fiber_arg(VM& vm, const char* fn, Value* args, int k) {
  return kind_arg(vm, fn, args, k, gc::kFiberClass, "a fiber");
}

bool is_function(Value v) {
  return is_kind(v, gc::kClosureClass) || is_kind(v, gc::kBoundMethodClass) || is_kind(v, gc::kBuiltinClass);
}

// For messages about a bad count or code: the number itself, or the type.
std::string describe(Value v) { return v.is_num() ? format_number(v.as_num()) : type_name(v); }

// A non-negative integral num no larger than limit (sizes, byte values). A
// bad num is shown by its value, anything else by its type.
uint64_t count_arg(VM& vm, const char* fn, Value* args, int k, double limit, const char* expected) {
  Value v = args[k];
  double d = v.is_num() ? v.as_num() : -1;
  if (!(d >= 0 && d <= limit && std::trunc(d) == d))
    vm.error(std::string(fn) + ": argument " + std::to_string(k + 1) + " must be " + expected + ", got " +
             describe(v));
  return static_cast<uint64_t>(d);
}

// A bound of slice/substr, as JavaScript's Array.prototype.slice takes it:
// truncated, negative counting from the end, clamped to 0..length.
uint64_t clamp_bound(double x, uint64_t length) {
  if (std::isnan(x)) return 0;
  double len = static_cast<double>(length);
  x = std::trunc(x);
  if (x < 0) x += len;
  if (x <= 0) return 0;
  return x >= len ? length : static_cast<uint64_t>(x);
}

Value make_string(VM& vm, std::string_view s) { return vm.new_string(s); }

// A new string holding bytes [start, start+n) of the string in *src (a root).
Value substring(VM& vm, Value* src, uint64_t start, uint64_t n) {
  Word* s = vm.new_string_uninitialized(n);
  if (n) std::memcpy(string_chars(s), string_chars(src->as_ref()) + start, n);  // re-read after allocating
  finish_string(s);
  return Value::ref(s);
}

// num(s): optional surrounding whitespace, an optional sign, then either 0x
// and hex digits or a decimal with optional fraction and exponent. Anything
// else ("" and "inf" and "nan" included) is not a number.
bool parse_number(std::string_view s, double* out) {
  const char* ws = " \t\n\r\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return false;
  s = s.substr(b, s.find_last_not_of(ws) - b + 1);
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto is_hex = [&](char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  double value;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    std::string_view digits = s.substr(2);
    for (char c : digits)
      if (!is_hex(c)) return false;
    // Correctly rounded even past 2^53; hex digits cannot overflow a double
    // below 256 of them, and beyond that from_chars reports out of range.
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), value, std::chars_format::hex);
    if (r.ec == std::errc::result_out_of_range)
      value = HUGE_VAL;
    else if (r.ec != std::errc() || r.ptr != digits.data() + digits.size())
      return false;
  } else {
    // Validate by hand: from_chars would also accept "inf", "nan".
    size_t i = 0, int_digits = 0, frac_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && is_digit(s[i])) ++i, ++frac_digits;
    }
    if (int_digits + frac_digits == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      size_t exp_digits = 0;
      while (i < s.size() && is_digit(s[i])) ++i, ++exp_digits;
      if (exp_digits == 0) return false;
    }
    if (i != s.size()) return false;
    auto r = std::from_chars(s.data(), s.data() + s.size(), value, std::chars_format::general);
    if (r.ec == std::errc::result_out_of_range) {
      // from_chars leaves value unset here; strtod gives inf or the
      // (sub)normal result. The text is validated, so the locale cannot matter
      // beyond the '.', which the VM never changes from "C".
      value = std::strtod(std::string(s).c_str(), nullptr);
    } else if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
      return false;
    }
  }
  *out = negative ? -value : value;
  return true;
}

// xoshiro256** (Blackman and Vigna), seeded through splitmix64: the same
// sequence for a seed on every platform and under every collector.
struct Rng {
  uint64_t s[4];

  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  void seed(uint64_t x) {
    for (uint64_t& w : s) w = splitmix64(x);
  }
  uint64_t next() {
    auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
};

// One generator per process; it starts as if seed(0) had been called, so a
// program that never seeds still gets the same numbers on every run.
Rng& rng() {
  static Rng r = [] {
    Rng g;
    g.seed(0);
    return g;
  }();
  return r;
}

// ---------------------------------------------------------------------------
// Output, conversion, types

Value b_print(VM& vm, Value* args, int argc) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i) line += ' ';
    line += format_value(vm, args[i]);
  }
  line += '\n';
  std::cout.write(line.data(), static_cast<std::streamsize>(line.size()));  // the VM flushes at exit
  // A full disk or a closed file: stop rather than print into nothing forever.
  if (!std::cout) [[unlikely]]
    vm.error(std::string("cannot write to standard output: ") + std::strerror(errno));
  return Value::nil();
}

Value b_str(VM& vm, Value* args, int) {
  if (is_kind(args[0], gc::kStringClass)) return args[0];
  return make_string(vm, format_value(vm, args[0]));
}

// A num is returned unchanged. Values that are neither nums nor strings give
// nil rather than an error: num() is the "is this a number?" test.
Value b_num(VM& vm, Value* args, int) {
  if (args[0].is_num()) return args[0];
  if (!is_kind(args[0], gc::kStringClass)) return Value::nil();
  double d;
  return parse_number(string_view_of(args[0]), &d) ? Value::num(d) : Value::nil();
}

Value b_type(VM& vm, Value* args, int) { return make_string(vm, type_name(args[0])); }

Value b_classname(VM& vm, Value* args, int) {
  if (!is_instance(args[0])) type_error(vm, "classname", 0, "an instance", args[0]);
  return make_string(vm, vm.class_name_of(args[0].as_ref()));
}

Value b_len(VM& vm, Value* args, int) {
  Value v = args[0];
  if (v.is_ref()) {
    Word* h = v.as_ref();
    switch (class_id_of(h)) {
      case gc::kStringClass:
        return Value::num(static_cast<double>(string_length(h)));
      case gc::kArrayClass:
        return Value::num(static_cast<double>(array_length(h)));
      case gc::kNumArrayClass:
        return Value::num(static_cast<double>(numarray_length(h)));
      case gc::kMapClass:
        return Value::num(static_cast<double>(map_count(h)));
      default:
        break;
    }
  }
  type_error(vm, "len", 0, "a string, array, numarray or map", v);
}

// ---------------------------------------------------------------------------
// Arrays

Value b_push(VM& vm, Value* args, int) {
  array_arg(vm, "push", args, 0);
  array_push(vm, &args[0], &args[1]);
  return Value::nil();
}

Value b_pop(VM& vm, Value* args, int) {
  Word* a = array_arg(vm, "pop", args, 0);
  uint64_t n = array_length(a);
  if (n == 0) vm.error("pop: empty array");
  Word* storage = array_storage(a).as_ref();
  Value* slot = &storage_slots(storage)[n - 1];
  Value v = *slot;
  vm.write(storage, slot, Value::nil());  // don't keep the popped value alive
  array_length(a) = n - 1;
  return v;
}

Value b_slice(VM& vm, Value* args, int) {
  double i = num_arg(vm, "slice", args, 1);
  double j = num_arg(vm, "slice", args, 2);
  Value x = args[0];
  uint64_t length;
  if (is_kind(x, gc::kStringClass))
    length = string_length(x.as_ref());
  else if (is_kind(x, gc::kArrayClass))
    length = array_length(x.as_ref());
  else if (is_kind(x, gc::kNumArrayClass))
    length = numarray_length(x.as_ref());
  else
    type_error(vm, "slice", 0, "a string, array or numarray", x);
  uint64_t lo = clamp_bound(i, length), hi = clamp_bound(j, length);
  uint64_t n = hi > lo ? hi - lo : 0;

  uint32_t cls = class_id_of(x.as_ref());
  if (cls == gc::kStringClass) return substring(vm, &args[0], lo, n);
  if (cls == gc::kNumArrayClass) {
    Word* r = vm.alloc(gc::kNumArrayClass, 0, 1 + n);
    r[1] = n;
    if (n) std::memcpy(numarray_data(r), numarray_data(args[0].as_ref()) + lo, n * sizeof(double));
    return Value::ref(r);
  }
  Value result = vm.new_array(n, Value::nil());
  if (n == 0) return result;
  // No allocation below: raw pointers are safe.
  Word* storage = array_storage(result.as_ref()).as_ref();
  Value* dst = storage_slots(storage);
  const Value* src = array_elements(args[0].as_ref());
  for (uint64_t k = 0; k < n; ++k) vm.write(storage, &dst[k], src[lo + k]);
  return result;
}

Value b_Array(VM& vm, Value* args, int argc) {
  uint64_t n = count_arg(vm, "Array", args, 0, 9007199254740992.0, "a non-negative integer");
  return vm.new_array(n, argc > 1 ? args[1] : Value::nil());  // new_array keeps the fill rooted
}

Value b_NumArray(VM& vm, Value* args, int) {
  uint64_t n = count_arg(vm, "NumArray", args, 0, 9007199254740992.0, "a non-negative integer");
  vm.check_fits("a numarray", n, "elements", gc::object_words(0, 1 + n) * gc::kWordSize,
                n + 1 <= gc::SizeCode::max(gc::SizeCode::kRawMantissaBits));
  Word* h = vm.alloc(gc::kNumArrayClass, 0, 1 + n);  // raw words start zeroed: 0.0
  h[1] = n;
  return Value::ref(h);
}

// ---------------------------------------------------------------------------
// Maps

Value b_has(VM& vm, Value* args, int) {
  Word* m = map_arg(vm, "has", args, 0);
  Value ignored;
  return Value::boolean(map_get(vm, m, args[1], &ignored));
}

Value b_delete(VM& vm, Value* args, int) {
  Word* m = map_arg(vm, "delete", args, 0);
  map_delete(vm, m, args[1]);
  return Value::nil();
}

Value b_keys(VM& vm, Value* args, int) {
  map_arg(vm, "keys", args, 0);
  return map_keys(vm, &args[0]);
}

// ---------------------------------------------------------------------------
// Strings

Value b_substr(VM& vm, Value* args, int) {
  Word* s = string_arg(vm, "substr", args, 0);
  double i = num_arg(vm, "substr", args, 1);
  double count = num_arg(vm, "substr", args, 2);
  uint64_t length = string_length(s);
  uint64_t start = clamp_bound(i, length);
  uint64_t room = length - start;
  // A negative or NaN count takes nothing; a count past the end takes the rest.
  uint64_t n = !(count > 0) ? 0 : count >= static_cast<double>(room) ? room : static_cast<uint64_t>(count);
  return substring(vm, &args[0], start, n);
}

Value b_find(VM& vm, Value* args, int) {
  std::string_view s = string_view_of(string_arg(vm, "find", args, 0));
  std::string_view sub = string_view_of(string_arg(vm, "find", args, 1));
  size_t at = s.find(sub);
  return Value::num(at == std::string_view::npos ? -1.0 : static_cast<double>(at));
}

Value b_split(VM& vm, Value* args, int) {
  std::string_view s = string_view_of(string_arg(vm, "split", args, 0));
  std::string_view sep = string_view_of(string_arg(vm, "split", args, 1));
  // Field offsets first: they stay right when allocation moves the string.
  std::vector<std::pair<uint64_t, uint64_t>> fields;  // start, length
  if (sep.empty()) {
    for (uint64_t i = 0; i < s.size(); ++i) fields.emplace_back(i, 1);
  } else {
    size_t pos = 0;
    for (size_t at; (at = s.find(sep, pos)) != std::string_view::npos; pos = at + sep.size())
      fields.emplace_back(pos, at - pos);
    fields.emplace_back(pos, s.size() - pos);
  }
  RootSlots root(vm, 1);
  Value result = vm.new_array(fields.size(), Value::nil());
  *root.at(0) = result;
  for (size_t k = 0; k < fields.size(); ++k) {
    Value piece = substring(vm, &args[0], fields[k].first, fields[k].second);
    Word* storage = array_storage(root.at(0)->as_ref()).as_ref();  // re-read after allocating
    vm.write(storage, &storage_slots(storage)[k], piece);
  }
  return *root.at(0);
}

// join of strings only: the result allocated once, at its exact size, and
// filled in place.
Value join_strings(VM& vm, Value* args, uint64_t total) {
  Word* s = vm.new_string_uninitialized(total);
  Word* h = args[0].as_ref();  // re-read after allocating
  std::string_view sep = string_view_of(args[1]);
  char* out = string_chars(s);
  for (uint64_t i = 0, n = array_length(h); i < n; ++i) {
    if (i) out = std::copy(sep.begin(), sep.end(), out);
    std::string_view piece = string_view_of(array_elements(h)[i]);
    out = std::copy(piece.begin(), piece.end(), out);
  }
  finish_string(s);
  return Value::ref(s);
}

Value b_join(VM& vm, Value* args, int) {
  Value a = args[0];
  std::string_view sep = string_view_of(string_arg(vm, "join", args, 1));
  if (is_kind(a, gc::kArrayClass)) {
    Word* h = a.as_ref();
    uint64_t n = array_length(h);
    uint64_t total = n ? (n - 1) * sep.size() : 0;
    bool strings_only = true;
    for (uint64_t i = 0; i < n && strings_only; ++i) {
      Value e = array_elements(h)[i];
      strings_only = is_kind(e, gc::kStringClass);
      if (strings_only) total += string_length(e.as_ref());
    }
    if (strings_only) return join_strings(vm, args, total);
  }
  std::string out;  // formatting does not allocate on the heap: views stay valid
  if (is_kind(a, gc::kArrayClass)) {
    Word* h = a.as_ref();
    for (uint64_t i = 0, n = array_length(h); i < n; ++i) {
      if (i) out += sep;
      out += format_value(vm, array_elements(h)[i]);
    }
  } else if (is_kind(a, gc::kNumArrayClass)) {
    Word* h = a.as_ref();
    for (uint64_t i = 0, n = numarray_length(h); i < n; ++i) {
      if (i) out += sep;
      out += format_number(numarray_data(h)[i]);
    }
  } else {
    type_error(vm, "join", 0, "an array", a);
  }
  return make_string(vm, out);
}

Value b_ord(VM& vm, Value* args, int) {
  Word* s = string_arg(vm, "ord", args, 0);
  if (string_length(s) == 0) vm.error("ord: empty string");
  return Value::num(static_cast<unsigned char>(string_chars(s)[0]));
}

Value b_chr(VM& vm, Value* args, int) {
  char c = static_cast<char>(count_arg(vm, "chr", args, 0, 255, "an integer from 0 to 255"));
  return make_string(vm, std::string_view(&c, 1));
}

// ---------------------------------------------------------------------------
// Math

Value b_sqrt(VM& vm, Value* args, int) { return Value::num(std::sqrt(num_arg(vm, "sqrt", args, 0))); }
Value b_floor(VM& vm, Value* args, int) { return Value::num(std::floor(num_arg(vm, "floor", args, 0))); }
Value b_ceil(VM& vm, Value* args, int) { return Value::num(std::ceil(num_arg(vm, "ceil", args, 0))); }
Value b_abs(VM& vm, Value* args, int) { return Value::num(std::fabs(num_arg(vm, "abs", args, 0))); }
Value b_sin(VM& vm, Value* args, int) { return Value::num(std::sin(num_arg(vm, "sin", args, 0))); }
Value b_cos(VM& vm, Value* args, int) { return Value::num(std::cos(num_arg(vm, "cos", args, 0))); }

Value b_pow(VM& vm, Value* args, int) {
  double x = num_arg(vm, "pow", args, 0);
  double y = num_arg(vm, "pow", args, 1);
  return Value::num(std::pow(x, y));
}

// As JavaScript's Math.min/max: NaN if either is NaN, and -0 < 0.
Value b_min(VM& vm, Value* args, int) {
  double x = num_arg(vm, "min", args, 0);
  double y = num_arg(vm, "min", args, 1);
  if (std::isnan(x) || std::isnan(y)) return Value::num(NAN);
  if (x == y) return Value::num(std::signbit(x) ? x : y);
  return Value::num(x < y ? x : y);
}

Value b_max(VM& vm, Value* args, int) {
  double x = num_arg(vm, "max", args, 0);
  double y = num_arg(vm, "max", args, 1);
  if (std::isnan(x) || std::isnan(y)) return Value::num(NAN);
  if (x == y) return Value::num(std::signbit(x) ? y : x);
  return Value::num(x > y ? x : y);
}

// ---------------------------------------------------------------------------
// Time, randomness

Value b_clock(VM& vm, Value*, int) { return Value::num(vm.clock_seconds()); }

// The seed's bit pattern (with -0 as 0) feeds splitmix64, so any num is a
// seed and equal seeds give equal sequences.
Value b_seed(VM& vm, Value* args, int) {
  double d = num_arg(vm, "seed", args, 0);
  if (d == 0) d = 0;
  rng().seed(std::bit_cast<uint64_t>(d));
  return Value::nil();
}

Value b_random(VM& vm, Value*, int) {
  return Value::num(static_cast<double>(rng().next() >> 11) * 0x1.0p-53);  // 53 bits: [0, 1)
}

// ---------------------------------------------------------------------------
// Errors, exit, input

Value b_assert(VM& vm, Value* args, int argc) {
  if (args[0].is_falsy()) vm.error(argc > 1 ? format_value(vm, args[1]) : "assertion failed");
  return Value::nil();
}

Value b_error(VM& vm, Value* args, int) { vm.error(format_value(vm, args[0])); }

Value b_exit(VM& vm, Value* args, int argc) {
  double code = argc > 0 ? num_arg(vm, "exit", args, 0) : 0;
  // Truncated, then taken modulo 256 as a shell sees it (exit(-1) is 255).
  double m = std::isfinite(code) ? std::fmod(std::trunc(code), 256.0) : 0;
  if (m < 0) m += 256;
  throw ExitRequest{static_cast<int>(m)};
}

Value b_input(VM& vm, Value*, int) {
  std::cout.flush();  // a prompt printed before input() should show first
  std::string line;
  if (!std::getline(std::cin, line)) return Value::nil();  // end of input
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return make_string(vm, line);
}

// ---------------------------------------------------------------------------
// Collector

Value b_gc(VM& vm, Value*, int) {
  vm.collect_now();
  return Value::nil();
}

// The --gc-stats summary as a flat map of nums (docs/observability.md):
// phases, counters and ratios appear as "phase_ms:NAME", "counter:NAME"
// and "ratio:NAME" when the run records them (any --gc-* output, or the
// REPL).
Value b_gc_stats(VM& vm, Value*, int) {
  // Read everything first, so the map's own allocation does not show.
  gc::Collector& heap = vm.heap();
  const gc::observe::Summary s = gc::observe::summarize(heap);
  const std::string collector = heap.name();
  std::vector<std::pair<std::string, double>> nums = {
      {"collections", static_cast<double>(s.collections)},
      {"collections_young", static_cast<double>(s.young)},
      {"collections_full", static_cast<double>(s.full)},
      {"pause_total_ms", s.pause_total_ms},
      {"pause_mean_ms", s.pause_mean_ms},
      {"pause_p50_ms", s.pause_p50_ms},
      {"pause_p90_ms", s.pause_p90_ms},
      {"pause_p99_ms", s.pause_p99_ms},
      {"pause_max_ms", s.pause_max_ms},
      {"run_time_ms", s.run_time_ms},
      {"gc_share", s.gc_share},
      {"bytes_allocated", static_cast<double>(s.bytes_allocated)},
      {"allocation_rate_mib_s", s.allocation_rate_mb_s},
      {"heap_used", static_cast<double>(s.heap_used)},
      {"heap_size", static_cast<double>(s.heap_size)},
      {"bytes_copied", static_cast<double>(s.bytes_copied)},
      {"peak_heap", static_cast<double>(s.peak_heap)},
      {"peak_live", static_cast<double>(s.peak_live)},
      {"gc_threads", static_cast<double>(s.gc_threads)},
  };
  for (const gc::observe::PhaseTotal& p : s.phases) nums.emplace_back("phase_ms:" + p.name, p.wall_ms);
  for (const gc::observe::CounterTotal& k : s.counters)
    nums.emplace_back("counter:" + k.name, static_cast<double>(k.total));
  for (const gc::observe::RatioTotal& q : s.ratios) nums.emplace_back("ratio:" + q.name, q.run);
  RootSlots r(vm, 3);  // map, key, value
  Value v = vm.new_map();
  *r.at(0) = v;
  v = make_string(vm, collector);
  *r.at(2) = v;
  v = make_string(vm, "collector");
  *r.at(1) = v;
  map_set(vm, r.at(0), r.at(1), r.at(2));
  for (const auto& [name, value] : nums) {
    v = make_string(vm, name);
    *r.at(1) = v;
    *r.at(2) = Value::num(value);
    map_set(vm, r.at(0), r.at(1), r.at(2));
  }
  return *r.at(0);
}

// ---------------------------------------------------------------------------
// Fibers (the VM checks arity, state and nesting)

Value b_Fiber(VM& vm, Value* args, int) {
  if (!is_function(args[0])) type_error(vm, "Fiber", 0, "a function", args[0]);
  return vm.fiber_new(&args[0]);
}

Value b_resume(VM& vm, Value* args, int argc) {
  fiber_arg(vm, "resume", args, 0);
  // nil is no reference, so a local slot for it needs no rooting.
  Value nil = Value::nil();
  return vm.fiber_resume(&args[0], argc > 1 ? &args[1] : &nil);
}

Value b_yield(VM& vm, Value* args, int argc) {
  Value nil = Value::nil();
  return vm.fiber_yield(argc > 0 ? &args[0] : &nil);
}

Value b_done(VM& vm, Value* args, int) {
  fiber_arg(vm, "done", args, 0);
  return Value::boolean(vm.fiber_done(args[0]));
}

}  // namespace

const std::vector<BuiltinInfo>& builtin_table() {
  static const std::vector<BuiltinInfo> table = {
      {"print", 0, -1, b_print},
      {"str", 1, 1, b_str},
      {"num", 1, 1, b_num},
      {"type", 1, 1, b_type},
      {"classname", 1, 1, b_classname},
      {"len", 1, 1, b_len},
      {"push", 2, 2, b_push},
      {"pop", 1, 1, b_pop},
      {"slice", 3, 3, b_slice},
      {"Array", 1, 2, b_Array},
      {"NumArray", 1, 1, b_NumArray},
      {"has", 2, 2, b_has},
      {"delete", 2, 2, b_delete},
      {"keys", 1, 1, b_keys},
      {"substr", 3, 3, b_substr},
      {"find", 2, 2, b_find},
      {"split", 2, 2, b_split},
      {"join", 2, 2, b_join},
      {"ord", 1, 1, b_ord},
      {"chr", 1, 1, b_chr},
      {"sqrt", 1, 1, b_sqrt},
      {"floor", 1, 1, b_floor},
      {"ceil", 1, 1, b_ceil},
      {"abs", 1, 1, b_abs},
      {"pow", 2, 2, b_pow},
      {"sin", 1, 1, b_sin},
      {"cos", 1, 1, b_cos},
      {"min", 2, 2, b_min},
      {"max", 2, 2, b_max},
      {"clock", 0, 0, b_clock},
      {"seed", 1, 1, b_seed},
      {"random", 0, 0, b_random},
      {"assert", 1, 2, b_assert},
      {"error", 1, 1, b_error},
      {"exit", 0, 1, b_exit},
      {"input", 0, 0, b_input},
      {"gc", 0, 0, b_gc},
      {"gc_stats", 0, 0, b_gc_stats},
      {"Fiber", 1, 1, b_Fiber},
      {"resume", 1, 2, b_resume},
      {"yield", 0, 1, b_yield},
      {"done", 1, 1, b_done},
  };
  return table;
}

}  // namespace vm
