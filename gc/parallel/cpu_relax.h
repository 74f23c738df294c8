// The spin-wait hint shared by the worker pool and termination detection.
#pragma once

namespace gc::parallel {

// Tells the core that this is a spin loop: it saves power and yields
// pipeline resources to a sibling hyper-thread.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace gc::parallel
