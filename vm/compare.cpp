#include "vm/compare.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "gc/exit_status.h"
#include "gc/observe/json.h"
#include "gc/observe/outputs.h"
#include "gc/observe/stats.h"
#include "vm/progress.h"

namespace vm {

namespace {

using gc::kExitSoftware;

// What the table shows of one run, as the child measured it.
struct Row {
  double run_time_ms = 0;
  double gc_share = 0;
  uint64_t young = 0;
  uint64_t full = 0;
  uint64_t increments = 0;  // pauses of incremental work, neither young nor full
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  uint64_t peak_heap = 0;
  uint64_t peak_live = 0;
  uint64_t bytes_copied = 0;
  int64_t objects_marked = -1;  // -1: the collector does not count them
  uint64_t simulated = 0;       // collections whose pause is modelled (the pauses are then simulated)
  std::string variant;          // gc::variant_line of the run's collector
  double host_pause_ms = 0;     // the host's time in collections, which wall time holds
  double mutator_ms() const { return std::max(0.0, run_time_ms - host_pause_ms); }
  // CPU time (Summary's): the mutator's, the collector's, other threads'.
  double mutator_cpu_ms = 0, collector_cpu_ms = 0, other_cpu_ms = 0;
};

struct Run {
  std::string collector;
  int status = 0;  // the exit status, or 128 + the signal that killed it
  int signal = 0;
  std::FILE* out = nullptr;
  std::FILE* err = nullptr;
  std::optional<Row> row;      // none if the child ended before it could summarize
  std::string stats_json;      // its --gc-stats=json document
  std::string report_json;     // its --gc-report data, when the comparison writes a report
  std::string disagreement;    // empty: agrees with the reference
  bool out_of_memory = false;  // it ended with the VM's out-of-memory error: no disagreement
  double multiple = 0;         // --heaps: the run's heap, as a multiple of the reference minimum
  uint64_t heap_bytes = 0;     // --heaps: the run's heap
};

std::FILE* temporary_file() {
  std::FILE* f = std::tmpfile();
  if (!f) {
    std::cerr << "vm: --compare: cannot create a temporary file: " << std::strerror(errno) << "\n";
    std::exit(kExitSoftware);
  }
  return f;
}

Row row_of(const gc::observe::Summary& s) {
  Row r;
  r.run_time_ms = s.run_time_ms;
  r.gc_share = s.gc_share;
  r.young = s.young;
  r.full = s.full;
  r.increments = s.increments;
  r.p50_ms = s.pause_p50_ms;
  r.p99_ms = s.pause_p99_ms;
  r.max_ms = s.pause_max_ms;
  r.peak_heap = s.peak_heap;
  r.peak_live = s.peak_live;
  r.bytes_copied = s.bytes_copied;
  r.simulated = s.simulated_collections;
  r.variant = gc::variant_line(s.variant);
  r.host_pause_ms = s.host_pause_total_ms;
  r.mutator_cpu_ms = s.mutator_cpu_ms;
  r.collector_cpu_ms = s.collector_cpu_ms();
  r.other_cpu_ms = s.other_threads_cpu_ms;
  for (const gc::observe::CounterTotal& c : s.counters)
    if (c.name == "objects marked") r.objects_marked = static_cast<int64_t>(c.total);
  return r;
}

// The child's report to the parent: the row's numbers on one line, its
// variant on the next, the lengths of the two JSON texts on the third,
// then the texts.
std::string encode(const Row& r, const std::string& json, const std::string& report) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%.17g %.17g %" PRIu64 " %" PRIu64 " %" PRIu64 " %.17g %.17g %.17g %" PRIu64 " %" PRIu64
                " %" PRIu64 " %" PRId64 " %" PRIu64 " %.17g %.17g %.17g %.17g\n",
                r.run_time_ms, r.gc_share, r.young, r.full, r.increments, r.p50_ms, r.p99_ms, r.max_ms,
                r.peak_heap, r.peak_live, r.bytes_copied, r.objects_marked, r.simulated, r.host_pause_ms,
                r.mutator_cpu_ms, r.collector_cpu_ms, r.other_cpu_ms);
  return line + r.variant + "\n" + std::to_string(json.size()) + " " + std::to_string(report.size()) + "\n" +
         json + report;
}

