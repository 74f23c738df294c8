// The front end's public face: source text in, bytecode (bytecode.h) out.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/bytecode.h"

namespace compiler {

struct Diagnostic {
  std::string file;
  uint32_t line = 0;    // from 1
  uint32_t column = 0;  // bytes from 1
  std::string message;
  std::string source_line;
};

// One file's errors stop at this many: the parser stops at the last.
constexpr size_t kMaxErrors = 20;

// "file.src:LINE:COL: error: MESSAGE", the source line, a caret under COL.
// A line longer than kExcerptColumns is clipped to a window around COL
// with "..." at the cut ends.
constexpr uint32_t kExcerptColumns = 120;
std::string format_diagnostic(const Diagnostic& d);

struct CompileResult {
  bool ok = false;
  uint32_t function = 0;           // the top-level function, when ok
  std::vector<Diagnostic> errors;  // several per file where the parser recovers
};

struct CompileOptions {
  // REPL lines: top-level expression statements print their value
  // (ReplPrint), and a top-level name may be declared again.
  bool repl = false;
};

// Compiles a file and, recursively, the files it imports. `path` is used in
// messages exactly as given.
CompileResult compile_file(Program& program, const std::string& path, const CompileOptions& options = {});
// Compiles source text; `name` stands for the file in messages, and imports
// are resolved relative to its folder.
CompileResult compile_source(Program& program, const std::string& name, std::string_view source,
                             const CompileOptions& options = {});

// Human-readable bytecode of a function and every function nested in it.
void disassemble(const Program& program, uint32_t function, std::ostream& out);

// The language's keywords, for the REPL's completion.
const std::vector<std::string>& keywords();

}  // namespace compiler
