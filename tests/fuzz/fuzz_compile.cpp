// libFuzzer target: the front end on arbitrary bytes. Every input must
// either compile or give compile errors; nothing may crash, hang, leak or
// trip ASan/UBSan. Each diagnostic is formatted (caret line included), and
// a program that compiles is disassembled.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "compiler/compiler.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::NullBuf null_buf;
  std::ostream null_out(&null_buf);

  std::string_view source(reinterpret_cast<const char*>(data), size);
  compiler::CompileOptions options;
  // One input in four compiles as a REPL entry (expression statements
  // print; top-level names may be declared again).
  options.repl = (fuzz::hash_input(data, size) & 3) == 0;

  compiler::Program program;
  // A folder that does not exist: relative imports fail the same way on
  // every machine instead of reading whatever lies around.
  compiler::CompileResult r =
      compiler::compile_source(program, "/nonexistent/gclab-fuzz/input.src", source, options);
  if (r.ok) {
    if (!r.errors.empty()) __builtin_trap();  // ok with errors: a contract violation
    compiler::disassemble(program, r.function, null_out);
  } else {
    if (r.errors.empty()) __builtin_trap();  // failed without saying why
    for (const compiler::Diagnostic& d : r.errors) null_out << compiler::format_diagnostic(d);
  }
  null_out.flush();
  return 0;
}
