// Fibers: stackful coroutines on Boost.Context. Each fiber runs the
// interpreter on its own guarded native stack; its values live in a pinned
// Stack object, so the collector sees a suspended fiber as an ordinary
// object and frees it, with both stacks, once it is unreachable.
#include "vm/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>

#if defined(GCLAB_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(GCLAB_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace vm {

namespace ctx = boost::context;

namespace {

// The interpreter does not recurse on the native stack for calls, so a
// fiber needs little of it: builtins, formatting and the collector run here
// too. Guard pages catch an overrun.
constexpr size_t kNativeStackBytes = 256 * 1024;

// A fiber's value stack starts small (there may be many fibers) and grows.
constexpr size_t kFiberStackSlots = 256;

// Fibers resuming fibers nest this deep before `stack overflow`, like calls.
constexpr size_t kMaxFiberNesting = 10'000;

// Native stacks are mappings outside the managed heap, so the heap's own
// pressure does not trigger collections that would free dead fibers' stacks.
// A collection also runs after this many more stacks have been mapped since
// the last one (the threshold doubles with the number still live), which
// keeps the process well below the kernel's mapping limit (65,530 by
// default; each stack takes two mappings, stack and guard page).
constexpr size_t kNativeStacksBeforeCollection = 4096;

// Mappings left to everything else when fibers' stacks are counted against
// the kernel's limit: the heap, malloc's arenas, GC threads' stacks and an
// OpenCL runtime's buffers and threads. Taking the last of them makes a
// collector's own allocation fail inside a library that aborts.
constexpr size_t kMappingsForTheRest = 8192;

// How many native stacks may be mapped at once, from vm.max_map_count.
size_t native_stack_limit() {
  static const size_t limit = [] {
    size_t maps = 65530;  // the kernel's default
    if (std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
      unsigned long long n = 0;
      if (std::fscanf(f, "%llu", &n) == 1 && n > 0) maps = static_cast<size_t>(n);
      std::fclose(f);
    }
    // Two mappings a stack: the stack and its guard page.
    return maps > 2 * kMappingsForTheRest ? (maps - kMappingsForTheRest) / 2 : maps / 4;
  }();
  return limit;
}

struct StackMapFailure {};

// Thrown inside a suspended fiber that became unreachable, so its native
// stack unwinds through the ordinary error path before it is unmapped.
struct FiberKilled {};

// Sanitizers track the native stack; they must be told when a switch moves
// execution to another one (ASan's fake stacks, TSan's per-fiber state).
// leaving() runs on the old stack just before a switch, arrived() on the
// new one right after it. Without sanitizers both are empty.
void leaving(FiberState* from, FiberState* to, bool from_finished) {
#if defined(GCLAB_ASAN)
  __sanitizer_start_switch_fiber(from_finished ? nullptr : &from->asan_fake_stack, to->native_bottom,
                                 to->native_size);
#endif
#if defined(GCLAB_TSAN)
  __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
}

void arrived(FiberState* self, FiberState* from) {
#if defined(GCLAB_ASAN)
  const void* bottom = nullptr;
  size_t size = 0;
  __sanitizer_finish_switch_fiber(self->asan_fake_stack, &bottom, &size);
  if (!from->native_bottom) {  // the main thread's stack, learned on first use
    from->native_bottom = bottom;
    from->native_size = size;
  }
#endif
}

// Native stacks of finished fibers, kept mapped for the next fibers: a
// program that makes many short-lived fibers would otherwise pay a mapping,
// a guard page and an unmapping for each (and fault its pages in again).
// Per thread, as the VM that runs fibers is. The spares are not counted in
// native_stack_limit(): their 128 mappings at most come out of
// kMappingsForTheRest.
class SpareStacks {
 public:
  static constexpr size_t kCapacity = 64;

  ~SpareStacks() {
    for (size_t i = 0; i < count_; ++i) munmap(stacks_[i], size());
  }
  static size_t size() {
    static const size_t bytes = kNativeStackBytes + static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return bytes;
  }
  void* take() { return count_ ? stacks_[--count_] : nullptr; }
  bool keep(void* base) {
    if (count_ == kCapacity) return false;
    stacks_[count_++] = base;
    return true;
  }

