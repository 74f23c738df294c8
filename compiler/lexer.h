// The lexer: source bytes in, a vector of tokens out (the whole file at
// once, so the parser can look ahead freely).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace compiler {

enum class Tok : uint8_t {
  // punctuation
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Dot,
  Semicolon,
  Colon,
  Question,
  // operators
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  PlusEq,
  MinusEq,
  StarEq,
  SlashEq,
  PercentEq,
  Bang,
  BangEq,
  Eq,
  EqEq,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  Shl,
  Shr,
  Amp,
  AmpAmp,
  Pipe,
  PipePipe,
  Caret,
  Tilde,
  // literals
  Ident,
  Number,
  String,
  // keywords
  Let,
  Fn,
  Return,
  If,
  Else,
  While,
  For,
  In,
  Break,
  Continue,
  Class,
  This,
  Super,
  Nil,
  True,
  False,
  Is,
  Import,
  Eof,
  Error,  // a lexical error; `value` holds the message
};

struct Token {
  Tok type = Tok::Eof;
  uint32_t line = 1;
  uint32_t col = 1;       // bytes from 1
  std::string_view text;  // the token's bytes in the source
  double num = 0;         // Number
  std::string value;      // String: decoded bytes; Error: the message
};

// Tokenizes all of `source`; the last token is always Eof. Lexical errors
// come back as Error tokens in place, so the parser reports them in order.
std::vector<Token> lex(std::string_view source);

}  // namespace compiler
