// The syntax tree the parser builds, annotated in place by the resolver
// (Decl pointers, captured flags) and then read by the code generator.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "compiler/lexer.h"

namespace compiler {

struct FunctionNode;
struct ClassNode;

// One declared variable. The resolver creates it and decides `captured`;
// the code generator gives it a stack slot when it reaches the declaration.
struct Decl {
  std::string name;
  FunctionNode* owner = nullptr;  // whose frame holds it; nullptr: a global
  bool captured = false;          // some nested function uses it: it lives in a cell
  // A nested function inside the variable's own initializer names it, so
  // the cell must exist before the initializer runs (Nil, Box, init, SetBoxed).
  bool captured_in_init = false;
  bool in_initializer = false;  // resolver state: its initializer is being resolved
  bool is_this = false;         // the hidden `this` of a method (base[1], never boxed)
  bool hoisted_fn = false;      // a block's `fn` declaration (slot made at block entry)
  bool param = false;           // a parameter (exists before its block's entry)
  int slot = -1;                // frame slot (codegen)
  int cell_slot = -1;           // slot holding its cell, when captured (codegen)
  bool global() const { return owner == nullptr; }
};

enum class ExprKind : uint8_t {
  Nil,
  True,
  False,
  Number,
  String,
  Name,
  This,
  Unary,        // op a
  Binary,       // a op b (arithmetic, bitwise, comparison, is)
  Logical,      // a && b, a || b
  Conditional,  // a ? b : c
  Assign,       // a op= b, a is Name/Get/Index; op is Eq or a compound
  Call,         // a(items)
  Get,          // a.name
  Index,        // a[b]
  SuperGet,     // super.name
  SuperCall,    // super.name(items)
  Array,        // [items]
  Map,          // {items[0]: items[1], ...}
  Function,     // fn (params) { ... }
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  uint32_t line = 0, col = 0;  // of the token that names the operation
  Tok op = Tok::Eof;
  double num = 0;
  std::string str;  // Name, Get, SuperGet/Call: the name; String: the bytes
  ExprPtr a, b, c;
  std::vector<ExprPtr> items;
  std::unique_ptr<FunctionNode> fn;
  Decl* decl = nullptr;        // Name, This: the variable (nullptr: a global by name)
  Decl* this_decl = nullptr;   // SuperGet/SuperCall: the method's `this`
  Decl* super_decl = nullptr;  // SuperGet/SuperCall: the hidden superclass variable
  uint32_t height = 1;         // height of this subtree (the parser bounds it)

  Expr(ExprKind k, uint32_t l, uint32_t c0) : kind(k), line(l), col(c0) {}
};

enum class StmtKind : uint8_t {
  Expr,
  Let,
  Fn,
  Class,
  If,
  While,
  For,
  ForIn,
  Block,
  Return,
  Break,
  Continue,
  Import,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  StmtKind kind;
  uint32_t line = 0, col = 0;
  std::string name;  // Let/Fn/Class/ForIn: the declared name; Import: the path
  uint32_t name_line = 0, name_col = 0;
  ExprPtr expr;               // Expr, Let init, If/While/For condition, ForIn iterable, Return value
  ExprPtr incr;               // For increment
  StmtPtr init;               // For initializer (Let or Expr), may be null
  std::vector<StmtPtr> body;  // Block, and the bodies of If (then), While, For, ForIn
  std::vector<StmtPtr> else_body;
  bool has_else = false;
  std::unique_ptr<FunctionNode> fn;
  std::unique_ptr<ClassNode> cls;
  Decl* decl = nullptr;  // Let/Fn/Class/ForIn: the declared variable
  uint32_t module = 0;   // Import: Program::modules index (resolver)
  bool import_ok = false;

  Stmt(StmtKind k, uint32_t l, uint32_t c0) : kind(k), line(l), col(c0) {}
};

enum class FnKind : uint8_t { Script, Function, Method, Initializer };

// When a block-level `fn` declaration's closure is created (codegen.cpp).
enum class Hoist : uint8_t {
  Direct,   // at block entry, as its slot's initial value
  AtEntry,  // at block entry, after every hoisted slot exists (it captures a sibling fn)
  AtText,   // at its textual position (it captures a `let` declared earlier in the block)
};

struct Param {
  std::string name;
  uint32_t line = 0, col = 0;
  Decl* decl = nullptr;
};

struct FunctionNode {
  FnKind kind = FnKind::Function;
  std::string name;  // as in stack traces
  uint32_t line = 0, col = 0;
  uint32_t end_line = 0;  // of the closing '}' (script: the last line)
  std::vector<Param> params;
  std::vector<StmtPtr> body;
  Decl* this_decl = nullptr;    // methods
  std::vector<Decl*> captures;  // variables of enclosing functions it uses (maybe repeated)
  Hoist hoist = Hoist::Direct;  // block-level `fn` declarations
  bool is_method() const { return kind == FnKind::Method || kind == FnKind::Initializer; }
};

struct FieldNode {
  std::string name;
  uint32_t line = 0, col = 0;
  uint8_t kind = 0;  // FieldKind
};

struct ClassNode {
  std::string name;
  uint32_t line = 0;
  bool has_super = false;
  std::string super_name;
  uint32_t super_line = 0, super_col = 0;
  Decl* super_ref = nullptr;   // what the superclass name resolves to (nullptr: global)
  Decl* super_decl = nullptr;  // the hidden local holding the superclass
  std::vector<FieldNode> fields;
  std::vector<std::unique_ptr<FunctionNode>> methods;
};

// A parsed file: its top level (script->body) plus the storage for every Decl.
struct Ast {
  std::unique_ptr<FunctionNode> script;
  std::deque<Decl> decls;  // deque: pointers stay valid as it grows
};

}  // namespace compiler
