// The parser: tokens in, an Ast out. On a syntax error it records a
// Diagnostic and resynchronises at the next statement boundary, so one run
// reports several errors.
#pragma once

#include <string_view>
#include <vector>

#include "compiler/ast.h"
#include "compiler/compiler.h"

namespace compiler {

// Errors are appended to `errors` (file and source_line left for the caller).
Ast parse(const std::vector<Token>& tokens, std::vector<Diagnostic>& errors);

}  // namespace compiler
