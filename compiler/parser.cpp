#include "compiler/parser.h"

#include <algorithm>

namespace compiler {
namespace {

// Malformed input must not overflow the C++ stack: nesting of statements
// and parenthesised expressions is bounded, and so is the height of the
// tree a long operator chain (`1+1+...`) builds, because every later pass
// walks the tree recursively.
constexpr int kMaxNesting = 200;
constexpr uint32_t kMaxHeight = 1000;

struct ParseError {};

bool is_assign_op(Tok t) {
  return t == Tok::Eq || t == Tok::PlusEq || t == Tok::MinusEq || t == Tok::StarEq || t == Tok::SlashEq ||
         t == Tok::PercentEq;
}

// Binary operator levels from `==` up to `*`, lowest first (docs/language.md, "Expressions").
constexpr int kBinaryLevels = 9;
int binary_level(Tok t) {
  switch (t) {
    case Tok::EqEq:
    case Tok::BangEq:
      return 0;
    case Tok::Less:
    case Tok::LessEq:
    case Tok::Greater:
    case Tok::GreaterEq:
      return 1;
    case Tok::Is:
      return 2;
    case Tok::Pipe:
      return 3;
    case Tok::Caret:
      return 4;
    case Tok::Amp:
      return 5;
    case Tok::Shl:
    case Tok::Shr:
      return 6;
    case Tok::Plus:
    case Tok::Minus:
      return 7;
    case Tok::Star:
    case Tok::Slash:
    case Tok::Percent:
      return 8;
    default:
      return -1;
  }
}

uint32_t height_of(const ExprPtr& e) { return e ? e->height : 0; }

class Parser {
 public:
  Parser(const std::vector<Token>& toks, std::vector<Diagnostic>& errors) : toks_(toks), errors_(errors) {}

  Ast parse_file() {
    Ast ast;
    ast.script = std::make_unique<FunctionNode>();
    ast.script->kind = FnKind::Script;
    ast.script->name = "<script>";
    ast.script->line = 1;
    while (!check(Tok::Eof)) declaration(ast.script->body);
    ast.script->end_line = peek().line;
    return ast;
  }

 private:
  const std::vector<Token>& toks_;
  std::vector<Diagnostic>& errors_;
  size_t pos_ = 0;
  int nesting_ = 0;

  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser) : p(parser) {
      if (++p.nesting_ > kMaxNesting) p.error_at(p.peek(), "code nested too deeply");
    }
    ~Nest() { --p.nesting_; }
  };

