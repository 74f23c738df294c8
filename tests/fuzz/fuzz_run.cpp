// libFuzzer target: compile and run arbitrary bytes in a fresh VM with a
// small heap and a step limit (200,000; 20,000 under stress). Every input
// must end in one of docs/language.md's exit statuses; nothing may crash,
// hang, leak, trip ASan/UBSan or fail heap verification (which exits with
// status 71: libFuzzer reports that as a crash, "fuzz target exited").
//
// Per input, a hash of its bytes picks the collector (among the registered
// ones) and, for one input in eight, --gc-stress-style collections with
// --gc-verify, so a saved input reproduces with the same settings.
//
// The program's output is discarded: std::cout and std::cerr write into a
// null buffer and fd 1 goes to /dev/null; fd 0 reads /dev/null so input()
// sees end of input at once. fd 2 is left alone, for libFuzzer, sanitizer
// reports and the collectors' own fatal messages. GCLAB_FUZZ_VERBOSE=1
// keeps std::cout and std::cerr (to see what a reproducer does) and prints
// the vm command line with the settings the input's hash picked, so a
// timeout can be replayed outside ASan.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "gc/collector.h"
#include "tests/fuzz/fuzz_common.h"
#include "vm/vm.h"

namespace {

constexpr uint64_t kHeapBytes = 16ull << 20;
constexpr uint64_t kStepLimit = 200000;
// Under stress every few allocations cost a full collection and two heap
// walks: a shorter run keeps those inputs within libFuzzer's -timeout=10
// (samples/binary_trees.src at --gc-stress=64 took longer than that).
constexpr uint64_t kStressStepLimit = 20000;

bool verbose = false;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  int null_fd = open("/dev/null", O_RDWR);
  if (null_fd < 0) {
    std::perror("fuzz_run: /dev/null");
    std::abort();
  }
  dup2(null_fd, 0);
  const char* verbose_env = std::getenv("GCLAB_FUZZ_VERBOSE");
  verbose = verbose_env && std::string(verbose_env) == "1";
  if (!verbose) {
    std::fflush(stdout);
    dup2(null_fd, 1);
    static fuzz::NullBuf null_buf;
    std::cout.rdbuf(&null_buf);
    std::cerr.rdbuf(&null_buf);
  }
  if (null_fd > 2) close(null_fd);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t h = fuzz::hash_input(data, size);
  const auto& collectors = gc::registered_collectors();

  vm::VMOptions options;
  options.collector = collectors[(h >> 8) % collectors.size()].name;
  options.heap.max_heap_bytes = kHeapBytes;
  options.heap.gc_threads = 1;
  options.step_limit = kStepLimit;
  if ((h & 7) == 0) {
    // Stress with verification costs a full collection and two heap walks
    // per N allocations, the VM's start included: one input in eight.
    static constexpr uint64_t kIntervals[] = {1, 7, 64, 512};
    options.heap.stress_interval = kIntervals[(h >> 3) & 3];
    options.heap.verify = true;
    options.step_limit = kStressStepLimit;
  }

  if (verbose) {
    std::fprintf(stderr, "fuzz_run: vm --gc=%s --heap=%lluM --gc-threads=1 --step-limit=%llu",
                 options.collector.c_str(), static_cast<unsigned long long>(kHeapBytes >> 20),
                 static_cast<unsigned long long>(options.step_limit));
    if (options.heap.verify) {
      std::fprintf(stderr, " --gc-stress=%llu --gc-verify",
                   static_cast<unsigned long long>(options.heap.stress_interval));
    }
    std::fprintf(stderr, " FILE\n");
  }

  std::string_view source(reinterpret_cast<const char*>(data), size);
  {
    vm::VM vm(options);
    // A folder that does not exist: relative imports fail the same way on
    // every machine instead of reading whatever lies around.
    int status = vm.run_source("/nonexistent/gclab-fuzz/input.src", source);
    (void)status;
  }
  std::fflush(stdout);
  std::cout.clear();
  std::cerr.clear();
  return 0;
}
