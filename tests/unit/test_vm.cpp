// The VM driven directly: running programs, handles across moving
// collections, allocation under stress, identity hashes, maps keyed by
// objects, fiber collection, and the REPL's needs_more_input.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "vm/arith.h"
#include "vm/repl.h"
#include "vm/vm.h"

using gc::Value;
using gc::Word;

namespace {

vm::VMOptions options(uint64_t stress = 0, uint64_t heap_mb = 64) {
  vm::VMOptions o;
  o.collector = "semispace";
  o.heap.max_heap_bytes = heap_mb << 20;
  o.heap.gc_threads = 1;
  o.heap.stress_interval = stress;
  return o;
}

// Redirects a file descriptor (stdout or stderr) into a temporary file for
// the lifetime of the object; text() gives what was written.
class Capture {
 public:
  explicit Capture(int fd) : fd_(fd) {
    flush();
    file_ = std::tmpfile();
    REQUIRE(file_ != nullptr);
    saved_ = dup(fd_);
    REQUIRE(saved_ >= 0);
    REQUIRE(dup2(fileno(file_), fd_) >= 0);
  }
  ~Capture() {
    restore();
    if (file_) std::fclose(file_);
  }
  std::string text() {
    restore();
    std::string out;
    std::rewind(file_);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) out.append(buf, n);
    return out;
  }

 private:
  static void flush() {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
    std::fflush(stderr);
  }
  void restore() {
    if (saved_ < 0) return;
    flush();
    dup2(saved_, fd_);
    close(saved_);
    saved_ = -1;
  }
  int fd_;
  int saved_ = -1;
  std::FILE* file_ = nullptr;
};

struct RunResult {
  int status;
  std::string out;
  std::string err;
};

RunResult run(vm::VM& machine, const std::string& source) {
  Capture out(STDOUT_FILENO);
  Capture err(STDERR_FILENO);
  int status = machine.run_source("test.src", source);
  std::string o = out.text();
  std::string e = err.text();
  return {status, o, e};
}

RunResult run(const std::string& source, uint64_t stress = 0, uint64_t heap_mb = 64) {
  vm::VM machine(options(stress, heap_mb));
  return run(machine, source);
}

std::string string_of(Value v) {
  REQUIRE(vm::is_kind(v, gc::kStringClass));
  return std::string(vm::string_view_of(v));
}

}  // namespace

// ---------------------------------------------------------------------------
// Running programs

TEST_CASE("VM: run_source prints and returns 0") {
  RunResult r = run("print(1 + 2);\nprint(\"a\" + \"b\", [1, \"x\", nil], {\"k\": true});\n");
  CHECK(r.status == 0);
  CHECK(r.out == "3\nab [1, \"x\", nil] {\"k\": true}\n");
  CHECK(r.err == "");
}

TEST_CASE("VM: functions, closures, classes and loops") {
  RunResult r = run(R"(
    fn fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    fn counter() { let n = 0; return fn () { n += 1; return n; }; }
    class Point { x; y: num; init(x, y) { this.x = x; this.y = y; } sum() { return this.x + this.y; } }
    let c = counter();
    c(); c();
    let total = 0;
    for (let i = 0; i < 10; i += 1) { total += i; }
    print(fib(15), c(), Point(3, 4).sum(), total);
  )");
  CHECK(r.status == 0);
  CHECK(r.out == "610 3 7 45\n");
  CHECK(r.err == "");
}

TEST_CASE("VM: runtime errors return 70 with a trace, compile errors 65, exit(n) n") {
  RunResult rt = run("fn f() { return 1 + nil; }\nf();\n");
  CHECK(rt.status == 70);
  CHECK(rt.err.find("error: operands of '+' must be two nums or two strings, got num and nil") !=
        std::string::npos);
  CHECK(rt.err.find("  at f (test.src:1)") != std::string::npos);
  CHECK(rt.err.find("  at <script> (test.src:2)") != std::string::npos);

  RunResult ce = run("let x = ;\n");
  CHECK(ce.status == 65);
  CHECK(ce.err.find("test.src:1:") != std::string::npos);
  CHECK(ce.err.find("error:") != std::string::npos);
  CHECK(ce.out == "");

  RunResult ex = run("print(\"before\");\nexit(7);\nprint(\"after\");\n");
  CHECK(ex.status == 7);
  CHECK(ex.out == "before\n");
}

