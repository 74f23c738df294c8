// A fiber's native side: its frames, its place in the value stack and its
// Boost.Context continuation. The values themselves live in a pinned Stack
// object on the managed heap, reached from the Fiber object, so a fiber that
// becomes unreachable is collected with its stack like any other object.
#pragma once

#include <boost/context/fiber.hpp>
#include <exception>
#include <vector>

#include "vm/vm.h"

namespace vm {

struct FiberState {
  enum class Status { kNew, kRunning, kSuspended, kDone };

  // The Stack object's slots, as one ascending run. Stacks are pinned
  // (allocate_pinned), so these pointers survive collections.
  Value* stack = nullptr;
  Value* stack_end = nullptr;
  Value* sp = nullptr;          // next free slot, synced before anything can allocate
  Value* high_water = nullptr;  // slots in [sp, high_water) may hold stale values
  FrameStack frames;
  Status status = Status::kNew;
  Word* object = nullptr;  // the Fiber object, kept current by weak processing

  boost::context::fiber context;  // the fiber itself while it is suspended
  boost::context::fiber resumer;  // whoever resumed it, while it runs
  std::exception_ptr failure;     // an error or exit() that ended the fiber
  bool has_native_stack = false;  // mapped at the first resume
  bool killed = false;            // unreachable: unwind at the next switch in
  FiberState* resumer_state = nullptr;
  // The collector's name for this mutator context (Collector::
  // mutator_switched): 0 for the main program, then creation order.
  uint64_t mutator_id = 0;

  // What sanitizers need to follow switches (fiber.cpp: leaving, arrived).
  const void* native_bottom = nullptr;
  size_t native_size = 0;
  void* asan_fake_stack = nullptr;
  void* tsan_fiber = nullptr;
};

}  // namespace vm
