// Heap snapshots (docs/snapshot.md): the heap reachable from the roots,
// written at the start of a collection, independent of every collector and
// of addresses, so that any collector can rebuild it (replay.h).
//
// Objects are numbered in the order a breadth-first walk from the root
// groups (in their order, slots in order) first reaches them, so the same
// heap always gives the same bytes, wherever it lay and whichever collector
// held it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gc/layout.h"
#include "gc/roots.h"

namespace gc::snapshot {

inline constexpr char kMagic[8] = {'G', 'C', 'L', 'A', 'B', 'H', 'S', '\n'};
inline constexpr uint32_t kVersion = 1;

// What the writer needs beyond headers and roots, from the runtime whose
// heap it is.
class HeapSchema {
 public:
  virtual ~HeapSchema() = default;
  // A class id's name: a built-in kind ("string") or a program's class.
  virtual std::string name_of_class(uint32_t class_id) const = 0;
  // How many of the first raw words of the class's objects hold native
  // addresses (a closure's function, a fiber's state); written as zero,
  // since no other process could use them.
  virtual uint32_t native_raw_words(uint32_t class_id) const = 0;
};

// Where a snapshot's heap came from. A snapshot written during a replay
// keeps the origin of the one replayed: the heap is the same heap.
struct Origin {
  std::string program;
  std::string collector;
  uint64_t collection = 0;  // GC(N) as --gc-log numbers it
};

// The heap reachable from `roots` now, encoded (version kVersion).
// Counts what it wrote.
struct Encoded {
  std::string bytes;
  uint64_t objects = 0;
  uint64_t object_bytes = 0;  // the objects' sizes, headers and count words included
};
Encoded encode(RootSet& roots, const HeapSchema& schema, const Origin& origin);

// A decoded snapshot. References are object indexes: a value that is a
// reference holds Value::ref with the index in place of an address.
// The object index a decoded reference holds.
uint64_t ref_index(Value v);

struct Object {
  uint32_t class_id;
  HashState hash_state;
  uint32_t age;
  uint64_t nrefs;
  uint64_t raw_words;
  uint64_t first_value;  // into Snapshot::values: slot 0, 1, ...
  uint64_t first_raw;    // into Snapshot::raw
};
struct Group {
  std::string name;
  uint64_t first_value;
  uint64_t count;
};
struct Snapshot {
  Origin origin;
  std::vector<std::pair<uint32_t, std::string>> classes;  // id and name, ascending ids
  std::vector<Group> groups;
  std::vector<Object> objects;
  std::vector<Value> values;
  std::vector<uint64_t> raw;

  uint64_t object_bytes() const;
  std::string class_name(uint32_t class_id) const;
};

// The checksum that ends a snapshot: FNV-1a (64-bit) of every byte before it.
uint64_t checksum(std::string_view bytes);

// Decodes `bytes`, checking everything a reader could trust by mistake;
// on failure returns nothing and sets *error to one line naming what is
// wrong and where. check_sum false skips only the checksum (the fuzz
// target, to reach the checks behind it).
std::optional<Snapshot> decode(std::string_view bytes, std::string* error, bool check_sum = true);

// --heap-snapshot=FILE[@N]: asked by the collection frame at every
// collection's start and end; keeps the heap of collection N (or the
// latest collection) until the run ends.
class Request {
 public:
  Request(std::optional<uint64_t> collection, const HeapSchema* schema, Origin origin)
      : wanted_(collection), schema_(schema), origin_(std::move(origin)) {}
  // Replays set the origin of what they replay.
  void set_origin(Origin origin) { origin_ = std::move(origin); }
  void set_schema(const HeapSchema* schema) { schema_ = schema; }

  void at_collection_start(uint64_t collection, RootSet& roots);
  // The collector's own count of live bytes after the collection.
  void at_collection_end(uint64_t live_bytes);

  bool captured() const { return captured_; }
  const Encoded& capture() const { return capture_; }
  uint64_t collection() const { return collection_; }
  // Live bytes after the captured collection, as its collector counted them.
  uint64_t live_after() const { return live_after_; }
  std::optional<uint64_t> wanted() const { return wanted_; }

 private:
  std::optional<uint64_t> wanted_;
  const HeapSchema* schema_;
  Origin origin_;
  bool capturing_ = false;  // between the start and end of a captured collection
  bool captured_ = false;
  Encoded capture_;
  uint64_t collection_ = 0;
  uint64_t live_after_ = 0;
};

}  // namespace gc::snapshot