bool decode(const std::string& text, Row& r, std::string& json, std::string& report) {
  std::istringstream in(text);
  size_t json_size = 0, report_size = 0;
  in >> r.run_time_ms >> r.gc_share >> r.young >> r.full >> r.increments >> r.p50_ms >> r.p99_ms >>
      r.max_ms >> r.peak_heap >> r.peak_live >> r.bytes_copied >> r.objects_marked >> r.simulated >>
      r.host_pause_ms >> r.mutator_cpu_ms >> r.collector_cpu_ms >> r.other_cpu_ms;
  if (in.fail() || in.get() != '\n' || !std::getline(in, r.variant)) return false;
  in >> json_size >> report_size;
  if (in.fail() || in.get() != '\n') return false;
  size_t at = static_cast<size_t>(in.tellg());
  if (text.size() - at != json_size + report_size) return false;
  json = text.substr(at, json_size);
  report = text.substr(at + json_size);
  return true;
}

std::string read_all(std::FILE* f) {
  std::string text;
  std::rewind(f);
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  return text;
}

void copy_to(std::FILE* from, std::FILE* to) {
  std::rewind(from);
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, from)) > 0) std::fwrite(buffer, 1, n, to);
  std::fflush(to);
}

// The 1-based line where two outputs first differ, or none.
std::optional<uint64_t> first_different_line(std::FILE* a, std::FILE* b) {
  std::rewind(a);
  std::rewind(b);
  uint64_t line = 1;
  for (;;) {
    int x = std::fgetc(a), y = std::fgetc(b);
    if (x != y) return line;
    if (x == EOF) return std::nullopt;
    if (x == '\n') ++line;
  }
}

// In the child: the program under one collector, its statistics written to
// `report`. Never returns.
[[noreturn]] void run_child(const VMOptions& options, const CompareOptions& c, int input, std::FILE* out,
                            std::FILE* err, std::FILE* report) {
  std::signal(SIGPIPE, SIG_DFL);
  if (input >= 0) dup2(input, STDIN_FILENO);
  dup2(fileno(out), STDOUT_FILENO);
  dup2(fileno(err), STDERR_FILENO);
  int status = 0;
  try {
    VM machine(options);
    status = machine.run_source(c.program_name, c.source);
    std::cout.flush();
    gc::observe::Summary s = gc::observe::summarize(machine.heap());
    std::string data = c.report_file.empty() ? "" : gc::observe::report_data_json(machine.heap());
    std::string text = encode(row_of(s), gc::observe::stats_json(s), data);
    std::fwrite(text.data(), 1, text.size(), report);
  } catch (RuntimeError& e) {
    std::cerr << "error: " << e.message << "\n";
    status = kExitSoftware;
  } catch (const gc::CreationError& e) {
    std::cerr << "vm: " << e.what() << "\n";
    status = e.status();
  }
  std::cout.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}

// The program's standard input, the same for every run. The first run
// reads the VM's own standard input through a pipe, while the parent
// records what passes; the others read the recording. Nothing is read
// before a run asks for it, so a program that reads no input never waits
// on a standard input that does not end. On a terminal, each run reads the
// terminal itself.
class SharedInput {
 public:
  SharedInput() : live_(!isatty(STDIN_FILENO)) {
    if (live_) recording_ = temporary_file();
  }

  // The descriptor the next child reads as standard input (-1: inherit).
  int for_child() {
    if (!live_) return -1;
    if (!recorded_) {
      if (pipe(pipe_) != 0) {
        std::cerr << "vm: --compare: cannot create a pipe: " << std::strerror(errno) << "\n";
        std::exit(kExitSoftware);
      }
      fcntl(pipe_[1], F_SETFL, O_NONBLOCK);
      return pipe_[0];
    }
    lseek(fileno(recording_), 0, SEEK_SET);
    return fileno(recording_);
  }