TEST_CASE("VM: globals persist between run_source calls on one VM") {
  vm::VM machine(options());
  RunResult a = run(machine, "let g = [1, 2, 3];\nfn add(v) { push(g, v); }\n");
  CHECK(a.status == 0);
  RunResult b = run(machine, "add(4);\ngc();\nprint(g, len(g));\n");
  CHECK(b.status == 0);
  CHECK(b.out == "[1, 2, 3, 4] 4\n");
  std::vector<std::string> names = machine.global_names();
  CHECK(std::find(names.begin(), names.end(), "g") != names.end());
  CHECK(std::find(names.begin(), names.end(), "add") != names.end());
  CHECK(std::find(names.begin(), names.end(), "print") != names.end());
  // An error does not make the VM unusable.
  RunResult c = run(machine, "error(\"boom\");\n");
  CHECK(c.status == 70);
  CHECK(c.err.find("error: boom") != std::string::npos);
  RunResult d = run(machine, "print(len(g));\n");
  CHECK(d.status == 0);
  CHECK(d.out == "4\n");
}

TEST_CASE("VM: gc() and gc_stats() inside a program") {
  RunResult r = run(R"(
    let before = gc_stats()["collections"];
    gc();
    gc();
    let s = gc_stats();
    assert(s["collections"] >= before + 2, "collections counted");
    assert(s["collector"] == "semispace", "collector name");
    assert(type(s["pause_total_ms"]) == "num");
    assert(s["bytes_allocated"] > 0);
    assert(s["heap_used"] > 0 && s["heap_size"] >= s["heap_used"]);
    print("ok");
  )");
  CHECK(r.err == "");
  CHECK(r.status == 0);
  CHECK(r.out == "ok\n");
}

TEST_CASE("VM: programs give the same output with a collection at every allocation") {
  const char* program = R"(
    class Node { left; right; item: num; init(l, r, i) { this.left = l; this.right = r; this.item = i; } }
    fn make(d) { return d == 0 ? Node(nil, nil, d) : Node(make(d - 1), make(d - 1), d); }
    fn check(n) { return n.left == nil ? 1 : 1 + check(n.left) + check(n.right); }
    let m = {};
    for (let i = 0; i < 50; i += 1) { m[str(i)] = [i, "v" + str(i)]; }
    let keys_sum = 0;
    for (k in m) { keys_sum += m[k][0]; }
    print(check(make(6)), keys_sum, m["42"][1], join(split("a,b,c", ","), "-"));
  )";
  RunResult plain = run(program);
  RunResult stressed = run(program, 1);
  CHECK(plain.status == 0);
  CHECK(plain.out == "127 1225 v42 a-b-c\n");
  CHECK(stressed.status == 0);
  CHECK(stressed.out == plain.out);
  CHECK(stressed.err == "");
}

// ---------------------------------------------------------------------------
// Handles

TEST_CASE("Handle: keeps an object alive and current across a moving collection") {
  vm::VM machine(options());
  const size_t base = machine.handles.size();
  {
    vm::HandleScope scope(machine);
    vm::Handle s(machine, machine.new_string("hello, collector"));
    vm::Handle a(machine, machine.new_array(3, Value::num(7)));
    CHECK(machine.handles.size() == base + 2);
    Word* s_before = s.ref();
    Word* a_before = a.ref();
    // Garbage between collections, so the survivors really are copied.
    for (int i = 0; i < 1000; ++i) machine.new_string("garbage garbage garbage");
    machine.collect_now();
    CHECK(s.ref() != s_before);  // semispace copies every live object
    CHECK(a.ref() != a_before);
    CHECK(machine.heap().in_heap(s.ref()));
    CHECK(string_of(s.get()) == "hello, collector");
    CHECK(vm::string_hash(s.ref()) == vm::hash_bytes("hello, collector"));
    REQUIRE(vm::is_kind(a.get(), gc::kArrayClass));
    CHECK(vm::array_length(a.ref()) == 3);
    for (int i = 0; i < 3; ++i) CHECK(vm::array_elements(a.ref())[i] == Value::num(7));

    // set() replaces what the handle roots.
    Word* old = s.ref();
    s.set(machine.new_string("second"));
    CHECK(s.ref() != old);
    machine.collect_now();
    CHECK(string_of(s.get()) == "second");
  }
  // The scope released its handles.
  CHECK(machine.handles.size() == base);
}