 private:
  void* stacks_[kCapacity];
  size_t count_ = 0;
};

thread_local SpareStacks spare_stacks;

// Boost's protected stack asserts when the system refuses a mapping; this
// one reports it, so the VM can collect and retry, or end the program with
// an error.
class GuardedStack {
 public:
  explicit GuardedStack(FiberState* owner) : owner_(owner) {}

  ctx::stack_context allocate() {
    size_t size = SpareStacks::size();
    void* p = spare_stacks.take();
    if (!p) p = map_stack(size);
    ctx::stack_context sc;
    sc.size = size;
    sc.sp = static_cast<char*>(p) + size;
    owner_->native_bottom = p;
    owner_->native_size = size;
    return sc;
  }
  void deallocate(ctx::stack_context& sc) {
    void* base = static_cast<char*>(sc.sp) - sc.size;
#if defined(GCLAB_ASAN)
    // ASan keeps the dead frames' poison in its shadow; memory mapped here
    // later (a heap, another stack) must not inherit it.
    ASAN_UNPOISON_MEMORY_REGION(base, sc.size);
#endif
    if (!spare_stacks.keep(base)) munmap(base, sc.size);
  }

 private:
  static void* map_stack(size_t size) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw StackMapFailure{};
    if (mprotect(p, page, PROT_NONE) != 0) {
      munmap(p, size);
      throw StackMapFailure{};
    }
    return p;
  }

  FiberState* owner_;
};

}  // namespace

Value VM::fiber_new(Value* function_slot) {
  Value f = *function_slot;
  int params = -1;
  if (is_kind(f, gc::kClosureClass)) params = closure_fn(f.as_ref())->fn->arity;
  if (is_kind(f, gc::kBoundMethodClass)) params = closure_fn(bound_method(f.as_ref()).as_ref())->fn->arity;
  if (params < 0) error(std::string("Fiber: expected a function, got ") + type_name(f));
  if (params > 1) error("Fiber: the function must take at most one parameter, got " + std::to_string(params));

  Word* stack = heap_->allocate_pinned(gc::kStackClass, gc::rounded_refs(kFiberStackSlots), 0);
  if (!stack) out_of_memory();
  HandleScope scope(*this);
  Handle stack_handle(*this, Value::ref(stack));
  Word* fiber = alloc(gc::kFiberClass, 2, 1);
  stack = stack_handle.ref();
  fiber_stack(fiber) = Value::ref(stack);
  fiber_function(fiber) = *function_slot;

  auto* state = new FiberState();
  state->object = fiber;
  state->mutator_id = ++fibers_created_;
  state->stack = storage_slots(stack);
  state->stack_end = state->stack + nrefs_of(stack);
  state->stack[0] = *function_slot;
  state->sp = state->stack + 1;
  state->high_water = state->sp;
  fiber_state(fiber) = state;
  fibers_.push_back({Value::ref(fiber), state});
  return Value::ref(fiber);
}

void VM::destroy_fiber_state(FiberState* state) {
  if (state->status == FiberState::Status::kSuspended) {
    // Its frames unwind on its own stack, then it finishes like any fiber.
    state->killed = true;
    state->resumer_state = current_;
    leaving(current_, state, false);
    state->context = std::move(state->context).resume();
    arrived(current_, state);
  }
  if (state->has_native_stack) --native_stacks_;
#if defined(GCLAB_TSAN)
  if (state->tsan_fiber) __tsan_destroy_fiber(state->tsan_fiber);
#endif
  delete state;
}

// The body of a fiber, on its own native stack.
void VM::run_fiber(FiberState* st) {
  try {
    Value f = st->stack[0];
    int argc = 0;
    if (is_kind(f, gc::kBoundMethodClass)) {
      st->stack[1] = bound_receiver(f.as_ref());
      st->stack[0] = bound_method(f.as_ref());
      argc = 1;
    }
    const FnInfo* fn = closure_fn(st->stack[0].as_ref());
    if (fn->fn->arity == 1) st->stack[++argc] = transfer_;
    st->sp = st->stack + 1 + argc;
    size_t needed = 1 + fn->fn->max_slots + 8;
    if (st->stack + needed > st->stack_end) grow_stack(st, needed);
    if (st->stack + needed > st->high_water) st->high_water = st->stack + needed;
    st->frames.push(Frame{st->stack, fn->fn->code.data(), const_cast<FnInfo*>(fn)});
    execute(st);
    transfer_ = st->stack[0];
    st->sp = st->stack;
  } catch (const FiberKilled&) {
    // Unreachable: nobody will see how it ended.
  } catch (...) {
    st->failure = std::current_exception();
  }
  st->status = FiberState::Status::kDone;
}

