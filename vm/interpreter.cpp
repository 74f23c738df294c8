// The interpreter loop: one computed-goto dispatch over short cases, each
// reading like its opcode's line in compiler/bytecode.h. Slow paths (misses
// of the inline caches, type errors, allocation of closures and containers)
// live in the out-of-line functions of struct Interpreter below.
#include <cmath>
#include <cstring>

#include "vm/arith.h"
#include "vm/fiber.h"
#include "vm/strings.h"
#include "vm/vm.h"

namespace vm {

using compiler::Op;

namespace {

// Calls nest this deep before `stack overflow` (docs/language.md, "Statements
// and scope"): frames are small and live off the native stack, so a
// generous limit costs nothing until it is used.
constexpr size_t kMaxCallDepth = 200'000;

inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline int32_t load_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// An index: an integral num in 0..len-1. The range is checked before the
// conversion, which is undefined for negative and huge doubles (NaN fails
// the range check too).
inline bool to_index(Value i, uint64_t len, uint64_t* out) {
  if (!i.is_num()) return false;
  double d = i.as_num();
  if (!(d >= 0 && d < static_cast<double>(len))) return false;
  uint64_t k = static_cast<uint64_t>(d);
  if (static_cast<double>(k) != d) return false;
  *out = k;
  return true;
}

// Whether r = a op b, computed on the operands' bits as doubles, is the
// result of two nums. A tagged operand is a NaN and makes r one, so a number
// r settles it with one test; only a NaN r (0/0, or a non-num) checks the
// operands. Ordered comparisons are true only when neither side is a NaN,
// so their true results need no check either.
inline bool nums_gave(double r, Value a, Value b) { return r == r || (a.is_num() && b.is_num()); }

// A bitwise operand: an integral num in the 64-bit range.
inline bool to_int64(Value v, int64_t* out) {
  if (!v.is_num()) return false;
  double d = v.as_num();
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != std::trunc(d)) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

}  // namespace

struct Interpreter {
  [[noreturn]] static void arith_error(VM& vm, const char* op, Value a, Value b) {
    if (op[0] == '+' && op[1] == 0)
      vm.error(std::string("operands of '+' must be two nums or two strings, got ") + type_name(a) + " and " +
               type_name(b));
    if (op[0] == '<' || op[0] == '>')
      vm.error(std::string("operands of '") + op + "' must be two nums or two strings, got " + type_name(a) +
               " and " + type_name(b));
    vm.error(std::string("operands of '") + op + "' must be two nums, got " + type_name(a) + " and " +
             type_name(b));
  }

  [[noreturn]] static void bitwise_error(VM& vm, const char* op, Value a, Value b) {
    auto show = [](Value v) { return v.is_num() ? format_number(v.as_num()) : std::string(type_name(v)); };
    vm.error(std::string("operands of '") + op + "' must be integral nums in the 64-bit range, got " +
             show(a) + " and " + show(b));
  }

  static Value concat(VM& vm, Value* a_slot, Value* b_slot) {
    uint64_t la = string_length(a_slot->as_ref());
    uint64_t lb = string_length(b_slot->as_ref());
    Word* s = vm.new_string_uninitialized(la + lb);
    std::memcpy(string_chars(s), string_chars(a_slot->as_ref()), la);
    std::memcpy(string_chars(s) + la, string_chars(b_slot->as_ref()), lb);
    finish_string(s);
    return Value::ref(s);
  }

  static int compare_strings(Value a, Value b) {
    std::string_view x = string_view_of(a), y = string_view_of(b);
    return x.compare(y);
  }

  static const ClassInfo* instance_class(VM& vm, Value obj) {
    if (!is_instance(obj)) return nullptr;
    return &vm.class_info(class_id_of(obj.as_ref()));
  }

  [[noreturn]] static void no_field(VM& vm, Value obj, uint32_t name) {
    const std::string& n = vm.program_.symbols[name];
    if (const ClassInfo* c = instance_class(vm, obj)) vm.error("no field '" + n + "' in " + c->name);
    vm.error("cannot read field '" + n + "' of " + type_name(obj));
  }

  // obj.name as a value: a field, else a bound method.
  static Value get_field_slow(VM& vm, Value* obj_slot, uint32_t name, InlineCache& ic) {
    const ClassInfo* c = instance_class(vm, *obj_slot);
    if (!c) no_field(vm, *obj_slot, name);
    if (auto f = c->fields.find(name); f != c->fields.end()) {
      ic.class_id = c->id;
      ic.index = f->second.index;
      ic.kind = f->second.kind == FieldKind::kRef   ? InlineCache::kRefField
                : f->second.kind == FieldKind::kNum ? InlineCache::kNumField
                                                    : InlineCache::kBoolField;
      return read_field(obj_slot->as_ref(), ic);
    }
    auto m = c->method_index.find(name);
    if (m == c->method_index.end()) no_field(vm, *obj_slot, name);
    ic.class_id = c->id;
    ic.kind = InlineCache::kMethod;
    ic.index = m->second;
    return bind_method(vm, obj_slot, c->id, m->second);
  }

  static Value read_field(Word* h, const InlineCache& ic) {
    switch (ic.kind) {
      case InlineCache::kRefField:
        return instance_field(h, ic.index);
      case InlineCache::kNumField:
        return Value::num(instance_num(h, ic.index));
      case InlineCache::kBoolField:
        return Value::boolean(instance_raw(h, ic.index) != 0);
      default:
        return Value::nil();
    }
  }

  static Value bind_method(VM& vm, Value* receiver_slot, uint32_t class_id, uint32_t method) {
    Word* bm = vm.alloc(gc::kBoundMethodClass, 2, 0);
    vm.write(bm, &bound_receiver(bm), *receiver_slot);
    vm.write(bm, &bound_method(bm), vm.class_info(class_id).methods[method]);
    return Value::ref(bm);
  }