TEST_CASE("Handle: an array of strings survives many collections") {
  vm::VM machine(options());
  vm::HandleScope scope(machine);
  vm::Handle arr(machine, machine.new_array(0, Value::nil()));
  for (int i = 0; i < 300; ++i) {
    vm::HandleScope inner(machine);
    vm::Handle s(machine, machine.new_string("item " + std::to_string(i)));
    // Root slots for array_push: handles are not pushed inside it.
    const size_t a_index = machine.handles.size() - 2;
    REQUIRE(machine.handles[a_index] == arr.get());
    vm::array_push(machine, &machine.handles[a_index], &machine.handles[a_index + 1]);
    if (i % 50 == 0) machine.collect_now();
  }
  machine.collect_now();
  machine.collect_now();
  Word* a = arr.ref();
  REQUIRE(vm::array_length(a) == 300);
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    CHECK(string_of(vm::array_elements(a)[i]) == "item " + std::to_string(i));
  }
}

TEST_CASE("HandleScope: nested scopes release in LIFO order") {
  vm::VM machine(options());
  const size_t base = machine.handles.size();
  vm::HandleScope outer(machine);
  vm::Handle a(machine, Value::num(1));
  {
    vm::HandleScope inner(machine);
    vm::Handle b(machine, Value::num(2));
    vm::Handle c(machine, Value::num(3));
    CHECK(machine.handles.size() == base + 3);
    CHECK(b.get() == Value::num(2));
    CHECK(c.get() == Value::num(3));
  }
  CHECK(machine.handles.size() == base + 1);
  CHECK(a.get() == Value::num(1));
}

// ---------------------------------------------------------------------------
// Allocation under stress (a collection at every allocation)

TEST_CASE("stress: new_string, new_array and new_map with a collection at every allocation") {
  vm::VM machine(options(/*stress=*/1));
  vm::HandleScope scope(machine);
  const uint64_t collections_before = machine.heap().stats().collections;

  vm::Handle s(machine, machine.new_string("abc"));
  vm::Handle empty(machine, machine.new_string(""));
  vm::Handle fill(machine, machine.new_string("fill"));
  vm::Handle arr(machine, machine.new_array(10, fill.get()));
  vm::Handle m(machine, machine.new_map());
  CHECK(machine.heap().stats().collections > collections_before);

  // Allocate more; every allocation collects and moves everything.
  for (int i = 0; i < 20; ++i) machine.new_string("x");
  CHECK(machine.heap().stats().collections >= collections_before + 25);

  CHECK(string_of(s.get()) == "abc");
  CHECK(string_of(empty.get()) == "");
  REQUIRE(vm::is_kind(arr.get(), gc::kArrayClass));
  CHECK(vm::array_length(arr.ref()) == 10);
  for (int i = 0; i < 10; ++i) {
    Value e = vm::array_elements(arr.ref())[i];
    CHECK(e == fill.get());  // the same (moved) string, not a stale address
    CHECK(string_of(e) == "fill");
  }
  REQUIRE(vm::is_kind(m.get(), gc::kMapClass));
  CHECK(vm::map_count(m.ref()) == 0);

  // Fill the map with string keys and number values; it grows several times.
  const size_t first = machine.handles.size();
  vm::Handle key(machine, Value::nil());
  vm::Handle value(machine, Value::nil());
  const size_t m_index = first - 1;
  REQUIRE(machine.handles[m_index] == m.get());
  for (int i = 0; i < 100; ++i) {
    key.set(machine.new_string("key" + std::to_string(i)));
    value.set(Value::num(i * 2));
    vm::map_set(machine, &machine.handles[m_index], &machine.handles[first], &machine.handles[first + 1]);
  }
  machine.new_string("one more collection");
  CHECK(vm::map_count(m.ref()) == 100);
  for (int i = 0; i < 100; ++i) {
    CAPTURE(i);
    // The probe key is a fresh string: strings are keys by content.
    key.set(machine.new_string("key" + std::to_string(i)));
    Value out = Value::nil();
    CHECK(vm::map_get(machine, m.ref(), key.get(), &out));
    CHECK(out == Value::num(i * 2));
  }
  key.set(machine.new_string("absent"));
  Value out = Value::nil();
  CHECK_FALSE(vm::map_get(machine, m.ref(), key.get(), &out));
}

