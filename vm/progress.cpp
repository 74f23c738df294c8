#include "vm/progress.h"

#include <unistd.h>

#include <cstdio>

namespace vm {

bool Progress::shown(bool forced) { return forced || isatty(STDERR_FILENO); }

Progress::Progress(std::string what, bool forced)
    : what_(std::move(what)), enabled_(shown(forced)), terminal_(isatty(STDERR_FILENO)) {}

Progress::~Progress() { done(); }

void Progress::run(size_t index, size_t total, const std::string& label) {
  show("run " + std::to_string(index) + " of " + std::to_string(total) + ", " +
       std::to_string(total - index) + " remain after it: " + label);
}

void Progress::run(size_t index, const std::string& remaining, const std::string& label) {
  show("run " + std::to_string(index) + ", " + remaining + ": " + label);
}

void Progress::show(const std::string& line) {
  if (!enabled_) return;
  std::string text = "vm: " + what_ + ": " + line;
  if (terminal_) {
    // Carriage return and erase-line: the line is rewritten, not repeated.
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    open_ = true;
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void Progress::done() {
  if (!open_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  open_ = false;
}

}  // namespace vm
