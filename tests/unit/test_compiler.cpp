// Unit tests of the front end: lexer, parser precedence, scope errors,
// code shape (hoisting, boxing, upvalues) and stack-height accounting.
#include <doctest/doctest.h>

#include <algorithm>
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

// Independent check of a function's stack discipline: walks every path,
// requires the same height wherever paths meet, jumps onto instruction
// starts, slot operands below the current height, and a peak equal to
// max_slots. Returns "" or a description of the first problem.
std::string verify_stack(const Program& p, uint32_t index) {
  const Function& fn = *p.functions[index];
  const auto& code = fn.code;
  auto u16at = [&](size_t at) { return static_cast<uint32_t>(code[at] | (code[at + 1] << 8)); };
  auto u32at = [&](size_t at) {
    return static_cast<uint32_t>(code[at] | (code[at + 1] << 8) | (code[at + 2] << 16) |
                                 (uint32_t(code[at + 3]) << 24));
  };
  std::vector<int> depth_at(code.size() + 1, -1);
  std::vector<std::pair<size_t, int>> work = {{0, 1 + (fn.is_method ? 1 : 0) + fn.arity}};
  int peak = work[0].second;
  if (fn.lines.size() != code.size()) return "lines size";
  while (!work.empty()) {
    auto [pc, depth] = work.back();
    work.pop_back();
    for (;;) {
      if (pc >= code.size()) return "falls off the end";
      if (depth_at[pc] >= 0) {
        if (depth_at[pc] != depth) return "height mismatch at " + std::to_string(pc);
        break;
      }
      depth_at[pc] = depth;
      Op op = static_cast<Op>(code[pc]);
      size_t at = pc + 1;
      int effect = 0;
      long target = -1;
      int target_effect = 0;
      int transient = 0;  // slots used inside the instruction, above its operands
      bool ends = false, uncond = false;
      auto slot_ok = [&](uint32_t slot) { return static_cast<int>(slot) < depth; };
      switch (op) {
        case Op::Const:
        case Op::GetGlobal:
          effect = 1;
          at += 4;
          break;
        case Op::Nil:
        case Op::True:
        case Op::False:
        case Op::Dup:
          effect = 1;
          break;
        case Op::Dup2:
          effect = 2;
          break;
        case Op::Pop:
        case Op::GetIndex:
        case Op::Eq:
        case Op::Ne:
        case Op::Lt:
        case Op::Le:
        case Op::Gt:
        case Op::Ge:
        case Op::Is:
        case Op::Add:
        case Op::Sub:
        case Op::Mul:
        case Op::Div:
        case Op::Mod:
        case Op::BitAnd:
        case Op::BitOr:
        case Op::BitXor:
        case Op::Shl:
        case Op::Shr:
        case Op::ReplPrint:
          effect = -1;
          break;
        case Op::Neg:
        case Op::Not:
        case Op::BitNot:
          break;
        case Op::SetIndex:
          effect = -2;
          break;
        case Op::PopN:
          effect = -static_cast<int>(u16at(at));
          at += 2;
          break;
        case Op::GetLocal:
        case Op::GetBoxed:
          if (!slot_ok(u16at(at))) return "bad slot at " + std::to_string(pc);
          effect = 1;
          at += 2;
          break;
        case Op::SetLocal:
        case Op::SetBoxed:
        case Op::Box:
        case Op::Rebox:
          if (!slot_ok(u16at(at)) ||
              (op == Op::SetLocal || op == Op::SetBoxed ? u16at(at) + 1 >= static_cast<uint32_t>(depth)
                                                        : false))
            return "bad slot at " + std::to_string(pc);
          at += 2;
          break;
        case Op::GetUpval:
          if (u16at(at) >= fn.num_upvalues) return "bad upvalue";
          effect = 1;
          at += 2;
          break;
        case Op::SetUpval:
          if (u16at(at) >= fn.num_upvalues) return "bad upvalue";
          at += 2;
          break;
        case Op::SetGlobal:
          at += 4;
          break;
        case Op::Import:
          effect = 1;
          at += 4;
          break;
        case Op::DefineGlobal:
          effect = -1;
          at += 4;
          break;
        case Op::GetField:
          if (u32at(at + 4) >= fn.num_ics) return "bad ic";
          at += 8;
          break;
        case Op::SetField:
          if (u32at(at + 4) >= fn.num_ics) return "bad ic";
          effect = -1;
          at += 8;
          break;
        case Op::GetMethod:
          if (u32at(at + 4) >= fn.num_ics) return "bad ic";
          effect = 1;
          at += 8;
          break;
        case Op::CallMethod:
          effect = -static_cast<int>(u16at(at)) - 1;
          at += 2;
          break;
        case Op::Call:
          effect = -static_cast<int>(u16at(at));
          at += 2;
          break;
        case Op::GetSuper:
          effect = -1;
          at += 4;
          break;
        case Op::SuperInvoke:
          effect = -static_cast<int>(u16at(at + 4)) - 1;
          at += 6;
          break;
        case Op::Return:
          ends = true;
          break;
        case Op::Closure: {
          const Constant& k = fn.constants.at(u32at(at));
          if (k.kind != Constant::Kind::kFunction) return "closure constant";
          const Function& child = *p.functions.at(k.index);
          at += 4;
          for (uint16_t i = 0; i < child.num_upvalues; ++i, at += 3) {
            if (code[at] && !slot_ok(u16at(at + 1))) return "closure captures a bad slot";
            if (!code[at] && u16at(at + 1) >= fn.num_upvalues) return "closure captures a bad upvalue";
          }
          effect = 1;
          std::string inner = verify_stack(p, k.index);
          if (!inner.empty()) return child.name + ": " + inner;
          break;
        }
        case Op::Class: {
          const Constant& k = fn.constants.at(u32at(at));
          const ClassDesc& c = *p.classes.at(k.index);
          effect = 1 - static_cast<int>(c.methods.size()) - (c.has_super ? 1 : 0);
          at += 4;
          break;
        }
        case Op::Array:
          effect = 1 - static_cast<int>(u32at(at));
          at += 4;
          break;
        case Op::Map:
          effect = 1 - 2 * static_cast<int>(u32at(at));
          at += 4;
          break;
        case Op::IterPrep:
          if (u16at(at) + 3 > static_cast<uint32_t>(depth)) return "IterPrep slots";
          at += 2;
          break;
        case Op::IterNext:
          target = static_cast<long>(at + 6) + static_cast<int32_t>(u32at(at + 2));
          effect = 1;
          at += 6;
          break;
        case Op::Jump:
        case Op::JumpIfFalse:
        case Op::JumpIfFalseKeep:
        case Op::JumpIfTrueKeep:
          target = static_cast<long>(at + 4) + static_cast<int32_t>(u32at(at));
          at += 4;
          uncond = op == Op::Jump;
          effect = op == Op::Jump ? 0 : -1;
          target_effect = op == Op::JumpIfFalse ? -1 : 0;
          break;
        // Superinstructions: as their parts, the codegen's height counting
        // the nil their nil tests pushed.
        case Op::StoreLocal:
          if (!slot_ok(u16at(at)) || u16at(at) + 1 >= static_cast<uint32_t>(depth))
            return "bad slot at " + std::to_string(pc);
          effect = -1;
          at += 2;
          break;
        case Op::GetLocalField:
          if (!slot_ok(u16at(at))) return "bad slot at " + std::to_string(pc);
          if (u32at(at + 6) >= fn.num_ics) return "bad ic";
          effect = 1;
          at += 10;
          break;
        case Op::IsNil:
        case Op::NotNil:
          transient = 1;
          break;
        case Op::SetLocalField:
        case Op::StoreLocalField:
          if (!slot_ok(u16at(at))) return "bad slot at " + std::to_string(pc);
          if (u32at(at + 6) >= fn.num_ics) return "bad ic";
          effect = op == Op::StoreLocalField ? -1 : 0;
          at += 10;
          break;
        case Op::StoreField:
          if (u32at(at + 4) >= fn.num_ics) return "bad ic";
          effect = -2;
          at += 8;
          break;
        case Op::StoreBoxed:
          if (!slot_ok(u16at(at)) || u16at(at) + 1 >= static_cast<uint32_t>(depth))
            return "bad slot at " + std::to_string(pc);
          effect = -1;
          at += 2;
          break;
        case Op::StoreUpval:
          if (u16at(at) >= fn.num_upvalues) return "bad upvalue";
          effect = -1;
          at += 2;
          break;
        case Op::StoreGlobal:
          effect = -1;
          at += 4;
          break;
        case Op::AddLocal:
        case Op::SubLocal:
        case Op::MulLocal:
        case Op::DivLocal:
          if (!slot_ok(u16at(at))) return "bad slot at " + std::to_string(pc);
          transient = 1;
          at += 2;
          break;
        case Op::AddConst:
        case Op::SubConst:
        case Op::MulConst:
        case Op::DivConst:
        case Op::ModConst:
          if (u32at(at) >= fn.constants.size()) return "bad constant";
          transient = 1;
          at += 4;
          break;
        case Op::AddLocals:
        case Op::SubLocals:
        case Op::MulLocals:
        case Op::DivLocals:
          if (!slot_ok(u16at(at)) || !slot_ok(u16at(at + 2))) return "bad slot at " + std::to_string(pc);
          effect = 1;
          transient = 2;
          at += 4;
          break;
        case Op::JumpUnlessLtLocal:
        case Op::JumpUnlessLeLocal:
        case Op::JumpUnlessGtLocal:
        case Op::JumpUnlessGeLocal:
          if (!slot_ok(u16at(at))) return "bad slot at " + std::to_string(pc);
          target = static_cast<long>(at + 6) + static_cast<int32_t>(u32at(at + 2));
          at += 6;
          effect = target_effect = -1;
          transient = 1;
          break;
        case Op::JumpIfNilLocal:
        case Op::JumpIfNotNilLocal:  // GetLocal, then the nil test's pushes
          if (!slot_ok(u16at(at))) return "bad slot at " + std::to_string(pc);
          target = static_cast<long>(at + 6) + static_cast<int32_t>(u32at(at + 2));
          at += 6;
          transient = 2;
          break;
        case Op::JumpUnlessLtLocals:
        case Op::JumpUnlessLeLocals:
        case Op::JumpUnlessGtLocals:
        case Op::JumpUnlessGeLocals:
          if (!slot_ok(u16at(at)) || !slot_ok(u16at(at + 2))) return "bad slot at " + std::to_string(pc);
          target = static_cast<long>(at + 8) + static_cast<int32_t>(u32at(at + 4));
          at += 8;
          transient = 2;
          break;
        case Op::JumpIfTrue:
        case Op::JumpIfNil:
        case Op::JumpIfNotNil:
        case Op::JumpUnlessEq:
        case Op::JumpUnlessNe:
        case Op::JumpUnlessLt:
        case Op::JumpUnlessLe:
        case Op::JumpUnlessGt:
        case Op::JumpUnlessGe:
          target = static_cast<long>(at + 4) + static_cast<int32_t>(u32at(at));
          at += 4;
          effect = target_effect =
              op == Op::JumpIfTrue || op == Op::JumpIfNil || op == Op::JumpIfNotNil ? -1 : -2;
          transient = op == Op::JumpIfNil || op == Op::JumpIfNotNil ? 1 : 0;
          break;
        default:
          return "unknown opcode";
      }
      peak = std::max(peak, depth + transient);
      if (ends) break;
      if (target >= 0) {
        if (target > static_cast<long>(code.size())) return "jump out of range";
        work.push_back({static_cast<size_t>(target), depth + target_effect});
      }
      if (uncond) break;
      depth += effect;
      if (depth < 1) return "stack underflow at " + std::to_string(pc);
      peak = std::max(peak, depth);
      pc = at;
    }
  }
  if (static_cast<uint32_t>(peak) != fn.max_slots)
    return "peak " + std::to_string(peak) + " != max_slots " + std::to_string(fn.max_slots);
  return "";
}

}  // namespace

