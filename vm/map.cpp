// The insertion-ordered hash map (layout in vm/object.h).
//
// A Map holds a MapStorage and three raw words: count (live entries), used
// (entries appended, deleted ones included) and capacity (entries the storage
// has room for). The storage keeps the entries in insertion order as key,value
// pairs in its reference slots, and on its raw side:
//
//   capacity x uint32   each entry's key hash (so rebuilding never rehashes:
//                       an identity hash may be costly, a string's is long)
//   2*capacity x int32  open-addressing buckets: entry index + 1, 0 = empty
//
// Capacities are powers of two, which the header encodes exactly. A deleted
// entry keeps its bucket and gets the key Value::tombstone(): probes step
// over it, iteration skips it, and the next rebuild drops it. Entries only
// ever append, so a key deleted and stored again goes to the end.
#include <cmath>

#include "vm/vm.h"

namespace vm {

namespace {

constexpr uint64_t kMinCapacity = 8;
// Entry indices are int32 and 2*capacity must fit the header's size code.
constexpr uint64_t kMaxCapacity = 1ull << 29;

uint64_t storage_raw_words(uint64_t capacity) { return capacity / 2 + capacity; }
uint32_t* entry_hashes(Word* storage) { return reinterpret_cast<uint32_t*>(gc::raw_words_begin(storage)); }
int32_t* buckets(Word* storage, uint64_t capacity) {
  return reinterpret_cast<int32_t*>(gc::raw_words_begin(storage) + capacity / 2);
}
uint64_t bucket_mask(uint64_t capacity) { return 2 * capacity - 1; }

uint32_t mix32(uint64_t x) {  // MurmurHash3's finaliser
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

// 0 and -0 are one key: store and look up +0.
Value normalise(Value key) { return key.is_num() && key.as_num() == 0 ? Value::num(0.0) : key; }

bool storable(Value key) { return !key.is_nil() && !(key.is_num() && std::isnan(key.as_num())); }

// Call with a normalised, storable key. Does not allocate.
uint32_t key_hash(VM& vm, Value key) {
  if (key.is_ref()) {
    Word* h = key.as_ref();
    if (class_id_of(h) == gc::kStringClass) return mix32(string_hash(h));
    return mix32(vm.identity_hash(h));  // stable across moving collections
  }
  return mix32(key.bits);  // nums, bools
}

void bucket_insert(Word* storage, uint64_t capacity, uint32_t hash, uint64_t entry) {
  int32_t* b = buckets(storage, capacity);
  uint64_t mask = bucket_mask(capacity);
  uint64_t i = hash & mask;
  while (b[i] != 0) i = (i + 1) & mask;
  b[i] = static_cast<int32_t>(entry + 1);
}

// The entry index of key, or -1.
int64_t find(Word* map, Value key, uint32_t hash) {
  Value sv = map_storage(map);
  if (!sv.is_ref()) return -1;
  Word* storage = sv.as_ref();
  uint64_t capacity = map_capacity(map);
  const int32_t* b = buckets(storage, capacity);
  const uint32_t* hashes = entry_hashes(storage);
  const Value* pairs = storage_slots(storage);
  uint64_t mask = bucket_mask(capacity);
  for (uint64_t i = hash & mask;; i = (i + 1) & mask) {
    if (b[i] == 0) return -1;  // the table is at most half full, so this ends
    int64_t e = b[i] - 1;
    if (hashes[e] == hash && values_equal(pairs[2 * e], key)) return e;
  }
}

// Moves the live entries into a new storage of new_capacity (allocates).
void rebuild(VM& vm, Value* map_slot, uint64_t new_capacity) {
  Word* fresh = vm.alloc(gc::kMapStorageClass, 2 * new_capacity, storage_raw_words(new_capacity));
  Word* map = map_slot->as_ref();  // re-read: the allocation may have moved it
  Value old = map_storage(map);
  Value* dst = storage_slots(fresh);
  uint32_t* dst_hashes = entry_hashes(fresh);
  uint64_t n = 0;
  if (old.is_ref()) {
    Word* src_storage = old.as_ref();
    const Value* src = storage_slots(src_storage);
    const uint32_t* src_hashes = entry_hashes(src_storage);
    for (uint64_t i = 0, used = map_used(map); i < used; ++i) {
      if (src[2 * i].is_tombstone()) continue;
      // The barrier even on the fresh storage: a large one may be allocated
      // straight into an old space, where an unrecorded store would hide a
      // young key or value from a minor collection.
      vm.write(fresh, &dst[2 * n], src[2 * i]);
      vm.write(fresh, &dst[2 * n + 1], src[2 * i + 1]);
      dst_hashes[n] = src_hashes[i];
      bucket_insert(fresh, new_capacity, src_hashes[i], n);
      ++n;
    }
  }
  vm.write(map, &map_storage(map), Value::ref(fresh));
  map_capacity(map) = new_capacity;
  map_used(map) = n;
  map_count(map) = n;
}

}  // namespace

Value VM::new_map() { return Value::ref(alloc(gc::kMapClass, 1, 3)); }  // raw words start 0: empty

bool map_get(VM& vm, Word* map, Value key, Value* out) {
  key = normalise(key);
  if (!storable(key)) return false;
  int64_t e = find(map, key, key_hash(vm, key));
  if (e < 0) return false;
  *out = storage_slots(map_storage(map).as_ref())[2 * e + 1];
  return true;
}

void map_set(VM& vm, Value* map_slot, Value* key_slot, Value* value_slot) {
  Value key = normalise(*key_slot);
  if (key.is_nil()) vm.error("map key cannot be nil");
  if (!storable(key)) vm.error("map key cannot be nan");
  uint32_t hash = key_hash(vm, key);

  Word* map = map_slot->as_ref();
  int64_t e = find(map, key, hash);
  if (e >= 0) {
    Word* storage = map_storage(map).as_ref();
    vm.write(storage, &storage_slots(storage)[2 * e + 1], *value_slot);
    return;
  }
  if (map_used(map) == map_capacity(map)) {
    uint64_t capacity = map_capacity(map);
    // Double when at least half the entries are live; otherwise the rebuild
    // only drops tombstones and leaves room at the same size.
    uint64_t new_capacity = capacity == 0                    ? kMinCapacity
                            : map_count(map) >= capacity / 2 ? 2 * capacity
                                                             : capacity;
    if (new_capacity > kMaxCapacity) vm.error("map too large");
    rebuild(vm, map_slot, new_capacity);
    map = map_slot->as_ref();
    key = normalise(*key_slot);  // re-read: a key object may have moved
  }
  Word* storage = map_storage(map).as_ref();
  uint64_t index = map_used(map)++;
  Value* pairs = storage_slots(storage);
  vm.write(storage, &pairs[2 * index], key);
  vm.write(storage, &pairs[2 * index + 1], *value_slot);
  entry_hashes(storage)[index] = hash;
  bucket_insert(storage, map_capacity(map), hash, index);
  ++map_count(map);
}

bool map_delete(VM& vm, Word* map, Value key) {
  key = normalise(key);
  if (!storable(key)) return false;
  int64_t e = find(map, key, key_hash(vm, key));
  if (e < 0) return false;
  Word* storage = map_storage(map).as_ref();
  Value* pairs = storage_slots(storage);
  // The bucket keeps pointing at the entry; its tombstone key matches nothing.
  vm.write(storage, &pairs[2 * e], Value::tombstone());
  vm.write(storage, &pairs[2 * e + 1], Value::nil());
  --map_count(map);
  return true;
}

Value map_keys(VM& vm, Value* map_slot) {
  Value result = vm.new_array(map_count(map_slot->as_ref()), Value::nil());
  // No allocation from here on, so the raw pointers below stay valid.
  Word* map = map_slot->as_ref();
  Word* array = result.as_ref();
  if (map_count(map) == 0) return result;
  Word* array_store = array_storage(array).as_ref();
  Value* out = storage_slots(array_store);
  const Value* pairs = storage_slots(map_storage(map).as_ref());
  uint64_t n = 0;
  for (uint64_t i = 0, used = map_used(map); i < used; ++i)
    if (!pairs[2 * i].is_tombstone()) vm.write(array_store, &out[n++], pairs[2 * i]);
  return result;
}

uint64_t map_entry_count(Word* map) { return map_used(map); }

bool map_entry(Word* map, uint64_t i, Value* key, Value* value) {
  if (i >= map_used(map)) return false;
  const Value* pairs = storage_slots(map_storage(map).as_ref());
  if (pairs[2 * i].is_tombstone()) return false;
  *key = pairs[2 * i];
  *value = pairs[2 * i + 1];
  return true;
}

}  // namespace vm