  static void set_field_slow(VM& vm, Value* obj_slot, uint32_t name, InlineCache& ic) {
    const ClassInfo* c = instance_class(vm, *obj_slot);
    const std::string& n = vm.program_.symbols[name];
    if (!c) vm.error("cannot set field '" + n + "' of " + type_name(*obj_slot));
    auto f = c->fields.find(name);
    if (f == c->fields.end()) {
      if (c->method_index.count(name)) vm.error("cannot assign to method '" + n + "' of " + c->name);
      vm.error("no field '" + n + "' in " + c->name);
    }
    ic.class_id = c->id;
    ic.index = f->second.index;
    ic.kind = f->second.kind == FieldKind::kRef   ? InlineCache::kRefField
              : f->second.kind == FieldKind::kNum ? InlineCache::kNumField
                                                  : InlineCache::kBoolField;
    write_field(vm, obj_slot->as_ref(), ic, obj_slot[1], name);
  }

  static void write_field(VM& vm, Word* h, const InlineCache& ic, Value v, uint32_t name) {
    switch (ic.kind) {
      case InlineCache::kRefField:
        vm.write(h, &instance_field(h, ic.index), v);
        return;
      case InlineCache::kNumField:
        if (!v.is_num()) typed_field_error(vm, h, name, "num", v);
        instance_num(h, ic.index) = v.as_num();
        return;
      case InlineCache::kBoolField:
        if (!v.is_bool()) typed_field_error(vm, h, name, "bool", v);
        instance_raw(h, ic.index) = v.as_bool() ? 1 : 0;
        return;
      default:
        return;
    }
  }

  [[noreturn]] static void typed_field_error(VM& vm, Word* h, uint32_t name, const char* want, Value v) {
    vm.error(std::string("cannot store ") + type_name(v) + " in " + want + " field '" +
             vm.program_.symbols[name] + "' of " + vm.class_info(class_id_of(h)).name);
  }

  // obj.name( : the callee to place below the receiver. Methods take the
  // receiver as `this`; a field holding a function is called without it.
  static Value get_method_slow(VM& vm, Value obj, uint32_t name, InlineCache& ic) {
    const ClassInfo* c = instance_class(vm, obj);
    const std::string& n = vm.program_.symbols[name];
    if (!c) vm.error("cannot call method '" + n + "' of " + type_name(obj));
    if (auto m = c->method_index.find(name); m != c->method_index.end()) {
      ic.class_id = c->id;
      ic.kind = InlineCache::kMethod;
      ic.index = m->second;
      return c->methods[m->second];
    }
    if (auto f = c->fields.find(name); f != c->fields.end()) {
      InlineCache field{c->id, InlineCache::kRefField, f->second.index};
      if (f->second.kind == FieldKind::kNum) field.kind = InlineCache::kNumField;
      if (f->second.kind == FieldKind::kBool) field.kind = InlineCache::kBoolField;
      return read_field(obj.as_ref(), field);
    }
    vm.error("no method '" + n + "' in " + c->name);
  }

  static Value super_method(VM& vm, Value super, uint32_t name) {
    if (!is_kind(super, gc::kClassClass))
      vm.error(std::string("superclass must be a class, got ") + type_name(super));
    const ClassInfo& c = vm.class_info(class_object_id(super.as_ref()));
    auto m = c.method_index.find(name);
    if (m == c.method_index.end()) vm.error("no method '" + vm.program_.symbols[name] + "' in " + c.name);
    return c.methods[m->second];
  }

  [[noreturn]] static void arity_error(VM& vm, Value callee, int expected, int got) {
    vm.error(vm.function_name(callee) + " expects " + std::to_string(expected) + " argument" +
             (expected == 1 ? "" : "s") + ", got " + std::to_string(got));
  }

  [[noreturn]] static void index_error(VM& vm, Value container, Value index) {
    if (!index.is_num() || index.as_num() != std::trunc(index.as_num()))
      vm.error(std::string(type_name(container)) + " index must be an integral num, got " +
               (index.is_num() ? format_number(index.as_num()) : std::string(type_name(index))));
    uint64_t len = 0;
    Word* h = container.as_ref();
    switch (class_id_of(h)) {
      case gc::kArrayClass:
        len = array_length(h);
        break;
      case gc::kStringClass:
        len = string_length(h);
        break;
      case gc::kNumArrayClass:
        len = numarray_length(h);
        break;
      default:
        break;
    }
    vm.error("index " + format_number(index.as_num()) + " out of range for " + type_name(container) +
             " of length " + std::to_string(len));
  }

  static Value get_index_slow(VM& vm, Value* a_slot) {
    Value a = a_slot[0], i = a_slot[1];
    if (!a.is_ref()) vm.error(std::string("cannot index ") + type_name(a));
    Word* h = a.as_ref();
    switch (class_id_of(h)) {
      case gc::kMapClass: {
        Value out;
        return map_get(vm, h, i, &out) ? out : Value::nil();
      }
      case gc::kArrayClass: {
        uint64_t k;
        if (!to_index(i, array_length(h), &k)) index_error(vm, a, i);
        return array_elements(h)[k];
      }
      case gc::kStringClass: {
        uint64_t k;
        if (!to_index(i, string_length(h), &k)) index_error(vm, a, i);
        return vm.byte_string(static_cast<unsigned char>(string_chars(h)[k]));
      }
      case gc::kNumArrayClass: {
        uint64_t k;
        if (!to_index(i, numarray_length(h), &k)) index_error(vm, a, i);
        return Value::num(numarray_data(h)[k]);
      }
      default:
        vm.error(std::string("cannot index ") + type_name(a));
    }
  }

  static void set_index_slow(VM& vm, Value* a_slot) {
    Value a = a_slot[0], i = a_slot[1], v = a_slot[2];
    if (!a.is_ref()) vm.error(std::string("cannot index ") + type_name(a));
    Word* h = a.as_ref();
    switch (class_id_of(h)) {
      case gc::kMapClass:
        map_set(vm, &a_slot[0], &a_slot[1], &a_slot[2]);
        return;
      case gc::kArrayClass: {
        uint64_t k;
        if (!to_index(i, array_length(h), &k)) index_error(vm, a, i);
        Word* storage = array_storage(h).as_ref();
        vm.write(storage, &storage_slots(storage)[k], v);
        return;
      }
      case gc::kNumArrayClass: {
        uint64_t k;
        if (!to_index(i, numarray_length(h), &k)) index_error(vm, a, i);
        if (!v.is_num()) vm.error(std::string("cannot store ") + type_name(v) + " in numarray");
        numarray_data(h)[k] = v.as_num();
        return;
      }
      case gc::kStringClass:
        vm.error("cannot store into a string: strings are immutable");
      default:
        vm.error(std::string("cannot index ") + type_name(a));
    }
  }

