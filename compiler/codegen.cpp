// Code generation.
//
// Frame layout (bytecode.h): base[0] the closure, base[1] `this` for
// methods, then parameters, then locals in declaration order, then
// temporaries. Every statement leaves the stack as it found it, except
// that a declaration leaves its new local on top. The generator tracks the
// stack height on every emit, so a local's slot is simply the height at
// its declaration and Function::max_slots is the exact peak.
//
// Hoisting (docs/language.md: a fn declaration is "hoisted in its block",
// and tests/lang/statements/hoisting calls local functions before their
// text, as JavaScript allows):
//  - top level: every top-level `fn` is emitted as Closure + DefineGlobal at
//    the very start of the script, so it can be called before its text;
//  - inner blocks: every `fn` gets its slot at block entry. Its closure is
//    created right there too (Hoist::Direct as the slot's value, or
//    Hoist::AtEntry once all sibling slots exist, for functions that
//    capture siblings: mutual recursion). Only a function that captures a
//    `let` declared earlier in the same block (Hoist::AtText) cannot exist
//    before that variable does: its slot starts nil and the closure is
//    stored at the declaration's textual position.
//
// Names in stack traces: "f" for `fn f`, "Class.method" for methods,
// "<fn>" for every function expression (also `let f = fn ...`: the
// language calls those anonymous), "<script>" for a file's top level.
#include "compiler/codegen.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace compiler {
namespace {

constexpr int kMaxSlot = 0xffff;  // slot operands are u16

Op binary_op(Tok t) {
  switch (t) {
    case Tok::Plus:
    case Tok::PlusEq:
      return Op::Add;
    case Tok::Minus:
    case Tok::MinusEq:
      return Op::Sub;
    case Tok::Star:
    case Tok::StarEq:
      return Op::Mul;
    case Tok::Slash:
    case Tok::SlashEq:
      return Op::Div;
    case Tok::Percent:
    case Tok::PercentEq:
      return Op::Mod;
    case Tok::Amp:
      return Op::BitAnd;
    case Tok::Pipe:
      return Op::BitOr;
    case Tok::Caret:
      return Op::BitXor;
    case Tok::Shl:
      return Op::Shl;
    case Tok::Shr:
      return Op::Shr;
    case Tok::EqEq:
      return Op::Eq;
    case Tok::BangEq:
      return Op::Ne;
    case Tok::Less:
      return Op::Lt;
    case Tok::LessEq:
      return Op::Le;
    case Tok::Greater:
      return Op::Gt;
    case Tok::GreaterEq:
      return Op::Ge;
    case Tok::Is:
      return Op::Is;
    default:
      return Op::Add;  // unreachable: the parser only builds the above
  }
}

class CodeGen {
 public:
  CodeGen(Program& program, const std::string& file, bool repl, std::vector<Diagnostic>& errors)
      : program_(program), file_(file), repl_(repl), errors_(errors) {}

  uint32_t script(FunctionNode& node) {
    FnState st(nullptr, node);
    uint32_t index = begin_function(st);
    line_ = 1;
    // Top-level functions first (hoisting, see the file comment).
    for (auto& s : node.body) {
      if (s->kind != StmtKind::Fn) continue;
      line_ = s->line;
      closure(*s->fn);
      op(Op::DefineGlobal, -1);
      u32(program_.global(s->name));
    }
    for (auto& s : node.body) statement(*s, /*top_level=*/true);
    end_function(st);
    return index;
  }

 private:
  struct Loop {
    int break_depth;       // stack height to pop back to on `break`
    int continue_depth;    // ... and on `continue`
    long continue_target;  // code offset, or -1: patched later
    std::vector<size_t> breaks, continues;
  };
  struct Upvalue {
    Decl* decl;
    uint8_t from_local;
    uint16_t index;
  };
  struct FnState {
    FnState* parent;
    FunctionNode& node;
    Function* fn = nullptr;
    int depth = 0, max_depth = 0;
    std::vector<Upvalue> upvalues;
    std::vector<Loop> loops;
    std::unordered_map<std::string, uint32_t> strings;
    std::unordered_map<uint64_t, uint32_t> numbers;
    // For fusing (see fuse): where the last few instructions start (no
    // jump target lies between them), the latest offset that a jump
    // targets, and the line the bytes of a fused instruction carry (that of
    // its part that can fail), or 0.
    std::vector<size_t> starts;
    size_t label = SIZE_MAX;
    uint32_t fused_line = 0;
    FnState(FnState* p, FunctionNode& n) : parent(p), node(n) {}
  };

