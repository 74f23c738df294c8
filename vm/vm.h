// The virtual machine: program state, roots, allocation and the interpreter.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/bytecode.h"
#include "gc/collector.h"
#include "gc/mutator.h"
#include "gc/snapshot/snapshot.h"
#include "vm/object.h"

namespace vm {

class VM;

// A runtime error: thrown from anywhere in the VM or a builtin; the
// interpreter adds the stack trace and ends the program (status 70).
struct RuntimeError {
  std::string message;
  // Trace lines gathered while the error unwinds, innermost first (a
  // fiber's frames come before its resumer's).
  std::vector<std::string> trace;
};
// exit(n) unwinds the same way, with no message.
struct ExitRequest {
  int status;
};

// A builtin receives its arguments in place on the value stack (a root, so
// they stay valid across allocations) and returns its result.
using NativeFn = Value (*)(VM& vm, Value* args, int argc);

struct BuiltinInfo {
  const char* name;
  int min_args;
  int max_args;  // -1: any number
  NativeFn fn;
};

// The builtins of stdlib/, defined as globals when the VM starts.
const std::vector<BuiltinInfo>& builtin_table();

enum class FieldKind : uint8_t { kRef, kNum, kBool };
struct FieldSlot {
  FieldKind kind;
  uint32_t index;  // ref slot or raw word
};

struct ClassInfo {
  std::string name;
  uint32_t id = 0;
  int64_t super_id = -1;
  Value object = Value::nil();  // the Class object (a root)
  uint32_t num_ref_fields = 0;
  uint32_t num_raw_fields = 0;
  std::unordered_map<uint32_t, FieldSlot> fields;       // by symbol, inherited included
  std::unordered_map<uint32_t, uint32_t> method_index;  // symbol -> methods
  std::vector<Value> methods;                           // closures (roots)
  int64_t init = -1;                                    // index into methods
};

// A field or method site's cache: classes have fixed layouts, so a hit is one
// compare of the class id and one load.
struct InlineCache {
  enum Kind : uint8_t { kEmpty, kRefField, kNumField, kBoolField, kMethod };
  uint32_t class_id = 0;
  Kind kind = kEmpty;
  uint32_t index = 0;
};

// A compiled function linked into the VM: its constants as Values (roots)
// and its inline caches.
struct FnInfo {
  const compiler::Function* fn;
  uint32_t index;
  std::vector<Value> constants;
  std::vector<InlineCache> ics;
  // What a call reads, copied from fn so that it is one load away.
  const uint8_t* code = nullptr;
  uint32_t max_slots = 0;
  uint16_t argc = 0;  // arity, plus one for a method's `this`
};

// Room above a frame's max_slots for the ops that insert one slot below the
// arguments (bound methods, constructors) or use a scratch slot (map
// literals).
constexpr size_t kStackSlack = 4;

struct Frame {
  Value* base;        // base[0] is the callee
  const uint8_t* ip;  // saved when the frame calls out
  FnInfo* fn;
};

// A fiber's call frames, innermost last. The interpreter pushes and pops
// them inline; only growth is out of line, so the call path stays short.
class FrameStack {
 public:
  FrameStack() = default;
  FrameStack(const FrameStack&) = delete;
  FrameStack& operator=(const FrameStack&) = delete;

  bool empty() const { return top_ == frames_.get(); }
  size_t size() const { return static_cast<size_t>(top_ - frames_.get()); }
  bool full() const { return top_ == end_; }
  Frame& back() { return top_[-1]; }
  const Frame& back() const { return top_[-1]; }
  Frame& operator[](size_t i) { return frames_[i]; }
  const Frame& operator[](size_t i) const { return frames_[i]; }
  Frame* begin() { return frames_.get(); }
  Frame* end() { return top_; }
  // Call only when !full().
  void push_unchecked(const Frame& f) { *top_++ = f; }
  void push(const Frame& f) {
    if (full()) grow(SIZE_MAX);
    push_unchecked(f);
  }
  void pop() { --top_; }
  void clear() { top_ = frames_.get(); }
  // Doubles the room, to at most `limit` frames.
  void grow(size_t limit);

