// The driver: file reading, imports, and the lex -> parse -> resolve ->
// generate pipeline; also diagnostics formatting.
#include "compiler/compiler.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unordered_set>

#include "compiler/codegen.h"
#include "compiler/lexer.h"
#include "compiler/parser.h"
#include "compiler/resolver.h"

namespace compiler {
namespace {

// Only regular files: a device such as /dev/zero would never end.
bool read_file(const std::string& path, std::string& out) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char buf[65536];
  size_t n;
  out.clear();
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

// The text of line `line` (from 1), without its line terminator.
std::string line_text(std::string_view source, uint32_t line) {
  size_t start = 0;
  for (uint32_t l = 1; l < line; ++l) {
    size_t nl = source.find('\n', start);
    if (nl == std::string_view::npos) return "";
    start = nl + 1;
  }
  size_t end = source.find('\n', start);
  if (end == std::string_view::npos) end = source.size();
  if (end > start && source[end - 1] == '\r') --end;
  return std::string(source.substr(start, end - start));
}

// One compile_file/compile_source call, with the imports it pulls in.
class Session {
 public:
  explicit Session(Program& program) : program_(program) {}

  // Compiles one file's text. Its own diagnostics get `name` and their
  // source line; those of imported files arrive already filled in.
  bool compile_unit(const std::string& name, std::string_view source, bool repl, uint32_t& function,
                    std::vector<Diagnostic>& errors) {
    std::vector<Token> tokens = lex(source);
    std::vector<Diagnostic> own;
    Ast ast = parse(tokens, own);
    if (own.empty()) {
      resolve(
          ast, repl, [&](Stmt& s) { import(s, name, own); }, own);
    }
    if (own.empty()) function = generate(program_, ast, name, repl, own);
    if (own.size() > kMaxErrors) {
      own.resize(kMaxErrors);
      own.back().message += " (too many errors; stopping here)";
    }
    for (size_t i = 0; i < own.size(); ++i) {
      if (!own[i].file.empty()) continue;  // from an imported file
      own[i].file = name;
      own[i].source_line = line_text(source, own[i].line);
    }
    bool ok = own.empty();
    errors.insert(errors.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
    return ok;
  }

  // Compiles `source` as the module `key` (registered first, so an import
  // cycle finds it instead of recursing). On failure the module and any
  // registered after it are forgotten, so a later compile retries them.
  bool compile_module(const std::string& key, const std::string& name, std::string_view source,
                      uint32_t& function, std::vector<Diagnostic>& errors, uint32_t& module) {
    module = static_cast<uint32_t>(program_.modules.size());
    program_.modules.push_back(Module{key, 0});
    program_.module_index[key] = module;
    if (compile_unit(name, source, false, function, errors)) {
      program_.modules[module].function = function;
      return true;
    }
    for (size_t i = module; i < program_.modules.size(); ++i) {
      auto it = program_.module_index.find(program_.modules[i].path);
      if (it != program_.module_index.end() && it->second == i) program_.module_index.erase(it);
    }
    failed_.insert(key);
    return false;
  }

 private:
  Program& program_;
  std::unordered_set<std::string> failed_;  // already reported in this session

  // `import "p";`: the path is joined to the importer's folder and
  // normalised; that string names the file in messages and keys the module.
  void import(Stmt& s, const std::string& importer, std::vector<Diagnostic>& errors) {
    namespace fs = std::filesystem;
    std::string path =
        (fs::path(importer).parent_path() / fs::path(s.name)).lexically_normal().generic_string();
    auto known = program_.module_index.find(path);
    if (known != program_.module_index.end()) {
      s.module = known->second;
      s.import_ok = true;
      return;
    }
    if (failed_.count(path)) {
      Diagnostic d;
      d.line = s.name_line;
      d.column = s.name_col;
      d.message = "imported file '" + path + "' has errors";
      errors.push_back(std::move(d));
      return;
    }
    std::string source;
    if (!read_file(path, source)) {
      Diagnostic d;
      d.line = s.name_line;
      d.column = s.name_col;
      d.message = "cannot read '" + path + "'";
      errors.push_back(std::move(d));
      failed_.insert(path);
      return;
    }
    uint32_t function = 0;
    s.import_ok = compile_module(path, path, source, function, errors, s.module);
  }
};

}  // namespace

CompileResult compile_file(Program& program, const std::string& path, const CompileOptions& options) {
  CompileResult result;
  std::string source;
  if (!read_file(path, source)) {
    Diagnostic d;
    d.file = path;
    d.message = "cannot read file '" + path + "'";
    result.errors.push_back(std::move(d));
    return result;
  }
  Session session(program);
  if (options.repl) {
    result.ok = session.compile_unit(path, source, true, result.function, result.errors);
    return result;
  }
  // The script is a module too, keyed by its normalised path, so an
  // import cycle back to it does not compile (and run) it a second time.
  std::string key = std::filesystem::path(path).lexically_normal().generic_string();
  // Messages and traces name the file exactly as given.
  uint32_t module = 0;
  result.ok = session.compile_module(key, path, source, result.function, result.errors, module);
  return result;
}

CompileResult compile_source(Program& program, const std::string& name, std::string_view source,
                             const CompileOptions& options) {
  CompileResult result;
  Session session(program);
  result.ok = session.compile_unit(name, source, options.repl, result.function, result.errors);
  return result;
}

std::string format_diagnostic(const Diagnostic& d) {
  if (d.line == 0) return d.file + ": error: " + d.message + "\n";
  std::string out =
      d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": error: " + d.message + "\n";
  std::string_view line = d.source_line;
  uint64_t caret = d.column ? d.column - 1 : 0;  // from 0, in `line`
  std::string before, after;
  if (line.size() > kExcerptColumns) {
    // A window of kExcerptColumns bytes with the column a third of the way in.
    uint64_t first = caret > kExcerptColumns / 3 ? caret - kExcerptColumns / 3 : 0;
    first = std::min<uint64_t>(first, line.size() - kExcerptColumns);
    if (first > 0) before = "...";
    if (first + kExcerptColumns < line.size()) after = "...";
    line = line.substr(first, kExcerptColumns);
    caret -= first;
  }
  out += before;
  out += line;
  out += after;
  out += "\n";
  out.append(before.size(), ' ');
  // Tabs are copied so the caret lines up however the terminal sets tabs.
  for (uint64_t i = 0; i < caret; ++i) out += (i < line.size() && line[i] == '\t') ? '\t' : ' ';
  out += "^\n";
  return out;
}

const std::vector<std::string>& keywords() {
  static const std::vector<std::string> words = {"let",   "fn",  "return", "if",       "else",  "while",
                                                 "for",   "in",  "break",  "continue", "class", "this",
                                                 "super", "nil", "true",   "false",    "is",    "import"};
  return words;
}

}  // namespace compiler