  // After fork, in the child: its copy of the pipe's other end would keep
  // its input from ever ending.
  void in_child() {
    if (pipe_[1] >= 0) close(pipe_[1]);
  }

  // After fork, in the parent: waits for the child, passing input on
  // while it runs if it is the first. Returns waitpid's status.
  int wait(pid_t child) {
    int status = 0;
    if (!live_ || recorded_) {
      while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    }
    close(pipe_[0]);
    pipe_[0] = -1;
    bool input_open = true;
    for (;;) {
      pid_t done = waitpid(child, &status, WNOHANG);
      if (done == child) break;
      pollfd fds[2];
      nfds_t n = 0;
      // Read on only while little is waiting for the child: an endless
      // standard input costs no memory.
      if (input_open && pending_.size() < kPendingLimit) fds[n++] = {STDIN_FILENO, POLLIN, 0};
      if (!pending_.empty() && pipe_[1] >= 0) fds[n++] = {pipe_[1], POLLOUT, 0};
      poll(fds, n, kPollMs);
      if (input_open && (n > 0 && fds[0].fd == STDIN_FILENO && fds[0].revents)) input_open = pass_on();
      flush_pending();
      if (!input_open && pending_.empty() && pipe_[1] >= 0) {
        close(pipe_[1]);
        pipe_[1] = -1;
      }
    }
    // Forgotten as well as closed: a later child's in_child() would close
    // whatever took the number meanwhile (its own output files).
    if (pipe_[1] >= 0) close(pipe_[1]);
    pipe_[1] = -1;
    std::fflush(recording_);
    recorded_ = true;
    return status;
  }

 private:
  static constexpr size_t kPendingLimit = 1 << 16;
  static constexpr int kPollMs = 20;

  // One read of the VM's standard input, recorded and queued for the
  // child; false at its end.
  bool pass_on() {
    char buffer[16384];
    ssize_t n = read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) return false;
    std::fwrite(buffer, 1, static_cast<size_t>(n), recording_);
    pending_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  void flush_pending() {
    if (pending_.empty() || pipe_[1] < 0) return;
    ssize_t n = write(pipe_[1], pending_.data(), pending_.size());
    if (n > 0) {
      pending_.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EPIPE) {
      // The child closed its input: what it did not take is still recorded.
      pending_.clear();
      close(pipe_[1]);
      pipe_[1] = -1;
    }
  }

  bool live_;
  bool recorded_ = false;
  std::FILE* recording_ = nullptr;
  int pipe_[2] = {-1, -1};
  std::string pending_;
};

// The first bytes of a run's standard error, enough to tell out of memory
// from another runtime error (gc::ended_out_of_memory).
std::string error_start(std::FILE* err) {
  std::string start(gc::kOutOfMemoryErrorStart.size(), '\0');
  std::rewind(err);
  start.resize(std::fread(start.data(), 1, start.size(), err));
  return start;
}

Run run_one(const VMOptions& options, const CompareOptions& c, SharedInput& input) {
  Run run;
  run.collector = options.collector;
  run.out = temporary_file();
  run.err = temporary_file();
  std::FILE* report = temporary_file();
  int child_input = input.for_child();
  std::cout.flush();
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::cerr << "vm: --compare: cannot start a run: " << std::strerror(errno) << "\n";
    std::exit(kExitSoftware);
  }
  if (pid == 0) {
    input.in_child();
    run_child(options, c, child_input, run.out, run.err, report);
  }
  int wstatus = input.wait(pid);
  if (WIFSIGNALED(wstatus)) {
    run.signal = WTERMSIG(wstatus);
    run.status = 128 + run.signal;
  } else {
    run.status = WEXITSTATUS(wstatus);
  }
  Row row;
  if (decode(read_all(report), row, run.stats_json, run.report_json)) run.row = row;
  std::fclose(report);
  run.out_of_memory = gc::ended_out_of_memory(run.status, error_start(run.err));
  return run;
}

