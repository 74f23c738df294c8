// The VM's object kinds, built on the shared layout (gc/layout.h).
//
// Each kind is described once here: which reference slots and raw words it
// has. Everything else uses these accessors.
//
//   kind          refs                          raw words
//   String        -                             length, content hash (or 0), bytes...
//   Array         storage (ArrayStorage or nil) length
//   ArrayStorage  elements (capacity = nrefs)   -
//   NumArray      -                             length, doubles...
//   Map           storage (MapStorage or nil)   count, used, capacity
//   MapStorage    key,value pairs (2*capacity)  entry hashes (u32 pairs), buckets (i32)
//   Closure       cells of its upvalues         FnInfo*
//   Cell          value                         -
//   BoundMethod   receiver, method closure      -
//   Builtin       -                             BuiltinInfo*
//   Class         name (String), superclass     class id
//   Fiber         stack, function, result       FiberState*
//   Stack         value slots (capacity)        -    (always pinned)
//   instance      untyped fields                typed (num/bool) fields
//
// Instance field k is ref_slot(h, k) (k+1 words below the header), so a
// subclass, which appends fields, keeps its superclass's offsets. Arrays,
// storages and stacks use their slots as one ascending run from
// ref_slots_begin(h, capacity).
//
// GC safety: any allocation may move every object. A Word* or a Value held
// in a C++ local is stale after an allocation; re-read it from a root (the
// value stack, a builtin's args, a Handle).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "gc/layout.h"

namespace vm {

using gc::Value;
using gc::Word;

// A header is read atomically: a collector's GC threads may be setting its
// mark bit while the program runs (a relaxed load is a plain load).
inline uint64_t header_of(Word* h) { return std::atomic_ref<Word>(*h).load(std::memory_order_relaxed); }
inline uint32_t class_id_of(Word* h) { return gc::Header::class_id(header_of(h)); }
inline bool is_kind(Value v, uint32_t cls) { return v.is_ref() && class_id_of(v.as_ref()) == cls; }
inline bool is_instance(Value v) { return v.is_ref() && class_id_of(v.as_ref()) >= gc::kFirstUserClass; }
inline uint64_t nrefs_of(Word* h) { return gc::Header::nrefs(header_of(h)); }

// --- String
inline uint64_t string_length(Word* h) { return h[1]; }
inline char* string_chars(Word* h) { return reinterpret_cast<char*>(h + 3); }
inline std::string_view string_view_of(Word* h) { return {string_chars(h), string_length(h)}; }
inline std::string_view string_view_of(Value v) { return string_view_of(v.as_ref()); }
constexpr uint64_t string_raw_words(uint64_t length) { return 2 + (length + 7) / 8; }
// FNV-1a: cheap, and good enough for map buckets.
inline uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
// The content hash, computed on first use (a map key, ==) and kept in the
// string: a string built and never compared costs no pass over its bytes,
// which made growing a string a character at a time quadratic twice over.
// 0 means not yet computed, so a hash of 0 is stored as 1.
constexpr uint64_t kHashNotComputed = 0;
inline uint64_t string_hash(Word* h) {
  if (h[2] == kHashNotComputed) {
    uint64_t hash = hash_bytes(string_view_of(h));
    h[2] = hash == kHashNotComputed ? 1 : hash;
  }
  return h[2];
}
// The hash if it is known, else kHashNotComputed.
inline uint64_t known_string_hash(Word* h) { return h[2]; }

// --- Array and its storage
inline uint64_t& array_length(Word* h) { return h[1]; }
inline Value& array_storage(Word* h) { return gc::ref_slot(h, 0); }
inline uint64_t array_capacity(Word* h) {
  Value s = array_storage(h);
  return s.is_ref() ? nrefs_of(s.as_ref()) : 0;
}
inline Value* storage_slots(Word* storage) { return gc::ref_slots_begin(storage, nrefs_of(storage)); }
inline Value* array_elements(Word* h) {
  Value s = array_storage(h);
  return s.is_ref() ? storage_slots(s.as_ref()) : nullptr;
}

// --- NumArray
inline uint64_t numarray_length(Word* h) { return h[1]; }
inline double* numarray_data(Word* h) { return reinterpret_cast<double*>(h + 2); }

// --- Map (entries in insertion order; deleted keys become tombstones)
inline uint64_t& map_count(Word* h) { return h[1]; }
inline uint64_t& map_used(Word* h) { return h[2]; }
inline uint64_t& map_capacity(Word* h) { return h[3]; }
inline Value& map_storage(Word* h) { return gc::ref_slot(h, 0); }

// --- Closure, Cell, BoundMethod, Builtin
struct FnInfo;
struct BuiltinInfo;
inline FnInfo* closure_fn(Word* h) { return reinterpret_cast<FnInfo*>(h[1]); }
inline Value& closure_upvalue(Word* h, uint64_t i) { return gc::ref_slot(h, i); }
inline Value& cell_value(Word* h) { return gc::ref_slot(h, 0); }
inline Value& bound_receiver(Word* h) { return gc::ref_slot(h, 0); }
inline Value& bound_method(Word* h) { return gc::ref_slot(h, 1); }
inline const BuiltinInfo* builtin_info(Word* h) { return reinterpret_cast<const BuiltinInfo*>(h[1]); }

// --- Class object
inline Value& class_name(Word* h) { return gc::ref_slot(h, 0); }
inline Value& class_super(Word* h) { return gc::ref_slot(h, 1); }
inline uint32_t class_object_id(Word* h) { return static_cast<uint32_t>(h[1]); }

// --- Fiber and its value stack
struct FiberState;
inline Value& fiber_stack(Word* h) { return gc::ref_slot(h, 0); }
inline Value& fiber_function(Word* h) { return gc::ref_slot(h, 1); }
inline FiberState*& fiber_state(Word* h) { return *reinterpret_cast<FiberState**>(h + 1); }

// --- Instance fields
inline Value& instance_field(Word* h, uint32_t slot) { return gc::ref_slot(h, slot); }
inline double& instance_num(Word* h, uint32_t raw) { return *reinterpret_cast<double*>(h + 1 + raw); }
inline uint64_t& instance_raw(Word* h, uint32_t raw) { return h[1 + raw]; }

}  // namespace vm
