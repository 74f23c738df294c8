// Progress of a long sweep or search (--compare, --compare --heaps,
// --min-heap, --heap=Nx): which run it is on and how many remain, on
// standard error when that is a terminal, or always with --progress.
// Nothing on a pipe otherwise, so logs and tests see only results.
#pragma once

#include <string>

namespace vm {

class Progress {
 public:
  // `what` opens each line ("--compare"); `forced`: --progress.
  Progress(std::string what, bool forced);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Run `index` (from 1) of `total`, doing `label`.
  void run(size_t index, size_t total, const std::string& label);
  // Run `index` of a search whose length is not known: `remaining` says
  // how many at most are left, in words.
  void run(size_t index, const std::string& remaining, const std::string& label);
  // Clears a terminal's progress line before other output.
  void done();

  // Whether progress lines are shown at all: a terminal, or --progress.
  static bool shown(bool forced);

 private:
  void show(const std::string& line);

  std::string what_;
  bool enabled_;
  bool terminal_;  // one line rewritten in place, instead of a line a run
  bool open_ = false;
};

}  // namespace vm
