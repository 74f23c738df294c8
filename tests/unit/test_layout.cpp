// The object layout (gc/layout.h), pinned down: NaN-boxed values, the header
// word, size codes, object geometry and the tags of the first word.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gc/layout.h"

using namespace gc;

namespace {

uint64_t bits_of(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// The inverse of SizeCode::encode: mantissa << exponent (what Header::nrefs
// and Header::raw_words do on their fields).
uint64_t decode(uint64_t code, unsigned mantissa_bits) {
  return (code & ((1ull << mantissa_bits) - 1)) << (code >> mantissa_bits);
}

// Sizes from 0 to `limit`: every size up to 70,000, powers of two and their
// neighbours, and pseudo-random ones (deterministic seed).
std::vector<uint64_t> sample_sizes(uint64_t limit) {
  std::vector<uint64_t> out;
  for (uint64_t n = 0; n <= 70000 && n <= limit; ++n) out.push_back(n);
  for (unsigned e = 16; e <= 40; ++e) {
    uint64_t p = 1ull << e;
    for (uint64_t n : {p - 1, p, p + 1, p + (p >> 15), p + (p >> 15) + 1, p + (p >> 14) - 1})
      if (n <= limit) out.push_back(n);
  }
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    uint64_t n = rng() % (limit + 1);
    out.push_back(n);
    out.push_back(n >> (rng() % 30));
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// Values

TEST_CASE("Value: doubles round-trip bit for bit and are nums") {
  const double cases[] = {0.0,
                          -0.0,
                          1.0,
                          -1.5,
                          3.141592653589793,
                          1e300,
                          -1e-300,
                          5e-324,
                          std::numeric_limits<double>::max(),
                          std::numeric_limits<double>::lowest(),
                          std::numeric_limits<double>::min(),
                          std::numeric_limits<double>::denorm_min(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::quiet_NaN(),
                          -std::numeric_limits<double>::quiet_NaN(),
                          std::nan(""),
                          0.0 / std::numeric_limits<double>::infinity(),
                          9007199254740993.0};
  for (double d : cases) {
    CAPTURE(d);
    Value v = Value::num(d);
    CHECK(v.bits == bits_of(d));
    CHECK(v.is_num());
    CHECK_FALSE(v.is_ref());
    CHECK_FALSE(v.is_nil());
    CHECK_FALSE(v.is_bool());
    CHECK_FALSE(v.is_undefined());
    CHECK_FALSE(v.is_tombstone());
    CHECK_FALSE(v.is_falsy());
    CHECK(bits_of(v.as_num()) == bits_of(d));
  }
  // -0 keeps its sign; NaN stays NaN.
  CHECK(std::signbit(Value::num(-0.0).as_num()));
  CHECK_FALSE(std::signbit(Value::num(0.0).as_num()));
  CHECK(std::isnan(Value::num(std::nan("")).as_num()));
  CHECK(Value::num(std::numeric_limits<double>::infinity()).as_num() ==
        std::numeric_limits<double>::infinity());
  CHECK(Value::num(-std::numeric_limits<double>::infinity()).as_num() ==
        -std::numeric_limits<double>::infinity());
}

TEST_CASE("Value: NaNs that arithmetic produces are nums without canonicalising") {
  volatile double zero = 0.0;
  volatile double inf = std::numeric_limits<double>::infinity();
  const double produced[] = {zero / zero, inf - inf, inf * zero, -(zero / zero), std::sqrt(-1.0 + zero)};
  for (double d : produced) {
    CAPTURE(bits_of(d));
    CHECK(std::isnan(d));
    CHECK(Value::num(d).is_num());
    CHECK_FALSE(Value::num(d).is_ref());
    CHECK(Value::num(d).bits == bits_of(d));
  }
}

TEST_CASE("Value: nil, true, false, undefined and tombstone are distinct non-refs") {
  const Value specials[] = {Value::nil(), Value::boolean(true), Value::boolean(false), Value::undefined(),
                            Value::tombstone()};
  for (size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK_FALSE(specials[i].is_ref());
    CHECK_FALSE(specials[i].is_num());
    for (size_t j = 0; j < 5; ++j)
      if (i != j) CHECK(specials[i] != specials[j]);
  }
  CHECK(Value::nil().is_nil());
  CHECK(Value::nil().is_falsy());
  CHECK_FALSE(Value::nil().is_bool());
  CHECK(Value::boolean(true).is_bool());
  CHECK(Value::boolean(true).as_bool());
  CHECK_FALSE(Value::boolean(true).is_falsy());
  CHECK(Value::boolean(false).is_bool());
  CHECK_FALSE(Value::boolean(false).as_bool());
  CHECK(Value::boolean(false).is_falsy());
  CHECK(Value::undefined().is_undefined());
  CHECK_FALSE(Value::undefined().is_nil());
  CHECK_FALSE(Value::undefined().is_falsy());
  CHECK(Value::tombstone().is_tombstone());
  CHECK_FALSE(Value::tombstone().is_undefined());
  CHECK_FALSE(Value::tombstone().is_falsy());
  CHECK(Value::boolean(true) == Value::from_bits(Value::kTrue));
  CHECK(Value::boolean(false) == Value::from_bits(Value::kFalse));
  // Zero is a num and truthy.
  CHECK(Value::num(0).is_num());
  CHECK_FALSE(Value::num(0).is_falsy());
}

TEST_CASE("Value: a ref round-trips a pointer and is_ref is one mask and compare") {
  alignas(8) static Word words[64];
  std::vector<Word> heap_words(1024);
  std::vector<const void*> pointers = {&words[0], &words[1], &words[63], heap_words.data(),
                                       heap_words.data() + 1023};
  // User-space addresses use at most 48 bits.
  pointers.push_back(reinterpret_cast<const void*>(uintptr_t{0x0000'7FFF'FFFF'FFF8ull}));
  pointers.push_back(reinterpret_cast<const void*>(uintptr_t{0x0000'0000'0001'0000ull}));
  pointers.push_back(reinterpret_cast<const void*>(uintptr_t{0x0000'1234'5678'9AB0ull}));
  for (const void* p : pointers) {
    CAPTURE(p);
    Value v = Value::ref(p);
    CHECK(v.is_ref());
    CHECK_FALSE(v.is_num());
    CHECK_FALSE(v.is_nil());
    CHECK_FALSE(v.is_bool());
    CHECK_FALSE(v.is_undefined());
    CHECK_FALSE(v.is_tombstone());
    CHECK_FALSE(v.is_falsy());
    CHECK(static_cast<const void*>(v.as_ref()) == p);
    CHECK((v.bits & Value::kTagMask) == Value::kRefTag);
    CHECK(v == Value::ref(p));
  }
  CHECK(Value::ref(&words[0]) != Value::ref(&words[1]));

  // is_ref is exactly (bits & kTagMask) == kRefTag, for any bit pattern.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    uint64_t b = rng();
    if (i % 4 == 0) b = (b & ~Value::kTagMask) | Value::kRefTag;      // ref-shaped
    if (i % 4 == 1) b = (b & ~Value::kTagMask) | Value::kSpecialTag;  // special-shaped
    Value v = Value::from_bits(b);
    CHECK(v.is_ref() == ((b & Value::kTagMask) == Value::kRefTag));
    if (v.is_ref()) REQUIRE_FALSE(v.is_num());
  }
  // The tag bits that mark a ref are exactly the top 16.
  CHECK(Value::kTagMask == 0xFFFF'0000'0000'0000ull);
  CHECK(Value::kRefTag == 0xFFFC'0000'0000'0000ull);
  // A negative quiet NaN (0xFFF8...) is a num, not a ref.
  CHECK(Value::from_bits(0xFFF8'0000'0000'0000ull).is_num());
  CHECK_FALSE(Value::from_bits(0xFFF8'0000'0000'0000ull).is_ref());
}

// ---------------------------------------------------------------------------
// Header fields

TEST_CASE("Header: make round-trips class id, nrefs and raw words") {
  const uint32_t classes[] = {kFillerClass, kStringClass,    kArrayClass, kMapStorageClass,
                              kStackClass,  kFirstUserClass, 1000,        kMaxClassId};
  const uint64_t refs[] = {0, 1, 2, 3, 7, 100, 4095, 65535};
  const uint64_t raws[] = {0, 1, 2, 5, 64, 1000, 32767};
  for (uint32_t cls : classes)
    for (uint64_t r : refs)
      for (uint64_t w : raws) {
        CAPTURE(cls);
        CAPTURE(r);
        CAPTURE(w);
        uint64_t h = Header::make(cls, r, w);
        REQUIRE(Header::is_header(h));
        CHECK_FALSE(Header::is_forwarded(h));
        CHECK((h & Header::kTagMask) == Header::kHeaderTag);
        CHECK(Header::class_id(h) == cls);
        CHECK(Header::nrefs(h) == r);
        CHECK(Header::raw_words(h) == w);
        CHECK_FALSE(Header::is_marked(h));
        CHECK(Header::age(h) == 0);
        CHECK(Header::hash_state(h) == HashState::kUnhashed);
      }
}

TEST_CASE("Header: mark, age and hash state are independent of the other fields") {
  const uint64_t base = Header::make(kFirstUserClass + 41, 12, 34);
  for (bool mark : {false, true})
    for (uint32_t age = 0; age <= Header::kMaxAge; ++age)
      for (HashState hs : {HashState::kUnhashed, HashState::kHashed, HashState::kHashedAndMoved}) {
        CAPTURE(mark);
        CAPTURE(age);
        CAPTURE(static_cast<int>(hs));
        uint64_t h = Header::with_hash_state(Header::with_age(base, age), hs);
        if (mark) h |= Header::kMarkBit;
        CHECK(Header::is_header(h));
        CHECK(Header::is_marked(h) == mark);
        CHECK(Header::age(h) == age);
        CHECK(Header::hash_state(h) == hs);
        CHECK(Header::class_id(h) == kFirstUserClass + 41);
        CHECK(Header::nrefs(h) == 12);
        CHECK(Header::raw_words(h) == 34);
        // Clearing them again gives back the original header.
        uint64_t back =
            Header::with_hash_state(Header::with_age(h & ~Header::kMarkBit, 0), HashState::kUnhashed);
        CHECK(back == base);
      }
  // with_age replaces, it does not or in.
  CHECK(Header::age(Header::with_age(Header::with_age(base, 15), 2)) == 2);
  CHECK(Header::hash_state(Header::with_hash_state(Header::with_hash_state(base, HashState::kHashedAndMoved),
                                                   HashState::kHashed)) == HashState::kHashed);
}

TEST_CASE("Header: bit positions are as documented") {
  uint64_t h = Header::make(0xABCD, 0, 0);
  CHECK(((h >> 9) & 0xFFFF) == 0xABCD);
  CHECK(Header::kMarkBit == (1ull << 2));
  CHECK(Header::with_age(0, 15) == (0xFull << 3));
  CHECK(Header::with_hash_state(0, HashState::kHashedAndMoved) == (2ull << 7));
  CHECK(Header::with_hash_state(0, HashState::kHashed) == (1ull << 7));
  // Reference count from bit 25, raw words from bit 45.
  CHECK(Header::make(0, 1, 0) == (Header::kHeaderTag | (1ull << 25)));
  CHECK(Header::make(0, 0, 1) == (Header::kHeaderTag | (1ull << 45)));
}

TEST_CASE("Header: with_raw_words changes only the raw size") {
  uint64_t h = Header::make(kFirstUserClass + 3, 9, 4);
  h = Header::with_hash_state(Header::with_age(h, 5), HashState::kHashedAndMoved) | Header::kMarkBit;
  for (uint64_t w : {0ull, 1ull, 5ull, 32767ull, 40000ull, 1ull << 20}) {
    CAPTURE(w);
    uint64_t g = Header::with_raw_words(h, SizeCode::round_up(w, SizeCode::kRawMantissaBits));
    CHECK(Header::raw_words(g) == SizeCode::round_up(w, SizeCode::kRawMantissaBits));
    CHECK(Header::class_id(g) == kFirstUserClass + 3);
    CHECK(Header::nrefs(g) == 9);
    CHECK(Header::age(g) == 5);
    CHECK(Header::is_marked(g));
    CHECK(Header::hash_state(g) == HashState::kHashedAndMoved);
    CHECK(Header::is_header(g));
  }
}

TEST_CASE("Header: large sizes round up and decode to the rounded value") {
  for (uint64_t r : {65536ull, 65537ull, 100001ull, 1ull << 24, (1ull << 30) - 1}) {
    uint64_t h = Header::make(kArrayStorageClass, r, 0);
    CAPTURE(r);
    CHECK(Header::nrefs(h) == SizeCode::round_up(r, SizeCode::kRefMantissaBits));
    CHECK(Header::nrefs(h) >= r);
    CHECK(Header::raw_words(h) == 0);
    CHECK(Header::class_id(h) == kArrayStorageClass);
  }
  for (uint64_t w : {32768ull, 32769ull, 1000003ull, 1ull << 29}) {
    uint64_t h = Header::make(kStringClass, 0, w);
    CAPTURE(w);
    CHECK(Header::raw_words(h) == SizeCode::round_up(w, SizeCode::kRawMantissaBits));
    CHECK(Header::raw_words(h) >= w);
    CHECK(Header::nrefs(h) == 0);
    CHECK(Header::class_id(h) == kStringClass);
  }
}

// ---------------------------------------------------------------------------
// SizeCode

TEST_CASE("SizeCode: sizes below the mantissa range are exact") {
  for (uint64_t n = 0; n < (1u << SizeCode::kRefMantissaBits); ++n) {
    REQUIRE(SizeCode::round_up(n, SizeCode::kRefMantissaBits) == n);
    REQUIRE(SizeCode::encode(n, SizeCode::kRefMantissaBits) == n);
  }
  for (uint64_t n = 0; n < (1u << SizeCode::kRawMantissaBits); ++n) {
    REQUIRE(SizeCode::round_up(n, SizeCode::kRawMantissaBits) == n);
    REQUIRE(SizeCode::encode(n, SizeCode::kRawMantissaBits) == n);
  }
  // The first size past the range is exact too (even), the next rounds.
  CHECK(SizeCode::round_up(1u << 16, 16) == (1u << 16));
  CHECK(SizeCode::round_up((1u << 16) + 1, 16) == (1u << 16) + 2);
  CHECK(SizeCode::round_up((1u << 15) + 1, 15) == (1u << 15) + 2);
}

TEST_CASE("SizeCode: round_up is >= n, representable, and within 1/2^14") {
  for (unsigned mb : {SizeCode::kRefMantissaBits, SizeCode::kRawMantissaBits}) {
    const uint64_t limit = SizeCode::max(mb);
    for (uint64_t n : sample_sizes(limit)) {
      uint64_t r = SizeCode::round_up(n, mb);
      if (r < n || r > limit || (r - n) * (1ull << 14) > n || decode(SizeCode::encode(n, mb), mb) != r ||
          SizeCode::round_up(r, mb) != r) {
        CAPTURE(mb);
        CAPTURE(n);
        CAPTURE(r);
        CHECK(r >= n);
        CHECK(r <= limit);
        CHECK((r - n) * (1ull << 14) <= n);
        CHECK(decode(SizeCode::encode(n, mb), mb) == r);
        CHECK(SizeCode::round_up(r, mb) == r);
        FAIL("size code property broken");
      }
    }
  }
  CHECK(SizeCode::round_up(SizeCode::max(16), 16) == SizeCode::max(16));
  CHECK(SizeCode::round_up(SizeCode::max(15), 15) == SizeCode::max(15));
}

TEST_CASE("SizeCode: encode and decode round-trip sizes up to 2^30") {
  // Every size up to 2^30 for references (their maximum is about 2^31); raw
  // words up to their maximum, 2^30 - 2^15.
  CHECK(SizeCode::max(SizeCode::kRefMantissaBits) > (1ull << 30));
  CHECK(SizeCode::max(SizeCode::kRawMantissaBits) == (1ull << 30) - (1ull << 15));
  for (unsigned mb : {SizeCode::kRefMantissaBits, SizeCode::kRawMantissaBits}) {
    uint64_t limit = std::min<uint64_t>(1ull << 30, SizeCode::max(mb));
    size_t checked = 0;
    for (uint64_t n : sample_sizes(limit)) {
      uint64_t code = SizeCode::encode(n, mb);
      uint64_t r = SizeCode::round_up(n, mb);
      // The exponent fits its 4 bits, so the code fits its header field.
      if ((code >> mb) >= (1u << SizeCode::kExpBits) || decode(code, mb) != r ||
          SizeCode::encode(r, mb) != code) {
        CAPTURE(mb);
        CAPTURE(n);
        CAPTURE(code);
        FAIL("encode/decode does not round-trip");
      }
      // Through the header as well.
      uint64_t h = mb == SizeCode::kRefMantissaBits ? Header::make(kFirstUserClass, n, 7)
                                                    : Header::make(kFirstUserClass, 7, n);
      uint64_t got = mb == SizeCode::kRefMantissaBits ? Header::nrefs(h) : Header::raw_words(h);
      uint64_t other = mb == SizeCode::kRefMantissaBits ? Header::raw_words(h) : Header::nrefs(h);
      if (got != r || other != 7 || Header::class_id(h) != kFirstUserClass || !Header::is_header(h)) {
        CAPTURE(mb);
        CAPTURE(n);
        FAIL("header does not round-trip the size");
      }
      ++checked;
    }
    CHECK(checked > 100000);
  }
  // The largest representable sizes themselves.
  CHECK(Header::nrefs(Header::make(0, SizeCode::max(16), 0)) == SizeCode::max(16));
  CHECK(Header::raw_words(Header::make(0, 0, SizeCode::max(15))) == SizeCode::max(15));
  CHECK(rounded_refs(70001) == SizeCode::round_up(70001, 16));
  CHECK(rounded_raw(70001) == SizeCode::round_up(70001, 15));
}

// ---------------------------------------------------------------------------
// Geometry

TEST_CASE("geometry: object_words and words_below") {
  CHECK(words_below(0) == 0);
  CHECK(words_below(1) == 2);
  CHECK(words_below(10) == 11);
  CHECK(object_words(0, 0) == 1);
  CHECK(object_words(0, 3) == 4);
  CHECK(object_words(1, 0) == 3);
  CHECK(object_words(2, 1) == 5);
  CHECK(object_words(5, 7) == 14);
  CHECK(object_words(Header::make(kArrayClass, 5, 7)) == 14);
  CHECK(object_words(Header::make(kStringClass, 0, 3)) == 4);
  CHECK(object_words(Header::make(kCellClass, 1, 0)) == 3);
}

TEST_CASE("geometry: format_object lays out count word, nil slots, header and zeroed raw words") {
  struct Shape {
    uint64_t nrefs, raw;
  };
  for (Shape s :
       {Shape{0, 0}, Shape{0, 1}, Shape{0, 5}, Shape{1, 0}, Shape{1, 1}, Shape{3, 2}, Shape{17, 9}}) {
    CAPTURE(s.nrefs);
    CAPTURE(s.raw);
    const uint64_t total = object_words(s.nrefs, s.raw);
    // Garbage around and inside the object, so nothing passes by accident.
    std::vector<Word> mem(total + 4, Header::kPoison);
    Word* start = mem.data() + 2;
    Word* h = format_object(start, kFirstUserClass + 2, s.nrefs, s.raw);

    CHECK(h == start + words_below(s.nrefs));
    CHECK(Header::is_header(*h));
    CHECK(Header::class_id(*h) == kFirstUserClass + 2);
    CHECK(Header::nrefs(*h) == s.nrefs);
    CHECK(Header::raw_words(*h) == s.raw);
    CHECK(object_start(h, *h) == start);
    CHECK(header_from_start(start) == h);
    CHECK(raw_words_begin(h) == h + 1);
    CHECK(ref_slots_begin(h, s.nrefs) == reinterpret_cast<Value*>(h - s.nrefs));

    if (s.nrefs > 0) {
      // The first word is the count word: tag 10 and nrefs.
      CHECK((start[0] & Header::kTagMask) == Header::kCountTag);
      CHECK(start[0] == Header::count_word(s.nrefs));
      CHECK((start[0] >> 2) == s.nrefs);
      CHECK_FALSE(Header::is_header(start[0]));
      CHECK_FALSE(Header::is_forwarded(start[0]));
    } else {
      CHECK(start[0] == *h);
    }
    for (uint64_t i = 0; i < s.nrefs; ++i) {
      CAPTURE(i);
      // Slot i is i+1 words below the header.
      CHECK(reinterpret_cast<Word*>(&ref_slot(h, i)) == h - 1 - i);
      CHECK(ref_slot(h, i).is_nil());
      // ref_slots_begin is the lowest slot: slots form one ascending run.
      CHECK(&ref_slots_begin(h, s.nrefs)[s.nrefs - 1 - i] == &ref_slot(h, i));
    }
    for (uint64_t i = 0; i < s.raw; ++i) CHECK(h[1 + i] == 0);
    // Nothing outside the object was written.
    CHECK(mem[0] == Header::kPoison);
    CHECK(mem[1] == Header::kPoison);
    CHECK(mem[2 + total] == Header::kPoison);
    CHECK(mem[3 + total] == Header::kPoison);
  }
}

TEST_CASE("geometry: a linear walk finds every header from first words") {
  struct Shape {
    uint32_t cls;
    uint64_t nrefs, raw;
  };
  const Shape shapes[] = {{kStringClass, 0, 3},     {kArrayClass, 1, 1},         {kCellClass, 1, 0},
                          {kFirstUserClass, 0, 0},  {kArrayStorageClass, 40, 0}, {kFirstUserClass + 9, 6, 4},
                          {kNumArrayClass, 0, 100}, {kBoundMethodClass, 2, 0}};
  std::vector<Word> mem(4096, Header::kPoison);
  std::vector<Word*> headers;
  Word* p = mem.data();
  for (int round = 0; round < 3; ++round)
    for (const Shape& s : shapes) {
      Word* h = format_object(p, s.cls, s.nrefs, s.raw);
      // Make the raw side and the slots look like other tags, as real data does.
      for (uint64_t i = 0; i < s.raw; ++i) h[1 + i] = Header::count_word(1000 + i);
      for (uint64_t i = 0; i < s.nrefs; ++i) ref_slot(h, i) = Value::num(static_cast<double>(i));
      headers.push_back(h);
      p += object_words(s.nrefs, s.raw);
    }
  Word* end = p;
  size_t k = 0;
  for (Word* q = mem.data(); q < end; q += object_words(*header_from_start(q)), ++k) {
    REQUIRE(k < headers.size());
    Word* h = header_from_start(q);
    CHECK(h == headers[k]);
    CHECK(Header::is_header(*h));
    CHECK(object_start(h, *h) == q);
  }
  CHECK(k == headers.size());
}

// ---------------------------------------------------------------------------
// Tags of the first two bits

TEST_CASE("tags: header 01, count word 10, forwarding pointer 00, poison 11") {
  CHECK(Header::kHeaderTag == 1);
  CHECK(Header::kCountTag == 2);
  CHECK(Header::kTagMask == 3);
  CHECK((Header::make(kStringClass, 0, 1) & 3) == 1);
  CHECK((Header::make(kArrayClass, 1, 1) & 3) == 1);
  CHECK((Header::count_word(1) & 3) == 2);
  CHECK((Header::count_word(65535) & 3) == 2);
  CHECK((Header::kPoison & 3) == 3);

  CHECK(Header::is_header(Header::make(0, 0, 0)));
  CHECK_FALSE(Header::is_header(Header::count_word(4)));
  CHECK_FALSE(Header::is_header(Header::kPoison));
  CHECK_FALSE(Header::is_forwarded(Header::kPoison));
  CHECK_FALSE(Header::is_forwarded(Header::count_word(4)));
  CHECK_FALSE(Header::is_forwarded(Header::make(0, 0, 0)));

  // A forwarding pointer is the new header's address: words are 8-aligned,
  // so its low two bits are 00.
  alignas(8) Word target[4] = {};
  Word forward = reinterpret_cast<Word>(&target[1]);
  CHECK((forward & 3) == 0);
  CHECK(Header::is_forwarded(forward));
  CHECK_FALSE(Header::is_header(forward));
  CHECK(reinterpret_cast<Word*>(forward) == &target[1]);

  // A count word is never taken for a header or a forwarding pointer by a
  // linear walk, and header_from_start skips exactly the slots it counts.
  alignas(8) Word obj[8] = {};
  Word* h = format_object(obj, kArrayStorageClass, 3, 2);
  CHECK(h == obj + 4);
  CHECK(header_from_start(obj) == h);
  // Poison never looks like a header or a forwarding pointer (the tag is all
  // that is tested).
  CHECK((Header::kPoison & Header::kTagMask) != Header::kHeaderTag);
  CHECK((Header::kPoison & Header::kTagMask) != Header::kCountTag);
  CHECK((Header::kPoison & Header::kTagMask) != 0);
}