TEST_CASE("stress: a large array (large-object space) holding young strings") {
  vm::VM machine(options(/*stress=*/1));
  vm::HandleScope scope(machine);
  vm::Handle arr(machine, machine.new_array(5000, Value::nil()));
  vm::Handle s(machine, Value::nil());
  const size_t arr_index = machine.handles.size() - 2;
  for (int i = 0; i < 5000; i += 250) {
    s.set(machine.new_string("s" + std::to_string(i)));
    Word* a = vm::array_storage(machine.handles[arr_index].as_ref()).as_ref();
    machine.write(a, &vm::storage_slots(a)[i], s.get());
  }
  machine.collect_now();
  for (int i = 0; i < 5000; ++i) {
    Value e = vm::array_elements(arr.ref())[i];
    if (i % 250 == 0) {
      CAPTURE(i);
      CHECK(string_of(e) == "s" + std::to_string(i));
    } else if (!e.is_nil()) {
      FAIL("slot " << i << " should be nil");
    }
  }
}

// ---------------------------------------------------------------------------
// Identity hashes and maps keyed by objects

TEST_CASE("identity_hash: stable across several moving collections") {
  vm::VM machine(options());
  vm::HandleScope scope(machine);
  std::vector<vm::Handle> objects;
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 50; ++i) {
    objects.emplace_back(machine, machine.new_array(1, Value::num(i)));
    hashes.push_back(machine.identity_hash(objects.back().ref()));
  }
  std::vector<Word*> first_addresses;
  for (auto& h : objects) first_addresses.push_back(h.ref());
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    for (int i = 0; i < 200; ++i) machine.new_string("churn");
    machine.collect_now();
    for (size_t i = 0; i < objects.size(); ++i) {
      CAPTURE(i);
      CHECK(machine.identity_hash(objects[i].ref()) == hashes[i]);
      CHECK(vm::array_elements(objects[i].ref())[0] == Value::num(static_cast<double>(i)));
    }
  }
  // They moved: the hash is not simply the current address.
  size_t moved = 0;
  for (size_t i = 0; i < objects.size(); ++i) moved += objects[i].ref() != first_addresses[i];
  CHECK(moved == objects.size());
  // Distinct objects mostly get distinct hashes.
  std::vector<uint64_t> sorted = hashes;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::unique(sorted.begin(), sorted.end()) - sorted.begin() >= 45);
}

TEST_CASE("identity_hash: hashed under stress, stable after every allocation moves the object") {
  vm::VM machine(options(/*stress=*/1));
  vm::HandleScope scope(machine);
  vm::Handle obj(machine, machine.new_map());
  uint64_t h = machine.identity_hash(obj.ref());
  for (int i = 0; i < 10; ++i) {
    machine.new_string("x");
    CHECK(machine.identity_hash(obj.ref()) == h);
  }
  CHECK(gc::Header::hash_state(*obj.ref()) == gc::HashState::kHashedAndMoved);
}

namespace {

// A map keyed by `n` array objects (value: index), with the keys also held
// in a rooted array so that they stay alive and can be looked up again.
void check_object_keyed_map(vm::VM& machine, int n, int collections) {
  vm::HandleScope scope(machine);
  const size_t first = machine.handles.size();
  vm::Handle map(machine, machine.new_map());
  vm::Handle keys(machine, machine.new_array(static_cast<uint64_t>(n), Value::nil()));
  vm::Handle key(machine, Value::nil());
  vm::Handle value(machine, Value::nil());
  for (int i = 0; i < n; ++i) {
    key.set(machine.new_array(1, Value::num(i)));
    Word* ks = vm::array_storage(keys.ref()).as_ref();
    machine.write(ks, &vm::storage_slots(ks)[i], key.get());
    value.set(Value::num(i));
    // Slot addresses are taken afresh: new_array pushes handles of its own,
    // which may reallocate the handle vector.
    vm::map_set(machine, &machine.handles[first], &machine.handles[first + 2], &machine.handles[first + 3]);
    if (i % 64 == 0) machine.collect_now();
  }
  for (int c = 0; c < collections; ++c) {
    for (int i = 0; i < 100; ++i) machine.new_string("churn");
    machine.collect_now();
  }
  REQUIRE(vm::map_count(map.ref()) == static_cast<uint64_t>(n));
  int found = 0;
  for (int i = 0; i < n; ++i) {
    Value k = vm::array_elements(keys.ref())[i];
    Value out = Value::nil();
    if (vm::map_get(machine, map.ref(), k, &out) && out == Value::num(i)) ++found;
  }
  CHECK(found == n);
  // A different object with the same content is a different key.
  key.set(machine.new_array(1, Value::num(0)));
  Value out = Value::nil();
  CHECK_FALSE(vm::map_get(machine, map.ref(), key.get(), &out));
  // Iteration order is insertion order, keys are the current (moved) objects.
  uint64_t live = 0;
  for (uint64_t e = 0; e < vm::map_entry_count(map.ref()); ++e) {
    Value k, v;
    if (!vm::map_entry(map.ref(), e, &k, &v)) continue;
    CHECK(k == vm::array_elements(keys.ref())[live]);
    CHECK(v == Value::num(static_cast<double>(live)));
    ++live;
  }
  CHECK(live == static_cast<uint64_t>(n));
}

}  // namespace

