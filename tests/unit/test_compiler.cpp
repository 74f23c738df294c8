// Unit tests of the front end: lexer, parser precedence, scope errors,
// code shape (hoisting, boxing, upvalues) and stack-height accounting.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/compiler.h"
#include "compiler/lexer.h"

using namespace compiler;

namespace {

CompileResult compile(Program& p, std::string_view src, bool repl = false) {
  CompileOptions options;
  options.repl = repl;
  return compile_source(p, "t.src", src, options);
}

// "LINE:COL: MESSAGE" of every error, joined by newlines.
std::string errors_of(std::string_view src, bool repl = false) {
  Program p;
  CompileResult r = compile(p, src, repl);
  std::string out;
  for (auto& e : r.errors) {
    if (!out.empty()) out += "\n";
    out += std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.message;
  }
  return out;
}

// "LINE:COL" of the first error, or "" when it compiles.
std::string where(std::string_view src) {
  Program p;
  CompileResult r = compile(p, src);
  if (r.errors.empty()) return "";
  return std::to_string(r.errors[0].line) + ":" + std::to_string(r.errors[0].column);
}

uint32_t find_function(const Program& p, const std::string& name) {
  for (uint32_t i = 0; i < p.functions.size(); ++i) {
    if (p.functions[i]->name == name) return i;
  }
  FAIL("no function " << name);
  return 0;
}

// The opcode names of one function, separated by spaces (from the
// disassembly, whose third column is the opcode).
std::string ops(const Program& p, uint32_t fn) {
  std::ostringstream dis;
  disassemble(p, fn, dis);
  std::istringstream in(dis.str());
  std::string line, out;
  std::getline(in, line);  // header
  while (std::getline(in, line) && !line.empty()) {
    std::istringstream fields(line);
    std::string offset, src_line, name;
    fields >> offset >> src_line >> name;
    out += (out.empty() ? "" : " ") + name;
  }
  return out;
}

std::string script_ops(std::string_view src, bool repl = false) {
  Program p;
  CompileResult r = compile(p, src, repl);
  REQUIRE_MESSAGE(r.ok, (r.errors.empty() ? "" : r.errors[0].message));
  return ops(p, r.function);
}

}  // namespace

TEST_CASE("lexer: tokens, numbers, strings, positions") {
  auto t = lex("let x = 0xff + 2.5e-3; // c\n /* b\n */ \"a\\n\\x41\\0\" <<= >> && || ? : is %= 1e9 3.25");
  std::vector<Tok> types;
  for (auto& tok : t) types.push_back(tok.type);
  std::vector<Tok> want = {Tok::Let,    Tok::Ident,  Tok::Eq,      Tok::Number,   Tok::Plus,
                           Tok::Number, Tok::Semicolon, Tok::String, Tok::Shl,     Tok::Eq,
                           Tok::Shr,    Tok::AmpAmp, Tok::PipePipe, Tok::Question, Tok::Colon,
                           Tok::Is,     Tok::PercentEq, Tok::Number, Tok::Number, Tok::Eof};
  CHECK(types == want);
  CHECK(t[3].num == 255);
  CHECK(t[5].num == 2.5e-3);
  CHECK(t[17].num == 1e9);
  CHECK(t[18].num == 3.25);
  CHECK(t[7].value == std::string("a\nA\0", 4));
  CHECK(t[7].line == 3);
  CHECK(t[7].col == 5);
  CHECK(t[1].col == 5);
}

TEST_CASE("lexer: errors") {
  CHECK(errors_of("let s = \"a\\qb\";") == "1:11: unknown escape '\\q' in string");
  CHECK(errors_of("let s = \"abc\nlet t = 1;") == "1:9: newline inside a string");
  CHECK(where("let x = 1 @ 2;") == "1:11");
  CHECK(where("/* never closed") == "1:1");
  CHECK(where("let x = 12abc;") == "1:9");
}

