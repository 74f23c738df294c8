#include "compiler/resolver.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace compiler {
namespace {

class Resolver {
 public:
  Resolver(Ast& ast, bool repl, const ImportFn& on_import, std::vector<Diagnostic>& errors)
      : ast_(ast), repl_(repl), on_import_(on_import), errors_(errors) {}

  void run() {
    FunctionNode* script = ast_.script.get();
    fns_.push_back(FnCtx{script, 0});
    scopes_.push_back(Scope{{}, script, true});
    statements(script->body);
  }

 private:
  struct Scope {
    std::unordered_map<std::string, Decl*> names;
    FunctionNode* fn;
    bool global;  // the top level of a file: its declarations are globals
  };
  struct FnCtx {
    FunctionNode* fn;
    int loops;  // loops around the current statement, inside this function
  };

  Ast& ast_;
  bool repl_;
  const ImportFn& on_import_;
  std::vector<Diagnostic>& errors_;
  std::vector<Scope> scopes_;
  std::vector<FnCtx> fns_;
  std::vector<bool> classes_;  // enclosing class bodies: has a superclass?

  FunctionNode* current_fn() const { return fns_.back().fn; }

  void error(uint32_t line, uint32_t col, std::string message) {
    Diagnostic d;
    d.line = line;
    d.column = col;
    d.message = std::move(message);
    errors_.push_back(std::move(d));
  }

  // ---- declarations and lookups ----

  // Declares `name` in the innermost scope. A redeclaration in the same
  // block is an error, except at a REPL line's top level, where typing
  // `let x` again simply redefines the global.
  Decl* declare(const std::string& name, uint32_t line, uint32_t col) {
    Scope& scope = scopes_.back();
    auto it = scope.names.find(name);
    if (it != scope.names.end() && !(repl_ && scope.global)) {
      error(line, col, "'" + name + "' is already declared in this block");
    }
    Decl& d = ast_.decls.emplace_back();
    d.name = name;
    d.owner = scope.global ? nullptr : scope.fn;
    scope.names[name] = &d;
    return &d;
  }

