#include "gc/parallel/thread_cpu.h"

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace gc::parallel {

namespace {

int64_t read_clock(clockid_t clock) {
  timespec t{};
  if (clock_gettime(clock, &t) != 0) return 0;
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// Registration happens once per pool thread's start and end, and reading
// once per summary, so a lock costs nothing that matters.
struct Registry {
  std::mutex lock;
  std::vector<clockid_t> running;
  int64_t finished_ns = 0;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

int64_t thread_cpu_ns() { return read_clock(CLOCK_THREAD_CPUTIME_ID); }

int64_t process_cpu_ns() { return read_clock(CLOCK_PROCESS_CPUTIME_ID); }

int64_t gc_threads_cpu_ns() {
  Registry& r = registry();
  std::lock_guard<std::mutex> hold(r.lock);
  int64_t total = r.finished_ns;
  // A registered thread has not yet left its destructor, so its clock is valid.
  for (clockid_t c : r.running) total += read_clock(c);
  return total;
}

GcThreadCpu::GcThreadCpu() : registered_(pthread_getcpuclockid(pthread_self(), &clock_) == 0) {
  if (!registered_) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> hold(r.lock);
  r.running.push_back(clock_);
}

GcThreadCpu::~GcThreadCpu() {
  if (!registered_) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> hold(r.lock);
  r.finished_ns += thread_cpu_ns();
  r.running.erase(std::find(r.running.begin(), r.running.end(), clock_));
}

}  // namespace gc::parallel