 private:
  std::unique_ptr<Frame[]> frames_;
  Frame* top_ = nullptr;
  Frame* end_ = nullptr;
};

struct FiberState;

// GC-safe references from C++ code: slots in a root array, released in
// LIFO order by HandleScope.
class Handle {
 public:
  Handle(VM& vm, Value v);
  Value get() const;
  void set(Value v);
  Word* ref() const { return get().as_ref(); }

 private:
  VM* vm_;
  size_t index_;
};

class HandleScope {
 public:
  explicit HandleScope(VM& vm);
  ~HandleScope();
  HandleScope(const HandleScope&) = delete;
  HandleScope& operator=(const HandleScope&) = delete;

 private:
  VM& vm_;
  size_t mark_;
};

struct VMOptions {
  std::string collector = "semispace";
  gc::HeapOptions heap;
  std::vector<std::string> script_args;
  // Loop iterations and calls allowed before the program stops with an
  // error (0: unlimited); for fuzzing and sandboxes.
  uint64_t step_limit = 0;
  // Why the heap limit is what it is, when the collector chose it (the
  // out-of-memory error says so); empty otherwise.
  std::string heap_limit_reason;
};

class VM final : public gc::RootSet, public gc::snapshot::HeapSchema {
 public:
  explicit VM(const VMOptions& options);
  ~VM() override;

  // Compiles and runs source text; `name` stands for its file in messages.
  // Returns the process exit status (0, 65, 70 or the exit() status).
  // Errors are printed to stderr.
  int run_source(const std::string& name, std::string_view source);
  // One REPL entry: compile errors and runtime errors are printed and the VM
  // stays usable. Returns false only for exit().
  bool run_repl_line(std::string_view source, int* exit_status);
  int disassemble_source(const std::string& name, std::string_view source, std::ostream& out);

  // --- allocation (may collect; see the GC-safety note in object.h)
  Word* alloc(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
    Word* h = gc::allocate(*heap_, class_id, nrefs, raw_words);
    if (!h) [[unlikely]]
      out_of_memory(gc::object_words(nrefs, raw_words) * gc::kWordSize);
    return h;
  }
  Value new_string(std::string_view s);
  // Allocates a string of `length` bytes whose bytes the caller fills in.
  Word* new_string_uninitialized(uint64_t length);
  Value new_array(uint64_t length, Value fill);
  Value new_map();
  // A reference store: slot is one of object's own slots (an array's
  // element lies in its storage object), as a collector's barrier reads
  // the object's colour (gc::write_ref).
  void write(Word* object, Value* slot, Value v) { gc::write_ref(*heap_, object, slot, v); }

  // --- errors
  [[noreturn]] void error(std::string message);
  // request_bytes: the allocation that failed, named in the message when it
  // is a large object (0: not known).
  [[noreturn]] void out_of_memory(uint64_t request_bytes = 0);
  // An object whose size comes from the program (Array(n), a string's
  // length): refused with a message naming it when the heap limit could
  // never hold `bytes`, or when no header can describe it (!representable),
  // instead of a collection and an out-of-memory error that blame the live
  // data.
  void check_fits(const char* what, uint64_t count, const char* unit, uint64_t bytes, bool representable);

  // --- program state seen by builtins
  gc::Collector& heap() { return *heap_; }
  compiler::Program& program() { return program_; }
  const ClassInfo& class_info(uint32_t id) const { return *classes_[id - gc::kFirstUserClass]; }
  std::string_view class_name_of(Word* instance) const;
  const std::vector<std::string>& script_args() const { return options_.script_args; }
  uint64_t identity_hash(Word* h) { return heap_->identity_hash(h); }
  double clock_seconds() const;
  std::vector<std::string> global_names() const;

  // Fibers (vm/fiber.cpp), used by the builtins of the same names.
  Value fiber_new(Value* function_slot);
  Value fiber_resume(Value* fiber_slot, Value* value_slot);
  Value fiber_yield(Value* value_slot);
  bool fiber_done(Value fiber);
  // Function value's display name: "f", "Point.norm", "<fn>", "print".
  std::string function_name(Value f) const;
  // Runs a full collection (gc()).
  void collect_now();
  // The one-byte strings, preallocated (s[i] and for-in over strings).
  Value byte_string(unsigned char c) const { return byte_strings_[c]; }

  // --- gc::RootSet
  void prepare_for_collection() override;
  void root_groups(std::vector<gc::RootGroup>& out) override;
  void process_weak(gc::WeakResolver& resolver) override;

