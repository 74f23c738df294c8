// The VM's state outside the interpreter loop: linking compiled functions,
// classes, roots, errors and stack traces, and running programs.
#include "vm/vm.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "compiler/compiler.h"
#include "gc/exit_status.h"
#include "vm/fiber.h"

#if defined(GCLAB_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace vm {

namespace {

// Roots go to the collector in groups of at most this many slots: small
// enough that a parallel collector can balance them, large enough that
// claiming a group costs little next to scanning it.
constexpr size_t kRootGroupSlots = 256;

// The main fiber's first stack (8 KB); it grows on demand, doubling. Small,
// because a collection reads all of it: markcompact never cleans a stack's
// cards, so each young collection scans every slot
// (docs/collectors/markcompact.md, "Card tasks", has what a larger start
// cost).
constexpr size_t kMainStackSlots = 1024;

// A stack trace this long or longer is trimmed (docs/language.md, "Errors and exit status").
constexpr size_t kTraceTrimAbove = 40;
constexpr size_t kTraceInnermost = 20;
constexpr size_t kTraceOutermost = 10;

// Bytes in the largest binary unit that keeps the figure at least 1:
// "512 bytes", "4.1 MiB", "7.1 PiB".
std::string format_size(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
  return buf;
}

}  // namespace

// --- Handles

Handle::Handle(VM& vm, Value v) : vm_(&vm), index_(vm.handles.size()) { vm.handles.push_back(v); }
Value Handle::get() const { return vm_->handles[index_]; }
void Handle::set(Value v) { vm_->handles[index_] = v; }
HandleScope::HandleScope(VM& vm) : vm_(vm), mark_(vm.handles.size()) {}
HandleScope::~HandleScope() { vm_.handles.resize(mark_); }

// --- Construction

VM::VM(const VMOptions& options) : options_(options) {
  start_time_ = clock_seconds();
  if (options_.step_limit) steps_left_ = options_.step_limit;
  const gc::CollectorInfo* info = gc::find_collector(options_.collector);
  if (options_.heap.heap_snapshot) options_.heap.heap_snapshot->set_schema(this);
  heap_ = info->create(*this, options_.heap);
  init_symbol_ = program_.symbol("init");

  main_fiber_ = new FiberState();
#if defined(GCLAB_TSAN)
  main_fiber_->tsan_fiber = __tsan_get_current_fiber();
#endif
  Word* stack = heap_->allocate_pinned(gc::kStackClass, gc::rounded_refs(kMainStackSlots), 0);
  if (!stack) out_of_memory();
  handles.push_back(Value::ref(stack));
  Word* fiber = alloc(gc::kFiberClass, 2, 1);
  main_fiber_object_ = Value::ref(fiber);
  fiber_stack(fiber) = handles.back();
  handles.pop_back();
  fiber_state(fiber) = main_fiber_;
  main_fiber_->object = fiber;
  stack = fiber_stack(fiber).as_ref();
  main_fiber_->stack = storage_slots(stack);
  main_fiber_->stack_end = main_fiber_->stack + nrefs_of(stack);
  main_fiber_->sp = main_fiber_->stack;
  main_fiber_->high_water = main_fiber_->stack;
  main_fiber_->status = FiberState::Status::kRunning;
  fibers_.push_back({main_fiber_object_, main_fiber_});
  current_ = main_fiber_;

  byte_strings_.assign(256, Value::nil());
  for (int c = 0; c < 256; ++c) {
    char ch = static_cast<char>(c);
    Value s = new_string(std::string_view(&ch, 1));
    byte_strings_[static_cast<size_t>(c)] = s;
  }

  for (const BuiltinInfo& b : builtin_table()) {
    Word* h = alloc(gc::kBuiltinClass, 0, 1);
    h[1] = reinterpret_cast<Word>(&b);
    builtins_.push_back(Value::ref(h));
    uint32_t g = program_.global(b.name);
    if (globals_.size() <= g) globals_.resize(g + 1, Value::undefined());
    globals_[g] = builtins_.back();
  }

  uint32_t args_global = program_.global("args");
  if (globals_.size() <= args_global) globals_.resize(args_global + 1, Value::undefined());
  globals_[args_global] = new_array(options_.script_args.size(), Value::nil());
  for (size_t i = 0; i < options_.script_args.size(); ++i) {
    Value s = new_string(options_.script_args[i]);
    Word* arr = globals_[args_global].as_ref();
    write(array_storage(arr).as_ref(), &array_elements(arr)[i], s);
  }
}

