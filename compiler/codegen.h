// Bytecode generation from a resolved Ast (see bytecode.h for the target).
#pragma once

#include <string>
#include <vector>

#include "compiler/ast.h"
#include "compiler/bytecode.h"
#include "compiler/compiler.h"

namespace compiler {

// Emits the file's functions into `program` and returns the index of its
// top-level function. Limit violations (too many locals, ...) are
// appended to `errors`.
uint32_t generate(Program& program, Ast& ast, const std::string& file, bool repl,
                  std::vector<Diagnostic>& errors);

}  // namespace compiler