std::string exit_text(const Run& r) {
  if (r.signal) return "was killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) + ")";
  return "exited " + std::to_string(r.status);
}

// The run the others are checked against: the first that did not run out
// of memory (the first of all when every one did).
size_t reference_index(const std::vector<Run>& runs) {
  for (size_t k = 0; k < runs.size(); ++k)
    if (!runs[k].out_of_memory) return k;
  return 0;
}

void check_agreement(std::vector<Run>& runs) {
  const Run& ref = runs[reference_index(runs)];
  for (Run& r : runs) {
    if (&r == &ref || r.out_of_memory) continue;
    if (r.status != ref.status || r.signal != ref.signal)
      r.disagreement = "it " + exit_text(r) + ", " + ref.collector + " " + exit_text(ref);
    else if (auto line = first_different_line(r.out, ref.out))
      r.disagreement = "its output differs from " + ref.collector + "'s at line " + std::to_string(*line);
  }
}

std::string mebibytes(uint64_t bytes) {
  char text[32];
  double mb = static_cast<double>(bytes) / (1024.0 * 1024.0);
  if (mb >= 10240)
    std::snprintf(text, sizeof text, "%.1f GiB", mb / 1024);
  else
    std::snprintf(text, sizeof text, "%.1f MiB", mb);
  return text;
}

// Lower-bound overhead (Cai, Blackburn, Bond and Maas, ISPASS 2022): the
// least mutator cost of any run that agreed with the reference bounds what
// the program costs with no collector at all, and each run's cost over it
// is its collector's, split into the parts the counters attribute and the
// rest (barriers, the allocation slow path, locality: mutator cost above
// the bound). It is taken in wall time (the mutator's: time outside
// collections) and in CPU time (the mutator's: the program's thread
// outside collections, docs/observability.md, "CPU time").
struct CostPart {
  const char* name;  // its JSON key is NAME_over_bound
  double (*of)(const Row&);
};

struct CostMeasure {
  const char* name;   // its JSON key
  const char* title;  // the table's
  const char* total;  // the total's name: its JSON key is TOTAL_over_bound
  double (*mutator)(const Row&);
  std::vector<CostPart> parts;  // with the mutator's cost, they add up to the total
  const char* parts_legend;
};

double total_cost(const CostMeasure& m, const Row& w) {
  double total = m.mutator(w);
  for (const CostPart& p : m.parts) total += p.of(w);
  return total;
}

const std::vector<CostMeasure>& cost_measures() {
  static const std::vector<CostMeasure> measures = {
      {"wall",
       "wall time",
       "wall",
       [](const Row& w) { return w.mutator_ms(); },
       {{"pauses", [](const Row& w) { return w.host_pause_ms; }}},
       "pauses: the host's time in collections (simulated ones too: wall time holds the simulation)"},
      {"cpu",
       "CPU time",
       "cpu",
       [](const Row& w) { return w.mutator_cpu_ms; },
       {{"collector", [](const Row& w) { return w.collector_cpu_ms; }},
        {"other_threads", [](const Row& w) { return w.other_cpu_ms; }}},
       "collector: the program's thread in collections and the GC threads; other threads: the process's "
       "others (a device runtime's)"},
  };
  return measures;
}

// A run's name in the tables: its collector, and its heap in a sweep.
std::string run_label(const Run& r) {
  if (!r.multiple) return r.collector;
  char at[32];
  std::snprintf(at, sizeof at, " at %gx", r.multiple);
  return r.collector + at;
}

struct LowerBound {
  double mutator_ms = 0;
  std::string from;  // the collector whose run set the bound
};

// The runs a bound covers: those that agree and measured a mutator cost.
bool bounded(const Run& r, const CostMeasure& m) {
  return r.row && r.disagreement.empty() && !r.out_of_memory && m.mutator(*r.row) > 0;
}

std::optional<LowerBound> lower_bound(const std::vector<Run>& runs, const CostMeasure& m) {
  std::optional<LowerBound> bound;
  for (const Run& r : runs)
    if (bounded(r, m) && (!bound || m.mutator(*r.row) < bound->mutator_ms))
      bound = LowerBound{m.mutator(*r.row), run_label(r)};
  return bound;
}

