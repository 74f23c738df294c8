// Helpers for building strings in place (vm/array.cpp defines the
// allocation functions declared in vm.h).
#pragma once

#include "vm/object.h"

namespace vm {

// A string from VM::new_string_uninitialized is finished once its bytes are
// filled in; its content hash is computed when first needed (string_hash).
inline void finish_string(Word* h) { h[2] = kHashNotComputed; }

}  // namespace vm