TEST_CASE("lexer: tokens, numbers, strings, positions") {
  auto t = lex("let x = 0xff + 2.5e-3; // c\n /* b\n */ \"a\\n\\x41\\0\" <<= >> && || ? : is %= 1e9 3.25");
  std::vector<Tok> types;
  for (auto& tok : t) types.push_back(tok.type);
  std::vector<Tok> want = {Tok::Let,    Tok::Ident,     Tok::Eq,       Tok::Number,   Tok::Plus,
                           Tok::Number, Tok::Semicolon, Tok::String,   Tok::Shl,      Tok::Eq,
                           Tok::Shr,    Tok::AmpAmp,    Tok::PipePipe, Tok::Question, Tok::Colon,
                           Tok::Is,     Tok::PercentEq, Tok::Number,   Tok::Number,   Tok::Eof};
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
  CHECK(script_ops("1 + 2 * 3;") == "Const Const MulConst Add Pop Nil Return");
  // Bitwise binds tighter than comparison: (x & 1) == 0.
  CHECK(script_ops("x & 1 == 0;") == "GetGlobal Const BitAnd Const Eq Pop Nil Return");
  // `is` sits between comparisons and `|`.
  CHECK(script_ops("a is B | c;") == "GetGlobal GetGlobal GetGlobal BitOr Is Pop Nil Return");
  CHECK(script_ops("a < b == c is D;") == "GetGlobal GetGlobal Lt GetGlobal GetGlobal Is Eq Pop Nil Return");
  CHECK(script_ops("1 << 2 + 3;") == "Const Const AddConst Shl Pop Nil Return");
  CHECK(script_ops("a || b && c;") ==
        "GetGlobal JumpIfTrueKeep GetGlobal JumpIfFalseKeep GetGlobal Pop Nil Return");
  CHECK(script_ops("-a.b[1]();") == "GetGlobal GetField Const GetIndex Call Neg Pop Nil Return");
  CHECK(script_ops("a = b = 1;") == "Const SetGlobal StoreGlobal Nil Return");
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
  CHECK(errors_of("class A { m() { return super.m(); } }") ==
        "1:24: 'super' in a class without a superclass");
  CHECK(errors_of("super.x;") == "1:1: 'super' outside a class");
  CHECK(errors_of("1 = 2;") == "1:3: invalid assignment target");
  CHECK(where("a + b = c;") == "1:7");
  CHECK(where("f() = 1;") == "1:5");
  CHECK(where("a.b += 1; a[0] -= 1; a = 2;") == "");
  CHECK(errors_of("fn f() { let a = a + 1; }") ==
        "1:18: cannot read local variable 'a' in its own initializer");
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
  REQUIRE(compile(p,
                  "fn f(a) { return a + (a * (a - 1)); }\n"
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
  // Inner block: the closure is the slot's value from block entry on.
  Program p;
  REQUIRE(compile(p, "fn outer(a) { g(); fn g() { return a; } }").ok);
  CHECK(ops(p, find_function(p, "outer")) == "Box Closure GetLocal Call Pop Nil Return");
  // Mutually recursive local functions: both cells exist before either
  // closure is made.
  Program q;
  REQUIRE(compile(q, "fn o() { a(); fn a() { return b(); } fn b() { return a(); } }").ok);
  CHECK(ops(q, find_function(q, "o")) ==
        "Nil Box Nil Box Closure StoreBoxed Closure StoreBoxed GetBoxed Call Pop Nil Return");
  // A function capturing an earlier `let` of its block is made at its text.
  Program r;
  REQUIRE(compile(r, "fn o() { let x = 1; fn f() { return x; } fn g() { return 2; } }").ok);
  CHECK(ops(r, find_function(r, "o")) == "Nil Closure Const Box Closure StoreLocal Nil Return");
}

TEST_CASE("superinstructions: common pairs fuse, never across a jump target") {
  Program p;
  REQUIRE(compile(p, "fn walk(x) { while (x != nil) { x = x.next; } return !x; }").ok);
  CHECK(ops(p, find_function(p, "walk")) ==
        "JumpIfNilLocal GetLocalField StoreLocal Jump GetLocal Not Return Nil Return");
  Program q;
  REQUIRE(
      compile(q, "fn f(a, b) { if (a < b) { return 1; } if (!a) { return 2; } if (b == nil) { return 3; } }")
          .ok);
  CHECK(ops(q, find_function(q, "f")) ==
        "JumpUnlessLtLocals Const Return GetLocal JumpIfTrue Const Return JumpIfNotNilLocal Const Return Nil "
        "Return");
  // Chains: GetLocal GetLocal Mul is MulLocals; a local receiver stays off
  // the stack (SetLocalField) unless the value assigns it.
  Program a;
  REQUIRE(compile(a, "fn g(o, x, y) { o.f = x * y; return x - y + x; }").ok);
  CHECK(ops(a, find_function(a, "g")) == "MulLocals StoreLocalField SubLocals AddLocal Return Nil Return");
  Program c;
  REQUIRE(compile(c, "fn h(o, p, k) { o.f -= k * 2; o.f += (o = p).f; while (k >= 3) { k = k - 1; } }").ok);
  CHECK(
      ops(c, find_function(c, "h")) ==
      "GetLocalField GetLocal MulConst Sub StoreLocalField GetLocal Dup GetField GetLocal SetLocal GetField "
      "Add StoreField GetLocal Const JumpUnlessGe GetLocal SubConst StoreLocal Jump Nil Return");
  CHECK(verify_stack(c, find_function(c, "h")) == "");
  CHECK(script_ops("let t = 0; fn c() { let n = 0; return fn() { n += 1; t = n; }; }") ==
        "Closure DefineGlobal Const DefineGlobal Nil Return");
  Program u;
  REQUIRE(
      compile(u, "let t = 0; fn c() { let n = 0; let f = fn() { n += 1; t = n; }; n = 2; return f; }").ok);
  CHECK(ops(u, find_function(u, "c")) == "Const Box Closure Const StoreBoxed GetLocal Return Nil Return");
  CHECK(ops(u, find_function(u, "<fn>")) == "GetUpval AddConst StoreUpval GetUpval StoreGlobal Nil Return");
  // The GetField is where && jumps to, so it stays an instruction of its own.
  Program r;
  REQUIRE(compile(r, "fn f(c, d) { return (c && d).f; }").ok);
  CHECK(ops(r, find_function(r, "f")) == "GetLocal JumpIfFalseKeep GetLocal GetField Return Nil Return");
  CHECK(verify_stack(r, find_function(r, "f")) == "");
  // A fused compare fails at its own line, not at the jump's.
  Program e;
  REQUIRE(compile(e, "fn f(a, b) {\n  while (\n      a < b) {\n    a = b;\n  }\n}").ok);
  const Function& fn = *e.functions[find_function(e, "f")];
  REQUIRE(static_cast<Op>(fn.code[0]) == Op::JumpUnlessLtLocals);
  for (size_t i = 0; i < 9; ++i) CHECK(fn.lines[i] == 3);
  // A chained operator fails at the operator's line: the line of its last
  // byte, where the instruction pointer stands when it fails.
  Program m;
  REQUIRE(compile(m, "fn m(x, y) {\n  return x\n    *\n    y;\n}").ok);
  const Function& mf = *m.functions[find_function(m, "m")];
  REQUIRE(static_cast<Op>(mf.code[0]) == Op::MulLocals);
  CHECK(mf.lines[4] == 3);
}

TEST_CASE("every language test's bytecode keeps its stack discipline") {
  // The whole suite, superinstructions included: a fusion across a jump
  // target would leave a jump landing inside an instruction.
  size_t checked = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(GCLAB_SOURCE_DIR) + "/tests/lang")) {
    if (entry.path().extension() != ".src") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    Program p;
    CompileResult r = compile(p, text.str());
    if (!r.ok) continue;  // the compile-error tests
    INFO(entry.path().string());
    for (uint32_t f = 0; f < p.functions.size(); ++f) CHECK(verify_stack(p, f) == "");
    ++checked;
  }
  CHECK(checked > 150);
}

