// --gc-log: one line per collection in the shape of the JDK's unified GC
// log (-Xlog:gc), so that tools that read JDK logs read these:
//
//   [0.412s][gc] GC(7) Pause Full (System.gc()) 24M->3M(64M) 1.234ms
//
// uptime at the end of the pause; GC(id) counting from 0; Young or Full;
// the cause; heap used before -> after (heap size after), all three in one
// unit (K below 10 MiB, M below 10 GiB, else G; rounded down as the JDK
// does); the pause in milliseconds. --gc-log=debug adds, before that line,
// one [gc,phases] line per phase and one [gc,workers] line per GC worker
// (busy and idle time and its counters), as -Xlog:gc*=debug does.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "gc/observe/recorder.h"

namespace gc::observe {

class Log {
 public:
  // out is not closed by Log unless owns is true.
  Log(std::FILE* out, bool debug, bool owns) : out_(out), debug_(debug), owns_(owns) {}
  ~Log();
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // "[0.000s][gc] Using semispace (pSemispaces: the paper's
  // configuration)", first line of the log, as the JDK's with the variant
  // (variant_line) after it; written as the VM starts, before the
  // collector exists.
  void using_collector(const std::string& name, const std::string& variant);
  // Called by the Recorder at each collection's end.
  void collection(const Recorder& r, size_t record);
  // A request a collector did not carry out (none), in Epsilon's words:
  // "[0.412s][gc] GC request for "System.gc()" is ignored".
  void collection_ignored(int64_t ns, GcCause cause);

 private:
  std::FILE* out_;
  bool debug_;
  bool owns_;
};

// The line for one collection, without its newline.
std::string pause_line(const Recorder& r, size_t record);
// Debug lines for one collection, each ending in a newline.
std::string debug_lines(const Recorder& r, size_t record);
// The lines of what one pause did to a cycle (CollectionRecord::cycle_events),
// each ending in a newline.
std::string cycle_lines(const Recorder& r, size_t record);
// A size as the log writes one: "8221K", "12M", "3G" (K below 10M, M below
// 10G), rounded down.
std::string log_size(uint64_t bytes);
// "[12.345s]": uptime decoration.
std::string uptime(int64_t ns);
// One collection's heap numbers: "24M->3M(64M)".
std::string heap_transition(uint64_t before, uint64_t after, uint64_t size);

}  // namespace gc::observe