std::string lower_bound_table(const std::vector<Run>& runs, const CostMeasure& m) {
  std::optional<LowerBound> bound = lower_bound(runs, m);
  if (!bound) return "";
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "lower-bound overhead (Cai et al. 2022), %s: the least mutator %s of the runs that agree "
                "(out of memory left out), "
                "%.1f ms (%s), bounds the program's cost without a collector\n",
                m.title, m.title, bound->mutator_ms, bound->from.c_str());
  out += line;
  std::snprintf(line, sizeof line, "  %-18s %11s", "collector", (std::string(m.total) + "/bound").c_str());
  out += line;
  for (const CostPart& p : m.parts) {
    std::string label = p.name;
    std::replace(label.begin(), label.end(), '_', ' ');
    std::snprintf(line, sizeof line, " %13s", label.c_str());
    out += line;
  }
  out += "      the rest\n";
  for (const Run& r : runs) {
    if (!bounded(r, m)) continue;
    const Row& w = *r.row;
    std::snprintf(line, sizeof line, "  %-18s %10.2fx", run_label(r).c_str(),
                  total_cost(m, w) / bound->mutator_ms);
    out += line;
    for (const CostPart& p : m.parts) {
      std::snprintf(line, sizeof line, " %+12.0f%%", 100 * p.of(w) / bound->mutator_ms);
      out += line;
    }
    std::snprintf(line, sizeof line, " %+12.0f%%\n",
                  100 * (m.mutator(w) - bound->mutator_ms) / bound->mutator_ms);
    out += line;
  }
  out += std::string("  ") + m.parts_legend +
         "; the rest: mutator cost above the bound (barriers, the allocation slow path, locality)\n";
  for (const Run& r : runs) {
    const gc::CollectorInfo* c = gc::find_collector(r.collector);
    if (!bounded(r, m) || !c || c->collects || m.mutator(*r.row) <= bound->mutator_ms) continue;
    std::snprintf(line, sizeof line,
                  "  %s never collects: its rest (%+.0f%%) is locality, its allocation never reusing memory "
                  "the caches hold, and noise; why the bound is the least of all runs, not %s's\n",
                  run_label(r).c_str(), 100 * (m.mutator(*r.row) - bound->mutator_ms) / bound->mutator_ms,
                  r.collector.c_str());
    out += line;
  }
  return out;
}

void lower_bound_json(gc::observe::JsonWriter& j, const std::vector<Run>& runs, const CostMeasure& m) {
  j.key(m.name);
  std::optional<LowerBound> bound = lower_bound(runs, m);
  if (!bound) {
    j.null();
    return;
  }
  j.begin_object().field("mutator_ms", bound->mutator_ms, 3).field("from", bound->from);
  j.key("runs").begin_array();
  for (const Run& r : runs) {
    if (!bounded(r, m)) continue;
    const Row& w = *r.row;
    j.begin_object().field("collector", r.collector);
    if (r.multiple) j.field("heap_multiple", r.multiple, 4);
    j.field(std::string(m.total) + "_over_bound", total_cost(m, w) / bound->mutator_ms, 6);
    for (const CostPart& p : m.parts)
      j.field(std::string(p.name) + "_over_bound", p.of(w) / bound->mutator_ms, 6);
    j.field("rest_over_bound", (m.mutator(w) - bound->mutator_ms) / bound->mutator_ms, 6);
    j.end_object();
  }
  j.end_array().end_object();
}

// Both bounds, one object keyed by measure: the JSON's and the page's.
std::string lower_bounds_json(const std::vector<Run>& runs) {
  std::string out;
  gc::observe::JsonWriter j(out);
  j.begin_object();
  for (const CostMeasure& m : cost_measures()) lower_bound_json(j, runs, m);
  j.end_object();
  return out;
}

