#include "vm/min_heap.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "gc/exit_status.h"
#include "gc/observe/json.h"
#include "gc/options.h"

namespace vm {

namespace {

std::string percent_text(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", 100 * fraction);
  return text;
}

// The statuses the VM itself ends with (gc/exit_status.h), which no
// completing program gives.
bool vm_failure_status(int status) { return status >= gc::kExitUsage && status <= gc::kExitVerifyFailure; }

}  // namespace

uint64_t HeapResolution::at(uint64_t heap) const {
  if (bytes) return bytes;
  return std::max<uint64_t>(1, static_cast<uint64_t>(fraction * static_cast<double>(heap)));
}

std::string HeapResolution::text() const { return bytes ? heap_size_text(bytes) : percent_text(fraction); }

std::optional<HeapResolution> parse_resolution(const std::string& text) {
  if (!text.empty() && text.back() == '%') {
    std::string number = text.substr(0, text.size() - 1);
    // Digits with an optional fraction: no sign, exponent, inf or nan.
    if (number.empty() || number.find_first_not_of("0123456789.") != std::string::npos ||
        number.find('.') != number.rfind('.') || number.front() == '.' || number.back() == '.')
      return std::nullopt;
    double percent = std::strtod(number.c_str(), nullptr);
    if (!(percent >= 0.1 && percent <= 50)) return std::nullopt;
    return HeapResolution{.fraction = percent / 100};
  }
  std::optional<uint64_t> bytes = gc::parse_size(text);
  if (!bytes || *bytes < 1024 || *bytes > (1ull << 40)) return std::nullopt;
  return HeapResolution{.bytes = *bytes};
}

std::string heap_size_text(uint64_t bytes) {
  char text[32];
  double kib = static_cast<double>(bytes) / 1024;
  if (kib < 1024)
    std::snprintf(text, sizeof text, "%.1f KiB", kib);
  else if (kib < 1024.0 * 1024)
    std::snprintf(text, sizeof text, "%.2f MiB", kib / 1024);
  else
    std::snprintf(text, sizeof text, "%.2f GiB", kib / (1024 * 1024));
  return text;
}

std::string multiple_text(double multiple) {
  char text[32];
  std::snprintf(text, sizeof text, "%gx", multiple);
  return text;
}

std::string heap_limit_text(const ReferenceMinimum& r, double multiple, uint64_t bytes) {
  char m[32];
  std::snprintf(m, sizeof m, "%g", multiple);
  return "heap limit " + heap_size_text(bytes) + " (" + std::to_string(bytes) + " bytes) = " + m + " x " +
         r.collector + "'s minimum " + heap_size_text(r.min_heap) + " (found in " + std::to_string(r.runs) +
         " runs, resolution " + r.resolution.text() + ")";
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kCompleted:
      return "completed";
    case Outcome::kOutOfMemory:
      return "out of memory";
    case Outcome::kTimedOut:
      return "timed out";
    case Outcome::kFailed:
      return "failed";
  }
  return "failed";
}

namespace {

// Bisection steps left at most from (lo, hi] until the gap is within the
// resolution, taking the resolution at lo (the smallest answer possible).
size_t bisection_steps(uint64_t lo, uint64_t hi, const HeapResolution& r) {
  size_t steps = 0;
  for (uint64_t gap = hi - lo; gap > r.at(lo + 1); gap -= gap / 2) ++steps;
  return steps;
}

std::string at_most(size_t n) { return "at most " + std::to_string(n) + " more"; }

}  // namespace

