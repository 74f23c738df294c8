// The smallest --heap at which a program completes under a collector
// (vm --min-heap, and the minimum that --heap=Nx multiplies): a search
// over runs of the VM in child processes (docs/observability.md, "Minimum
// heap"). The search itself (find_min_heap) takes the runner as a
// function, so a unit test can drive it with exact answers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vm/vm.h"

namespace vm {

// How close the search comes: the gap between the largest size that did
// not complete and the smallest that did, in bytes or as a fraction of the
// latter.
struct HeapResolution {
  uint64_t bytes = 0;   // 0: `fraction` instead
  double fraction = 0;  // of the smallest size that completed
  uint64_t at(uint64_t heap) const;
  std::string text() const;  // as given: "64.0 KiB" or "1%"
};
// Its default: 1% of the minimum, finer than run-to-run noise in a
// collector's footprint and reached in about seven bisection steps.
inline constexpr double kDefaultResolutionFraction = 0.01;
// "SIZE" (at least 1K) or "P%" (0.1% to 50%); nullopt for anything else.
std::optional<HeapResolution> parse_resolution(const std::string& text);

enum class Outcome {
  kCompleted,    // exited with the program's own status
  kOutOfMemory,  // exit 70 with the VM's out-of-memory message: too small
  kTimedOut,     // killed at the time limit
  kFailed,       // any other end: a program error, a crash, a refused option
};

struct Probe {
  Outcome outcome = Outcome::kFailed;
  int status = 0;      // the exit status, or 128 + the signal
  double wall_ms = 0;  // as the parent measured it
  std::string detail;  // kFailed: how it ended, and its first line of standard error
};

struct ProbeRecord {
  uint64_t heap = 0;
  Probe probe;
};

struct SearchBounds {
  uint64_t floor = 0;    // the smallest --heap (256K)
  uint64_t ceiling = 0;  // the largest: the machine's memory
  HeapResolution resolution;
};

struct MinHeap {
  enum class Answer {
    kFound,      // min_heap completes, fails_at does not (or min_heap is the floor)
    kNeedsMore,  // out of memory (or timed out) even at the ceiling
    kFailed,     // a run failed, or the first runs hung: not a heap question
  } answer = Answer::kFailed;
  uint64_t min_heap = 0;  // the smallest size that completed
  uint64_t fails_at = 0;  // the largest that did not (0: min_heap is the floor)
  int status = 0;         // the completing runs' exit status
  std::string failure;    // kFailed: why, in a sentence
  std::vector<ProbeRecord> runs;
};

// One run at `heap` bytes; `index` counts runs from 1 and `remaining`
// says how many at most are left, for the progress line.
using RunAt = std::function<Probe(uint64_t heap, size_t index, const std::string& remaining)>;

// Doubles from the floor until a run completes, then bisects between that
// size and the last one that did not until they are within the
// resolution. A collector's need is taken to grow as the heap shrinks (a
// size that completes has every larger one completing). A timed-out run
// counts as too small once some run has completed, and as a hang before.
MinHeap find_min_heap(const SearchBounds& bounds, const RunAt& run_at);

// The program a child run executes, and how: the VM's own executable with
// the configuration's options, the program as a script path, -e CODE or,
// for a program read from standard input, that text as its input.
struct ChildProgram {
  std::string executable;
  std::optional<std::string> script;  // a path
  std::optional<std::string> code;    // -e CODE
  std::string stdin_source;           // neither: the program's text, given on standard input
  std::vector<std::string> args;
  double time_limit_s = 60;
};
// The options that reproduce `options` in a child (collector, heap
// excepted: the search gives it).
std::vector<std::string> child_options(const VMOptions& options);
// Runs `program` under `options` at `heap` bytes in a child process, its
// output discarded.
Probe run_child_at(const ChildProgram& program, const VMOptions& options, uint64_t heap);

// The search's result in words, and as the gclab-gc-min-heap/1 document
// (docs/gc-min-heap.schema.json).
std::string min_heap_text(const MinHeap& m, const std::string& collector, const SearchBounds& bounds);
std::string min_heap_json(const MinHeap& m, const std::string& program, const std::string& collector,
                          const SearchBounds& bounds);
// Why there is no minimum, for a message: empty when one was found.
std::string no_minimum_reason(const MinHeap& m, const std::string& collector, const SearchBounds& bounds);

// The minimum that --heap=Nx and --heaps multiply, and how it was found.
struct ReferenceMinimum {
  std::string collector;
  uint64_t min_heap = 0;
  uint64_t fails_at = 0;  // 0: the minimum is the smallest --heap
  HeapResolution resolution;
  size_t runs = 0;
};
// "heap limit 12.0 MiB = 2.5 x marksweep's minimum 4.8 MiB (...)"
std::string heap_limit_text(const ReferenceMinimum& r, double multiple, uint64_t bytes);
std::string multiple_text(double multiple);  // "2.5x"

std::string heap_size_text(uint64_t bytes);  // "4.80 MiB"
const char* outcome_name(Outcome o);         // "completed", "out of memory", ...

}  // namespace vm