std::string table(const std::vector<Run>& runs) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %9s %8s %6s %6s %6s %8s %8s %8s %-9s %10s %10s %10s %10s  %s\n",
                "collector", "wall ms", "GC share", "young", "full", "incr", "p50 ms", "p99 ms", "max ms",
                "pauses", "peak heap", "peak live", "copied", "marked", "agrees");
  out += line;
  for (const Run& r : runs) {
    std::string agrees = r.out_of_memory                      ? "out of memory"
                         : &r == &runs[reference_index(runs)] ? "reference"
                         : r.disagreement.empty()             ? "yes"
                                                              : "NO";
    if (!r.row) {
      std::snprintf(line, sizeof line, "%-12s %s, no statistics  %s\n", r.collector.c_str(),
                    exit_text(r).c_str(), agrees.c_str());
      out += line;
      continue;
    }
    const Row& w = *r.row;
    std::string marked = w.objects_marked < 0 ? "-" : std::to_string(w.objects_marked);
    // Without a collection there is no pause to take percentiles of and no
    // live data measured after one.
    const bool collected = w.young + w.full + w.increments > 0;
    auto pause = [collected](double ms) {
      char text[32] = "-";
      if (collected) std::snprintf(text, sizeof text, "%.2f", ms);
      return std::string(text);
    };
    std::snprintf(line, sizeof line,
                  "%-12s %9.1f %7.1f%% %6" PRIu64 " %6" PRIu64 " %6" PRIu64
                  " %8s %8s %8s %-9s %10s %10s %10s %10s  %s\n",
                  r.collector.c_str(), w.run_time_ms, 100 * w.gc_share, w.young, w.full, w.increments,
                  pause(w.p50_ms).c_str(), pause(w.p99_ms).c_str(), pause(w.max_ms).c_str(),
                  w.simulated ? "simulated" : "measured", mebibytes(w.peak_heap).c_str(),
                  collected ? mebibytes(w.peak_live).c_str() : "-",
                  w.bytes_copied ? mebibytes(w.bytes_copied).c_str() : "-", marked.c_str(), agrees.c_str());
    out += line;
  }
  out +=
      "pauses: measured on this machine, or simulated (the modelled hardware's time; wall ms and GC share "
      "stay the host's); incr: pauses of incremental work, neither young nor full collections; copied: "
      "bytes; "
      "marked: objects, where the collector counts them\n"
      "variants:\n";
  for (const Run& r : runs) {
    std::snprintf(line, sizeof line, "  %-12s ", r.collector.c_str());
    out += line + (r.row ? r.row->variant : std::string("unknown: the run wrote no statistics")) + "\n";
  }
  for (const CostMeasure& m : cost_measures()) out += lower_bound_table(runs, m);
  return out;
}

// --heaps: the reference minimum, then per size each collector's total
// and GC time (the host's time in collections), or out of memory: the
// time-space curves, for the JSON and the page.
std::string heap_sweep_json(const CompareOptions& c, const std::vector<Run>& runs) {
  std::string out;
  gc::observe::JsonWriter j(out);
  if (c.heaps.empty()) {
    j.null();
    return out;
  }
  const ReferenceMinimum& r = *c.reference;
  j.begin_object().key("reference").begin_object().field("collector", r.collector);
  j.field("min_heap_bytes", r.min_heap).key("fails_at_bytes");
  if (r.fails_at)
    j.value(r.fails_at);
  else
    j.null();
  j.field("resolution", r.resolution.text()).field("runs", static_cast<uint64_t>(r.runs)).end_object();
  j.key("sizes").begin_array();
  for (const CompareOptions::HeapPoint& h : c.heaps) {
    j.begin_object().field("multiple", h.multiple, 4).field("heap_bytes", h.bytes).key("runs").begin_array();
    for (const Run& run : runs) {
      if (run.heap_bytes != h.bytes || run.multiple != h.multiple) continue;
      j.begin_object().field("collector", run.collector).field("exit_status", run.status);
      j.field("out_of_memory", run.out_of_memory).field("agrees", run.disagreement.empty());
      j.key("total_ms");
      if (run.row && !run.out_of_memory)
        j.value(run.row->run_time_ms, 3);
      else
        j.null();
      j.key("gc_ms");
      if (run.row && !run.out_of_memory)
        j.value(run.row->host_pause_ms, 3);
      else
        j.null();
      j.end_object();
    }
    j.end_array().end_object();
  }
  j.end_array().end_object();
  return out;
}