MinHeap find_min_heap(const SearchBounds& b, const RunAt& run_at) {
  MinHeap m;
  auto probe = [&](uint64_t heap, const std::string& remaining) -> const Probe& {
    m.runs.push_back({heap, run_at(heap, m.runs.size() + 1, remaining)});
    return m.runs.back().probe;
  };
  auto fail = [&](uint64_t heap, const Probe& p) {
    m.answer = MinHeap::Answer::kFailed;
    m.failure = "at --heap=" + std::to_string(heap) + " (" + heap_size_text(heap) + ") " + p.detail +
                ": not a question of heap size";
    return m;
  };
  // Doubling: up to the first size that completes.
  uint64_t lo = 0, hi = b.floor;
  for (;;) {
    size_t doublings = 0;
    for (uint64_t s = hi; s<b.ceiling; s = s> b.ceiling / 2 ? b.ceiling : 2 * s) ++doublings;
    const Probe& p = probe(hi, "looking for a size that completes, " + at_most(doublings) + " doublings");
    if (p.outcome == Outcome::kCompleted) break;
    if (p.outcome == Outcome::kFailed) return fail(hi, p);
    if (p.outcome == Outcome::kTimedOut) {
      m.answer = MinHeap::Answer::kFailed;
      m.failure = "at --heap=" + std::to_string(hi) + " (" + heap_size_text(hi) +
                  ") the run did not end within the time limit, before any run completed: a program that "
                  "does not end, or one too long for the limit (--min-heap-time-limit)";
      return m;
    }
    if (hi >= b.ceiling) {
      m.answer = MinHeap::Answer::kNeedsMore;
      m.fails_at = hi;
      return m;
    }
    lo = hi;
    hi = hi > b.ceiling / 2 ? b.ceiling : 2 * hi;
  }
  m.status = m.runs.back().probe.status;
  // Bisection: the answer lies in (lo, hi]; lo = 0 when the floor completed.
  while (lo > 0 && hi - lo > b.resolution.at(hi)) {
    uint64_t mid = lo + (hi - lo) / 2;
    const Probe& p = probe(mid, "bisecting, " + at_most(bisection_steps(lo, hi, b.resolution)));
    if (p.outcome == Outcome::kFailed) return fail(mid, p);
    if (p.outcome == Outcome::kCompleted) {
      if (p.status != m.status) {
        Probe differs = p;
        differs.detail = "the program exited " + std::to_string(p.status) + ", and " +
                         std::to_string(m.status) + " at a larger heap";
        return fail(mid, differs);
      }
      hi = mid;
    } else {
      lo = mid;
    }
  }
  m.answer = MinHeap::Answer::kFound;
  m.min_heap = hi;
  m.fails_at = lo;
  return m;
}

std::vector<std::string> child_options(const VMOptions& o) {
  const gc::HeapOptions& h = o.heap;
  std::vector<std::string> args = {"--gc=" + o.collector, "--gc-threads=" + std::to_string(h.gc_threads)};
  if (h.gc_deque_tasks) args.push_back("--gc-deque=" + std::to_string(h.gc_deque_tasks));
  if (h.stress_interval) args.push_back("--gc-stress=" + std::to_string(h.stress_interval));
  if (h.stress_full) args.push_back("--gc-stress-full");
  if (!h.gc_overhead_limit) args.push_back("--gc-overhead-limit=off");
  if (h.verify) args.push_back("--gc-verify");
  if (o.step_limit) args.push_back("--step-limit=" + std::to_string(o.step_limit));
  for (const auto& [name, value] : h.collector_options)
    args.push_back("--" + name + (value.empty() ? "" : "=" + value));
  return args;
}

namespace {

// The first line of what a child wrote on standard error, at most a line's
// worth: enough to tell out of memory from another error.
std::string first_line(int fd) {
  char buffer[512];
  ssize_t n = pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return "";
  std::string text(buffer, static_cast<size_t>(n));
  return text.substr(0, text.find('\n'));
}

int temporary_fd() {
  std::FILE* f = std::tmpfile();
  if (!f) return -1;
  int fd = dup(fileno(f));  // tmpfile's file has no name: the copy keeps it until closed
  std::fclose(f);
  return fd;
}

}  // namespace

Probe run_child_at(const ChildProgram& program, const VMOptions& options, uint64_t heap) {
  Probe probe;
  std::vector<std::string> args = {program.executable};
  for (std::string& a : child_options(options)) args.push_back(std::move(a));
  args.push_back("--heap=" + std::to_string(heap));
  if (program.script) {
    args.push_back(*program.script);
  } else if (program.code) {
    args.push_back("-e");
    args.push_back(*program.code);
  } else {
    args.push_back("-");
  }
  for (const std::string& a : program.args) args.push_back(a);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int err = temporary_fd();
  int in = program.script || program.code ? open("/dev/null", O_RDONLY) : temporary_fd();
  if (err < 0 || in < 0) {
    probe.detail = std::string("could not start a run: ") + std::strerror(errno);
    return probe;
  }
  if (!program.script && !program.code) {
    if (pwrite(in, program.stdin_source.data(), program.stdin_source.size(), 0) !=
        static_cast<ssize_t>(program.stdin_source.size())) {
      probe.detail = std::string("could not pass the program to a run: ") + std::strerror(errno);
      close(err);
      close(in);
      return probe;
    }
    lseek(in, 0, SEEK_SET);
  }
  std::fflush(nullptr);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int out = open("/dev/null", O_WRONLY);
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execv(argv[0], argv.data());
    std::_Exit(127);
  }
  close(in);
  if (pid < 0) {
    close(err);
    probe.detail = std::string("could not start a run: ") + std::strerror(errno);
    return probe;
  }
  auto deadline = start + std::chrono::duration<double>(program.time_limit_s);
  int wstatus = 0;
  bool killed = false;
  auto nap = std::chrono::microseconds(500);
  // The child ends by itself, or at the deadline by SIGKILL, which it
  // cannot catch or ignore: either way waitpid reports it.
  for (;;) {
    pid_t done = waitpid(pid, &wstatus, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (!killed && std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(20000));
  }
  probe.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::string line = first_line(err);
  close(err);
  if (killed) {
    probe.outcome = Outcome::kTimedOut;
    probe.status = 128 + SIGKILL;
    probe.detail = "the run was stopped at the time limit";
    return probe;
  }
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    probe.status = 128 + sig;
    probe.detail = "the run was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    return probe;
  }
  probe.status = WEXITSTATUS(wstatus);
  if (gc::ended_out_of_memory(probe.status, line)) {
    probe.outcome = Outcome::kOutOfMemory;
  } else if (probe.status == 127 && line.empty()) {
    probe.detail = "the VM could not be started again (" + program.executable + ")";
  } else if (vm_failure_status(probe.status)) {
    probe.detail = "the run exited " + std::to_string(probe.status) + (line.empty() ? "" : ": " + line);
  } else {
    probe.outcome = Outcome::kCompleted;
  }
  return probe;
}

