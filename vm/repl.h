// The interactive loop: `vm` with no script on a terminal.
#pragma once

#include "vm/vm.h"

namespace vm {

// Runs until :quit, end of input or exit(); returns the exit status.
int run_repl(VM& vm);

// True while `text` has an unclosed bracket, string or block comment, so
// the REPL should read another line (exposed for tests).
bool needs_more_input(std::string_view text);

}  // namespace vm