TEST_CASE("upvalue descriptors through two levels") {
  Program p;
  REQUIRE(
      compile(p, "fn outer() { let x = 1; fn mid() { fn inner() { return x; } return inner; } return mid; }")
          .ok);
  std::ostringstream dis;
  disassemble(p, find_function(p, "outer"), dis);
  std::string text = dis.str();
  // outer: mid is hoisted to slot 1, x is slot 2 (boxed) and mid captures it
  // from outer's frame; inner captures mid's upvalue 0.
  CHECK(text.find("Box                2") != std::string::npos);
  CHECK(text.find("; <fn mid> local 2") != std::string::npos);
  CHECK(text.find("; <fn inner> upval 0") != std::string::npos);
  CHECK(p.functions[find_function(p, "mid")]->num_upvalues == 1);
  CHECK(p.functions[find_function(p, "inner")]->num_upvalues == 1);
  CHECK(ops(p, find_function(p, "inner")) == "GetUpval Return Nil Return");
}

TEST_CASE("captured variables, loops and initializers") {
  Program p;
  REQUIRE(
      compile(p,
              "fn f() { let fs = []; for (let i = 0; i < 3; i += 1) { push(fs, fn () { return i; }); } }\n"
              "fn g() { for (let i = 0; i < 3; i += 1) { } }\n"
              "fn h(xs) { for (x in xs) { let k = fn () { return x; }; } }\n"
              "fn r() { let f = fn () { return f; }; }\n")
          .ok);
  CHECK(ops(p, find_function(p, "f")).find("Rebox") != std::string::npos);
  CHECK(ops(p, find_function(p, "g")).find("Rebox") == std::string::npos);
  CHECK(ops(p, find_function(p, "h")) ==
        "GetLocal Nil Nil IterPrep IterNext Box Closure Pop Pop Jump PopN Nil Return");
  CHECK(ops(p, find_function(p, "r")) == "Nil Box Closure StoreBoxed Nil Return");
}