  static bool is_a(VM& vm, Value x, Value c) {
    if (!is_kind(c, gc::kClassClass))
      vm.error(std::string("right operand of 'is' must be a class, got ") + type_name(c));
    if (!is_instance(x)) return false;
    int64_t want = class_object_id(c.as_ref());
    for (int64_t id = class_id_of(x.as_ref()); id >= 0;
         id = vm.class_info(static_cast<uint32_t>(id)).super_id)
      if (id == want) return true;
    return false;
  }

  static Value make_closure(VM& vm, FiberState* fiber, Value* base, const uint8_t*& ip, FnInfo* target) {
    uint16_t n = target->fn->num_upvalues;
    Word* c = vm.alloc(gc::kClosureClass, n, 1);
    c[1] = reinterpret_cast<Word>(target);
    Word* enclosing = base[0].as_ref();
    for (uint16_t i = 0; i < n; ++i) {
      uint8_t from_local = ip[0];
      uint16_t index = load_u16(ip + 1);
      ip += 3;
      Value cell = from_local ? base[index] : closure_upvalue(enclosing, index);
      closure_upvalue(c, i) = cell;  // a fresh object: initialising stores
    }
    return Value::ref(c);
  }

  static Value make_array(VM& vm, Value* elems, uint32_t n) {
    Value arr = vm.new_array(n, Value::nil());
    Value* e = array_elements(arr.as_ref());
    for (uint32_t i = 0; i < n; ++i) e[i] = elems[i];
    return arr;
  }

  // Frames may be anywhere in the stack when it grows: everything that
  // points into it moves by the same delta.
  static ptrdiff_t ensure_stack(VM& vm, FiberState* fiber, Value* needed_top) {
    if (needed_top <= fiber->stack_end) return 0;
    Value* old = fiber->stack;
    vm.grow_stack(fiber, static_cast<size_t>(needed_top - fiber->stack));
    return fiber->stack - old;
  }

  [[noreturn]] static void not_callable(VM& vm, Value v) {
    vm.error(std::string("can only call functions and classes, got ") + type_name(v));
  }

  static std::string undefined_global(VM& vm, uint32_t g) {
    return "undefined variable '" + vm.program_.globals[g] + "'";
  }

  // for-in: the three hidden slots are [iterable, key snapshot, index].
  static void iter_prep(VM& vm, Value* slots) {
    Value x = slots[0];
    slots[2] = Value::num(0);
    slots[1] = Value::nil();
    if (is_kind(x, gc::kArrayClass) || is_kind(x, gc::kStringClass) || is_kind(x, gc::kNumArrayClass)) return;
    if (is_kind(x, gc::kMapClass)) {
      slots[1] = map_keys(vm, &slots[0]);
      return;
    }
    vm.error(std::string("cannot iterate over ") + type_name(x));
  }

