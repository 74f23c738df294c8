// The `vm` command: options, then a script, standard input or the REPL.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "vm/repl.h"
#include "vm/vm.h"

namespace {

constexpr int kExitUsage = 64;
constexpr int kExitNoInput = 66;
constexpr int kExitSoftware = 70;

const char* const kVersion = "gclab 0.1.0";

void print_help() {
  std::cout <<
      R"(usage: vm [options] [script.src [args...]]

Runs a gclab program. With no script: the REPL on a terminal, otherwise the
program read from standard input (also with `-`).

options:
  --gc=NAME          collector to use (see --list-gcs; default semispace)
  --heap=SIZE        maximum heap, with K, M or G suffix (default: a quarter
                     of physical memory)
  --gc-threads=N     GC worker threads (default: hardware threads; the
                     collectors of this version collect serially)
  --gc-stress=N      collect every N allocations (1: every allocation)
  --gc-verify        verify the heap before and after every collection;
                     a failure exits with status 71
  --step-limit=N     stop with an error after N loop iterations and calls
  --disasm           print the bytecode and stop
  -e CODE            run CODE instead of a file
  --list-gcs         list the collectors
  --version          print the version
  -h, --help         this help

exit status: 0 success, 64 bad command line, 65 compile error, 66 unreadable
file, 70 runtime error (including out of memory and stack overflow),
71 heap verification failure, or the status given to exit().
)";
}

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "vm: " << message << "\nTry 'vm --help' for more information.\n";
  std::exit(kExitUsage);
}

std::optional<uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t end = 0;
  double n;
  try {
    n = std::stod(text, &end);
  } catch (...) {
    return std::nullopt;
  }
  std::string suffix = text.substr(end);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  double scale = 1;
  if (suffix == "K" || suffix == "k") scale = 1024.0;
  else if (suffix == "M" || suffix == "m") scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g") scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty()) return std::nullopt;
  if (!(n > 0) || n * scale > 1e15) return std::nullopt;
  return static_cast<uint64_t>(n * scale);
}

std::optional<uint64_t> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoull(text);
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  vm::VMOptions options;
  options.heap.gc_threads = std::max(1u, std::thread::hardware_concurrency());
  bool disasm = false;
  std::optional<std::string> code;
  std::optional<std::string> script;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto value_of = [&](const char* flag) -> std::optional<std::string> {
      size_t n = std::strlen(flag);
      if (a.compare(0, n, flag) == 0 && a.size() > n && a[n] == '=') return a.substr(n + 1);
      return std::nullopt;
    };
    if (a == "-h" || a == "--help") {
      print_help();
      return 0;
    } else if (a == "--version") {
      std::cout << kVersion << "\n";
      return 0;
    } else if (a == "--list-gcs") {
      for (const gc::CollectorInfo& c : gc::registered_collectors()) std::cout << c.name << "  " << c.description << "\n";
      return 0;
    } else if (auto v = value_of("--gc")) {
      if (!gc::find_collector(*v)) usage_error("unknown collector '" + *v + "' (see --list-gcs)");
      options.collector = *v;
    } else if (auto v = value_of("--heap")) {
      auto size = parse_size(*v);
      if (!size) usage_error("bad heap size '" + *v + "' (examples: 64M, 2G)");
      options.heap.max_heap_bytes = *size;
    } else if (auto v = value_of("--gc-threads")) {
      auto n = parse_count(*v);
      if (!n || *n > 1024) usage_error("bad thread count '" + *v + "'");
      options.heap.gc_threads = static_cast<unsigned>(*n);
    } else if (auto v = value_of("--gc-stress")) {
      auto n = parse_count(*v);
      if (!n || *n == 0) usage_error("bad stress interval '" + *v + "' (a positive count of allocations)");
      options.heap.stress_interval = *n;
    } else if (auto v = value_of("--step-limit")) {
      auto n = parse_count(*v);
      if (!n || *n == 0) usage_error("bad step limit '" + *v + "' (a positive count)");
      options.step_limit = *n;
    } else if (a == "--gc-verify") {
      options.heap.verify = true;
    } else if (a == "--disasm") {
      disasm = true;
    } else if (a == "-e") {
      if (i + 1 >= argc) usage_error("-e needs CODE");
      code = argv[++i];
    } else if (a == "-") {
      script = "-";
      ++i;
      break;
    } else if (a.size() > 1 && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else {
      script = a;
      ++i;
      break;
    }
  }
  for (; i < argc; ++i) options.script_args.push_back(argv[i]);
  if (options.heap.max_heap_bytes == 0) options.heap.max_heap_bytes = gc::physical_memory_bytes() / 4;

  std::string source;
  std::string name;
  bool repl = false;
  if (code) {
    source = *code;
    name = "<-e>";
  } else if (script && *script != "-") {
    name = *script;
    if (!read_file(name, &source)) {
      std::cerr << "vm: cannot read '" << name << "': " << std::strerror(errno)
                << "\nTry 'vm --help' for more information.\n";
      return kExitNoInput;
    }
  } else if (!script && isatty(STDIN_FILENO)) {
    repl = true;
  } else {
    name = "<stdin>";
    source.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }

  try {
    vm::VM machine(options);
    if (repl) return vm::run_repl(machine);
    if (disasm) return machine.disassemble_source(name, source, std::cout);
    return machine.run_source(name, source);
  } catch (vm::RuntimeError& e) {
    std::cerr << "error: " << e.message << "\n";
    return kExitSoftware;
  }
}
