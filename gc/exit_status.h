// The VM's exit statuses, after <sysexits.h>: the one place that gives each
// its number. The manual page and --help list them from here.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace gc {

enum ExitStatus : int {
  kExitSuccess = 0,
  kExitUsage = 64,        // a bad command line
  kExitDataError = 65,    // a compile error, or a damaged heap snapshot
  kExitNoInput = 66,      // a file that cannot be read
  kExitUnavailable = 69,  // the collector cannot run on this machine
  kExitSoftware = 70,     // a runtime error, out of memory and stack overflow included
  // Heap verification found a fault: an internal error, which scripts and
  // tests can tell from a program's own failure and from out of memory.
  kExitVerifyFailure = 71,
  kExitCantCreate = 73,  // an output file that cannot be created or written
};

// How a run's standard error begins when it ran out of memory: it exits
// kExitSoftware as every runtime error does, and only the message tells the
// two apart, for a parent that runs the VM (--compare, --min-heap). A
// program writes to standard output only, so nothing of its own comes first.
inline constexpr std::string_view kOutOfMemoryErrorStart = "error: out of memory: ";
inline bool ended_out_of_memory(int status, std::string_view stderr_start) {
  return status == kExitSoftware && stderr_start.starts_with(kOutOfMemoryErrorStart);
}

// Why a collector could not be created, with the status the VM ends with:
// creation throws it, from whatever part of the collector failed (a
// constructor has no other way to fail), and the VM reports it.
class CreationError : public std::runtime_error {
 public:
  CreationError(ExitStatus status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  ExitStatus status() const { return status_; }

 private:
  ExitStatus status_;
};

}  // namespace gc