  Decl* lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->names.find(name);
      if (found != it->names.end()) return found->second;
    }
    return nullptr;
  }

  // Binds a use of a variable. A use from a nested function captures it.
  Decl* use(const std::string& name, uint32_t line, uint32_t col, bool read) {
    Decl* d = lookup(name);
    if (!d || d->global()) return d;
    if (d->owner != current_fn()) {
      d->captured = true;
      if (d->in_initializer) d->captured_in_init = true;
      for (auto it = fns_.rbegin(); it != fns_.rend() && it->fn != d->owner; ++it)
        it->fn->captures.push_back(d);
    } else if (d->in_initializer && read) {
      error(line, col, "cannot read local variable '" + name + "' in its own initializer");
    }
    return d;
  }

  void push_scope() { scopes_.push_back(Scope{{}, current_fn(), false}); }
  void pop_scope() { scopes_.pop_back(); }

  // A `fn` declaration is visible in its whole block: declare them all
  // before resolving the block's statements.
  void hoist_functions(std::vector<StmtPtr>& stmts) {
    for (auto& s : stmts) {
      if (s->kind != StmtKind::Fn) continue;
      s->decl = declare(s->name, s->name_line, s->name_col);
      s->decl->hoisted_fn = true;
    }
  }

  void statements(std::vector<StmtPtr>& stmts) {
    hoist_functions(stmts);
    for (auto& s : stmts) statement(*s);
  }

  void block(std::vector<StmtPtr>& stmts) {
    push_scope();
    statements(stmts);
    pop_scope();
  }

  // ---- statements ----

  void statement(Stmt& s) {
    switch (s.kind) {
      case StmtKind::Expr:
        expression(s.expr.get());
        break;
      case StmtKind::Let:
        let(s);
        break;
      case StmtKind::Fn:
        function(*s.fn);
        classify_hoisting(*s.fn);
        break;
      case StmtKind::Class:
        class_declaration(s);
        break;
      case StmtKind::If:
        expression(s.expr.get());
        block(s.body);
        if (s.has_else) block(s.else_body);
        break;
      case StmtKind::While:
        expression(s.expr.get());
        loop_body(s.body);
        break;
      case StmtKind::For:
        push_scope();
        if (s.init) statement(*s.init);
        expression(s.expr.get());
        loop_body(s.body);
        expression(s.incr.get());
        pop_scope();
        break;
      case StmtKind::ForIn:
        expression(s.expr.get());
        push_scope();
        s.decl = declare(s.name, s.name_line, s.name_col);
        loop_body(s.body);
        pop_scope();
        break;
      case StmtKind::Block:
        block(s.body);
        break;
      case StmtKind::Return:
        if (current_fn()->kind == FnKind::Script) error(s.line, s.col, "'return' outside a function");
        expression(s.expr.get());
        break;
      case StmtKind::Break:
      case StmtKind::Continue:
        if (fns_.back().loops == 0) {
          error(s.line, s.col,
                std::string(s.kind == StmtKind::Break ? "'break'" : "'continue'") + " outside a loop");
        }
        break;
      case StmtKind::Import:
        on_import_(s);
        break;
    }
  }

  // Decides when a block-level function's closure can be created (Hoist):
  // at block entry unless it captures a variable of this block that does
  // not exist yet then, i.e. one declared by an earlier `let` or `class`.
  // Parameters and enclosing blocks' variables exist before block entry.
  void classify_hoisting(FunctionNode& f) {
    const Scope& block = scopes_.back();
    f.hoist = Hoist::Direct;
    for (Decl* d : f.captures) {
      if (d->owner != current_fn()) continue;
      auto it = block.names.find(d->name);
      if (it == block.names.end() || it->second != d || d->param || d->is_this) continue;
      if (!d->hoisted_fn) {
        f.hoist = Hoist::AtText;
        return;
      }
      f.hoist = Hoist::AtEntry;
    }
  }

  void loop_body(std::vector<StmtPtr>& body) {
    ++fns_.back().loops;
    block(body);
    --fns_.back().loops;
  }

  // The variable is declared before its initializer is resolved, so a
  // function expression in the initializer can name it (and capture it);
  // a direct read is an error (see use()).
  void let(Stmt& s) {
    s.decl = declare(s.name, s.name_line, s.name_col);
    s.decl->in_initializer = true;
    expression(s.expr.get());
    s.decl->in_initializer = false;
  }

  void function(FunctionNode& f) {
    fns_.push_back(FnCtx{&f, 0});
    scopes_.push_back(Scope{{}, &f, false});
    if (f.is_method()) {
      Decl& self = ast_.decls.emplace_back();
      self.name = "this";
      self.owner = &f;
      self.is_this = true;
      self.slot = 1;
      f.this_decl = &self;
      scopes_.back().names["this"] = &self;
    }
    // Parameters belong to the body's block: `fn f(a) { let a; }` redeclares.
    for (auto& p : f.params) {
      p.decl = declare(p.name, p.line, p.col);
      p.decl->param = true;
    }
    statements(f.body);
    scopes_.pop_back();
    fns_.pop_back();
  }

  void class_declaration(Stmt& s) {
    ClassNode& c = *s.cls;
    s.decl = declare(s.name, s.name_line, s.name_col);
    if (c.has_super) {
      c.super_ref = use(c.super_name, c.super_line, c.super_col, true);
      // The hidden local holding the superclass, in a scope around the
      // class body; methods reach it as an upvalue for `super`.
      push_scope();
      Decl& d = ast_.decls.emplace_back();
      d.name = "super";
      d.owner = current_fn();
      scopes_.back().names["super"] = &d;
      c.super_decl = &d;
    }
    check_member_names(c);
    classes_.push_back(c.has_super);
    for (auto& m : c.methods) function(*m);
    classes_.pop_back();
    if (c.has_super) pop_scope();
  }

  // A field and a method of one name, or a name declared twice, is an
  // error reported at the later declaration.
  void check_member_names(const ClassNode& c) {
    struct Member {
      uint32_t line, col;
      std::string name;
      bool method;
    };
    std::vector<Member> members;
    for (auto& f : c.fields) members.push_back({f.line, f.col, f.name, false});
    for (auto& m : c.methods) members.push_back({m->line, m->col, m->name.substr(c.name.size() + 1), true});
    std::sort(members.begin(), members.end(), [](const Member& a, const Member& b) {
      return std::tie(a.line, a.col) < std::tie(b.line, b.col);
    });
    std::unordered_map<std::string, bool> seen;  // name -> is a method
    for (auto& m : members) {
      auto it = seen.find(m.name);
      if (it == seen.end()) {
        seen.emplace(m.name, m.method);
      } else if (it->second != m.method) {
        error(m.line, m.col, "'" + m.name + "' is both a field and a method of " + c.name);
      } else {
        error(m.line, m.col,
              std::string(m.method ? "method" : "field") + " '" + m.name + "' is already declared in class " +
                  c.name);
      }
    }
  }

  // ---- expressions ----

  void expression(Expr* e) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::Name:
        e->decl = use(e->str, e->line, e->col, true);
        return;
      case ExprKind::This:
        this_expression(*e);
        return;
      case ExprKind::SuperGet:
      case ExprKind::SuperCall:
        super_expression(*e);
        break;
      case ExprKind::Assign:
        if (e->a->kind == ExprKind::Name) {
          e->a->decl = use(e->a->str, e->a->line, e->a->col, e->op != Tok::Eq);
          expression(e->b.get());
          return;
        }
        break;
      case ExprKind::Function:
        function(*e->fn);
        return;
      default:
        break;
    }
    expression(e->a.get());
    expression(e->b.get());
    expression(e->c.get());
    for (auto& item : e->items) expression(item.get());
  }

  void this_expression(Expr& e) {
    if (!lookup("this")) {
      error(e.line, e.col, "'this' outside a method");
      return;
    }
    e.decl = use("this", e.line, e.col, true);
  }

  void super_expression(Expr& e) {
    if (classes_.empty()) {
      error(e.line, e.col, "'super' outside a class");
      return;
    }
    if (!classes_.back()) {
      error(e.line, e.col, "'super' in a class without a superclass");
      return;
    }
    e.this_decl = use("this", e.line, e.col, true);
    e.super_decl = use("super", e.line, e.col, true);
  }
};

}  // namespace

void resolve(Ast& ast, bool repl, const ImportFn& on_import, std::vector<Diagnostic>& errors) {
  Resolver(ast, repl, on_import, errors).run();
}

}  // namespace compiler
