// The end-of-run outputs: --gc-stats, --gc-trace and --gc-report, written
// from what the collector's Recorder kept (gc/observe/recorder.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gc/collector.h"

namespace gc::observe {

// Chrome trace-event JSON (the "JSON Array/Object Format" that Perfetto and
// chrome://tracing load): pid 1; tid 1 is the mutator, tid 2 + w is GC
// worker w. Pauses are "X" slices on the mutator track, phases "X" slices
// on their worker's track, heap size, used and live bytes "C" counters,
// and each collection a flow ("s", "t", "f") from its pause through its
// phases.
std::string trace_json(Collector& heap);

// One self-contained HTML page (no network): the data as JSON inside the
// page and a script that draws SVG plots from it.
std::string report_html(Collector& heap);
// The data the page draws, as JSON.
std::string report_data_json(Collector& heap);
// One run of the --compare page: its collector, how it ended, whether it
// agreed with the reference, and its report_data_json (none if it ended
// before it could give one).
struct ComparedRun {
  std::string collector;
  int exit_status = 0;
  std::string disagreement;  // empty: it agrees
  std::optional<std::string> data;
};
// The --compare page: one program's runs under several collectors,
// overlaid in one page, with their lower-bound overheads (the JSON
// output's lower_bound object) and, from --compare --heaps, the sweep's
// time-space curves (the JSON output's heaps object, or null).
std::string compare_report_html(const std::string& program, const std::vector<ComparedRun>& runs,
                                const std::string& lower_bounds, const std::string& heap_sweep);

// A text heap map of the collector's spaces now (the REPL's :heap).
std::string text_heap_map(const Collector& heap, int width = 50);

// Writes text to path ("-" or "stderr": standard error). False, with a
// message on stderr, if the file cannot be written; the text then goes to
// a new file beside it (or in the temporary folder), which the message
// names, so that a long run's output is not lost.
bool write_output(const std::string& path, const std::string& text, const char* what);

}  // namespace gc::observe