  // --- gc::snapshot::HeapSchema (--heap-snapshot)
  std::string name_of_class(uint32_t class_id) const override;
  uint32_t native_raw_words(uint32_t class_id) const override;

  std::vector<Value> handles;  // slots of Handle (a root)

 private:
  friend struct Interpreter;

  void link_new_functions();
  FnInfo* fn_info(uint32_t function) { return fns_[function].get(); }
  Value make_closure_value(FnInfo* fn);
  int run_function(uint32_t function);
  void run_on_main(uint32_t function);
  // Runs the fiber's frames until the outermost returns; its result is left
  // in the outermost callee slot.
  void execute(FiberState* fiber);
  std::string trace_line(const Frame& frame) const;
  // After an error: drops every frame of the fiber.
  void unwind(FiberState* fiber);
  void print_error(const RuntimeError& e);
  void run_fiber(FiberState* fiber);
  void start_native_stack(Value* fiber_slot);
  std::vector<std::string> stack_trace(FiberState* fiber) const;
  Value create_class(const compiler::ClassDesc& desc, Value* super_slot, Value* methods, size_t count);
  // Moves the fiber to a bigger pinned stack of at least `needed` slots.
  void grow_stack(FiberState* fiber, size_t needed);
  FiberState* new_fiber_state(Value* function_slot);
  void destroy_fiber_state(FiberState* state);

  VMOptions options_;
  compiler::Program program_;
  std::unique_ptr<gc::Collector> heap_;
  std::vector<std::unique_ptr<FnInfo>> fns_;
  std::vector<Value> globals_;  // Value::undefined() until defined
  std::vector<std::unique_ptr<ClassInfo>> classes_;
  std::vector<bool> module_loaded_;
  std::vector<Value> builtins_;  // builtin objects (roots)
  std::vector<Value> byte_strings_;
  // Every fiber, weakly: a dead one's native state is freed after tracing.
  struct FiberRecord {
    Value object;
    FiberState* state;
  };
  std::vector<FiberRecord> fibers_;
  uint64_t fibers_created_ = 0;
  Value transfer_ = Value::nil();  // the value passed by resume/yield (a root)
  FiberState* main_fiber_ = nullptr;
  Value main_fiber_object_ = Value::nil();
  FiberState* current_ = nullptr;
  size_t fiber_nesting_ = 0;  // fibers resumed and not yet returned or yielded
  size_t native_stacks_ = 0;  // fibers' native stacks mapped now
  size_t next_native_collection_ = 4096;
  double start_time_ = 0;
  uint64_t steps_left_ = UINT64_MAX;  // counts down at back edges and calls
  uint32_t init_symbol_ = 0;
};

// --- runtime helpers shared by the interpreter and the builtins
// (stdlib/format.cpp, vm/map.cpp, vm/array.cpp)

// JavaScript's String(x) for numbers, with nan/inf/-inf.
std::string format_number(double d);
// print/str formatting; quoted: strings inside containers.
std::string format_value(VM& vm, Value v);
// The type name of type(x).
const char* type_name(Value v);
// == semantics: nums by value, strings by content, all else by identity.
// Inline up to the string compare: most comparisons (`x == nil`, a num
// against a num) are settled by the bits.
bool strings_equal(Value a, Value b);
inline bool values_equal(Value a, Value b) {
  if (a.is_num() && b.is_num()) return a.as_num() == b.as_num();  // NaN != NaN, 0 == -0
  if (a == b) return true;
  if (!a.is_ref() || !b.is_ref()) return false;
  return strings_equal(a, b);
}

// Maps. Keys by value for nums (0 and -0 one key) and strings, by identity
// otherwise. map_set and map_delete take root slots because they may allocate.
bool map_get(VM& vm, Word* map, Value key, Value* out);
void map_set(VM& vm, Value* map_slot, Value* key_slot, Value* value_slot);
bool map_delete(VM& vm, Word* map, Value key);
// Keys in insertion order, as a new array.
Value map_keys(VM& vm, Value* map_slot);
// Entry i (in insertion order, tombstones included) for iteration.
uint64_t map_entry_count(Word* map);
bool map_entry(Word* map, uint64_t i, Value* key, Value* value);

// Arrays.
void array_push(VM& vm, Value* array_slot, Value* value_slot);

}  // namespace vm