VM::~VM() {
  // Suspended fibers unwind their native stacks before the heap goes away.
  for (FiberRecord& f : fibers_)
    if (f.state != main_fiber_) destroy_fiber_state(f.state);
  fibers_.clear();
  delete main_fiber_;
  heap_.reset();
}

// --- Linking

void VM::link_new_functions() {
  globals_.resize(program_.globals.size(), Value::undefined());
  module_loaded_.resize(program_.modules.size(), false);
  for (size_t i = fns_.size(); i < program_.functions.size(); ++i) {
    const compiler::Function& f = *program_.functions[i];
    auto info = std::make_unique<FnInfo>();
    info->fn = &f;
    info->index = static_cast<uint32_t>(i);
    info->constants.assign(f.constants.size(), Value::nil());
    info->ics.resize(f.num_ics);
    info->code = f.code.data();
    info->max_slots = f.max_slots;
    info->argc = static_cast<uint16_t>(f.arity + (f.is_method ? 1 : 0));
    fns_.push_back(std::move(info));
    // Strings are allocated after the FnInfo is registered, so the
    // constants already linked are roots while the next one is allocated.
    for (size_t k = 0; k < f.constants.size(); ++k) {
      const compiler::Constant& c = f.constants[k];
      Value v = Value::nil();
      if (c.kind == compiler::Constant::Kind::kNum) v = Value::num(c.num);
      if (c.kind == compiler::Constant::Kind::kString) v = new_string(c.str);
      fns_[i]->constants[k] = v;
    }
  }
}

void FrameStack::grow(size_t limit) {
  size_t used = size();
  size_t capacity = std::max(used + 1, std::min(limit, std::max<size_t>(8, 2 * used)));
  auto grown = std::make_unique_for_overwrite<Frame[]>(capacity);
  std::copy(frames_.get(), top_, grown.get());
  frames_ = std::move(grown);
  top_ = frames_.get() + used;
  end_ = frames_.get() + capacity;
}

Value VM::make_closure_value(FnInfo* fn) {
  Word* c = alloc(gc::kClosureClass, fn->fn->num_upvalues, 1);
  c[1] = reinterpret_cast<Word>(fn);
  return Value::ref(c);
}

// --- Running

// Runs a compiled top-level function on the main fiber, to its end.
void VM::run_on_main(uint32_t function) {
  FiberState* f = main_fiber_;
  const compiler::Function& fn = *fns_[function]->fn;
  f->sp = f->stack;
  if (f->stack + fn.max_slots + 8 > f->stack_end) grow_stack(f, fn.max_slots + 8);
  f->stack[0] = make_closure_value(fn_info(function));
  f->sp = f->stack + 1;
  if (f->sp + fn.max_slots > f->high_water) f->high_water = f->sp + fn.max_slots;
  f->frames.push(Frame{f->stack, fn.code.data(), fns_[function].get()});
  execute(f);
  f->sp = f->stack;
}

int VM::run_function(uint32_t function) {
  // A script is a module too: an import cycle back to it must not run it
  // a second time.
  for (size_t m = 0; m < program_.modules.size(); ++m)
    if (program_.modules[m].function == function) module_loaded_[m] = true;
  try {
    run_on_main(function);
    std::fflush(stdout);
    return 0;
  } catch (RuntimeError& e) {
    std::fflush(stdout);
    print_error(e);
    return gc::kExitSoftware;
  } catch (ExitRequest& e) {
    std::fflush(stdout);
    return e.status;
  }
}

static void print_diagnostics(const compiler::CompileResult& r) {
  for (const compiler::Diagnostic& d : r.errors) std::cerr << compiler::format_diagnostic(d);
  std::cerr.flush();
}

int VM::run_source(const std::string& name, std::string_view source) {
  compiler::CompileResult r = compiler::compile_source(program_, name, source);
  if (!r.ok) {
    print_diagnostics(r);
    return gc::kExitDataError;
  }
  link_new_functions();
  return run_function(r.function);
}

