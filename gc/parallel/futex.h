// Futex waits and wakes on a 32-bit atomic word, shared by the worker pool
// and termination detection. They are the system calls themselves, without
// a library's bookkeeping between them: a wake always enters the kernel,
// and a wait sleeps only while the word still holds the value it was given,
// checked by the kernel against any wake on the same word.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <ctime>

namespace gc::parallel {

// Sleeps while *word == expected, at most timeout_us (a wake, a signal or
// the timeout ends it; the caller checks the word again).
inline void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, unsigned timeout_us) {
  timespec ts{static_cast<time_t>(timeout_us / 1000000), static_cast<long>(timeout_us % 1000000) * 1000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
}

// Wakes every thread sleeping on word (after the store that changed it).
inline void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace gc::parallel