TEST_CASE("classes and super") {
  Program p;
  CompileResult r =
      compile(p,
              "class A { v: num; ok: bool; w; init(v) { this.v = v; } get() { return this.v; } }\n"
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
  CHECK(ops(p, find_function(p, "B.init")) == "GetLocal GetUpval Const SuperInvoke Pop GetLocal Return");
  CHECK(ops(p, find_function(p, "B.f")) == "GetLocal GetUpval GetSuper Return Nil Return");
}

TEST_CASE("repl mode") {
  CHECK(script_ops("1 + 2;", true) == "Const AddConst ReplPrint Nil Return");
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

TEST_CASE("every path agrees on the stack height, and the peak is max_slots") {
  const char* src = R"(
    class Point { x: num; y; init(x, y) { this.x = x; this.y = y; } norm() { return sqrt(this.x * this.x); } }
    class P3 < Point {
      z;
      init(x, y, z) { super.init(x, y); this.z = z; }
      get() { return fn () { return this.z + super.norm(); }; }
    }
    fn fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    {
      fn even(n) { return n == 0 ? true : odd(n - 1); }
      fn odd(n) { return n == 0 ? false : even(n - 1); }
      let fs = [];
      for (let i = 0; i < 3; i += 1) {
        let j = i * 2;
        push(fs, fn () { return i + j; });
        if (i == 1) { let k = 1; continue; }
        while (true) { let q = 2; if (q) { break; } continue; }
      }
      for (v in fs) { let w = v(); if (w) { break; } else { continue; } }
      let g = fn (n) { return n < 2 ? 1 : n * g(n - 1); };
      let m = {"a": 1, x: [1, 2,],};
      m["a"] += 2; m.a -= fib(3) && 1 || 2;
      for (;;) { break; }
    }
  )";
  Program p;
  CompileResult r = compile(p, src);
  REQUIRE(r.ok);
  CHECK(verify_stack(p, r.function) == "");
  p.functions[find_function(p, "fib")]->max_slots += 1;
  CHECK(verify_stack(p, r.function) != "");
}
