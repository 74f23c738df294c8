// Heap snapshots (gc/snapshot): what is written is what is read back, a
// replay under any collector writes the same bytes again, and every kind of
// damage is refused with a message rather than trusted.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gc/collector.h"
#include "gc/mutator.h"
#include "gc/snapshot/replay.h"
#include "gc/snapshot/snapshot.h"
#include "tests/unit/vector_roots.h"

using namespace gc;
using namespace gc::snapshot;

namespace {

struct TestSchema final : HeapSchema {
  std::string name_of_class(uint32_t class_id) const override {
    return class_id == kStringClass ? "string" : "class " + std::to_string(class_id);
  }
  uint32_t native_raw_words(uint32_t class_id) const override { return class_id == kClosureClass ? 1 : 0; }
};

std::unique_ptr<Collector> make(const std::string& name, RootSet& roots) {
  HeapOptions o;
  o.max_heap_bytes = 32ull << 20;
  o.verify = true;
  return find_collector(name)->create(roots, o);
}

// A heap with a cycle, every kind of value, raw words, a native word, a
// pinned stack, a large object, ages and hash states.
void build_sample(Collector& c, test::VectorRoots& roots) {
  roots.roots.assign(6, Value::nil());
  Word* a = allocate(c, kFirstUserClass, 6, 2);
  roots.roots[0] = Value::ref(a);
  Word* b = allocate(c, kFirstUserClass + 1, 1, 0);
  write_ref(c, a, &ref_slot(a, 0), Value::ref(b));
  write_ref(c, b, &ref_slot(b, 0), Value::ref(a));
  ref_slot(a, 1) = Value::num(-2.5);
  ref_slot(a, 2) = Value::boolean(true);
  ref_slot(a, 3) = Value::undefined();
  ref_slot(a, 4) = Value::tombstone();
  ref_slot(a, 5) = Value::num(std::nan(""));
  a[1] = 0x0123456789abcdefull;
  a[2] = 42;
  *a = Header::with_age(*a, 3);
  Word* closure = allocate(c, kClosureClass, 0, 1);
  closure[1] = reinterpret_cast<uintptr_t>(&roots);  // a native address
  roots.roots[1] = Value::ref(closure);
  Word* stack = c.allocate_pinned(kStackClass, 8, 0);
  roots.roots[2] = Value::ref(stack);
  Word* big = allocate(c, kStringClass, 0, 4096);
  big[1] = 7;
  *big = Header::with_hash_state(*big, HashState::kHashedAndMoved);
  roots.roots[3] = Value::ref(big);
  roots.roots[4] = Value::num(1);
  roots.roots[5] = Value::ref(b);
}

std::string sample_bytes(const std::string& collector) {
  test::VectorRoots roots;
  std::unique_ptr<Collector> c = make(collector, roots);
  build_sample(*c, roots);
  return encode(roots, TestSchema(), Origin{"sample", collector, 5}).bytes;
}

// Little builders for hand-made snapshots.
void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void fixed(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void text(std::string& out, const std::string& s) {
  varint(out, s.size());
  out += s;
}

// A snapshot with one class (id `class_id`), one root group holding object
// 0, and `objects` as given (already encoded), checksummed.
std::string hand_made(const std::string& objects, uint64_t count, uint32_t class_id = kFirstUserClass) {
  std::string out(kMagic, sizeof(kMagic));
  fixed(out, kVersion, 4);
  fixed(out, 0, 4);
  text(out, "p");
  text(out, "c");
  varint(out, 0);
  varint(out, 1);
  varint(out, class_id);
  text(out, "K");
  varint(out, 1);
  text(out, "g");
  varint(out, 1);
  out.push_back(1);  // a reference
  varint(out, 0);
  varint(out, count);
  out += objects;
  fixed(out, checksum(out), 8);
  return out;
}

// One object: class, flags, sizes, then its encoded slots and raw words.
std::string object(uint32_t class_id, uint8_t flags, uint64_t nrefs, uint64_t raw, const std::string& rest) {
  std::string out;
  varint(out, class_id);
  out.push_back(static_cast<char>(flags));
  varint(out, nrefs);
  varint(out, raw);
  return out + rest;
}

std::string refuse(const std::string& bytes, bool check_sum = true) {
  std::string error;
  std::optional<Snapshot> s = decode(bytes, &error, check_sum);
  CHECK_FALSE(s);
  CHECK_FALSE(error.empty());
  CHECK(error.find('\n') == std::string::npos);
  return error;
}

}  // namespace

TEST_CASE("snapshot: what is written is read back") {
  std::string bytes = sample_bytes("marksweep");
  std::string error;
  std::optional<Snapshot> s = decode(bytes, &error);
  REQUIRE_MESSAGE(s, error);
  CHECK(s->origin.program == "sample");
  CHECK(s->origin.collector == "marksweep");
  CHECK(s->origin.collection == 5);
  REQUIRE(s->objects.size() == 5);  // a, closure, stack, big, b: roots first, in order
  REQUIRE(s->groups.size() == 2);
  CHECK(s->groups[0].count == 4);
  CHECK(s->groups[1].count == 2);
  const Object& a = s->objects[0];
  CHECK(a.class_id == kFirstUserClass);
  CHECK(a.age == 3);
  CHECK(a.nrefs == 6);
  CHECK(a.raw_words == 2);
  CHECK(ref_index(s->values[a.first_value]) == 4);  // b, reached last
  CHECK(s->values[a.first_value + 1] == Value::num(-2.5));
  CHECK(s->values[a.first_value + 2] == Value::boolean(true));
  CHECK(s->values[a.first_value + 3] == Value::undefined());
  CHECK(s->values[a.first_value + 4] == Value::tombstone());
  CHECK(std::isnan(s->values[a.first_value + 5].as_num()));
  CHECK(s->raw[a.first_raw] == 0x0123456789abcdefull);
  CHECK(s->raw[a.first_raw + 1] == 42);
  CHECK(s->objects[1].class_id == kClosureClass);
  CHECK(s->raw[s->objects[1].first_raw] == 0);  // the native address is not written
  CHECK(s->objects[2].class_id == kStackClass);
  CHECK(s->objects[3].hash_state == HashState::kHashedAndMoved);
  CHECK(s->objects[3].raw_words == 4096);
  CHECK(ref_index(s->values[s->objects[4].first_value]) == 0);
  CHECK(s->class_name(kStringClass) == "string");
  CHECK(s->class_name(kFirstUserClass + 1) == "class " + std::to_string(kFirstUserClass + 1));
  CHECK(s->object_bytes() == (10 + 2 + 10 + 4097 + 3) * kWordSize);  // a, closure, stack, big, b
}

TEST_CASE("snapshot: the same heap gives the same bytes under every collector, and replays round-trip") {
  std::string reference = sample_bytes("marksweep");
  std::string error;
  std::optional<Snapshot> s = decode(reference, &error);
  REQUIRE(s);
  for (const CollectorInfo& info : registered_collectors()) {
    if (info.unavailable && !info.unavailable().empty()) continue;
    CAPTURE(info.name);
    std::string written = sample_bytes(info.name);
    // Only the origin's collector name differs.
    CHECK(decode(written, &error)->objects.size() == s->objects.size());
    CHECK(written.size() ==
          reference.size() + (std::string(info.name).size() - std::string("marksweep").size()));

    Replay replay(*s);
    HeapOptions o;
    o.max_heap_bytes = 32ull << 20;
    o.verify = true;
    std::unique_ptr<Collector> c = info.create(replay, o);
    REQUIRE(replay.build(*c));
    CHECK(encode(replay, replay, s->origin).bytes == reference);
    c->collect(GcCause::kExplicit);
    Replay::Reachable r = replay.reachable();
    CHECK(r.objects == s->objects.size());
    // A moving collector gives a hashed object its hash word when it
    // moves it; the large one here does not move.
    CHECK(r.bytes == s->object_bytes());
    CHECK(encode(replay, replay, s->origin).bytes == reference);
  }
}

TEST_CASE("snapshot: damage is refused, never trusted") {
  std::string good = sample_bytes("marksweep");
  SUBCASE("every truncation") {
    for (size_t n = 0; n < good.size(); n += (n < 200 ? 1 : 97)) refuse(good.substr(0, n));
    for (size_t n = 0; n < good.size(); n += (n < 200 ? 1 : 97)) refuse(good.substr(0, n), false);
  }
  SUBCASE("any changed byte fails the checksum") {
    for (size_t i = 16; i < good.size(); i += 61) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ 0x20);
      CHECK(refuse(bad).find("checksum") != std::string::npos);
    }
  }
  SUBCASE("the header") {
    CHECK(refuse("").find("not a gclab heap snapshot") != std::string::npos);
    CHECK(refuse("GCLAB").find("not a gclab heap snapshot") != std::string::npos);
    std::string bad = good;
    bad[8] = 2;
    CHECK(refuse(bad) == "snapshot version 2; this vm reads version 1");
    bad = good;
    bad[12] = 1;
    CHECK(refuse(bad).find("unknown flags") != std::string::npos);
    CHECK(refuse(good + "x").find("checksum") != std::string::npos);
  }
  SUBCASE("structure behind a good checksum") {
    std::string nil_slot = std::string(1, 2);
    std::string ok = hand_made(object(kFirstUserClass, 0, 1, 0, nil_slot), 1);
    std::string error;
    REQUIRE_MESSAGE(decode(ok, &error), error);
    std::string ref_to_7 = std::string(1, 1) + std::string(1, 7);
    CHECK(
        refuse(hand_made(object(kFirstUserClass, 0, 1, 0, ref_to_7), 1)).find("reference to object 7 of 1") !=
        std::string::npos);
    std::string forged;  // a NaN pattern with the reference tag, as a number
    forged.push_back(0);
    fixed(forged, Value::kRefTag | 0x1000, 8);
    CHECK(refuse(hand_made(object(kFirstUserClass, 0, 1, 0, forged), 1)).find("object 0, slot 0") !=
          std::string::npos);
    CHECK(refuse(hand_made(object(kFirstUserClass, 0, 1, 0, std::string(1, 9)), 1)).find("slot 0") !=
          std::string::npos);
    CHECK(refuse(hand_made(object(kFirstUserClass + 1, 0, 1, 0, nil_slot), 1)).find("class table lacks") !=
          std::string::npos);
    CHECK(refuse(hand_made(object(0, 0, 1, 0, nil_slot), 1, 0)).find("class id 0 out of range") !=
          std::string::npos);
    CHECK(refuse(hand_made(object(kFirstUserClass, 3, 1, 0, nil_slot), 1)).find("hash state 3") !=
          std::string::npos);
    CHECK(refuse(hand_made(object(kFirstUserClass, 2, 1, 0, nil_slot), 1)).find("has none") !=
          std::string::npos);
    CHECK(refuse(hand_made(object(kFirstUserClass, 16 << 2, 1, 0, nil_slot), 1)).find("age 16") !=
          std::string::npos);
    // 65,537 references round up in the header; a snapshot never holds such a size.
    CHECK(refuse(hand_made(object(kFirstUserClass, 0, 65537, 0, std::string(65537, 2)), 1))
              .find("a size no object") != std::string::npos);
    // Counts larger than the file are refused before anything is reserved.
    CHECK(refuse(hand_made(object(kFirstUserClass, 0, 1, 0, nil_slot), 1ull << 60)).find("object count") !=
          std::string::npos);
    CHECK(
        refuse(hand_made(object(kFirstUserClass, 0, 1ull << 40, 0, nil_slot), 1)).find("a size no object") !=
        std::string::npos);
    CHECK(refuse(hand_made(object(kFirstUserClass, 0, 1, 0, nil_slot) + "zz", 1)).find("2 bytes after") !=
          std::string::npos);
  }
}