TEST_CASE("map: object keys are found after moving collections") {
  vm::VM machine(options());
  check_object_keyed_map(machine, 500, 3);
}

TEST_CASE("map: object keys are found with a collection at every allocation") {
  vm::VM machine(options(/*stress=*/1));
  check_object_keyed_map(machine, 60, 2);
}

TEST_CASE("map: object keys through a program, with gc() in between") {
  const char* program = R"(
    class K { id: num; init(i) { this.id = i; } }
    let ks = [];
    let m = {};
    for (let i = 0; i < 300; i += 1) { let k = K(i); push(ks, k); m[k] = i; if (i % 37 == 0) { gc(); } }
    gc(); gc();
    let ok = 0;
    for (let i = 0; i < 300; i += 1) { if (m[ks[i]] == i) { ok += 1; } }
    print(ok, len(m), has(m, K(0)));
  )";
  RunResult plain = run(program);
  CHECK(plain.status == 0);
  CHECK(plain.out == "300 300 false\n");
  RunResult stressed = run(program, 3);
  CHECK(stressed.status == 0);
  CHECK(stressed.out == plain.out);
}

// ---------------------------------------------------------------------------
// Fibers

TEST_CASE("fibers: 10,000 unreachable fibers are collected in a small heap") {
  // Each fiber has a pinned value stack; 10,000 of them cannot all fit in
  // 16 MB, so the run finishes only if dead fibers (finished or suspended)
  // are collected with their stacks.
  const char* program = R"(
    let total = 0;
    for (let i = 0; i < 10000; i += 1) {
      let f = Fiber(fn (x) { let y = yield(x + 1); return y * 2; });
      total += resume(f, i);
      if (i % 2 == 0) { total += resume(f, 1); assert(done(f)); }
    }
    let s = gc_stats();
    assert(s["collections"] > 0, "no collection ran");
    print(total);
  )";
  // sum(i + 1) over 0..9999, plus 2 for each of the 5,000 finished ones.
  const std::string expected = std::to_string(50005000 + 10000) + "\n";
  vm::VM machine(options(0, /*heap_mb=*/16));
  RunResult r = run(machine, program);
  CHECK(r.err == "");
  CHECK(r.status == 0);
  CHECK(r.out == expected);
  // The heap limit was respected: everything fit in 16 MB.
  CHECK(machine.heap().stats().peak_heap_bytes <= (16ull << 20));
}

TEST_CASE("fibers: a reachable suspended fiber survives collections") {
  RunResult r = run(R"(
    let gen = Fiber(fn () { let i = 0; while (true) { yield(i); i += 1; } });
    let out = [];
    for (let i = 0; i < 5; i += 1) { push(out, resume(gen)); gc(); }
    print(out, done(gen));
  )",
                    7);
  CHECK(r.status == 0);
  CHECK(r.out == "[0, 1, 2, 3, 4] false\n");
}

// ---------------------------------------------------------------------------
// The REPL's continuation rule