// --heaps' table: a row per size, per collector its total and GC time.
std::string heap_sweep_table(const CompareOptions& c, const std::vector<Run>& runs) {
  const ReferenceMinimum& r = *c.reference;
  std::string out = "heap sizes: multiples of " + r.collector + "'s minimum heap, " +
                    heap_size_text(r.min_heap) + " (found in " + std::to_string(r.runs) +
                    " runs, resolution " + r.resolution.text() + ")\n";
  char cell[96];
  std::snprintf(cell, sizeof cell, "%-6s %11s", "heap", "");
  out += cell;
  for (const VMOptions& o : c.runs) {
    std::snprintf(cell, sizeof cell, "  %-21s", o.collector.c_str());
    out += cell;
  }
  out += "\n";
  for (const CompareOptions::HeapPoint& h : c.heaps) {
    std::snprintf(cell, sizeof cell, "%-6s %11s", multiple_text(h.multiple).c_str(),
                  heap_size_text(h.bytes).c_str());
    out += cell;
    for (const Run& run : runs) {
      if (run.heap_bytes != h.bytes || run.multiple != h.multiple) continue;
      if (run.out_of_memory)
        std::snprintf(cell, sizeof cell, "  %-21s", "out of memory");
      else if (!run.row)
        std::snprintf(cell, sizeof cell, "  %-21s", exit_text(run).c_str());
      else
        std::snprintf(cell, sizeof cell, "  %9.1f / %7.1f%s", run.row->run_time_ms, run.row->host_pause_ms,
                      run.disagreement.empty() ? "  " : " !");
      out += cell;
    }
    out += "\n";
  }
  out +=
      "each cell: total ms / GC ms (wall time, and the host's time in collections), or out of memory; "
      "! marks a run that disagrees\n";
  for (const CostMeasure& m : cost_measures()) out += lower_bound_table(runs, m);
  return out;
}

std::string json(const CompareOptions& c, const std::vector<Run>& runs, bool agree) {
  std::string out;
  gc::observe::JsonWriter j(out);
  j.begin_object().field("schema", "gclab-gc-compare/1").field("program", c.program_name);
  j.field("agree", agree).field("reference", runs[reference_index(runs)].collector);
  j.key("runs").begin_array();
  for (const Run& r : runs) {
    j.begin_object().field("collector", r.collector).field("exit_status", r.status);
    if (r.signal) j.field("signal", r.signal);
    if (r.multiple) j.field("heap_multiple", r.multiple, 4).field("heap_bytes", r.heap_bytes);
    j.field("agrees", r.disagreement.empty()).field("out_of_memory", r.out_of_memory);
    j.key("variant");
    if (r.row)
      j.value(r.row->variant);
    else
      j.null();
    if (!r.disagreement.empty()) j.field("disagreement", r.disagreement);
    j.key("stats");
    if (r.row)
      j.raw(r.stats_json);
    else
      j.null();
    j.end_object();
  }
  j.end_array();
  j.key("lower_bound").raw(lower_bounds_json(runs));
  if (!c.heaps.empty()) j.key("heaps").raw(heap_sweep_json(c, runs));
  j.end_object();
  out += "\n";
  return out;
}

// Why `collector` cannot run here (empty: it can), asked in a child
// process: a device runtime such as OpenCL's, once started in this
// process, would not survive the forks of the runs.
std::string unavailable_in_child(const gc::CollectorInfo& collector) {
  if (!collector.unavailable) return "";
  std::FILE* answer = temporary_file();
  std::cout.flush();
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return std::string("cannot start a process: ") + std::strerror(errno);
  if (pid == 0) {
    std::string why = collector.unavailable();
    std::fwrite(why.data(), 1, why.size(), answer);
    std::fflush(answer);
    std::_Exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string why = read_all(answer);
  std::fclose(answer);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "its device runtime failed when asked";
  return why;
}

}  // namespace