  Program& program_;
  const std::string& file_;
  bool repl_;
  std::vector<Diagnostic>& errors_;
  FnState* f_ = nullptr;
  uint32_t line_ = 1;

  void error(std::string message) {
    Diagnostic d;
    d.line = line_;
    d.column = 1;
    d.message = std::move(message);
    errors_.push_back(std::move(d));
  }

  // ---- emitting ----
  std::vector<uint8_t>& code() { return f_->fn->code; }
  void byte(uint8_t b) {
    f_->fn->code.push_back(b);
    f_->fn->lines.push_back(f_->fused_line ? f_->fused_line : line_);
  }
  void u16(uint32_t v) {
    byte(v & 0xff);
    byte((v >> 8) & 0xff);
  }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) byte((v >> (8 * i)) & 0xff);
  }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void adjust(int effect) {
    f_->depth += effect;
    f_->max_depth = std::max(f_->max_depth, f_->depth);
  }
  // Emits an opcode whose net stack effect is `effect`; the caller then
  // emits its operands.
  void op(Op o, int effect) {
    adjust(effect);
    f_->fused_line = 0;
    if (fuse(o)) return;
    std::vector<size_t>& starts = f_->starts;
    if (starts.size() == kFuseWindow) starts.erase(starts.begin());
    starts.push_back(code().size());
    byte(static_cast<uint8_t>(o));
  }
  // The longest chain fuse() folds: GetLocal GetLocal Lt JumpIfFalse.
  static constexpr size_t kFuseWindow = 3;
  // Superinstructions: when `o` follows an instruction it forms a common
  // pair with, the pair becomes one instruction (bytecode.h), which cuts
  // the dispatches on the hottest paths of loops, conditions, arithmetic
  // and field reads. The last instruction's opcode byte is rewritten and
  // `o`'s operands follow its own, so each fused layout is the
  // concatenation of its parts'. The result may fuse again with the
  // instruction before it (GetLocal + MulLocal is MulLocals): that one's
  // layout absorbs the result's operands and the result's opcode byte goes.
  // Never across a jump target: the instruction there must still begin
  // there. A jump is only ever the last part, so no recorded jump operand
  // moves.
  bool fuse(Op o) {
    std::vector<size_t>& starts = f_->starts;
    if (starts.empty() || f_->label == code().size()) return false;
    uint8_t& last = code()[starts.back()];
    Op fused = fused_op(static_cast<Op>(last), o);
    if (fused == Op::Count) return false;
    // A fused instruction fails where the part that can fail does: a
    // compare-and-jump at its compare, a local's arithmetic at the operator.
    if (o == Op::JumpIfFalse) f_->fused_line = f_->fn->lines[starts.back()];
    if (o == Op::Add || o == Op::Sub || o == Op::Mul || o == Op::Div || o == Op::Mod)
      std::fill(f_->fn->lines.begin() + static_cast<ptrdiff_t>(starts.back()), f_->fn->lines.end(), line_);
    last = static_cast<uint8_t>(fused);
    while (starts.size() >= 2 && f_->label != starts.back()) {
      size_t at = starts.back(), before = starts[starts.size() - 2];
      Op chained = fused_op(static_cast<Op>(code()[before]), static_cast<Op>(code()[at]));
      if (chained == Op::Count) break;
      code().erase(code().begin() + static_cast<ptrdiff_t>(at));
      f_->fn->lines.erase(f_->fn->lines.begin() + static_cast<ptrdiff_t>(at));
      code()[before] = static_cast<uint8_t>(chained);
      starts.pop_back();
    }
    return true;
  }
  static Op fused_op(Op last, Op next) {
    switch (next) {
      case Op::Pop:
        switch (last) {
          case Op::SetLocal:
            return Op::StoreLocal;
          case Op::SetField:
            return Op::StoreField;
          case Op::SetLocalField:
            return Op::StoreLocalField;
          case Op::SetBoxed:
            return Op::StoreBoxed;
          case Op::SetUpval:
            return Op::StoreUpval;
          case Op::SetGlobal:
            return Op::StoreGlobal;
          default:
            return Op::Count;
        }
      case Op::Add:
        return last == Op::GetLocal ? Op::AddLocal : last == Op::Const ? Op::AddConst : Op::Count;
      case Op::Sub:
        return last == Op::GetLocal ? Op::SubLocal : last == Op::Const ? Op::SubConst : Op::Count;
      case Op::Mul:
        return last == Op::GetLocal ? Op::MulLocal : last == Op::Const ? Op::MulConst : Op::Count;
      case Op::Div:
        return last == Op::GetLocal ? Op::DivLocal : last == Op::Const ? Op::DivConst : Op::Count;
      case Op::Mod:
        return last == Op::Const ? Op::ModConst : Op::Count;
      case Op::AddLocal:
        return last == Op::GetLocal ? Op::AddLocals : Op::Count;
      case Op::SubLocal:
        return last == Op::GetLocal ? Op::SubLocals : Op::Count;
      case Op::MulLocal:
        return last == Op::GetLocal ? Op::MulLocals : Op::Count;
      case Op::DivLocal:
        return last == Op::GetLocal ? Op::DivLocals : Op::Count;
      case Op::JumpIfNil:
        return last == Op::GetLocal ? Op::JumpIfNilLocal : Op::Count;
      case Op::JumpIfNotNil:
        return last == Op::GetLocal ? Op::JumpIfNotNilLocal : Op::Count;
      case Op::JumpUnlessLt:
        return last == Op::GetLocal ? Op::JumpUnlessLtLocal : Op::Count;
      case Op::JumpUnlessLe:
        return last == Op::GetLocal ? Op::JumpUnlessLeLocal : Op::Count;
      case Op::JumpUnlessGt:
        return last == Op::GetLocal ? Op::JumpUnlessGtLocal : Op::Count;
      case Op::JumpUnlessGe:
        return last == Op::GetLocal ? Op::JumpUnlessGeLocal : Op::Count;
      case Op::JumpUnlessLtLocal:
        return last == Op::GetLocal ? Op::JumpUnlessLtLocals : Op::Count;
      case Op::JumpUnlessLeLocal:
        return last == Op::GetLocal ? Op::JumpUnlessLeLocals : Op::Count;
      case Op::JumpUnlessGtLocal:
        return last == Op::GetLocal ? Op::JumpUnlessGtLocals : Op::Count;
      case Op::JumpUnlessGeLocal:
        return last == Op::GetLocal ? Op::JumpUnlessGeLocals : Op::Count;
      case Op::GetField:
        return last == Op::GetLocal ? Op::GetLocalField : Op::Count;
      case Op::Eq:
        return last == Op::Nil ? Op::IsNil : Op::Count;
      case Op::Ne:
        return last == Op::Nil ? Op::NotNil : Op::Count;
      case Op::JumpIfFalse:
        switch (last) {
          case Op::Not:
            return Op::JumpIfTrue;
          case Op::IsNil:
            return Op::JumpIfNotNil;
          case Op::NotNil:
            return Op::JumpIfNil;
          case Op::Eq:
            return Op::JumpUnlessEq;
          case Op::Ne:
            return Op::JumpUnlessNe;
          case Op::Lt:
            return Op::JumpUnlessLt;
          case Op::Le:
            return Op::JumpUnlessLe;
          case Op::Gt:
            return Op::JumpUnlessGt;
          case Op::Ge:
            return Op::JumpUnlessGe;
          default:
            return Op::Count;
        }
      default:
        return Op::Count;
    }
  }
  // The current offset as a jump target: the next instruction starts here.
  size_t label() {
    f_->label = code().size();
    return f_->label;
  }
  void op_u16(Op o, int effect, uint32_t operand) {
    op(o, effect);
    u16(operand);
  }
  void op_u32(Op o, int effect, uint32_t operand) {
    op(o, effect);
    u32(operand);
  }
  void pop(int n) {
    if (n == 1)
      op(Op::Pop, -1);
    else if (n > 1)
      op_u16(Op::PopN, -n, static_cast<uint32_t>(n));
  }
  // A forward jump; returns where its offset goes, for patch().
  size_t jump(Op o, int effect) {
    op(o, effect);
    size_t at = code().size();
    i32(0);
    return at;
  }
  void patch(size_t at) { patch_to(at, label()); }
  void patch_to(size_t at, size_t target) {
    int32_t off = static_cast<int32_t>(static_cast<long>(target) - static_cast<long>(at + 4));
    std::memcpy(&code()[at], &off, 4);
  }
  void jump_back(size_t target) {
    op(Op::Jump, 0);
    i32(static_cast<int32_t>(static_cast<long>(target) - static_cast<long>(code().size() + 4)));
  }
  uint32_t ic() { return f_->fn->num_ics++; }

  // ---- constants ----
  uint32_t add_constant(Constant c) {
    f_->fn->constants.push_back(std::move(c));
    return static_cast<uint32_t>(f_->fn->constants.size() - 1);
  }
  uint32_t number_constant(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    auto [it, fresh] = f_->numbers.try_emplace(bits, 0);
    if (fresh) it->second = add_constant(Constant{Constant::Kind::kNum, v, {}, 0});
    return it->second;
  }
  uint32_t string_constant(const std::string& s) {
    auto [it, fresh] = f_->strings.try_emplace(s, 0);
    if (fresh) it->second = add_constant(Constant{Constant::Kind::kString, 0, s, 0});
    return it->second;
  }

  // ---- functions ----
  uint32_t begin_function(FnState& st) {
    auto fn = std::make_unique<Function>();
    fn->name = st.node.name;
    fn->file = file_;
    fn->arity = static_cast<uint16_t>(st.node.params.size());
    fn->is_method = st.node.is_method();
    fn->is_initializer = st.node.kind == FnKind::Initializer;
    st.fn = fn.get();
    program_.functions.push_back(std::move(fn));
    f_ = &st;
    st.depth = st.max_depth = 1 + (st.fn->is_method ? 1 : 0) + st.fn->arity;
    return static_cast<uint32_t>(program_.functions.size() - 1);
  }

  // An initializer gives back `this` (base[1]); anything else nil.
  void return_nothing() {
    if (f_->fn->is_initializer)
      op_u16(Op::GetLocal, 1, 1);
    else
      op(Op::Nil, 1);
    op(Op::Return, -1);
  }

  void end_function(FnState& st) {
    line_ = st.node.end_line ? st.node.end_line : line_;
    return_nothing();
    st.fn->max_slots = static_cast<uint32_t>(st.max_depth);
    st.fn->num_upvalues = static_cast<uint16_t>(st.upvalues.size());
    f_ = st.parent;
  }

  // Compiles a nested function and emits the Closure that creates it.
  void closure(FunctionNode& node) {
    uint32_t saved_line = line_;
    FnState st(f_, node);
    uint32_t index = begin_function(st);
    line_ = node.line;
    // Parameters arrive in their slots; captured ones move into cells.
    for (size_t i = 0; i < node.params.size(); ++i) {
      Decl* d = node.params[i].decl;
      d->slot = d->cell_slot = static_cast<int>(1 + (st.fn->is_method ? 1 : 0) + i);
      if (d->captured) op_u16(Op::Box, 0, static_cast<uint32_t>(d->slot));
    }
    // `this` stays unboxed in base[1] (an initializer returns it from
    // there); nested functions capture a boxed copy, which is equivalent
    // because `this` is never assigned.
    if (node.this_decl && node.this_decl->captured) {
      op_u16(Op::GetLocal, 1, 1);
      node.this_decl->cell_slot = f_->depth - 1;
      op_u16(Op::Box, 0, static_cast<uint32_t>(node.this_decl->cell_slot));
    }
    block_statements(node.body);
    end_function(st);
    line_ = saved_line;
    if (st.upvalues.size() > 0xffff) error("too many captured variables in one function");
    op_u32(Op::Closure, 1, add_constant(Constant{Constant::Kind::kFunction, 0, {}, index}));
    for (const Upvalue& u : st.upvalues) {
      byte(u.from_local);
      u16(u.index);
    }
  }

  // The index of `d` among `st`'s upvalues, adding it (and, through the
  // enclosing functions, the chain that reaches it) on first use.
  uint16_t upvalue(FnState& st, Decl* d) {
    for (size_t i = 0; i < st.upvalues.size(); ++i) {
      if (st.upvalues[i].decl == d) return static_cast<uint16_t>(i);
    }
    Upvalue u{d, 0, 0};
    if (&st.parent->node == d->owner) {
      u.from_local = 1;
      u.index = static_cast<uint16_t>(d->cell_slot);
    } else {
      u.index = upvalue(*st.parent, d);
    }
    st.upvalues.push_back(u);
    return static_cast<uint16_t>(st.upvalues.size() - 1);
  }

  // ---- variables ----
  // Whether `d` is read straight from its slot (GetLocal): a local of this
  // function that no closure boxed (`this` never is: it is never assigned).
  bool plain_local(const Decl* d) const {
    return d && !d->global() && d->owner == &f_->node && (!d->captured || d->is_this);
  }

  void load(Decl* d, const std::string& name) {
    if (plain_local(d)) {
      op_u16(Op::GetLocal, 1, static_cast<uint32_t>(d->slot));
    } else if (!d || d->global()) {
      op_u32(Op::GetGlobal, 1, program_.global(name));
    } else if (d->owner != &f_->node) {
      op_u16(Op::GetUpval, 1, upvalue(*f_, d));
    } else {
      op_u16(Op::GetBoxed, 1, static_cast<uint32_t>(d->slot));
    }
  }

  // Whether `e` is read with GetLocal.
  bool in_local_slot(const Expr& e) const {
    return (e.kind == ExprKind::Name || e.kind == ExprKind::This) && plain_local(e.decl);
  }

  // Whether evaluating `e` can assign `d`, a local no closure captures:
  // only an assignment that names it can.
  static bool assigns(const Expr& e, const Decl* d) {
    if (e.kind == ExprKind::Assign && e.a->kind == ExprKind::Name && e.a->decl == d) return true;
    for (const Expr* part : {e.a.get(), e.b.get(), e.c.get()})
      if (part && assigns(*part, d)) return true;
    for (const ExprPtr& item : e.items)
      if (assigns(*item, d)) return true;
    return false;
  }

  // v -> v
  void store(Decl* d, const std::string& name) {
    if (!d || d->global()) {
      op_u32(Op::SetGlobal, 0, program_.global(name));
    } else if (d->owner != &f_->node) {
      op_u16(Op::SetUpval, 0, upvalue(*f_, d));
    } else if (d->captured) {
      op_u16(Op::SetBoxed, 0, static_cast<uint32_t>(d->slot));
    } else {
      op_u16(Op::SetLocal, 0, static_cast<uint32_t>(d->slot));
    }
  }

  // The value on top of the stack becomes local `d` (boxed if captured).
  void bind_local(Decl* d) {
    d->slot = d->cell_slot = f_->depth - 1;
    if (d->slot > kMaxSlot) {
      error("too many local variables in one function");
      d->slot = d->cell_slot = 0;
    }
    if (d->captured) op_u16(Op::Box, 0, static_cast<uint32_t>(d->slot));
  }

  // ---- statements ----

  // A block's statements, with its local functions hoisted (file comment).
  void block_statements(std::vector<StmtPtr>& stmts) {
    uint32_t saved_line = line_;
    for (auto& s : stmts) {
      if (s->kind != StmtKind::Fn) continue;
      line_ = s->line;
      if (s->fn->hoist == Hoist::Direct)
        closure(*s->fn);
      else
        op(Op::Nil, 1);
      bind_local(s->decl);
    }
    for (auto& s : stmts) {
      if (s->kind != StmtKind::Fn || s->fn->hoist != Hoist::AtEntry) continue;
      line_ = s->line;
      define_local_function(*s);
    }
    line_ = saved_line;
    for (auto& s : stmts) statement(*s, false);
  }

  void block(std::vector<StmtPtr>& stmts) {
    int start = f_->depth;
    block_statements(stmts);
    pop(f_->depth - start);
  }

  void statement(Stmt& s, bool top_level) {
    uint32_t saved_line = line_;
    line_ = s.line;
    switch (s.kind) {
      case StmtKind::Expr:
        expression(*s.expr);
        op(top_level && repl_ ? Op::ReplPrint : Op::Pop, -1);
        break;
      case StmtKind::Let:
        let(s);
        break;
      case StmtKind::Fn:
        // Globals are defined at the start of the script, most local
        // functions at block entry (see the file comment).
        if (!s.decl->global() && s.fn->hoist == Hoist::AtText) define_local_function(s);
        break;
      case StmtKind::Class:
        class_declaration(s);
        break;
      case StmtKind::If:
        if_statement(s);
        break;
      case StmtKind::While:
        while_statement(s);
        break;
      case StmtKind::For:
        for_statement(s);
        break;
      case StmtKind::ForIn:
        for_in_statement(s);
        break;
      case StmtKind::Block:
        block(s.body);
        break;
      case StmtKind::Return:
        if (!s.expr) {
          return_nothing();
        } else {
          expression(*s.expr);
          if (f_->fn->is_initializer) {
            op(Op::Pop, -1);
            op_u16(Op::GetLocal, 1, 1);
          }
          op(Op::Return, -1);
        }
        break;
      case StmtKind::Break:
        break_statement();
        break;
      case StmtKind::Continue:
        continue_statement();
        break;
      case StmtKind::Import:
        op_u32(Op::Import, 1, s.module);
        op(Op::Pop, -1);
        break;
    }
    line_ = saved_line;
  }

  void define_local_function(Stmt& s) {
    closure(*s.fn);
    store(s.decl, s.name);
    op(Op::Pop, -1);
  }

  void let(Stmt& s) {
    Decl* d = s.decl;
    if (d->global()) {
      value_or_nil(s.expr.get());
      op_u32(Op::DefineGlobal, -1, program_.global(s.name));
    } else if (d->captured_in_init) {
      // A closure in the initializer captures the variable itself: its cell
      // must exist before the initializer runs.
      op(Op::Nil, 1);
      bind_local(d);
      expression(*s.expr);
      op_u16(Op::SetBoxed, 0, static_cast<uint32_t>(d->slot));
      op(Op::Pop, -1);
    } else {
      value_or_nil(s.expr.get());
      bind_local(d);
    }
  }

  void value_or_nil(Expr* e) {
    if (e)
      expression(*e);
    else
      op(Op::Nil, 1);
  }

  // Stack during the Class op: [superclass] method closures -> class. A
  // local class's slot exists (nil) before its methods are compiled, so
  // they may name the class; with a superclass, the hidden `super` local
  // sits above it for the duration of the class body.
  void class_declaration(Stmt& s) {
    ClassNode& c = *s.cls;
    bool local = !s.decl->global();
    if (local) {
      op(Op::Nil, 1);
      bind_local(s.decl);
    }
    if (c.has_super) {
      line_ = c.super_line;
      load(c.super_ref, c.super_name);
      bind_local(c.super_decl);
      load(c.super_decl, "super");
      line_ = s.line;
    }
    auto desc = std::make_unique<ClassDesc>();
    desc->name = c.name;
    desc->file = file_;
    desc->line = c.line;
    desc->has_super = c.has_super;
    for (auto& f : c.fields)
      desc->fields.push_back(FieldDesc{program_.symbol(f.name), static_cast<FieldKind>(f.kind)});
    for (auto& m : c.methods) {
      desc->methods.push_back(program_.symbol(m->name.substr(c.name.size() + 1)));
      closure(*m);
    }
    uint32_t class_index = static_cast<uint32_t>(program_.classes.size());
    int consumed = static_cast<int>(c.methods.size()) + (c.has_super ? 1 : 0);
    program_.classes.push_back(std::move(desc));
    op_u32(Op::Class, 1 - consumed, add_constant(Constant{Constant::Kind::kClass, 0, {}, class_index}));
    if (local) {
      store(s.decl, s.name);
      op(Op::Pop, -1);
    } else {
      op_u32(Op::DefineGlobal, -1, program_.global(s.name));
    }
    if (c.has_super) op(Op::Pop, -1);  // the hidden `super`
  }

  void if_statement(Stmt& s) {
    expression(*s.expr);
    size_t to_else = jump(Op::JumpIfFalse, -1);
    block(s.body);
    if (!s.has_else) {
      patch(to_else);
      return;
    }
    size_t to_end = jump(Op::Jump, 0);
    patch(to_else);
    block(s.else_body);
    patch(to_end);
  }

  bool always_true(const Expr* e) const { return e == nullptr || e->kind == ExprKind::True; }

  // A loop's condition: its exit jump to patch, or nothing when the
  // condition is absent or `true`.
  std::optional<size_t> loop_test(const Stmt& s) {
    if (always_true(s.expr.get())) return std::nullopt;
    expression(*s.expr);
    return jump(Op::JumpIfFalse, -1);
  }

  void while_statement(Stmt& s) {
    size_t top = label();
    std::optional<size_t> exit = loop_test(s);
    f_->loops.push_back(Loop{f_->depth, f_->depth, static_cast<long>(top), {}, {}});
    block(s.body);
    jump_back(top);
    if (exit) patch(*exit);
    end_loop();
  }

  // for (init; cond; incr) body. A captured `let` loop variable gets a
  // fresh cell (Rebox) after each iteration's body, before the increment,
  // so closures made in different iterations see different variables.
  void for_statement(Stmt& s) {
    int start = f_->depth;
    if (s.init) statement(*s.init, false);
    size_t top = label();
    std::optional<size_t> exit = loop_test(s);
    f_->loops.push_back(Loop{f_->depth, f_->depth, -1, {}, {}});
    block(s.body);
    for (size_t at : f_->loops.back().continues) patch(at);
    Decl* var = (s.init && s.init->kind == StmtKind::Let) ? s.init->decl : nullptr;
    if (var && var->captured) op_u16(Op::Rebox, 0, static_cast<uint32_t>(var->slot));
    if (s.incr) {
      expression(*s.incr);
      op(Op::Pop, -1);
    }
    jump_back(top);
    if (exit) patch(*exit);
    end_loop();
    pop(f_->depth - start);
  }

  // for (x in e) body, with three hidden locals (bytecode.h): the
  // iterable, the key snapshot, the index. The element IterNext pushes
  // is the loop variable, a fresh local (and cell) in every iteration.
  void for_in_statement(Stmt& s) {
    int start = f_->depth;
    expression(*s.expr);
    uint32_t slot = static_cast<uint32_t>(f_->depth - 1);
    op(Op::Nil, 1);
    op(Op::Nil, 1);
    if (f_->depth > kMaxSlot) error("too many local variables in one function");
    op_u16(Op::IterPrep, 0, slot);
    size_t top = label();
    op_u16(Op::IterNext, 1, slot);
    size_t exit = code().size();
    i32(0);
    bind_local(s.decl);
    f_->loops.push_back(Loop{f_->depth - 1, f_->depth, -1, {}, {}});
    block(s.body);
    for (size_t at : f_->loops.back().continues) patch(at);
    op(Op::Pop, -1);  // the loop variable
    jump_back(top);
    patch(exit);
    end_loop();
    pop(f_->depth - start);
  }

  void end_loop() {
    for (size_t at : f_->loops.back().breaks) patch(at);
    f_->loops.pop_back();
  }

  // break/continue pop the loop body's locals and jump; the code after
  // them is unreachable, so the tracked height is restored.
  void break_statement() {
    Loop& loop = f_->loops.back();
    int depth = f_->depth;
    pop(depth - loop.break_depth);
    loop.breaks.push_back(jump(Op::Jump, 0));
    f_->depth = depth;
  }

  void continue_statement() {
    Loop& loop = f_->loops.back();
    int depth = f_->depth;
    pop(depth - loop.continue_depth);
    if (loop.continue_target >= 0)
      jump_back(static_cast<size_t>(loop.continue_target));
    else
      loop.continues.push_back(jump(Op::Jump, 0));
    f_->depth = depth;
  }

  // ---- expressions ----
  void expression(Expr& e) {
    uint32_t saved_line = line_;
    line_ = e.line;
    expression_body(e);
    line_ = saved_line;
  }

  void arguments(std::vector<ExprPtr>& items) {
    for (auto& item : items) expression(*item);
  }

  void expression_body(Expr& e) {
    switch (e.kind) {
      case ExprKind::Nil:
        op(Op::Nil, 1);
        return;
      case ExprKind::True:
        op(Op::True, 1);
        return;
      case ExprKind::False:
        op(Op::False, 1);
        return;
      case ExprKind::Number:
        op_u32(Op::Const, 1, number_constant(e.num));
        return;
      case ExprKind::String:
        op_u32(Op::Const, 1, string_constant(e.str));
        return;
      case ExprKind::Name:
        load(e.decl, e.str);
        return;
      case ExprKind::This:
        load(e.decl, "this");
        return;
      case ExprKind::Unary:
        unary(e);
        return;
      case ExprKind::Binary:
        expression(*e.a);
        expression(*e.b);
        op(binary_op(e.op), -1);
        return;
      case ExprKind::Logical: {
        expression(*e.a);
        size_t end = jump(e.op == Tok::AmpAmp ? Op::JumpIfFalseKeep : Op::JumpIfTrueKeep, -1);
        expression(*e.b);
        patch(end);
        return;
      }
      case ExprKind::Conditional: {
        expression(*e.a);
        size_t to_else = jump(Op::JumpIfFalse, -1);
        expression(*e.b);
        size_t to_end = jump(Op::Jump, 0);
        adjust(-1);  // the else branch starts without the then-value
        patch(to_else);
        expression(*e.c);
        patch(to_end);
        return;
      }
      case ExprKind::Assign:
        assign(e);
        return;
      case ExprKind::Call:
        call(e);
        return;
      case ExprKind::Get:
        expression(*e.a);
        op(Op::GetField, 0);
        u32(program_.symbol(e.str));
        u32(ic());
        return;
      case ExprKind::Index:
        expression(*e.a);
        expression(*e.b);
        op(Op::GetIndex, -1);
        return;
      case ExprKind::SuperGet:
        load(e.this_decl, "this");
        load(e.super_decl, "super");
        op_u32(Op::GetSuper, -1, program_.symbol(e.str));
        return;
      case ExprKind::SuperCall: {
        load(e.this_decl, "this");
        load(e.super_decl, "super");
        arguments(e.items);
        int argc = static_cast<int>(e.items.size());
        op_u32(Op::SuperInvoke, -(argc + 1), program_.symbol(e.str));
        u16(static_cast<uint32_t>(argc));
        return;
      }
      case ExprKind::Array:
        arguments(e.items);
        op_u32(Op::Array, 1 - static_cast<int>(e.items.size()), static_cast<uint32_t>(e.items.size()));
        return;
      case ExprKind::Map:
        arguments(e.items);
        op_u32(Op::Map, 1 - static_cast<int>(e.items.size()), static_cast<uint32_t>(e.items.size() / 2));
        return;
      case ExprKind::Function:
        closure(*e.fn);
        return;
    }
  }

  void unary(Expr& e) {
    if (e.op == Tok::Minus && e.a->kind == ExprKind::Number) {
      op_u32(Op::Const, 1, number_constant(-e.a->num));  // fold negative literals
      return;
    }
    expression(*e.a);
    op(e.op == Tok::Minus ? Op::Neg : e.op == Tok::Bang ? Op::Not : Op::BitNot, 0);
  }

  // o.m(args): GetMethod + CallMethod, so no bound method is allocated;
  // anything else: Call.
  void call(Expr& e) {
    int argc = static_cast<int>(e.items.size());
    if (e.a->kind == ExprKind::Get) {
      expression(*e.a->a);
      op(Op::GetMethod, 1);
      u32(program_.symbol(e.a->str));
      u32(ic());
      arguments(e.items);
      op_u16(Op::CallMethod, -(argc + 1), static_cast<uint32_t>(argc));
      return;
    }
    expression(*e.a);
    arguments(e.items);
    op_u16(Op::Call, -argc, static_cast<uint32_t>(argc));
  }

  void assign(Expr& e) {
    Expr& target = *e.a;
    bool compound = e.op != Tok::Eq;
    switch (target.kind) {
      case ExprKind::Name:
        if (compound) load(target.decl, target.str);
        expression(*e.b);
        if (compound) op(binary_op(e.op), -1);
        store(target.decl, target.str);
        return;
      case ExprKind::Get: {
        uint32_t name = program_.symbol(target.str);
        if (in_local_slot(*target.a) && !assigns(*e.b, target.a->decl)) {
          // [GetLocalField] v [op] SetLocalField: the receiver never goes on
          // the stack, and reading it last reads the same object.
          if (compound) {
            expression(target);
            expression(*e.b);
            op(binary_op(e.op), -1);
          } else {
            expression(*e.b);
          }
          op(Op::SetLocalField, 0);
          u16(static_cast<uint32_t>(target.a->decl->slot));
          u32(name);
          u32(ic());
          return;
        }
        expression(*target.a);
        if (compound) {  // [a] Dup GetField v op SetField
          op(Op::Dup, 1);
          op(Op::GetField, 0);
          u32(name);
          u32(ic());
        }
        expression(*e.b);
        if (compound) op(binary_op(e.op), -1);
        op(Op::SetField, -1);
        u32(name);
        u32(ic());
        return;
      }
      case ExprKind::Index:
        expression(*target.a);
        expression(*target.b);
        if (compound) {  // [a i] Dup2 GetIndex v op SetIndex
          op(Op::Dup2, 2);
          op(Op::GetIndex, -1);
        }
        expression(*e.b);
        if (compound) op(binary_op(e.op), -1);
        op(Op::SetIndex, -2);
        return;
      default:
        return;  // the parser rejects other targets
    }
  }
};

}  // namespace

uint32_t generate(Program& program, Ast& ast, const std::string& file, bool repl,
                  std::vector<Diagnostic>& errors) {
  return CodeGen(program, file, repl, errors).script(*ast.script);
}

}  // namespace compiler
