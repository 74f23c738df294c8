#include "compiler/lexer.h"

#include <charconv>
#include <cmath>
#include <unordered_map>

namespace compiler {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const std::unordered_map<std::string_view, Tok>& keyword_table() {
  static const std::unordered_map<std::string_view, Tok> table = {
      {"let", Tok::Let},       {"fn", Tok::Fn},
      {"return", Tok::Return}, {"if", Tok::If},
      {"else", Tok::Else},     {"while", Tok::While},
      {"for", Tok::For},       {"in", Tok::In},
      {"break", Tok::Break},   {"continue", Tok::Continue},
      {"class", Tok::Class},   {"this", Tok::This},
      {"super", Tok::Super},   {"nil", Tok::Nil},
      {"true", Tok::True},     {"false", Tok::False},
      {"is", Tok::Is},         {"import", Tok::Import},
  };
  return table;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space_and_comments(out);
      start_ = pos_;
      start_line_ = line_;
      start_col_ = col();
      if (at_end()) {
        out.push_back(make(Tok::Eof));
        return out;
      }
      out.push_back(next_token());
    }
  }

 private:
  std::string_view src_;
  size_t pos_ = 0;
  size_t line_start_ = 0;  // offset of the current line's first byte
  uint32_t line_ = 1;
  size_t start_ = 0;
  uint32_t start_line_ = 1, start_col_ = 1;

  bool at_end() const { return pos_ >= src_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }
  uint32_t col() const { return static_cast<uint32_t>(pos_ - line_start_ + 1); }
  void newline() {
    ++line_;
    line_start_ = pos_;
  }  // call with pos_ just past '\n'
  bool match(char c) {
    if (peek() != c || at_end()) return false;
    ++pos_;
    return true;
  }

  Token make(Tok type) const {
    Token t;
    t.type = type;
    t.line = start_line_;
    t.col = start_col_;
    t.text = src_.substr(start_, pos_ - start_);
    return t;
  }
  Token error_at(uint32_t line, uint32_t column, std::string message) const {
    Token t = make(Tok::Error);
    t.line = line;
    t.col = column;
    t.value = std::move(message);
    return t;
  }

  void skip_space_and_comments(std::vector<Token>& out) {
    while (!at_end()) {
      char c = peek();
      if (c == '\n') {
        ++pos_;
        newline();
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '/' && peek(1) == '/') {
        while (!at_end() && peek() != '\n') ++pos_;
      } else if (c == '/' && peek(1) == '*') {
        skip_block_comment(out);
      } else {
        return;
      }
    }
  }

  void skip_block_comment(std::vector<Token>& out) {
    uint32_t line = line_, column = col();
    pos_ += 2;
    while (!at_end()) {
      if (peek() == '*' && peek(1) == '/') {
        pos_ += 2;
        return;
      }
      if (src_[pos_++] == '\n') newline();
    }
    start_ = pos_;
    out.push_back(error_at(line, column, "unterminated comment"));
  }

  Token next_token() {
    char c = src_[pos_++];
    if (is_alpha(c)) return identifier();
    if (is_digit(c) || (c == '.' && is_digit(peek()))) return number();
    switch (c) {
      case '(':
        return make(Tok::LParen);
      case ')':
        return make(Tok::RParen);
      case '{':
        return make(Tok::LBrace);
      case '}':
        return make(Tok::RBrace);
      case '[':
        return make(Tok::LBracket);
      case ']':
        return make(Tok::RBracket);
      case ',':
        return make(Tok::Comma);
      case '.':
        return make(Tok::Dot);
      case ';':
        return make(Tok::Semicolon);
      case ':':
        return make(Tok::Colon);
      case '?':
        return make(Tok::Question);
      case '~':
        return make(Tok::Tilde);
      case '^':
        return make(Tok::Caret);
      case '+':
        return make(match('=') ? Tok::PlusEq : Tok::Plus);
      case '-':
        return make(match('=') ? Tok::MinusEq : Tok::Minus);
      case '*':
        return make(match('=') ? Tok::StarEq : Tok::Star);
      case '/':
        return make(match('=') ? Tok::SlashEq : Tok::Slash);
      case '%':
        return make(match('=') ? Tok::PercentEq : Tok::Percent);
      case '!':
        return make(match('=') ? Tok::BangEq : Tok::Bang);
      case '=':
        return make(match('=') ? Tok::EqEq : Tok::Eq);
      case '<':
        return make(match('<') ? Tok::Shl : match('=') ? Tok::LessEq : Tok::Less);
      case '>':
        return make(match('>') ? Tok::Shr : match('=') ? Tok::GreaterEq : Tok::Greater);
      case '&':
        return make(match('&') ? Tok::AmpAmp : Tok::Amp);
      case '|':
        return make(match('|') ? Tok::PipePipe : Tok::Pipe);
      case '"':
        return string();
      default:
        break;
    }
    std::string shown = (c >= 0x20 && c < 0x7f) ? std::string(1, c) : "\\x" + hex_byte(c);
    return error_at(start_line_, start_col_, "unexpected character '" + shown + "'");
  }

  static std::string hex_byte(char c) {
    static const char* digits = "0123456789abcdef";
    auto u = static_cast<unsigned char>(c);
    return {digits[u >> 4], digits[u & 15]};
  }

  Token identifier() {
    while (is_alnum(peek())) ++pos_;
    Token t = make(Tok::Ident);
    auto it = keyword_table().find(t.text);
    if (it != keyword_table().end()) t.type = it->second;
    return t;
  }

  Token number() {
    Token t;
    if (src_[start_] == '0' && (peek() == 'x' || peek() == 'X')) {
      ++pos_;
      double value = 0;
      size_t digits = 0;
      for (; hex_value(peek()) >= 0; ++pos_, ++digits) value = value * 16 + hex_value(peek());
      if (digits == 0 || is_alnum(peek())) return bad_number();
      t = make(Tok::Number);
      t.num = value;
      return t;
    }
    while (is_digit(peek())) ++pos_;
    if (peek() == '.' && is_digit(peek(1))) {
      ++pos_;
      while (is_digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      size_t sign = (peek(1) == '+' || peek(1) == '-') ? 1 : 0;
      if (!is_digit(peek(1 + sign))) return bad_number();
      pos_ += 1 + sign;
      while (is_digit(peek())) ++pos_;
    }
    if (is_alnum(peek())) return bad_number();
    t = make(Tok::Number);
    // from_chars is exact (correctly rounded) and locale independent.
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.num);
    if (r.ec == std::errc::result_out_of_range) t.num = HUGE_VAL;  // 1e999 is inf, as in JS
    return t;
  }

  Token bad_number() {
    while (is_alnum(peek()) || peek() == '.') ++pos_;
    return error_at(start_line_, start_col_,
                    "malformed number '" + std::string(src_.substr(start_, pos_ - start_)) + "'");
  }

  Token string() {
    std::string value;
    Token bad;  // the first bad escape, reported once the string is skipped
    bool has_bad = false;
    for (;;) {
      if (at_end() || peek() == '\n') {
        // Report at the opening quote; the rest of the line is not lexed
        // as code so one mistake gives one message.
        return error_at(start_line_, start_col_, "newline inside a string");
      }
      char c = src_[pos_++];
      if (c == '"') break;
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      uint32_t esc_col = col() - 1;
      char e = peek();
      if (e == '\n' || at_end()) continue;  // reported as unterminated above
      ++pos_;
      switch (e) {
        case 'n':
          value.push_back('\n');
          break;
        case 't':
          value.push_back('\t');
          break;
        case 'r':
          value.push_back('\r');
          break;
        case '\\':
          value.push_back('\\');
          break;
        case '"':
          value.push_back('"');
          break;
        case '0':
          value.push_back('\0');
          break;
        case 'x': {
          int hi = hex_value(peek()), lo = hex_value(peek(1));
          if (hi >= 0 && lo >= 0) {
            pos_ += 2;
            value.push_back(static_cast<char>(hi * 16 + lo));
            break;
          }
          if (!has_bad) bad = error_at(line_, esc_col, "invalid escape '\\x': expected two hex digits");
          has_bad = true;
          break;
        }
        default:
          if (!has_bad) {
            std::string shown = (e >= 0x20 && e < 0x7f) ? std::string(1, e) : "\\x" + hex_byte(e);
            bad = error_at(line_, esc_col, "unknown escape '\\" + shown + "' in string");
          }
          has_bad = true;
      }
    }
    if (has_bad) {
      bad.text = src_.substr(start_, pos_ - start_);
      return bad;
    }
    Token t = make(Tok::String);
    t.value = std::move(value);
    return t;
  }
};

}  // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(source).run(); }

}  // namespace compiler