std::vector<const gc::CollectorInfo*> compared_collectors(const std::vector<std::string>& names,
                                                          bool paper_config, bool stressed,
                                                          std::string* error) {
  std::vector<const gc::CollectorInfo*> chosen;
  if (names.empty()) {
    for (const gc::CollectorInfo& c : gc::registered_collectors()) {
      if (paper_config && !c.paper_configuration) {
        std::cerr << "vm: --compare: leaving out " << c.name << " (no paper configuration)\n";
        continue;
      }
      if (stressed && !c.collects) {
        std::cerr << "vm: --compare: leaving out " << c.name
                  << " (never collects: --gc-stress has nothing to force)\n";
        continue;
      }
      std::string why = unavailable_in_child(c);
      if (why.empty())
        chosen.push_back(&c);
      else
        std::cerr << "vm: --compare: leaving out " << c.name << " (cannot run: " << why << ")\n";
    }
    return chosen;
  }
  for (const std::string& name : names) {
    const gc::CollectorInfo* c = gc::find_collector(name);
    std::string why = unavailable_in_child(*c);
    if (!why.empty()) {
      *error = "--compare: " + name + " cannot run: " + why;
      return {};
    }
    chosen.push_back(c);
  }
  return chosen;
}

int run_compare(const CompareOptions& c) {
  // A run whose input the child closed must not stop the comparison.
  std::signal(SIGPIPE, SIG_IGN);
  SharedInput input;
  std::vector<Run> runs;
  {
    Progress progress("--compare", c.progress);
    if (c.heaps.empty()) {
      for (const VMOptions& options : c.runs) {
        progress.run(runs.size() + 1, c.runs.size(), options.collector);
        runs.push_back(run_one(options, c, input));
      }
    } else {
      size_t total = c.heaps.size() * c.runs.size();
      for (const CompareOptions::HeapPoint& h : c.heaps)
        for (VMOptions options : c.runs) {
          progress.run(
              runs.size() + 1, total,
              options.collector + " at " + multiple_text(h.multiple) + " (" + heap_size_text(h.bytes) + ")");
          options.heap.max_heap_bytes = h.bytes;
          runs.push_back(run_one(options, c, input));
          runs.back().multiple = h.multiple;
          runs.back().heap_bytes = h.bytes;
        }
    }
  }
  check_agreement(runs);

  const Run& ref = runs[reference_index(runs)];
  copy_to(ref.out, stdout);
  copy_to(ref.err, stderr);
  bool agree = true;
  for (const Run& r : runs) agree &= r.disagreement.empty();
  std::string text = c.json            ? json(c, runs, agree)
                     : c.heaps.empty() ? table(runs)
                                       : heap_sweep_table(c, runs);
  bool written = gc::observe::write_output(c.stats_file.empty() ? "-" : c.stats_file, text, "GC comparison");
  if (!c.report_file.empty()) {
    // In a sweep, the panels of single runs show the largest heap's.
    std::vector<gc::observe::ComparedRun> data;
    for (const Run& r : runs)
      if (c.heaps.empty() || r.multiple == c.heaps.back().multiple)
        data.push_back({r.collector, r.status, r.disagreement,
                        r.row ? std::optional<std::string>(r.report_json) : std::nullopt});
    written &= gc::observe::write_output(
        c.report_file,
        gc::observe::compare_report_html(c.program_name, data, lower_bounds_json(runs),
                                         heap_sweep_json(c, runs)),
        "GC comparison report");
  }
  for (const Run& r : runs) {
    if (!r.disagreement.empty())
      std::cerr << "vm: --compare: " << run_label(r) << " disagrees with " << ref.collector << ": "
                << r.disagreement << "\n";
    std::fclose(r.out);
    std::fclose(r.err);
  }
  if (!agree || !written) return kExitSoftware;
  return ref.status;
}

}  // namespace vm