TEST_CASE("needs_more_input: open brackets continue, closed ones do not") {
  using vm::needs_more_input;
  CHECK_FALSE(needs_more_input(""));
  CHECK_FALSE(needs_more_input("1 + 2\n"));
  CHECK_FALSE(needs_more_input("let x = 1;\n"));
  CHECK(needs_more_input("fn f() {\n"));
  CHECK(needs_more_input("fn f() {\n  return 1;\n"));
  CHECK_FALSE(needs_more_input("fn f() {\n  return 1;\n}\n"));
  CHECK(needs_more_input("print(1,\n"));
  CHECK(needs_more_input("let a = [1, 2,\n"));
  CHECK_FALSE(needs_more_input("let a = [1, 2,\n3];\n"));
  CHECK(needs_more_input("let m = {\"a\": [1, (2\n"));
  CHECK(needs_more_input("if (x) { if (y) { }\n"));
  CHECK_FALSE(needs_more_input("if (x) { if (y) { } }\n"));
  // More closing than opening: the compiler reports it, no continuation.
  CHECK_FALSE(needs_more_input("}\n"));
  CHECK_FALSE(needs_more_input(")) (\n"));
}

TEST_CASE("needs_more_input: brackets inside strings do not count") {
  using vm::needs_more_input;
  CHECK_FALSE(needs_more_input("print(\"(\");\n"));
  CHECK_FALSE(needs_more_input("print(\"{[(\");\n"));
  CHECK_FALSE(needs_more_input("let s = \"}\";\n"));
  CHECK(needs_more_input("print(\")\"\n"));
  // Escaped quotes stay inside the string.
  CHECK_FALSE(needs_more_input("print(\"\\\"(\");\n"));
  CHECK(needs_more_input("f(\"\\\")\"\n"));
  CHECK_FALSE(needs_more_input("print(\"\\\\\")\n"));
  // A newline ends an unterminated string (a compile error, not a continuation).
  CHECK_FALSE(needs_more_input("print(\"abc\n);\n"));
}

TEST_CASE("needs_more_input: comments") {
  using vm::needs_more_input;
  CHECK_FALSE(needs_more_input("1 // (\n"));
  CHECK_FALSE(needs_more_input("// {{{\n"));
  CHECK(needs_more_input("fn f() { // }\n"));
  CHECK(needs_more_input("/* an open comment\n"));
  CHECK(needs_more_input("1 + /* (\n"));
  CHECK_FALSE(needs_more_input("/* ( */ 1\n"));
  CHECK_FALSE(needs_more_input("/* a\nb { c\n*/\n"));
  CHECK(needs_more_input("( /* ) */\n"));
  // A quote inside a comment opens no string, a comment inside a string opens
  // no comment.
  CHECK_FALSE(needs_more_input("// \"\n"));
  CHECK_FALSE(needs_more_input("/* \" */ 1\n"));
  CHECK_FALSE(needs_more_input("print(\"/*\");\n"));
  CHECK_FALSE(needs_more_input("print(\"//\", 1);\n"));
  CHECK(needs_more_input("print(\"//\",\n"));
}

// RuntimeError is no std::exception: show its message when a test throws one.
REGISTER_EXCEPTION_TRANSLATOR(vm::RuntimeError& e) {
  return doctest::String(("RuntimeError: " + e.message).c_str());
}

// '%' takes an integer remainder for integral operands; it must be fmod's
// result bit for bit, the sign of zero included.
TEST_CASE("VM: num_mod is fmod bit for bit") {
  auto bits = [](double d) {
    uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
  };
  auto same = [&](double a, double b) {
    double want = std::fmod(a, b), got = vm::num_mod(a, b);
    if (std::isnan(want)) return std::isnan(got);
    return bits(want) == bits(got);
  };
  const double edges[] = {0.0,
                          -0.0,
                          1.0,
                          -1.0,
                          2.0,
                          -2.0,
                          3.0,
                          7.5,
                          -7.5,
                          16807.0,
                          2147483647.0,
                          -2147483648.0,
                          9007199254740991.0,
                          -9007199254740991.0,
                          9007199254740992.0,
                          -9007199254740992.0,
                          9007199254740994.0,
                          1e300,
                          -1e300,
                          5e-324,
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::quiet_NaN()};
  for (double a : edges)
    for (double b : edges) CHECK_MESSAGE(same(a, b), a, " % ", b);
  uint64_t x = 88172645463325252ull;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int i = 0; i < 200000; ++i) {
    int shift_a = static_cast<int>(next() % 54), shift_b = static_cast<int>(next() % 54);
    double a = static_cast<double>(static_cast<int64_t>(next() >> (10 + shift_a)));
    double b = static_cast<double>(static_cast<int64_t>(next() >> (10 + shift_b)));
    if (next() & 1) a = -a;
    if (next() & 1) b = -b;
    CHECK_MESSAGE(same(a, b), a, " % ", b);
  }
}