std::string no_minimum_reason(const MinHeap& m, const std::string& collector, const SearchBounds& b) {
  switch (m.answer) {
    case MinHeap::Answer::kFound:
      return "";
    case MinHeap::Answer::kNeedsMore:
      return "the program runs out of memory under " + collector +
             " even at --heap=" + std::to_string(b.ceiling) + " (" + heap_size_text(b.ceiling) +
             ", this machine's memory): it needs more than the machine has";
    case MinHeap::Answer::kFailed:
      return "under " + collector + ", " + m.failure;
  }
  return "";
}

std::string min_heap_text(const MinHeap& m, const std::string& collector, const SearchBounds& b) {
  std::string out;
  if (m.answer == MinHeap::Answer::kFound) {
    out += "minimum heap under " + collector + ": " + heap_size_text(m.min_heap) +
           " (--heap=" + std::to_string(m.min_heap) + ")";
    if (m.fails_at)
      out += "; it completes at " + std::to_string(m.min_heap) + " bytes and not at " +
             std::to_string(m.fails_at) + " bytes\n";
    else
      out += ", the smallest --heap the VM takes: it completes there\n";
    out += "resolution: " + b.resolution.text() + " (" + std::to_string(b.resolution.at(m.min_heap)) +
           " bytes at this minimum); reached: " + std::to_string(m.min_heap - m.fails_at) + " bytes\n";
  } else {
    out += "no minimum heap: " + no_minimum_reason(m, collector, b) + "\n";
  }
  size_t oom = 0, timed_out = 0;
  double total_ms = 0;
  for (const ProbeRecord& r : m.runs) {
    oom += r.probe.outcome == Outcome::kOutOfMemory;
    timed_out += r.probe.outcome == Outcome::kTimedOut;
    total_ms += r.probe.wall_ms;
  }
  char line[160];
  std::snprintf(line, sizeof line, "runs: %zu (%zu out of memory, %zu timed out), %.1f s in all\n",
                m.runs.size(), oom, timed_out, total_ms / 1000);
  out += line;
  return out;
}

std::string min_heap_json(const MinHeap& m, const std::string& program, const std::string& collector,
                          const SearchBounds& b) {
  std::string out;
  gc::observe::JsonWriter j(out);
  const char* answer = m.answer == MinHeap::Answer::kFound       ? "found"
                       : m.answer == MinHeap::Answer::kNeedsMore ? "needs_more"
                                                                 : "failed";
  j.begin_object().field("schema", "gclab-gc-min-heap/1").field("program", program);
  j.field("collector", collector).field("answer", answer);
  j.key("min_heap_bytes");
  if (m.answer == MinHeap::Answer::kFound)
    j.value(m.min_heap);
  else
    j.null();
  j.key("fails_at_bytes");
  if (m.fails_at)
    j.value(m.fails_at);
  else
    j.null();
  j.key("resolution").begin_object();
  if (b.resolution.bytes)
    j.field("bytes", b.resolution.bytes);
  else
    j.field("fraction", b.resolution.fraction, 6);
  j.end_object();
  j.field("floor_bytes", b.floor).field("ceiling_bytes", b.ceiling);
  if (m.answer == MinHeap::Answer::kFailed) j.field("failure", m.failure);
  j.key("runs").begin_array();
  for (const ProbeRecord& r : m.runs) {
    j.begin_object().field("heap_bytes", r.heap).field("outcome", outcome_name(r.probe.outcome));
    j.field("exit_status", r.probe.status).field("wall_ms", r.probe.wall_ms, 3).end_object();
  }
  j.end_array().end_object();
  out += "\n";
  return out;
}

}  // namespace vm