bool VM::run_repl_line(std::string_view source, int* exit_status) {
  compiler::CompileOptions options;
  options.repl = true;
  compiler::CompileResult r = compiler::compile_source(program_, "<repl>", source, options);
  if (!r.ok) {
    // An entry may omit its final semicolon (`1 + 2`, `let m = {}`): try
    // again with one on a line of its own, so a trailing comment cannot
    // swallow it, and report the original errors if that fails too.
    std::string with_semicolon = std::string(source) + "\n;";
    compiler::CompileResult retry = compiler::compile_source(program_, "<repl>", with_semicolon, options);
    if (!retry.ok) {
      print_diagnostics(r);
      return true;
    }
    r = std::move(retry);
  }
  link_new_functions();
  try {
    run_on_main(r.function);
  } catch (RuntimeError& e) {
    std::fflush(stdout);
    print_error(e);
  } catch (ExitRequest& e) {
    std::fflush(stdout);
    *exit_status = e.status;
    return false;
  }
  std::fflush(stdout);
  return true;
}

int VM::disassemble_source(const std::string& name, std::string_view source, std::ostream& out) {
  compiler::CompileResult r = compiler::compile_source(program_, name, source);
  if (!r.ok) {
    print_diagnostics(r);
    return gc::kExitDataError;
  }
  compiler::disassemble(program_, r.function, out);
  return 0;
}

// --- Errors

void VM::error(std::string message) { throw RuntimeError{std::move(message), {}}; }

void VM::out_of_memory(uint64_t request_bytes) {
  if (heap_->overhead_limit_exceeded()) {
    heap_->clear_overhead_limit();
    error("out of memory: GC overhead limit exceeded: " +
          std::to_string(gc::Collector::kOverheadLimitCollections) +
          " full collections in a row each took more than " +
          std::to_string(gc::Collector::kGcTimeLimitPercent) + "% of the time and left less than " +
          std::to_string(gc::Collector::kHeapFreeLimitPercent) + "% of the heap free; live data " +
          format_size(heap_->stats().last_live_bytes) + ", heap limit " + format_size(heap_->max_heap()) +
          " (--gc-overhead-limit=off runs on)");
  }
  // A collector that never collects does not know what is live: its
  // figure is everything allocated.
  const gc::CollectorInfo* info = gc::find_collector(heap_->name());
  bool collects = !info || info->collects;
  std::string live = (collects ? "live data " : "allocated data ") + format_size(heap_->live_at_exhaustion());
  std::string limit = "the heap limit of " + format_size(heap_->max_heap());
  if (!options_.heap_limit_reason.empty()) limit += " (" + options_.heap_limit_reason + ")";
  if (!collects) limit += std::string(" (") + heap_->name() + " never collects)";
  // A copying collector keeps room to copy into: say how much it can hold.
  if (heap_->live_capacity() < heap_->max_heap())
    limit += std::string(" (") + heap_->name() + " holds at most " + format_size(heap_->live_capacity()) +
             " of it live)";
  if (request_bytes >= gc::kLargeObjectBytes)
    error("out of memory: " + live + " and a new object of " + format_size(request_bytes) +
          " do not fit in " + limit);
  error("out of memory: " + live + " does not fit in " + limit);
}

void VM::check_fits(const char* what, uint64_t count, const char* unit, uint64_t bytes, bool representable) {
  if (representable && bytes <= heap_->max_heap()) return;
  std::string request =
      std::string("out of memory: cannot allocate ") + what + " of " + std::to_string(count) + " " + unit;
  if (bytes > heap_->max_heap())
    error(request + " (" + format_size(bytes) + "): the heap limit is " + format_size(heap_->max_heap()) +
          (options_.heap_limit_reason.empty() ? "" : " (" + options_.heap_limit_reason + ")"));
  error(request + ": larger than any object can be");
}

std::string VM::trace_line(const Frame& frame) const {
  const compiler::Function& f = *frame.fn->fn;
  size_t offset = frame.ip > f.code.data() ? static_cast<size_t>(frame.ip - f.code.data()) - 1 : 0;
  uint32_t line = offset < f.lines.size() ? f.lines[offset] : 0;
  return "  at " + f.name + " (" + f.file + ":" + std::to_string(line) + ")";
}

