// vm --compare: one program under several collectors, each run in a child
// process of its own with the same source, arguments, input and heap limit;
// then whether they agree (output and exit status) and one table of their
// statistics (docs/observability.md, "Comparing collectors").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "vm/min_heap.h"
#include "vm/vm.h"

namespace vm {

struct CompareOptions {
  // One per collector, in the table's order; the first is the reference
  // the others are checked against.
  std::vector<VMOptions> runs;
  std::string program_name;
  std::string source;
  bool json = false;        // the JSON document (docs/gc-compare.schema.json) instead of the table
  std::string stats_file;   // empty: standard error
  std::string report_file;  // the page of every run's pauses and heap overlaid; empty: none
  bool progress = false;    // --progress: the progress line on a pipe too
  // --heaps: every run at each of these sizes, multiples of the reference
  // collector's minimum; empty: once, at the runs' own --heap.
  struct HeapPoint {
    double multiple = 0;
    uint64_t bytes = 0;
  };
  std::vector<HeapPoint> heaps;
  std::optional<ReferenceMinimum> reference;  // with --heaps: the minimum they multiply
};

// The collectors a comparison runs: those `names` names (registered ones),
// or, where it names none, every one that can run here but those
// --paper-config (`paper_config`) or --gc-stress (`stressed`) cannot use,
// each left out named on standard error. Where a named one cannot run,
// nothing, with *error saying why.
std::vector<const gc::CollectorInfo*> compared_collectors(const std::vector<std::string>& names,
                                                          bool paper_config, bool stressed,
                                                          std::string* error);

// Runs every configuration, prints the reference run's output (standard
// output and standard error) and the table or JSON. Returns the runs'
// common exit status, or 70 when one disagrees (which it names), or when
// the statistics cannot be written. A run that ran out of memory is
// reported so, and is no disagreement: the runs that completed are
// compared.
int run_compare(const CompareOptions& options);

}  // namespace vm