TEST_CASE("precedence") {
  CHECK(script_ops("1 + 2 * 3;") == "Const Const Const Mul Add Pop Nil Return");
  // Bitwise binds tighter than comparison: (x & 1) == 0.
  CHECK(script_ops("x & 1 == 0;") == "GetGlobal Const BitAnd Const Eq Pop Nil Return");
  // `is` sits between comparisons and `|`.
  CHECK(script_ops("a is B | c;") == "GetGlobal GetGlobal GetGlobal BitOr Is Pop Nil Return");
  CHECK(script_ops("a < b == c is D;") == "GetGlobal GetGlobal Lt GetGlobal GetGlobal Is Eq Pop Nil Return");
  CHECK(script_ops("1 << 2 + 3;") == "Const Const Const Add Shl Pop Nil Return");
  CHECK(script_ops("a || b && c;") == "GetGlobal JumpIfTrueKeep GetGlobal JumpIfFalseKeep GetGlobal Pop Nil Return");
  CHECK(script_ops("-a.b[1]();") == "GetGlobal GetField Const GetIndex Call Neg Pop Nil Return");
  CHECK(script_ops("a = b = 1;") == "Const SetGlobal SetGlobal Pop Nil Return");
  CHECK(script_ops("c ? 1 : 2;") == "GetGlobal JumpIfFalse Const Jump Const Pop Nil Return");
}

TEST_CASE("compile errors at the right line and column") {
  CHECK(where("let x = ;") == "1:9");
  CHECK(errors_of("let x = ;") == "1:9: expected an expression");
  CHECK(errors_of("print(1)\n") == "2:1: expected ';' after expression");
  CHECK(errors_of("{ let a = 1;\n  let a = 2; }") == "2:7: 'a' is already declared in this block");
  CHECK(where("fn f(a) { let a; }") == "1:15");
  CHECK(where("fn f(a, a) { }") == "1:9");
  CHECK(where("let a; let a;") == "1:12");
  CHECK(where("fn f() {} let f;") == "1:15");
  CHECK(errors_of("class C { x; y: num;\n  x() { } }") == "2:3: 'x' is both a field and a method of C");
  CHECK(errors_of("break;") == "1:1: 'break' outside a loop");
  CHECK(errors_of("while (true) { fn f() { continue; } }") == "1:25: 'continue' outside a loop");
  CHECK(errors_of("if (x) { return 1; }") == "1:10: 'return' outside a function");
  CHECK(errors_of("fn f() { return this; }") == "1:17: 'this' outside a method");
  CHECK(errors_of("class A { m() { return super.m(); } }") == "1:24: 'super' in a class without a superclass");
  CHECK(errors_of("super.x;") == "1:1: 'super' outside a class");
  CHECK(errors_of("1 = 2;") == "1:3: invalid assignment target");
  CHECK(where("a + b = c;") == "1:7");
  CHECK(where("f() = 1;") == "1:5");
  CHECK(where("a.b += 1; a[0] -= 1; a = 2;") == "");
  CHECK(errors_of("fn f() { let a = a + 1; }") == "1:18: cannot read local variable 'a' in its own initializer");
  CHECK(where("{ let f = fn (n) { return n < 2 ? 1 : n * f(n - 1); }; }") == "");
  CHECK(where("let a = a;") == "");  // a global: checked at run time
  CHECK(errors_of("import \"no/such/file.src\";") == "1:8: cannot read 'no/such/file.src'");
  CHECK(where("class A { m() { return fn () { return this; }; } }") == "");
  CHECK(where("class A < B { m() { return fn () { return super.m; }; } }") == "");
}

TEST_CASE("several errors in one file") {
  std::string errs = errors_of("let = 1;\nlet y = ;\nprint(1)\nlet z = 2;\n{ 1 + ; }\n}\n");
  CHECK(errs ==
        "1:5: expected variable name after 'let'\n"
        "2:9: expected an expression\n"
        "4:1: expected ';' after expression\n"
        "5:7: expected an expression\n"
        "6:1: expected an expression");
  // Scope errors are all reported too.
  CHECK(errors_of("break;\ncontinue;\n") == "1:1: 'break' outside a loop\n2:1: 'continue' outside a loop");
}