void VM::unwind(FiberState* fiber) {
  fiber->frames.clear();
  fiber->sp = fiber->stack;
}

void VM::print_error(const RuntimeError& e) {
  std::string out = "error: " + e.message + "\n";
  const std::vector<std::string>& t = e.trace;
  if (t.size() > kTraceTrimAbove) {
    for (size_t i = 0; i < kTraceInnermost; ++i) out += t[i] + "\n";
    out += "  ... " + std::to_string(t.size() - kTraceInnermost - kTraceOutermost) + " more frames ...\n";
    for (size_t i = t.size() - kTraceOutermost; i < t.size(); ++i) out += t[i] + "\n";
  } else {
    for (const std::string& line : t) out += line + "\n";
  }
  std::cerr << out;
  std::cerr.flush();
}

// --- Classes

Value VM::create_class(const compiler::ClassDesc& desc, Value* super_slot, Value* methods, size_t count) {
  if (gc::kFirstUserClass + classes_.size() > gc::kMaxClassId)
    error("too many classes: at most " + std::to_string(gc::kMaxClassId - gc::kFirstUserClass + 1));
  auto info = std::make_unique<ClassInfo>();
  info->name = desc.name;
  info->id = static_cast<uint32_t>(gc::kFirstUserClass + classes_.size());
  std::string super_name;
  if (super_slot) {
    Value s = *super_slot;
    if (!is_kind(s, gc::kClassClass))
      error("superclass of " + desc.name + " must be a class, got " + type_name(s));
    const ClassInfo& sup = class_info(class_object_id(s.as_ref()));
    super_name = sup.name;
    info->super_id = sup.id;
    info->num_ref_fields = sup.num_ref_fields;
    info->num_raw_fields = sup.num_raw_fields;
    info->fields = sup.fields;
    info->method_index = sup.method_index;
    info->methods = sup.methods;
    info->init = sup.init;
  }
  for (const compiler::FieldDesc& f : desc.fields) {
    if (info->fields.count(f.name))
      error("class " + desc.name + " redeclares field '" + program_.symbols[f.name] + "' inherited from " +
            super_name);
    FieldSlot slot{FieldKind::kRef, 0};
    if (f.kind == compiler::FieldKind::kAny) {
      slot.index = info->num_ref_fields++;
    } else {
      slot.kind = f.kind == compiler::FieldKind::kNum ? FieldKind::kNum : FieldKind::kBool;
      slot.index = info->num_raw_fields++;
    }
    info->fields[f.name] = slot;
  }
  for (size_t i = 0; i < count; ++i) {
    uint32_t sym = desc.methods[i];
    auto it = info->method_index.find(sym);
    if (it != info->method_index.end()) {
      info->methods[it->second] = methods[i];
    } else {
      info->method_index[sym] = static_cast<uint32_t>(info->methods.size());
      info->methods.push_back(methods[i]);
    }
  }
  if (auto it = info->method_index.find(init_symbol_); it != info->method_index.end())
    info->init = it->second;

  // Registered before allocating, so its methods are roots from here on.
  classes_.push_back(std::move(info));
  ClassInfo& c = *classes_.back();
  Value name = new_string(desc.name);
  HandleScope scope(*this);
  Handle name_handle(*this, name);
  Word* obj = alloc(gc::kClassClass, 2, 1);
  class_name(obj) = name_handle.get();
  class_super(obj) = super_slot ? *super_slot : Value::nil();
  obj[1] = c.id;
  c.object = Value::ref(obj);
  return c.object;
}

std::string_view VM::class_name_of(Word* instance) const { return class_info(class_id_of(instance)).name; }

// --- Roots

void VM::prepare_for_collection() {
  // Slots above a stack's top may hold values of finished calls; clearing
  // them keeps the roots precise (high_water bounds what can be stale).
  for (FiberRecord& f : fibers_) {
    FiberState* s = f.state;
    for (Value* p = s->sp; p < s->high_water; ++p) *p = Value::nil();
    // Only calls raise high_water: the innermost frame pushes up to its
    // own top without doing so, so high_water never drops below that top
    // (else a builtin's arguments left above sp would stay roots).
    Value* keep = s->sp;
    if (!s->frames.empty()) {
      const Frame& fr = s->frames.back();
      keep = std::max(keep, std::min(s->stack_end, fr.base + fr.fn->fn->max_slots + kStackSlack));
    }
    s->high_water = keep;
  }
}

