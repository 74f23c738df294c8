// Scope resolution: binds every name to its Decl (or to a global), marks
// the variables closures capture, and reports the scope errors of
// docs/language.md. Runs between the parser and the code generator.
#pragma once

#include <functional>
#include <vector>

#include "compiler/ast.h"
#include "compiler/compiler.h"

namespace compiler {

// Called for each `import` statement: compiles the file and sets
// stmt.module / stmt.import_ok, appending any errors to the diagnostics.
using ImportFn = std::function<void(Stmt& stmt)>;

void resolve(Ast& ast, bool repl, const ImportFn& on_import, std::vector<Diagnostic>& errors);

}  // namespace compiler