TEST_CASE("format_diagnostic puts the caret under the column") {
  Diagnostic d;
  d.file = "a.src";
  d.line = 3;
  d.column = 4;
  d.message = "oops";
  d.source_line = "\tx = ;";
  CHECK(format_diagnostic(d) == "a.src:3:4: error: oops\n\tx = ;\n\t  ^\n");
}

TEST_CASE("max_slots is the exact peak stack height") {
  Program p;
  REQUIRE(compile(p, "fn f(a) { return a + (a * (a - 1)); }\n"
                     "fn g(o) { return o.m(1, [2, 3]); }\n"
                     "fn h() { let x = 1; { let y = 2; let z = {x: y, 1: 2}; } let w = x; return w; }\n"
                     "class C { m(a, b) { return this.n(a) + b; } }\n")
              .ok);
  CHECK(p.functions[find_function(p, "f")]->max_slots == 6);
  CHECK(p.functions[find_function(p, "g")]->max_slots == 7);
  // h: closure, x, y, then x y 1 2 -> 7; z reuses the map's slot.
  CHECK(p.functions[find_function(p, "h")]->max_slots == 7);
  // C.m: closure this a b, then this GetMethod(+1) a -> 7.
  CHECK(p.functions[find_function(p, "C.m")]->max_slots == 7);
  CHECK(p.functions[find_function(p, "C.m")]->num_ics == 1);
  CHECK(p.functions[find_function(p, "C.m")]->is_method);
}

TEST_CASE("hoisting") {
  // Top level: every fn is defined before the first statement runs.
  CHECK(script_ops("print(f()); fn f() { return 1; }") ==
        "Closure DefineGlobal GetGlobal GetGlobal Call Call Pop Nil Return");
  // Inner block: slot declared (nil) at block entry, closure stored at the
  // declaration.
  Program p;
  REQUIRE(compile(p, "fn outer() { g(); fn g() { } }").ok);
  CHECK(ops(p, find_function(p, "outer")) == "Nil GetLocal Call Pop Closure SetLocal Pop Nil Return");
  // Mutually recursive local functions capture each other's cells.
  Program q;
  REQUIRE(compile(q, "fn o() { fn a() { return b(); } fn b() { return a(); } }").ok);
  CHECK(ops(q, find_function(q, "o")) ==
        "Nil Box Nil Box Closure SetBoxed Pop Closure SetBoxed Pop Nil Return");
}

TEST_CASE("upvalue descriptors through two levels") {
  Program p;
  REQUIRE(compile(p, "fn outer() { let x = 1; fn mid() { fn inner() { return x; } return inner; } return mid; }").ok);
  std::ostringstream dis;
  disassemble(p, find_function(p, "outer"), dis);
  std::string text = dis.str();
  // outer: mid is hoisted to slot 1, x is slot 2 (boxed) and mid captures it
  // from outer's frame; inner captures mid's upvalue 0.
  CHECK(text.find("Box             2") != std::string::npos);
  CHECK(text.find("; <fn mid> local 2") != std::string::npos);
  CHECK(text.find("; <fn inner> upval 0") != std::string::npos);
  CHECK(p.functions[find_function(p, "mid")]->num_upvalues == 1);
  CHECK(p.functions[find_function(p, "inner")]->num_upvalues == 1);
  CHECK(ops(p, find_function(p, "inner")) == "GetUpval Return Nil Return");
}

TEST_CASE("captured variables, loops and initializers") {
  Program p;
  REQUIRE(compile(p, "fn f() { let fs = []; for (let i = 0; i < 3; i += 1) { push(fs, fn () { return i; }); } }\n"
                     "fn g() { for (let i = 0; i < 3; i += 1) { } }\n"
                     "fn h(xs) { for (x in xs) { let k = fn () { return x; }; } }\n"
                     "fn r() { let f = fn () { return f; }; }\n")
              .ok);
  CHECK(ops(p, find_function(p, "f")).find("Rebox") != std::string::npos);
  CHECK(ops(p, find_function(p, "g")).find("Rebox") == std::string::npos);
  CHECK(ops(p, find_function(p, "h")) ==
        "GetLocal Nil Nil IterPrep IterNext Box Closure Pop Pop Jump PopN Nil Return");
  CHECK(ops(p, find_function(p, "r")) == "Nil Box Closure SetBoxed Pop Nil Return");
}