void VM::root_groups(std::vector<gc::RootGroup>& out) {
  auto add = [&out](const char* name, Value* slots, size_t n) {
    for (size_t i = 0; i < n; i += kRootGroupSlots)
      out.push_back({slots + i, std::min(kRootGroupSlots, n - i), name});
  };
  add("globals", globals_.data(), globals_.size());
  for (auto& f : fns_) add("constants", f->constants.data(), f->constants.size());
  add("builtins", builtins_.data(), builtins_.size());
  add("one-byte strings", byte_strings_.data(), byte_strings_.size());
  add("handles", handles.data(), handles.size());
  for (auto& c : classes_) {
    add("class", &c->object, 1);
    add("methods", c->methods.data(), c->methods.size());
  }
  add("main fiber", &main_fiber_object_, 1);
  add("transfer", &transfer_, 1);
}

std::string VM::name_of_class(uint32_t class_id) const {
  static const char* const kKinds[] = {"filler",  "string",      "array",   "array storage", "numarray",
                                       "map",     "map storage", "closure", "cell",          "bound method",
                                       "builtin", "class",       "fiber",   "stack"};
  static_assert(std::size(kKinds) == gc::kFirstUserClass);
  if (class_id < gc::kFirstUserClass) return kKinds[class_id];
  return class_info(class_id).name;
}

// The raw words that hold C++ pointers (object.h): FnInfo*, BuiltinInfo*,
// FiberState*.
uint32_t VM::native_raw_words(uint32_t class_id) const {
  return class_id == gc::kClosureClass || class_id == gc::kBuiltinClass || class_id == gc::kFiberClass ? 1
                                                                                                       : 0;
}

void VM::process_weak(gc::WeakResolver& resolver) {
  size_t kept = 0;
  for (FiberRecord& f : fibers_) {
    Word* h = resolver.resolve(f.object.as_ref());
    if (!h) {
      destroy_fiber_state(f.state);
      continue;
    }
    f.object = Value::ref(h);
    f.state->object = h;
    fibers_[kept++] = f;
  }
  fibers_.resize(kept);
}

// --- Stacks

void VM::grow_stack(FiberState* fiber, size_t needed) {
  size_t capacity = static_cast<size_t>(fiber->stack_end - fiber->stack);
  size_t want = std::max(needed, capacity * 2);
  Word* stack = heap_->allocate_pinned(gc::kStackClass, gc::rounded_refs(want), 0);
  if (!stack) out_of_memory();
  Value* slots = storage_slots(stack);
  size_t used = static_cast<size_t>(fiber->sp - fiber->stack);
  std::copy(fiber->stack, fiber->sp, slots);
  ptrdiff_t delta = slots - fiber->stack;
  for (Frame& fr : fiber->frames) fr.base += delta;
  fiber->stack = slots;
  fiber->stack_end = slots + nrefs_of(stack);
  fiber->sp = slots + used;
  fiber->high_water = fiber->sp;
  write(fiber->object, &fiber_stack(fiber->object), Value::ref(stack));
}

// --- Small services for builtins

double VM::clock_seconds() const {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count() - start_time_;
}

std::vector<std::string> VM::global_names() const {
  std::vector<std::string> names;
  for (size_t g = 0; g < program_.globals.size(); ++g)
    if (g < globals_.size() && !globals_[g].is_undefined()) names.push_back(program_.globals[g]);
  return names;
}

std::string VM::function_name(Value f) const {
  if (!f.is_ref()) return "<fn>";
  Word* h = f.as_ref();
  switch (class_id_of(h)) {
    case gc::kClosureClass:
      return closure_fn(h)->fn->name;
    case gc::kBoundMethodClass:
      return function_name(bound_method(h));
    case gc::kBuiltinClass:
      return builtin_info(h)->name;
    case gc::kClassClass:
      return class_info(class_object_id(h)).name;
    default:
      return "<fn>";
  }
}

void VM::collect_now() { heap_->collect(gc::GcCause::kExplicit); }

}  // namespace vm
