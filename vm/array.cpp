// Arrays and strings: allocation and growth.
#include <algorithm>
#include <string>

#include "vm/strings.h"
#include "vm/vm.h"

namespace vm {

namespace {

// Beyond these the header's size code cannot describe the object (about
// 2^31 elements or 2^34 bytes).
constexpr uint64_t kMaxRefs = gc::SizeCode::max(gc::SizeCode::kRefMantissaBits);
constexpr uint64_t kMaxRaw = gc::SizeCode::max(gc::SizeCode::kRawMantissaBits);

constexpr uint64_t kMinArrayCapacity = 4;

}  // namespace

Value VM::new_array(uint64_t length, Value fill) {
  check_fits("an array", length, "elements", gc::object_words(length, 0) * gc::kWordSize, length <= kMaxRefs);
  HandleScope scope(*this);
  Handle fill_h(*this, fill);  // fill may be a reference: keep it current
  Handle array_h(*this, Value::ref(alloc(gc::kArrayClass, 1, 1)));
  if (length == 0) return array_h.get();  // storage stays nil until the first push

  uint64_t capacity = gc::rounded_refs(length);
  Word* storage = alloc(gc::kArrayStorageClass, capacity, 0);  // slots start nil
  Value v = fill_h.get();
  if (!v.is_nil()) {
    Value* slots = storage_slots(storage);
    // The barrier even on a fresh storage: a large one may be allocated
    // straight into an old space.
    for (uint64_t i = 0; i < length; ++i) write(storage, &slots[i], v);
  }
  Word* array = array_h.ref();
  write(array, &array_storage(array), Value::ref(storage));
  array_length(array) = length;
  return Value::ref(array);
}

void array_push(VM& vm, Value* array_slot, Value* value_slot) {
  Word* array = array_slot->as_ref();
  uint64_t length = array_length(array);
  if (length == array_capacity(array)) {
    if (length >= kMaxRefs) vm.out_of_memory();
    // Geometric growth keeps push amortised O(1).
    uint64_t capacity = gc::rounded_refs(std::min(kMaxRefs, std::max(kMinArrayCapacity, 2 * length)));
    Word* storage = vm.alloc(gc::kArrayStorageClass, capacity, 0);
    array = array_slot->as_ref();  // re-read after allocating
    Value* dst = storage_slots(storage);
    const Value* src = array_elements(array);
    for (uint64_t i = 0; i < length; ++i) vm.write(storage, &dst[i], src[i]);
    vm.write(array, &array_storage(array), Value::ref(storage));
  }
  Word* storage = array_storage(array).as_ref();
  vm.write(storage, &storage_slots(storage)[length], *value_slot);
  array_length(array) = length + 1;
}

Word* VM::new_string_uninitialized(uint64_t length) {
  uint64_t raw = string_raw_words(length);
  check_fits("a string", length, "bytes", gc::object_words(0, raw) * gc::kWordSize, raw <= kMaxRaw);
  Word* h = alloc(gc::kStringClass, 0, raw);
  h[1] = length;  // the hash (h[2]) is set by finish_string once filled
  return h;
}

Value VM::new_string(std::string_view s) {
  // s may point into the managed heap (a slice of another string), which the
  // allocation can move: copy it out first in that case.
  std::string copy;
  if (!s.empty() && heap_->in_heap(s.data())) {
    copy.assign(s);
    s = copy;
  }
  Word* h = new_string_uninitialized(s.size());
  if (!s.empty()) std::memcpy(string_chars(h), s.data(), s.size());
  finish_string(h);
  return Value::ref(h);
}

}  // namespace vm
