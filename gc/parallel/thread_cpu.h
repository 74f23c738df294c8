// CPU time by thread, for the CPU-time figures of --gc-stats and the
// CPU-time lower bound of --compare (docs/observability.md, "CPU time").
//
// The mutator runs on one thread, so its CPU time is that thread's outside
// collections; a collection's CPU time is the collecting thread's inside it
// plus every GC pool thread's. A pool thread registers for the whole of its
// life, so the pool threads' total counts threads that have finished as
// well as running ones.
#pragma once

#include <cstdint>
#include <ctime>

namespace gc::parallel {

// The calling thread's CPU time, and the whole process's, in ns.
int64_t thread_cpu_ns();
int64_t process_cpu_ns();

// The CPU time of every GC pool thread this process has started.
int64_t gc_threads_cpu_ns();

// Counts the thread that holds it as a GC pool thread while it lives.
class GcThreadCpu {
 public:
  GcThreadCpu();
  ~GcThreadCpu();
  GcThreadCpu(const GcThreadCpu&) = delete;
  GcThreadCpu& operator=(const GcThreadCpu&) = delete;

 private:
  clockid_t clock_{};
  bool registered_;  // false: the system gives no clock for it, and it is not counted
};

}  // namespace gc::parallel