// Gives a new fiber its native stack, collecting first when many stacks
// were mapped since the last collection, and once more if the mapping fails.
void VM::start_native_stack(Value* fiber_slot) {
  if (native_stacks_ >= next_native_collection_ || native_stacks_ >= native_stack_limit()) {
    collect_now();
    next_native_collection_ = std::max(kNativeStacksBeforeCollection, 2 * native_stacks_);
  }
  if (native_stacks_ >= native_stack_limit())
    error("out of memory: " + std::to_string(native_stacks_) +
          " fibers hold native stacks, as many as the system's mapping limit (vm.max_map_count) leaves room "
          "for");
  for (int attempt = 0;; ++attempt) {
    FiberState* st = fiber_state(fiber_slot->as_ref());
    try {
      st->context = ctx::fiber(std::allocator_arg, GuardedStack(st), [this, st](ctx::fiber&& back) {
        st->resumer = std::move(back);
        arrived(st, st->resumer_state);
        run_fiber(st);
        leaving(st, st->resumer_state, true);
        return std::move(st->resumer);
      });
#if defined(GCLAB_TSAN)
      st->tsan_fiber = __tsan_create_fiber(0);
#endif
      st->has_native_stack = true;
      ++native_stacks_;
      return;
    } catch (const StackMapFailure&) {
      if (attempt == 1) error("out of memory: cannot map a native stack for another fiber");
      collect_now();
    }
  }
}

Value VM::fiber_resume(Value* fiber_slot, Value* value_slot) {
  if (!is_kind(*fiber_slot, gc::kFiberClass))
    error(std::string("resume: expected a fiber, got ") + type_name(*fiber_slot));
  FiberState* st = fiber_state(fiber_slot->as_ref());
  if (st->status == FiberState::Status::kDone) error("cannot resume a finished fiber");
  if (st->status == FiberState::Status::kRunning) error("cannot resume a running fiber");
  if (fiber_nesting_ >= kMaxFiberNesting) error("stack overflow");
  if (st->status == FiberState::Status::kNew) start_native_stack(fiber_slot);
  transfer_ = value_slot ? *value_slot : Value::nil();
  FiberState* resumer = current_;
  st->resumer_state = resumer;
  current_ = st;
  heap_->mutator_switched(st->mutator_id);
  ++fiber_nesting_;
  st->status = FiberState::Status::kRunning;
  leaving(resumer, st, false);
  st->context = std::move(st->context).resume();
  arrived(resumer, st);
  --fiber_nesting_;
  current_ = resumer;
  heap_->mutator_switched(resumer->mutator_id);
  if (st->status == FiberState::Status::kDone && st->has_native_stack) {
    // Boost unmapped the stack when the fiber's function returned.
    st->has_native_stack = false;
    --native_stacks_;
  }
  if (st->failure) {
    std::exception_ptr failure = st->failure;
    st->failure = nullptr;
    std::rethrow_exception(failure);
  }
  return transfer_;
}

Value VM::fiber_yield(Value* value_slot) {
  if (current_ == main_fiber_) error("yield outside a fiber");
  FiberState* st = current_;
  transfer_ = value_slot ? *value_slot : Value::nil();
  st->status = FiberState::Status::kSuspended;
  leaving(st, st->resumer_state, false);
  st->resumer = std::move(st->resumer).resume();
  arrived(st, st->resumer_state);
  st->status = FiberState::Status::kRunning;
  if (st->killed) throw FiberKilled{};
  return transfer_;
}

bool VM::fiber_done(Value fiber) {
  if (!is_kind(fiber, gc::kFiberClass)) error(std::string("done: expected a fiber, got ") + type_name(fiber));
  return fiber_state(fiber.as_ref())->status == FiberState::Status::kDone;
}

}  // namespace vm