TEST_CASE("classes and super") {
  Program p;
  CompileResult r = compile(p, "class A { v: num; ok: bool; w; init(v) { this.v = v; } get() { return this.v; } }\n"
                               "class B < A { init() { super.init(1); } f() { return super.get; } }\n");
  REQUIRE(r.ok);
  REQUIRE(p.classes.size() == 2);
  const ClassDesc& a = *p.classes[0];
  CHECK(a.name == "A");
  CHECK(!a.has_super);
  REQUIRE(a.fields.size() == 3);
  CHECK(a.fields[0].kind == FieldKind::kNum);
  CHECK(a.fields[1].kind == FieldKind::kBool);
  CHECK(a.fields[2].kind == FieldKind::kAny);
  CHECK(p.symbols[a.methods[0]] == "init");
  CHECK(p.symbols[a.methods[1]] == "get");
  CHECK(p.functions[find_function(p, "A.init")]->is_initializer);
  CHECK(!p.functions[find_function(p, "A.get")]->is_initializer);
  CHECK(p.classes[1]->has_super);
  CHECK(ops(p, r.function) ==
        "Closure Closure Class DefineGlobal "
        "GetGlobal Box GetBoxed Closure Closure Class DefineGlobal Pop Nil Return");
  CHECK(ops(p, find_function(p, "B.init")) == "GetLocal GetUpval Const SuperInvoke Pop Nil Return");
  CHECK(ops(p, find_function(p, "B.f")) == "GetLocal GetUpval GetSuper Return Nil Return");
}

TEST_CASE("repl mode") {
  CHECK(script_ops("1 + 2;", true) == "Const Const Add ReplPrint Nil Return");
  CHECK(script_ops("{ 1; }", true) == "Const Pop Nil Return");
  CHECK(errors_of("let a = 1; let a = 2;", true) == "");
  CHECK(errors_of("{ let a = 1; let a = 2; }", true) != "");
}

TEST_CASE("imports compile once, cycles are fine") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "gclab_test_compiler_imports";
  fs::create_directories(dir / "lib");
  std::ofstream(dir / "main.src") << "import \"lib/a.src\";\nimport \"lib/../lib/a.src\";\nprint(A);\n";
  std::ofstream(dir / "lib" / "a.src") << "import \"b.src\";\nlet A = 1;\n";
  std::ofstream(dir / "lib" / "b.src") << "import \"a.src\";\nlet B = 2;\n";
  std::ofstream(dir / "bad.src") << "import \"lib/c.src\";\n";
  std::ofstream(dir / "lib" / "c.src") << "let = 3;\n";
  Program p;
  CompileResult r = compile_file(p, (dir / "main.src").string());
  REQUIRE(r.ok);
  CHECK(p.modules.size() == 3);  // main, a, b
  CHECK(p.module_index.count((dir / "lib" / "a.src").lexically_normal().generic_string()) == 1);
  CompileResult bad = compile_file(p, (dir / "bad.src").string());
  REQUIRE(!bad.ok);
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].file == (dir / "lib" / "c.src").lexically_normal().generic_string());
  CHECK(bad.errors[0].line == 1);
  CHECK(bad.errors[0].column == 5);
  fs::remove_all(dir);
}

TEST_CASE("deep nesting is an error, not a crash") {
  std::string deep(5000, '(');
  CHECK(errors_of(deep + "1" + std::string(5000, ')') + ";").find("nested too deeply") != std::string::npos);
  std::string chain = "let x = 1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  CHECK(errors_of(chain + ";").find("too complex") != std::string::npos);
}
