// vm/manpage.h: the manual page printed by `vm --man`.
#include <doctest/doctest.h>

#include <string>

#include "vm/manpage.h"

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("manpage: roff_escape keeps text from being read as roff") {
  CHECK(vm::roff_escape("a\\b") == "a\\eb");
  CHECK(vm::roff_escape(".starts a request") == "\\&.starts a request");
  CHECK(vm::roff_escape("'too") == "\\&'too");
  CHECK(vm::roff_escape("one\n.two") == "one\n\\&.two");
  CHECK(vm::roff_escape("mid. dot's fine") == "mid. dot's fine");
  // Hyphens in option names are minus signs; hyphens in words stay hyphens.
  CHECK(vm::roff_escape("see --gc-log, per-phase (--list-gcs) [-e]") ==
        "see \\-\\-gc\\-log, per-phase (\\-\\-list\\-gcs) [\\-e]");
}

TEST_CASE("manpage: options, collectors and exit statuses from the tables") {
  constexpr gc::OptionSpec vm_options[] = {
      gc::size_option("heap", 1u << 20, "the heap", "heap size", "examples: 64M", 1, 1u << 30),
      {.name = "log",
       .kind = gc::OptionKind::kText,
       .value_name = "FILE",
       .help = ".a\\b",
       .value_optional = true},
  };
  static constexpr gc::OptionSpec collector_options[] = {
      gc::choice_option("x-mode", "a|b", "a", "how x works (a or b)", "x mode", "a or b"),
  };
  const gc::CollectorInfo collectors[] = {
      {.name = "plain", .description = "no options", .create = nullptr},
      {.name = "x",
       .description = "has options",
       .create = nullptr,
       .options = [] { return std::span<const gc::OptionSpec>(collector_options); },
       .uses_gc_threads = false},
  };
  std::string page = vm::manual_page(vm_options, collectors, "gclab 9");
  CHECK(page.rfind(".TH VM 1 \"\" \"gclab 9\"", 0) == 0);
  CHECK(contains(page,
                 ".TP\n\\fB\\-\\-heap\\fR=\\fISIZE\\fR\nthe heap\n.br\nValues: examples: 64M.\n"
                 ".br\nDefault: 1M.\n"));
  CHECK(contains(page, ".TP\n\\fB\\-\\-log\\fR[=\\fIFILE\\fR]\n\\&.a\\eb\n"));
  // A collector without options has no subsection, but is a collector.
  CHECK(!contains(page, "Options of \\-\\-gc=plain"));
  CHECK(contains(page, ".TP\n\\fBplain\\fR\nno options\n"));
  // The hint is left out where the help already says it.
  CHECK(contains(page, ".SS \"Options of \\-\\-gc=x\"\n"));
  CHECK(contains(page, ".TP\n\\fB\\-\\-x\\-mode\\fR=\\fIa|b\\fR\nhow x works (a or b)\n.br\nDefault: a.\n"));
  CHECK(contains(page, ".TP\n\\fBx\\fR\nhas options (no GC threads)\n"));
  for (const char* status : {"0", "64", "65", "66", "70", "71", "73"})
    CHECK(contains(page, std::string(".TP\n.B ") + status + "\n"));
}
