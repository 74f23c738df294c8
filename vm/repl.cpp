// The REPL on GNU readline: history in ~/.gclab_history, multi-line input
// while brackets are open, completion of globals and keywords, and a few
// commands that show the collector at work.
#include "vm/repl.h"

#include <readline/history.h>
#include <readline/readline.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "compiler/compiler.h"
#include "gc/observe/log.h"
#include "gc/observe/outputs.h"
#include "gc/observe/stats.h"

namespace vm {

namespace {

VM* g_vm = nullptr;  // readline's completion callbacks take no context

const char* const kHelp = R"(Type code and press Enter; an expression's value is printed.
Lines continue while brackets are open.
  :help           this help
  :quit           leave (also Ctrl-D)
  :gc             run a full collection and print its GC log line
  :stats          collector statistics so far (the --gc-stats table)
  :heap           a map of the heap's spaces and how full they are
  :disasm EXPR    show the bytecode of an expression or statement
)";

std::string history_path() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.gclab_history" : std::string();
}

char* complete_name(const char* text, int state) {
  static std::vector<std::string> matches;
  static size_t next;
  if (state == 0) {
    matches.clear();
    next = 0;
    size_t n = std::strlen(text);
    for (const std::string& k : compiler::keywords())
      if (k.compare(0, n, text) == 0) matches.push_back(k);
    for (const std::string& g : g_vm->global_names())
      if (g.compare(0, n, text) == 0) matches.push_back(g);
  }
  if (next < matches.size()) return strdup(matches[next++].c_str());
  return nullptr;
}

char** complete(const char* text, int, int) {
  rl_attempted_completion_over = 1;
  return rl_completion_matches(text, complete_name);
}

void print_stats(VM& vm) {
  std::fputs(gc::observe::stats_table(gc::observe::summarize(vm.heap())).c_str(), stdout);
}

void print_heap_map(VM& vm) { std::fputs(gc::observe::text_heap_map(vm.heap()).c_str(), stdout); }

// The collection's --gc-log line (the REPL records every collection).
void run_gc_command(VM& vm) {
  const gc::observe::Recorder& events = vm.heap().events;
  size_t before = events.records().size();
  vm.collect_now();
  if (events.records().size() > before)
    std::printf("%s\n", gc::observe::pause_line(events, events.records().size() - 1).c_str());
  else
    std::printf("no collection ran\n");
}

// Handles a :command; returns false to leave the REPL.
bool run_command(VM& vm, const std::string& line) {
  std::istringstream in(line);
  std::string cmd;
  in >> cmd;
  if (cmd == ":quit" || cmd == ":q") return false;
  if (cmd == ":help")
    std::fputs(kHelp, stdout);
  else if (cmd == ":gc")
    run_gc_command(vm);
  else if (cmd == ":stats")
    print_stats(vm);
  else if (cmd == ":heap")
    print_heap_map(vm);
  else if (cmd == ":disasm") {
    std::string rest;
    std::getline(in, rest);
    std::string source = rest;
    if (source.find(';') == std::string::npos && source.find('}') == std::string::npos) source += ";";
    vm.disassemble_source("<repl>", source, std::cout);
  } else {
    std::printf("unknown command %s (try :help)\n", cmd.c_str());
  }
  std::fflush(stdout);
  return true;
}

}  // namespace

bool needs_more_input(std::string_view text) {
  int depth = 0;
  bool in_string = false, in_comment = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (in_comment) {
      if (c == '*' && next == '/') in_comment = false, ++i;
    } else if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      else if (c == '\n')
        in_string = false;  // the compiler reports it
    } else if (c == '"') {
      in_string = true;
    } else if (c == '/' && next == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && next == '*') {
      in_comment = true, ++i;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    }
  }
  return depth > 0 || in_comment;
}

int run_repl(VM& vm) {
  g_vm = &vm;
  rl_attempted_completion_function = complete;
  std::string history = history_path();
  if (!history.empty()) read_history(history.c_str());
  std::printf("gclab 0.1.0, collector %s. Type :help for help, :quit to leave.\n", vm.heap().name());
  std::string buffer;
  int status = 0;
  for (;;) {
    char* raw = readline(buffer.empty() ? "> " : "... ");
    if (!raw) {
      std::printf("\n");
      break;
    }
    std::string line = raw;
    std::free(raw);
    if (buffer.empty() && !line.empty() && line[0] == ':') {
      add_history(line.c_str());
      if (!run_command(vm, line)) break;
      continue;
    }
    buffer += line;
    buffer += '\n';
    if (needs_more_input(buffer)) continue;
    std::string entry = buffer;
    buffer.clear();
    if (entry.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    std::string hist = entry.substr(0, entry.size() - 1);
    add_history(hist.c_str());
    if (!vm.run_repl_line(entry, &status)) break;
  }
  if (!history.empty()) write_history(history.c_str());
  return status;
}

}  // namespace vm