  // ---- token access ----
  const Token& peek(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  const Token& prev() const { return toks_[pos_ ? pos_ - 1 : 0]; }
  bool check(Tok t) const { return peek().type == t; }
  const Token& advance() {
    if (!check(Tok::Eof)) ++pos_;
    return prev();
  }
  bool match(Tok t) {
    if (!check(t)) return false;
    advance();
    return true;
  }
  const Token& expect(Tok t, const char* message) {
    if (!check(t)) error_at(peek(), message);
    return advance();
  }

  // ---- errors ----
  // Past kMaxErrors the rest of the file is skipped: a pathological input
  // (a hundred thousand '{') would otherwise give one error per token.
  void report(uint32_t line, uint32_t col, std::string message) {
    if (errors_.size() >= kMaxErrors) {
      pos_ = toks_.size() - 1;  // Eof: every loop of the parser ends
      return;
    }
    Diagnostic d;
    d.line = line;
    d.column = col;
    d.message = std::move(message);
    errors_.push_back(std::move(d));
    if (errors_.size() == kMaxErrors) {
      errors_.back().message += " (too many errors; stopping here)";
      pos_ = toks_.size() - 1;
    }
  }
  // A lexical error token carries its own, more precise message.
  [[noreturn]] void error_at(const Token& t, const std::string& message) {
    if (t.type == Tok::Error)
      report(t.line, t.col, t.value);
    else
      report(t.line, t.col, message);
    throw ParseError{};
  }
  [[noreturn]] void expected_expression(const Token& t) { error_at(t, "expected an expression"); }

  // Skips to a likely statement start: just past a ';', or before a
  // keyword that begins a statement, or before a '}' that may close the
  // enclosing block.
  void synchronize() {
    while (!check(Tok::Eof)) {
      switch (peek().type) {
        case Tok::Let:
        case Tok::Class:
        case Tok::If:
        case Tok::While:
        case Tok::For:
        case Tok::Return:
        case Tok::Import:
        case Tok::Break:
        case Tok::Continue:
        case Tok::RBrace:
          return;
        case Tok::Fn:
          if (peek(1).type == Tok::Ident) return;
          break;
        default:
          break;
      }
      if (advance().type == Tok::Semicolon) return;
    }
  }

  // One statement, recovering from a syntax error inside it.
  void declaration(std::vector<StmtPtr>& out) {
    size_t start = pos_;
    try {
      out.push_back(statement());
    } catch (const ParseError&) {
      synchronize();
      if (pos_ == start) advance();  // always make progress
    }
  }

  // ---- statements ----
  StmtPtr statement() {
    Nest nest(*this);
    switch (peek().type) {
      case Tok::Let:
        return let_statement();
      case Tok::Fn:
        if (peek(1).type == Tok::Ident) return fn_statement();
        break;
      case Tok::Class:
        return class_statement();
      case Tok::If:
        return if_statement();
      case Tok::While:
        return while_statement();
      case Tok::For:
        return for_statement();
      case Tok::Break:
      case Tok::Continue: {
        const Token& t = advance();
        auto s = std::make_unique<Stmt>(t.type == Tok::Break ? StmtKind::Break : StmtKind::Continue, t.line,
                                        t.col);
        expect(Tok::Semicolon,
               t.type == Tok::Break ? "expected ';' after 'break'" : "expected ';' after 'continue'");
        return s;
      }
      case Tok::Return: {
        const Token& t = advance();
        auto s = std::make_unique<Stmt>(StmtKind::Return, t.line, t.col);
        if (!check(Tok::Semicolon)) s->expr = expression();
        expect(Tok::Semicolon, "expected ';' after return value");
        return s;
      }
      case Tok::Import: {
        const Token& t = advance();
        auto s = std::make_unique<Stmt>(StmtKind::Import, t.line, t.col);
        const Token& path = expect(Tok::String, "expected a file name string after 'import'");
        s->name = path.value;
        s->name_line = path.line;
        s->name_col = path.col;
        expect(Tok::Semicolon, "expected ';' after import");
        return s;
      }
      case Tok::LBrace: {
        auto s = std::make_unique<Stmt>(StmtKind::Block, peek().line, peek().col);
        block(s->body, "expected '{'");
        return s;
      }
      default:
        break;
    }
    auto s = std::make_unique<Stmt>(StmtKind::Expr, peek().line, peek().col);
    s->expr = expression();
    expect(Tok::Semicolon, "expected ';' after expression");
    return s;
  }

  void block(std::vector<StmtPtr>& out, const char* expected_brace) {
    expect(Tok::LBrace, expected_brace);
    while (!check(Tok::RBrace) && !check(Tok::Eof)) declaration(out);
    expect(Tok::RBrace, "expected '}' at end of block");
  }

  StmtPtr let_statement() {
    const Token& let = advance();
    auto s = std::make_unique<Stmt>(StmtKind::Let, let.line, let.col);
    const Token& name = expect(Tok::Ident, "expected variable name after 'let'");
    s->name = std::string(name.text);
    s->name_line = name.line;
    s->name_col = name.col;
    if (match(Tok::Eq)) s->expr = expression();
    expect(Tok::Semicolon, "expected ';' after variable declaration");
    return s;
  }

  StmtPtr fn_statement() {
    const Token& fn = advance();
    auto s = std::make_unique<Stmt>(StmtKind::Fn, fn.line, fn.col);
    const Token& name = advance();
    s->name = std::string(name.text);
    s->name_line = name.line;
    s->name_col = name.col;
    s->fn = function_rest(FnKind::Function, s->name, fn);
    return s;
  }

  // The parameter list and body; the current token is '('.
  std::unique_ptr<FunctionNode> function_rest(FnKind kind, std::string name, const Token& at) {
    auto f = std::make_unique<FunctionNode>();
    f->kind = kind;
    f->name = std::move(name);
    f->line = at.line;
    f->col = at.col;
    expect(Tok::LParen, "expected '(' before parameters");
    while (!check(Tok::RParen)) {
      const Token& p = expect(Tok::Ident, "expected parameter name");
      f->params.push_back(Param{std::string(p.text), p.line, p.col, nullptr});
      if (!match(Tok::Comma)) break;
    }
    expect(Tok::RParen, "expected ')' after parameters");
    if (f->params.size() > 255) error_at(prev(), "too many parameters (at most 255)");
    block(f->body, "expected '{' before function body");
    f->end_line = prev().line;
    return f;
  }

  StmtPtr class_statement() {
    const Token& kw = advance();
    auto s = std::make_unique<Stmt>(StmtKind::Class, kw.line, kw.col);
    const Token& name = expect(Tok::Ident, "expected class name after 'class'");
    s->name = std::string(name.text);
    s->name_line = name.line;
    s->name_col = name.col;
    auto cls = std::make_unique<ClassNode>();
    cls->name = s->name;
    cls->line = name.line;
    if (match(Tok::Less)) {
      const Token& sup = expect(Tok::Ident, "expected superclass name after '<'");
      cls->has_super = true;
      cls->super_name = std::string(sup.text);
      cls->super_line = sup.line;
      cls->super_col = sup.col;
    }
    expect(Tok::LBrace, "expected '{' before class body");
    while (!check(Tok::RBrace) && !check(Tok::Eof)) member(*cls);
    expect(Tok::RBrace, "expected '}' after class body");
    s->cls = std::move(cls);
    return s;
  }

  // A field (`name;`, `name: num;`) or a method (`name(params) { ... }`).
  void member(ClassNode& cls) {
    try {
      const Token& name = expect(Tok::Ident, "expected field or method name");
      if (check(Tok::LParen)) {
        FnKind kind = name.text == "init" ? FnKind::Initializer : FnKind::Method;
        cls.methods.push_back(function_rest(kind, cls.name + "." + std::string(name.text), name));
        return;
      }
      FieldNode field{std::string(name.text), name.line, name.col, static_cast<uint8_t>(FieldKind::kAny)};
      if (match(Tok::Colon)) {
        const Token& type = expect(Tok::Ident, "expected 'num' or 'bool' after ':'");
        if (type.text == "num")
          field.kind = static_cast<uint8_t>(FieldKind::kNum);
        else if (type.text == "bool")
          field.kind = static_cast<uint8_t>(FieldKind::kBool);
        else
          error_at(type, "unknown field type '" + std::string(type.text) + "' (expected 'num' or 'bool')");
      }
      expect(Tok::Semicolon, "expected ';' after field declaration");
      cls.fields.push_back(std::move(field));
    } catch (const ParseError&) {
      skip_member();
    }
  }

  // Recovery inside a class body: skip to the next ';' or past a braced body.
  void skip_member() {
    while (!check(Tok::Eof) && !check(Tok::RBrace)) {
      if (match(Tok::Semicolon)) return;
      if (match(Tok::LBrace)) {
        for (int depth = 1; depth > 0 && !check(Tok::Eof);) {
          Tok t = advance().type;
          depth += t == Tok::LBrace ? 1 : t == Tok::RBrace ? -1 : 0;
        }
        return;
      }
      advance();
    }
  }

  StmtPtr if_statement() {
    const Token& kw = advance();
    auto s = std::make_unique<Stmt>(StmtKind::If, kw.line, kw.col);
    expect(Tok::LParen, "expected '(' after 'if'");
    s->expr = expression();
    expect(Tok::RParen, "expected ')' after condition");
    block(s->body, "expected '{' after if condition");
    if (match(Tok::Else)) {
      s->has_else = true;
      if (check(Tok::If)) {
        Nest nest(*this);
        s->else_body.push_back(if_statement());
      } else {
        block(s->else_body, "expected '{' or 'if' after 'else'");
      }
    }
    return s;
  }

  StmtPtr while_statement() {
    const Token& kw = advance();
    auto s = std::make_unique<Stmt>(StmtKind::While, kw.line, kw.col);
    expect(Tok::LParen, "expected '(' after 'while'");
    s->expr = expression();
    expect(Tok::RParen, "expected ')' after condition");
    block(s->body, "expected '{' after while condition");
    return s;
  }

  StmtPtr for_statement() {
    const Token& kw = advance();
    expect(Tok::LParen, "expected '(' after 'for'");
    size_t let = check(Tok::Let) ? 1 : 0;
    if (peek(let).type == Tok::Ident && peek(let + 1).type == Tok::In) {
      auto s = std::make_unique<Stmt>(StmtKind::ForIn, kw.line, kw.col);
      pos_ += let;
      const Token& name = advance();
      s->name = std::string(name.text);
      s->name_line = name.line;
      s->name_col = name.col;
      advance();  // 'in'
      s->expr = expression();
      expect(Tok::RParen, "expected ')' after for-in clause");
      block(s->body, "expected '{' after for clause");
      return s;
    }
    auto s = std::make_unique<Stmt>(StmtKind::For, kw.line, kw.col);
    if (check(Tok::Let)) {
      s->init = let_statement();
    } else if (!match(Tok::Semicolon)) {
      s->init = std::make_unique<Stmt>(StmtKind::Expr, peek().line, peek().col);
      s->init->expr = expression();
      expect(Tok::Semicolon, "expected ';' after loop initializer");
    }
    if (!check(Tok::Semicolon)) s->expr = expression();
    expect(Tok::Semicolon, "expected ';' after loop condition");
    if (!check(Tok::RParen)) s->incr = expression();
    expect(Tok::RParen, "expected ')' after for clauses");
    block(s->body, "expected '{' after for clause");
    return s;
  }

  // ---- expressions ----
  ExprPtr node(ExprKind kind, const Token& at) { return std::make_unique<Expr>(kind, at.line, at.col); }

  // Records the tree height of a finished composite node (see kMaxHeight).
  ExprPtr finish(ExprPtr e, const Token& at) {
    uint32_t h = std::max({height_of(e->a), height_of(e->b), height_of(e->c)});
    for (auto& item : e->items) h = std::max(h, height_of(item));
    e->height = h + 1;
    if (e->height > kMaxHeight) error_at(at, "expression too complex");
    return e;
  }

  ExprPtr expression() {
    Nest nest(*this);
    return assignment();
  }

  ExprPtr assignment() {
    ExprPtr target = conditional();
    if (!is_assign_op(peek().type)) return target;
    const Token& op = advance();
    Nest nest(*this);
    ExprPtr value = assignment();
    if (target->kind != ExprKind::Name && target->kind != ExprKind::Get && target->kind != ExprKind::Index) {
      // Reported without unwinding: the rest of the statement parses fine.
      report(op.line, op.col, "invalid assignment target");
      return value;
    }
    auto e = node(ExprKind::Assign, op);
    e->op = op.type;
    e->a = std::move(target);
    e->b = std::move(value);
    return finish(std::move(e), op);
  }

  ExprPtr conditional() {
    ExprPtr cond = logical_or();
    if (!check(Tok::Question)) return cond;
    const Token& q = advance();
    Nest nest(*this);
    auto e = node(ExprKind::Conditional, q);
    e->a = std::move(cond);
    e->b = assignment();
    expect(Tok::Colon, "expected ':' in conditional expression");
    e->c = assignment();
    return finish(std::move(e), q);
  }

  ExprPtr logical_or() {
    ExprPtr left = logical_and();
    while (check(Tok::PipePipe)) {
      const Token& op = advance();
      auto e = node(ExprKind::Logical, op);
      e->op = op.type;
      e->a = std::move(left);
      e->b = logical_and();
      left = finish(std::move(e), op);
    }
    return left;
  }

  ExprPtr logical_and() {
    ExprPtr left = binary(0);
    while (check(Tok::AmpAmp)) {
      const Token& op = advance();
      auto e = node(ExprKind::Logical, op);
      e->op = op.type;
      e->a = std::move(left);
      e->b = binary(0);
      left = finish(std::move(e), op);
    }
    return left;
  }

  ExprPtr binary(int level) {
    if (level == kBinaryLevels) return unary();
    ExprPtr left = binary(level + 1);
    while (binary_level(peek().type) == level) {
      const Token& op = advance();
      auto e = node(ExprKind::Binary, op);
      e->op = op.type;
      e->a = std::move(left);
      e->b = binary(level + 1);
      left = finish(std::move(e), op);
    }
    return left;
  }

  ExprPtr unary() {
    if (check(Tok::Minus) || check(Tok::Bang) || check(Tok::Tilde)) {
      const Token& op = advance();
      Nest nest(*this);
      auto e = node(ExprKind::Unary, op);
      e->op = op.type;
      e->a = unary();
      return finish(std::move(e), op);
    }
    return postfix();
  }

  ExprPtr postfix() {
    ExprPtr e = primary();
    for (;;) {
      if (check(Tok::LParen)) {
        const Token& paren = advance();
        auto call = node(ExprKind::Call, paren);
        call->a = std::move(e);
        arguments(call->items, Tok::RParen, "expected ')' after arguments");
        e = finish(std::move(call), paren);
      } else if (check(Tok::Dot)) {
        const Token& dot = advance();
        const Token& name = expect(Tok::Ident, "expected field or method name after '.'");
        auto get = node(ExprKind::Get, name);
        get->str = std::string(name.text);
        get->a = std::move(e);
        e = finish(std::move(get), dot);
      } else if (check(Tok::LBracket)) {
        const Token& bracket = advance();
        auto index = node(ExprKind::Index, bracket);
        index->a = std::move(e);
        index->b = expression();
        expect(Tok::RBracket, "expected ']' after index");
        e = finish(std::move(index), bracket);
      } else {
        return e;
      }
    }
  }

  // Comma-separated expressions up to `close`; a trailing comma is allowed.
  void arguments(std::vector<ExprPtr>& out, Tok close, const char* message) {
    while (!check(close)) {
      out.push_back(expression());
      if (!match(Tok::Comma)) break;
    }
    expect(close, message);
    if (out.size() > 65535) error_at(prev(), "too many elements (at most 65535)");
  }

  ExprPtr primary() {
    const Token& t = peek();
    switch (t.type) {
      case Tok::Nil:
        advance();
        return node(ExprKind::Nil, t);
      case Tok::True:
        advance();
        return node(ExprKind::True, t);
      case Tok::False:
        advance();
        return node(ExprKind::False, t);
      case Tok::This:
        advance();
        return node(ExprKind::This, t);
      case Tok::Number: {
        advance();
        auto e = node(ExprKind::Number, t);
        e->num = t.num;
        return e;
      }
      case Tok::String: {
        advance();
        auto e = node(ExprKind::String, t);
        e->str = t.value;
        return e;
      }
      case Tok::Ident: {
        advance();
        auto e = node(ExprKind::Name, t);
        e->str = std::string(t.text);
        return e;
      }
      case Tok::Super:
        return super_expression();
      case Tok::LParen: {
        advance();
        ExprPtr e = expression();
        expect(Tok::RParen, "expected ')' after expression");
        return e;
      }
      case Tok::LBracket: {
        advance();
        auto e = node(ExprKind::Array, t);
        arguments(e->items, Tok::RBracket, "expected ']' after array elements");
        return finish(std::move(e), t);
      }
      case Tok::LBrace:
        return map_literal();
      case Tok::Fn: {
        advance();
        auto e = node(ExprKind::Function, t);
        e->fn = function_rest(FnKind::Function, "<fn>", t);
        return e;
      }
      default:
        expected_expression(t);
    }
  }

  ExprPtr super_expression() {
    const Token& kw = advance();
    expect(Tok::Dot, "expected '.' after 'super'");
    const Token& name = expect(Tok::Ident, "expected method name after 'super.'");
    bool call = check(Tok::LParen);
    auto e = node(call ? ExprKind::SuperCall : ExprKind::SuperGet, kw);
    e->str = std::string(name.text);
    if (call) {
      advance();
      arguments(e->items, Tok::RParen, "expected ')' after arguments");
    }
    return finish(std::move(e), kw);
  }

  ExprPtr map_literal() {
    const Token& brace = advance();
    auto e = node(ExprKind::Map, brace);
    while (!check(Tok::RBrace)) {
      e->items.push_back(expression());
      expect(Tok::Colon, "expected ':' after map key");
      e->items.push_back(expression());
      if (!match(Tok::Comma)) break;
    }
    expect(Tok::RBrace, "expected '}' after map entries");
    return finish(std::move(e), brace);
  }
};

}  // namespace

Ast parse(const std::vector<Token>& tokens, std::vector<Diagnostic>& errors) {
  return Parser(tokens, errors).parse_file();
}

}  // namespace compiler