  // The next element of a string, numarray or map (IterNext reads arrays
  // inline).
  static bool iter_next(VM& vm, Value* slots, Value* out) {
    Word* h = slots[0].as_ref();
    uint64_t i = static_cast<uint64_t>(slots[2].as_num());
    switch (class_id_of(h)) {
      case gc::kStringClass:
        if (i >= string_length(h)) return false;
        *out = vm.byte_string(static_cast<unsigned char>(string_chars(h)[i]));
        break;
      case gc::kNumArrayClass:
        if (i >= numarray_length(h)) return false;
        *out = Value::num(numarray_data(h)[i]);
        break;
      default: {  // map: the keys present at the start, skipping deleted ones
        Word* keys = slots[1].as_ref();
        for (;;) {
          if (i >= array_length(keys)) return false;
          Value k = array_elements(keys)[i++];
          Value ignored;
          if (map_get(vm, h, k, &ignored)) {
            *out = k;
            break;
          }
        }
        slots[2] = Value::num(static_cast<double>(i));
        return true;
      }
    }
    slots[2] = Value::num(static_cast<double>(i + 1));
    return true;
  }
};

void VM::execute(FiberState* fiber) {
#define GCLAB_OP_LABEL(name) &&op_##name,
  static void* const kDispatch[] = {GCLAB_OPCODES(GCLAB_OP_LABEL)};
#undef GCLAB_OP_LABEL

  Value* sp = fiber->sp;
  Value* base = nullptr;
  FnInfo* fn = nullptr;
  const uint8_t* ip = nullptr;
  const Value* constants = nullptr;
  InlineCache* ics = nullptr;
  int argc = 0;
  Value* callee = nullptr;

#define LOAD_FRAME()                        \
  do {                                      \
    const Frame& f_ = fiber->frames.back(); \
    base = f_.base;                         \
    fn = f_.fn;                             \
    ip = f_.ip;                             \
    constants = fn->constants.data();       \
    ics = fn->ics.data();                   \
  } while (0)
#define SYNC() (fiber->sp = sp)
#define DISPATCH() goto* kDispatch[*ip++]
#define U16() (ip += 2, load_u16(ip - 2))
#define U32() (ip += 4, load_u32(ip - 4))
#define I32() (ip += 4, load_i32(ip - 4))
#define NUM_BINARY(op, sym)                       \
  do {                                            \
    Value a = sp[-2], b = sp[-1];                 \
    double r = a.as_num() op b.as_num();          \
    if (!nums_gave(r, a, b)) [[unlikely]]         \
      Interpreter::arith_error(*this, sym, a, b); \
    sp[-2] = Value::num(r);                       \
    --sp;                                         \
  } while (0)
// r = a op b for an ordered comparison of nums or strings.
#define ORDER(a, b, op, sym, r)                                         \
  do {                                                                  \
    r = a.as_num() op b.as_num();                                       \
    if (!r && !(a.is_num() && b.is_num())) [[unlikely]] {               \
      if (is_kind(a, gc::kStringClass) && is_kind(b, gc::kStringClass)) \
        r = Interpreter::compare_strings(a, b) op 0;                    \
      else                                                              \
        Interpreter::arith_error(*this, sym, a, b);                     \
    }                                                                   \
  } while (0)
#define COMPARE(op, sym)          \
  do {                            \
    Value a = sp[-2], b = sp[-1]; \
    bool r;                       \
    ORDER(a, b, op, sym, r);      \
    sp[-2] = Value::boolean(r);   \
    --sp;                         \
  } while (0)
// On an inline-cache hit for a field of obj: dest = the field, and the next
// instruction.
#define READ_FIELD_HIT(obj, ic, dest)                   \
  do {                                                  \
    if (obj.is_ref()) [[likely]] {                      \
      Word* h = obj.as_ref();                           \
      if (class_id_of(h) == ic.class_id) {              \
        if (ic.kind == InlineCache::kRefField) {        \
          dest = instance_field(h, ic.index);           \
          DISPATCH();                                   \
        }                                               \
        if (ic.kind == InlineCache::kNumField) {        \
          dest = Value::num(instance_num(h, ic.index)); \
          DISPATCH();                                   \
        }                                               \
        if (ic.kind != InlineCache::kMethod) {          \
          dest = Interpreter::read_field(h, ic);        \
          DISPATCH();                                   \
        }                                               \
      }                                                 \
    }                                                   \
  } while (0)
// obj.name = v, with name and the inline cache the next operands; the
// slow path reads obj and v from slots[0] and slots[1].
#define SET_FIELD(obj, v, slots)                                               \
  do {                                                                         \
    uint32_t name = U32();                                                     \
    InlineCache& ic = ics[U32()];                                              \
    if (obj.is_ref() && class_id_of(obj.as_ref()) == ic.class_id) [[likely]] { \
      Word* h = obj.as_ref();                                                  \
      if (ic.kind == InlineCache::kRefField) {                                 \
        write(h, &instance_field(h, ic.index), v);                             \
      } else if (ic.kind == InlineCache::kNumField && v.is_num()) {            \
        instance_num(h, ic.index) = v.as_num();                                \
      } else {                                                                 \
        Interpreter::write_field(*this, h, ic, v, name);                       \
      }                                                                        \
    } else {                                                                   \
      SYNC();                                                                  \
      Interpreter::set_field_slow(*this, slots, name, ic);                     \
    }                                                                          \
  } while (0)
// a -> a op base[slot], for nums.
#define NUM_LOCAL(op, sym)                        \
  do {                                            \
    Value a = sp[-1], b = base[U16()];            \
    double r = a.as_num() op b.as_num();          \
    if (!nums_gave(r, a, b)) [[unlikely]]         \
      Interpreter::arith_error(*this, sym, a, b); \
    sp[-1] = Value::num(r);                       \
  } while (0)
// Jumps by off unless a op b (nums or strings).
#define COMPARE_JUMP_ON(a, b, off, op, sym) \
  do {                                      \
    bool r;                                 \
    ORDER(a, b, op, sym, r);                \
    if (!r) ip += off;                      \
  } while (0)
// a b -> (jumps unless a op b)
#define COMPARE_JUMP(op, sym)            \
  do {                                   \
    int32_t off = I32();                 \
    Value a = sp[-2], b = sp[-1];        \
    COMPARE_JUMP_ON(a, b, off, op, sym); \
    sp -= 2;                             \
  } while (0)
// a -> (jumps unless a op base[slot])
#define COMPARE_JUMP_LOCAL(op, sym)      \
  do {                                   \
    Value b = base[U16()];               \
    int32_t off = I32();                 \
    Value a = sp[-1];                    \
    COMPARE_JUMP_ON(a, b, off, op, sym); \
    --sp;                                \
  } while (0)
// (jumps unless base[slot a] op base[slot b])
#define COMPARE_JUMP_LOCALS(op, sym)     \
  do {                                   \
    Value a = base[U16()];               \
    Value b = base[U16()];               \
    int32_t off = I32();                 \
    COMPARE_JUMP_ON(a, b, off, op, sym); \
  } while (0)
// a -> a op k, for nums.
#define NUM_CONST(op, sym)                        \
  do {                                            \
    Value a = sp[-1], b = constants[U32()];       \
    double r = a.as_num() op b.as_num();          \
    if (!nums_gave(r, a, b)) [[unlikely]]         \
      Interpreter::arith_error(*this, sym, a, b); \
    sp[-1] = Value::num(r);                       \
  } while (0)
// -> base[slot a] op base[slot b], for nums.
#define NUM_LOCALS(op, sym)                       \
  do {                                            \
    Value a = base[U16()];                        \
    Value b = base[U16()];                        \
    double r = a.as_num() op b.as_num();          \
    if (!nums_gave(r, a, b)) [[unlikely]]         \
      Interpreter::arith_error(*this, sym, a, b); \
    *sp++ = Value::num(r);                        \
  } while (0)
#define BITWISE(expr, sym)                                    \
  do {                                                        \
    int64_t x, y;                                             \
    if (!to_int64(sp[-2], &x) || !to_int64(sp[-1], &y))       \
      Interpreter::bitwise_error(*this, sym, sp[-2], sp[-1]); \
    sp[-2] = Value::num(static_cast<double>(expr));           \
    --sp;                                                     \
  } while (0)

  LOAD_FRAME();
  try {
    DISPATCH();

  op_Const:
    *sp++ = constants[U32()];
    DISPATCH();
  op_Nil:
    *sp++ = Value::nil();
    DISPATCH();
  op_True:
    *sp++ = Value::boolean(true);
    DISPATCH();
  op_False:
    *sp++ = Value::boolean(false);
    DISPATCH();
  op_Pop:
    --sp;
    DISPATCH();
  op_PopN:
    sp -= U16();
    DISPATCH();
  op_Dup:
    sp[0] = sp[-1];
    ++sp;
    DISPATCH();
  op_Dup2:
    sp[0] = sp[-2];
    sp[1] = sp[-1];
    sp += 2;
    DISPATCH();
  op_GetLocal:
    *sp++ = base[U16()];
    DISPATCH();
  op_SetLocal:
    base[U16()] = sp[-1];
    DISPATCH();
  op_GetBoxed:
    *sp++ = cell_value(base[U16()].as_ref());
    DISPATCH();
  op_SetBoxed : {
    Word* cell = base[U16()].as_ref();
    write(cell, &cell_value(cell), sp[-1]);
    DISPATCH();
  }
  op_Box : {
    uint16_t slot = U16();
    SYNC();
    Word* cell = alloc(gc::kCellClass, 1, 0);
    cell_value(cell) = base[slot];
    base[slot] = Value::ref(cell);
    DISPATCH();
  }
  op_Rebox : {
    uint16_t slot = U16();
    SYNC();
    Word* cell = alloc(gc::kCellClass, 1, 0);
    cell_value(cell) = cell_value(base[slot].as_ref());
    base[slot] = Value::ref(cell);
    DISPATCH();
  }
  op_GetUpval:
    *sp++ = cell_value(closure_upvalue(base[0].as_ref(), U16()).as_ref());
    DISPATCH();
  op_SetUpval : {
    Word* cell = closure_upvalue(base[0].as_ref(), U16()).as_ref();
    write(cell, &cell_value(cell), sp[-1]);
    DISPATCH();
  }
  op_GetGlobal : {
    uint32_t g = U32();
    Value v = globals_[g];
    if (v.is_undefined()) [[unlikely]]
      error(Interpreter::undefined_global(*this, g));
    *sp++ = v;
    DISPATCH();
  }
  op_SetGlobal : {
    uint32_t g = U32();
    if (globals_[g].is_undefined()) [[unlikely]]
      error(Interpreter::undefined_global(*this, g));
    globals_[g] = sp[-1];
    DISPATCH();
  }
  op_DefineGlobal:
    globals_[U32()] = *--sp;
    DISPATCH();
  op_GetField : {
    uint32_t name = U32();
    InlineCache& ic = ics[U32()];
    Value obj = sp[-1];
    READ_FIELD_HIT(obj, ic, sp[-1]);
    SYNC();
    sp[-1] = Interpreter::get_field_slow(*this, &sp[-1], name, ic);
    DISPATCH();
  }
  op_SetField : {
    Value obj = sp[-2], v = sp[-1];
    SET_FIELD(obj, v, &sp[-2]);
    sp[-2] = v;
    --sp;
    DISPATCH();
  }
  op_StoreField : {
    Value obj = sp[-2], v = sp[-1];
    SET_FIELD(obj, v, &sp[-2]);
    sp -= 2;
    DISPATCH();
  }
  // The receiver and value pair up in C++ locals: set_field_slow allocates
  // nothing, so they need no root.
  op_SetLocalField : {
    Value slots[2] = {base[U16()], sp[-1]};
    SET_FIELD(slots[0], slots[1], slots);
    DISPATCH();
  }
  op_StoreLocalField : {
    Value slots[2] = {base[U16()], *--sp};
    SET_FIELD(slots[0], slots[1], slots);
    DISPATCH();
  }
  op_GetIndex : {
    Value a = sp[-2], i = sp[-1];
    if (a.is_ref() && i.is_num()) {
      Word* h = a.as_ref();
      uint64_t k;
      if (class_id_of(h) == gc::kArrayClass && to_index(i, array_length(h), &k)) {
        sp[-2] = array_elements(h)[k];
        --sp;
        DISPATCH();
      }
      if (class_id_of(h) == gc::kNumArrayClass && to_index(i, numarray_length(h), &k)) {
        sp[-2] = Value::num(numarray_data(h)[k]);
        --sp;
        DISPATCH();
      }
    }
    SYNC();
    sp[-2] = Interpreter::get_index_slow(*this, &sp[-2]);
    --sp;
    DISPATCH();
  }
  op_SetIndex : {
    Value a = sp[-3], i = sp[-2];
    if (a.is_ref() && i.is_num()) {
      Word* h = a.as_ref();
      uint64_t k;
      if (class_id_of(h) == gc::kArrayClass && to_index(i, array_length(h), &k)) {
        Word* storage = array_storage(h).as_ref();
        write(storage, &storage_slots(storage)[k], sp[-1]);
        sp[-3] = sp[-1];
        sp -= 2;
        DISPATCH();
      }
      if (class_id_of(h) == gc::kNumArrayClass && sp[-1].is_num() && to_index(i, numarray_length(h), &k)) {
        numarray_data(h)[k] = sp[-1].as_num();
        sp[-3] = sp[-1];
        sp -= 2;
        DISPATCH();
      }
    }
    SYNC();
    Interpreter::set_index_slow(*this, &sp[-3]);
    sp[-3] = sp[-1];
    sp -= 2;
    DISPATCH();
  }
  op_GetMethod : {
    uint32_t name = U32();
    InlineCache& ic = ics[U32()];
    Value obj = sp[-1];
    if (obj.is_ref() && class_id_of(obj.as_ref()) == ic.class_id && ic.kind == InlineCache::kMethod)
        [[likely]] {
      sp[-1] = classes_[ic.class_id - gc::kFirstUserClass]->methods[ic.index];
    } else {
      SYNC();
      sp[-1] = Interpreter::get_method_slow(*this, obj, name, ic);
    }
    *sp++ = obj;
    DISPATCH();
  }
  op_CallMethod : {
    argc = U16();
    callee = sp - argc - 2;
    if (is_kind(*callee, gc::kClosureClass) && closure_fn(callee->as_ref())->fn->is_method) [[likely]] {
      ++argc;  // `this`
      goto call_closure;
    }
    // A field holding a function: call it without the receiver.
    std::memmove(callee + 1, callee + 2, sizeof(Value) * argc);
    --sp;
    goto call_value;
  }
  op_GetSuper : {
    uint32_t name = U32();
    SYNC();
    Value method = Interpreter::super_method(*this, sp[-1], name);
    sp[-1] = method;  // root it while the bound method is allocated
    Word* bm = alloc(gc::kBoundMethodClass, 2, 0);
    bound_receiver(bm) = sp[-2];
    bound_method(bm) = sp[-1];
    sp[-2] = Value::ref(bm);
    --sp;
    DISPATCH();
  }
  op_SuperInvoke : {
    uint32_t name = U32();
    argc = U16();
    callee = sp - argc - 2;
    Value method = Interpreter::super_method(*this, callee[1], name);
    callee[1] = callee[0];
    callee[0] = method;
    ++argc;
    goto call_closure;
  }
  op_Call:
    argc = U16();
    callee = sp - argc - 1;
    goto call_value;

  call_value : {
    // callee[0] is the function value, callee[1..argc] its arguments.
    Value f = *callee;
    if (f.is_ref()) [[likely]] {
      Word* h = f.as_ref();
      switch (class_id_of(h)) {
        case gc::kClosureClass:
          goto call_closure;
        case gc::kBoundMethodClass: {
          // kStackSlack leaves room for the inserted receiver.
          std::memmove(callee + 2, callee + 1, sizeof(Value) * argc);
          callee[1] = bound_receiver(h);
          callee[0] = bound_method(h);
          ++sp;
          ++argc;
          goto call_closure;
        }
        case gc::kClassClass: {
          const ClassInfo& c = class_info(class_object_id(h));
          if (c.init < 0 && argc != 0) Interpreter::arity_error(*this, f, 0, argc);
          SYNC();
          Word* obj = alloc(class_object_id(callee->as_ref()), c.num_ref_fields, c.num_raw_fields);
          if (c.init < 0) {
            *callee = Value::ref(obj);
            sp = callee + 1;
            DISPATCH();
          }
          std::memmove(callee + 2, callee + 1, sizeof(Value) * argc);
          callee[1] = Value::ref(obj);
          callee[0] = c.methods[static_cast<size_t>(c.init)];
          ++sp;
          ++argc;
          goto call_closure;
        }
        case gc::kBuiltinClass: {
          const BuiltinInfo* b = builtin_info(h);
          if (argc < b->min_args || (b->max_args >= 0 && argc > b->max_args)) [[unlikely]] {
            std::string want = b->min_args == b->max_args ? std::to_string(b->min_args)
                               : b->max_args < 0
                                   ? "at least " + std::to_string(b->min_args)
                                   : std::to_string(b->min_args) + " to " + std::to_string(b->max_args);
            error(std::string(b->name) + " expects " + want + " argument" +
                  (b->min_args == 1 && b->max_args == 1 ? "" : "s") + ", got " + std::to_string(argc));
          }
          SYNC();
          Value r = b->fn(*this, callee + 1, argc);
          *callee = r;
          sp = callee + 1;
          DISPATCH();
        }
        default:
          break;
      }
    }
    SYNC();
    Interpreter::not_callable(*this, f);
  }

  call_closure : {
    // callee[0] is a closure; argc counts `this` for methods.
    FnInfo* target = closure_fn(callee->as_ref());
    if (argc != target->argc) [[unlikely]] {
      SYNC();
      const compiler::Function& tf = *target->fn;
      Interpreter::arity_error(*this, *callee, tf.arity, argc - (tf.is_method ? 1 : 0));
    }
    if (--steps_left_ == 0) [[unlikely]]
      error("step limit reached");
    if (fiber->frames.full()) [[unlikely]] {
      SYNC();
      if (fiber->frames.size() >= kMaxCallDepth) error("stack overflow");
      fiber->frames.grow(kMaxCallDepth);
    }
    Value* top = callee + target->max_slots + kStackSlack;
    if (top > fiber->stack_end) [[unlikely]] {
      SYNC();
      ptrdiff_t d = Interpreter::ensure_stack(*this, fiber, top);
      sp += d, base += d, callee += d, top += d;
    }
    if (top > fiber->high_water) fiber->high_water = top;
    fiber->frames.back().ip = ip;
    fiber->frames.push_unchecked(Frame{callee, target->code, target});
    base = callee;
    fn = target;
    ip = target->code;
    constants = fn->constants.data();
    ics = fn->ics.data();
    DISPATCH();
  }

  op_Return : {
    Value result = sp[-1];
    sp = base;
    *sp++ = result;
    fiber->frames.pop();
    if (fiber->frames.empty()) {
      fiber->sp = sp;
      return;
    }
    LOAD_FRAME();
    DISPATCH();
  }
  op_Closure : {
    FnInfo* target = fns_[fn->fn->constants[U32()].index].get();
    SYNC();
    Value c = Interpreter::make_closure(*this, fiber, base, ip, target);
    *sp++ = c;
    DISPATCH();
  }
  op_Class : {
    const compiler::ClassDesc& desc = *program_.classes[fn->fn->constants[U32()].index];
    size_t n = desc.methods.size();
    Value* first = sp - n - (desc.has_super ? 1 : 0);
    SYNC();
    Value cls = create_class(desc, desc.has_super ? first : nullptr, sp - n, n);
    sp = first;
    *sp++ = cls;
    DISPATCH();
  }
  op_Array : {
    uint32_t n = U32();
    SYNC();
    Value arr = Interpreter::make_array(*this, sp - n, n);
    sp -= n;
    *sp++ = arr;
    DISPATCH();
  }
  op_Map : {
    uint32_t n = U32();
    Value* pairs = sp - 2 * n;
    SYNC();
    // The map lives in a scratch slot above the pairs while they are stored.
    *sp = new_map();
    ++sp;
    SYNC();
    for (uint32_t i = 0; i < n; ++i) map_set(*this, &sp[-1], &pairs[2 * i], &pairs[2 * i + 1]);
    pairs[0] = sp[-1];
    sp = pairs + 1;
    DISPATCH();
  }
  op_IterPrep : {
    uint16_t slot = U16();
    SYNC();
    Interpreter::iter_prep(*this, base + slot);
    DISPATCH();
  }
  op_IterNext : {
    uint16_t slot = U16();
    int32_t off = I32();
    Value* hidden = base + slot;
    Word* h = hidden[0].as_ref();
    if (class_id_of(h) == gc::kArrayClass) [[likely]] {
      uint64_t i = static_cast<uint64_t>(hidden[2].as_num());
      if (i < array_length(h)) {
        *sp++ = array_elements(h)[i];
        hidden[2] = Value::num(static_cast<double>(i + 1));
      } else {
        ip += off;
      }
      DISPATCH();
    }
    Value v;
    if (Interpreter::iter_next(*this, hidden, &v)) {
      *sp++ = v;
    } else {
      ip += off;
    }
    DISPATCH();
  }
  op_Import : {
    uint32_t m = U32();
    if (module_loaded_[m]) {
      *sp++ = Value::nil();
      DISPATCH();
    }
    module_loaded_[m] = true;
    SYNC();
    Value c = make_closure_value(fns_[program_.modules[m].function].get());
    *sp = c;
    callee = sp++;
    argc = 0;
    goto call_closure;
  }
  op_ReplPrint : {
    Value v = *--sp;
    SYNC();
    if (!v.is_nil()) {
      std::string s = format_value(*this, v);
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::fputc('\n', stdout);
    }
    DISPATCH();
  }
  op_Jump : {
    int32_t off = I32();
    if (off < 0 && --steps_left_ == 0) [[unlikely]]
      error("step limit reached");
    ip += off;
    DISPATCH();
  }
  op_JumpIfFalse : {
    int32_t off = I32();
    if ((--sp)->is_falsy()) ip += off;
    DISPATCH();
  }
  op_JumpIfFalseKeep : {
    int32_t off = I32();
    if (sp[-1].is_falsy())
      ip += off;
    else
      --sp;
    DISPATCH();
  }
  op_JumpIfTrueKeep : {
    int32_t off = I32();
    if (!sp[-1].is_falsy())
      ip += off;
    else
      --sp;
    DISPATCH();
  }
  op_Add : {
    Value a = sp[-2], b = sp[-1];
    double r = a.as_num() + b.as_num();
    if (nums_gave(r, a, b)) [[likely]] {
      sp[-2] = Value::num(r);
      --sp;
      DISPATCH();
    }
    goto add_other;
  }
  op_AddLocal : {
    Value a = sp[-1], b = base[U16()];
    double r = a.as_num() + b.as_num();
    if (nums_gave(r, a, b)) [[likely]] {
      sp[-1] = Value::num(r);
      DISPATCH();
    }
    *sp++ = b;  // the slot the codegen counted for the GetLocal
    goto add_other;
  }
  op_AddConst : {
    Value a = sp[-1], b = constants[U32()];
    double r = a.as_num() + b.as_num();
    if (nums_gave(r, a, b)) [[likely]] {
      sp[-1] = Value::num(r);
      DISPATCH();
    }
    *sp++ = b;  // the slot the codegen counted for the Const
    goto add_other;
  }
  op_AddLocals : {
    Value a = base[U16()];
    Value b = base[U16()];
    double r = a.as_num() + b.as_num();
    if (nums_gave(r, a, b)) [[likely]] {
      *sp++ = Value::num(r);
      DISPATCH();
    }
    *sp++ = a;  // the slots the codegen counted for the GetLocals
    *sp++ = b;
    goto add_other;
  }
  add_other : {
    Value a = sp[-2], b = sp[-1];
    if (is_kind(a, gc::kStringClass) && is_kind(b, gc::kStringClass)) {
      SYNC();
      Value s = Interpreter::concat(*this, &sp[-2], &sp[-1]);
      sp[-2] = s;
      --sp;
      DISPATCH();
    }
    Interpreter::arith_error(*this, "+", a, b);
  }
  op_Sub:
    NUM_BINARY(-, "-");
    DISPATCH();
  op_Mul:
    NUM_BINARY(*, "*");
    DISPATCH();
  op_Div:
    NUM_BINARY(/, "/");
    DISPATCH();
  op_SubConst:
    NUM_CONST(-, "-");
    DISPATCH();
  op_MulConst:
    NUM_CONST(*, "*");
    DISPATCH();
  op_DivConst:
    NUM_CONST(/, "/");
    DISPATCH();
  op_ModConst : {
    Value a = sp[-1], b = constants[U32()];
    if (!a.is_num() || !b.is_num()) Interpreter::arith_error(*this, "%", a, b);
    sp[-1] = Value::num(num_mod(a.as_num(), b.as_num()));
    DISPATCH();
  }
  op_SubLocals:
    NUM_LOCALS(-, "-");
    DISPATCH();
  op_MulLocals:
    NUM_LOCALS(*, "*");
    DISPATCH();
  op_DivLocals:
    NUM_LOCALS(/, "/");
    DISPATCH();
  op_Mod : {
    Value a = sp[-2], b = sp[-1];
    if (!a.is_num() || !b.is_num()) Interpreter::arith_error(*this, "%", a, b);
    sp[-2] = Value::num(num_mod(a.as_num(), b.as_num()));
    --sp;
    DISPATCH();
  }
  op_BitAnd:
    BITWISE(x & y, "&");
    DISPATCH();
  op_BitOr:
    BITWISE(x | y, "|");
    DISPATCH();
  op_BitXor:
    BITWISE(x ^ y, "^");
    DISPATCH();
  op_Shl:
    BITWISE(static_cast<int64_t>(static_cast<uint64_t>(x) << (y & 63)), "<<");
    DISPATCH();
  op_Shr:
    BITWISE(x >> (y & 63), ">>");
    DISPATCH();
  op_Eq : {
    Value a = sp[-2], b = sp[-1];
    sp[-2] = Value::boolean(values_equal(a, b));
    --sp;
    DISPATCH();
  }
  op_Ne : {
    Value a = sp[-2], b = sp[-1];
    sp[-2] = Value::boolean(!values_equal(a, b));
    --sp;
    DISPATCH();
  }
  op_Lt:
    COMPARE(<, "<");
    DISPATCH();
  op_Le:
    COMPARE(<=, "<=");
    DISPATCH();
  op_Gt:
    COMPARE(>, ">");
    DISPATCH();
  op_Ge:
    COMPARE(>=, ">=");
    DISPATCH();
  op_Is : {
    bool r = Interpreter::is_a(*this, sp[-2], sp[-1]);
    sp[-2] = Value::boolean(r);
    --sp;
    DISPATCH();
  }
  op_Neg : {
    Value a = sp[-1];
    if (!a.is_num()) error(std::string("operand of '-' must be a num, got ") + type_name(a));
    sp[-1] = Value::num(-a.as_num());
    DISPATCH();
  }
  op_Not:
    sp[-1] = Value::boolean(sp[-1].is_falsy());
    DISPATCH();
  op_BitNot : {
    int64_t x;
    if (!to_int64(sp[-1], &x)) {
      Value a = sp[-1];
      error(std::string("operand of '~' must be an integral num in the 64-bit range, got ") +
            (a.is_num() ? format_number(a.as_num()) : std::string(type_name(a))));
    }
    sp[-1] = Value::num(static_cast<double>(~x));
    DISPATCH();
  }
  op_StoreLocal:
    base[U16()] = *--sp;
    DISPATCH();
  op_StoreBoxed : {
    Word* cell = base[U16()].as_ref();
    write(cell, &cell_value(cell), *--sp);
    DISPATCH();
  }
  op_StoreUpval : {
    Word* cell = closure_upvalue(base[0].as_ref(), U16()).as_ref();
    write(cell, &cell_value(cell), *--sp);
    DISPATCH();
  }
  op_StoreGlobal : {
    uint32_t g = U32();
    if (globals_[g].is_undefined()) [[unlikely]]
      error(Interpreter::undefined_global(*this, g));
    globals_[g] = *--sp;
    DISPATCH();
  }
  op_GetLocalField : {
    // The local is tested where it lies; only a miss pushes it.
    Value obj = base[U16()];
    uint32_t name = U32();
    InlineCache& ic = ics[U32()];
    READ_FIELD_HIT(obj, ic, *sp++);
    *sp++ = obj;
    SYNC();
    sp[-1] = Interpreter::get_field_slow(*this, &sp[-1], name, ic);
    DISPATCH();
  }
  op_IsNil:
    sp[-1] = Value::boolean(sp[-1].is_nil());
    DISPATCH();
  op_NotNil:
    sp[-1] = Value::boolean(!sp[-1].is_nil());
    DISPATCH();
  op_JumpIfTrue : {
    int32_t off = I32();
    if (!(--sp)->is_falsy()) ip += off;
    DISPATCH();
  }
  op_JumpIfNil : {
    int32_t off = I32();
    if ((--sp)->is_nil()) ip += off;
    DISPATCH();
  }
  op_JumpIfNotNil : {
    int32_t off = I32();
    if (!(--sp)->is_nil()) ip += off;
    DISPATCH();
  }
  op_JumpUnlessEq : {
    int32_t off = I32();
    sp -= 2;
    if (!values_equal(sp[0], sp[1])) ip += off;
    DISPATCH();
  }
  op_JumpUnlessNe : {
    int32_t off = I32();
    sp -= 2;
    if (values_equal(sp[0], sp[1])) ip += off;
    DISPATCH();
  }
  op_SubLocal:
    NUM_LOCAL(-, "-");
    DISPATCH();
  op_MulLocal:
    NUM_LOCAL(*, "*");
    DISPATCH();
  op_DivLocal:
    NUM_LOCAL(/, "/");
    DISPATCH();
  op_JumpUnlessLt:
    COMPARE_JUMP(<, "<");
    DISPATCH();
  op_JumpUnlessLe:
    COMPARE_JUMP(<=, "<=");
    DISPATCH();
  op_JumpUnlessGt:
    COMPARE_JUMP(>, ">");
    DISPATCH();
  op_JumpUnlessGe:
    COMPARE_JUMP(>=, ">=");
    DISPATCH();
  op_JumpIfNilLocal : {
    Value v = base[U16()];
    int32_t off = I32();
    if (v.is_nil()) ip += off;
    DISPATCH();
  }
  op_JumpIfNotNilLocal : {
    Value v = base[U16()];
    int32_t off = I32();
    if (!v.is_nil()) ip += off;
    DISPATCH();
  }
  op_JumpUnlessLtLocal:
    COMPARE_JUMP_LOCAL(<, "<");
    DISPATCH();
  op_JumpUnlessLeLocal:
    COMPARE_JUMP_LOCAL(<=, "<=");
    DISPATCH();
  op_JumpUnlessGtLocal:
    COMPARE_JUMP_LOCAL(>, ">");
    DISPATCH();
  op_JumpUnlessGeLocal:
    COMPARE_JUMP_LOCAL(>=, ">=");
    DISPATCH();
  op_JumpUnlessLtLocals:
    COMPARE_JUMP_LOCALS(<, "<");
    DISPATCH();
  op_JumpUnlessLeLocals:
    COMPARE_JUMP_LOCALS(<=, "<=");
    DISPATCH();
  op_JumpUnlessGtLocals:
    COMPARE_JUMP_LOCALS(>, ">");
    DISPATCH();
  op_JumpUnlessGeLocals:
    COMPARE_JUMP_LOCALS(>=, ">=");
    DISPATCH();
  } catch (RuntimeError& e) {
    fiber->frames.back().ip = ip;
    for (size_t i = fiber->frames.size(); i-- > 0;) e.trace.push_back(trace_line(fiber->frames[i]));
    unwind(fiber);
    throw;
  } catch (...) {
    unwind(fiber);
    throw;
  }
#undef LOAD_FRAME
#undef SYNC
#undef DISPATCH
#undef U16
#undef U32
#undef I32
#undef NUM_BINARY
#undef COMPARE
#undef ORDER
#undef COMPARE_JUMP_ON
#undef COMPARE_JUMP
#undef COMPARE_JUMP_LOCAL
#undef COMPARE_JUMP_LOCALS
#undef NUM_CONST
#undef NUM_LOCALS
#undef READ_FIELD_HIT
#undef SET_FIELD
#undef NUM_LOCAL
#undef BITWISE
}

}  // namespace vm
