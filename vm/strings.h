// Helpers for building strings in place (vm/array.cpp defines the
// allocation functions declared in vm.h).
#pragma once

#include "vm/object.h"

namespace vm {

// A string from VM::new_string_uninitialized is not finished until its bytes
// are filled in and its content hash (used by == and map keys) is stored.
inline void finish_string(Word* h) { h[2] = hash_bytes(string_view_of(h)); }

}  // namespace vm
