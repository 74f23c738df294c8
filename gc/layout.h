// The object layout every collector and the VM share, described once.
//
// Values are NaN-boxed 64-bit words. A managed object is referred to by the
// address of its header word. Objects are bidirectional (SableVM; Maas et al.
// 2012 and 2018): reference slots lie below the header, raw words above it.
//
//   start -> [count word]          only when nrefs > 0: nrefs, for linear walks
//            [ref slot nrefs-1]
//            ...
//            [ref slot 0]
//   ref   -> [header]              tag, mark, age, hash state, class id, sizes
//            [raw word 0]
//            ...
//            [raw word raw-1]
//
// The header alone says how many reference slots there are and how many raw
// words follow, so tracing needs nothing else; the first word of an object is
// either its header (no references) or its count word, so a linear walk finds
// every header with no side table.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gc {

// Values

// Doubles are stored as themselves. Tagged values use quiet-NaN patterns with
// bit 50 set, which hardware arithmetic never produces (its default NaN has
// bit 50 clear), so no arithmetic result needs canonicalising.
struct Value {
  uint64_t bits;

  static constexpr uint64_t kTagMask = 0xFFFF'0000'0000'0000ull;
  static constexpr uint64_t kRefTag = 0xFFFC'0000'0000'0000ull;
  static constexpr uint64_t kSpecialTag = 0x7FFC'0000'0000'0000ull;
  static constexpr uint64_t kTaggedMask = 0x7FFC'0000'0000'0000ull;

  static constexpr uint64_t kNil = kSpecialTag | 1;
  static constexpr uint64_t kFalse = kSpecialTag | 2;
  static constexpr uint64_t kTrue = kSpecialTag | 3;
  // Never visible to programs: an unset global, a deleted map entry.
  static constexpr uint64_t kUndefined = kSpecialTag | 4;
  static constexpr uint64_t kTombstone = kSpecialTag | 5;

  static constexpr Value from_bits(uint64_t b) { return Value{b}; }
  static Value num(double d) { return Value{std::bit_cast<uint64_t>(d)}; }
  static constexpr Value nil() { return Value{kNil}; }
  static constexpr Value boolean(bool b) { return Value{b ? kTrue : kFalse}; }
  static constexpr Value undefined() { return Value{kUndefined}; }
  static constexpr Value tombstone() { return Value{kTombstone}; }
  static Value ref(const void* header) { return Value{kRefTag | reinterpret_cast<uintptr_t>(header)}; }

  // One mask and one compare: this is what makes roots and slots precise.
  constexpr bool is_ref() const { return (bits & kTagMask) == kRefTag; }
  constexpr bool is_num() const { return (bits & kTaggedMask) != kTaggedMask; }
  constexpr bool is_nil() const { return bits == kNil; }
  constexpr bool is_bool() const { return bits == kTrue || bits == kFalse; }
  constexpr bool is_undefined() const { return bits == kUndefined; }
  constexpr bool is_tombstone() const { return bits == kTombstone; }
  constexpr bool is_falsy() const { return bits == kNil || bits == kFalse; }
  constexpr bool as_bool() const { return bits == kTrue; }
  double as_num() const { return std::bit_cast<double>(bits); }
  uint64_t* as_ref() const { return reinterpret_cast<uint64_t*>(bits & ~kTagMask); }

  constexpr bool operator==(const Value&) const = default;
};
static_assert(sizeof(Value) == 8);

// Sizes in the header: a 16-bit (references) or 15-bit (raw words) mantissa
// and a 4-bit exponent, decoded with one shift. Sizes below the mantissa's
// range are exact; larger ones are rounded up by the allocator by less than
// one part in 2^14, which array, map and string capacities absorb. This keeps
// the whole header in one word with no cap on object size below 2^30 words.
struct SizeCode {
  static constexpr unsigned kRefMantissaBits = 16;
  static constexpr unsigned kRawMantissaBits = 15;
  static constexpr unsigned kExpBits = 4;

  static constexpr uint64_t round_up(uint64_t n, unsigned mantissa_bits) {
    unsigned e = 0;
    while ((n >> e) >= (1ull << mantissa_bits)) ++e;
    uint64_t m = n >> e;
    if ((m << e) < n) ++m;
    if (m >> mantissa_bits) {
      m >>= 1;
      ++e;
    }
    return m << e;
  }
  // n is rounded up first, so the code always decodes to at least n.
  static constexpr uint64_t encode(uint64_t n, unsigned mantissa_bits) {
    n = round_up(n, mantissa_bits);
    unsigned e = 0;
    while ((n >> e) >= (1ull << mantissa_bits)) ++e;
    return (static_cast<uint64_t>(e) << mantissa_bits) | (n >> e);
  }
  static constexpr uint64_t max(unsigned mantissa_bits) {
    return ((1ull << mantissa_bits) - 1) << ((1u << kExpBits) - 1);
  }
};

// The header word.
//
//   bits 0-1   tag: 01 header, 10 count word, 00 forwarding pointer (the
//              header of an evacuated object is replaced by the new address)
//   bit  2     mark
//   bits 3-6   age (young collections survived)
//   bits 7-8   identity-hash state (HashState)
//   bits 9-24  class id (ClassId below, or a user class id)
//   bits 25-44 reference count: 16-bit mantissa, 4-bit exponent
//   bits 45-63 raw words: 15-bit mantissa, 4-bit exponent
enum class HashState : uint64_t {
  kUnhashed = 0,
  kHashed = 1,          // hash derived from the current address
  kHashedAndMoved = 2,  // hash kept in the object's last raw word
};

// Built-in object kinds. User classes take ids from kFirstUserClass up.
enum ClassId : uint32_t {
  kFillerClass = 0,  // dead space in a linearly walked region
  kStringClass,
  kArrayClass,
  kArrayStorageClass,
  kNumArrayClass,
  kMapClass,
  kMapStorageClass,
  kClosureClass,
  kCellClass,
  kBoundMethodClass,
  kBuiltinClass,
  kClassClass,
  kFiberClass,
  kStackClass,
  kFirstUserClass,
};
constexpr uint32_t kMaxClassId = 0xFFFF;

struct Header {
  static constexpr uint64_t kTagMask = 3;
  static constexpr uint64_t kHeaderTag = 1;
  static constexpr uint64_t kCountTag = 2;
  static constexpr uint64_t kMarkBit = 1ull << 2;
  static constexpr unsigned kAgeShift = 3;
  static constexpr uint64_t kAgeMask = 0xFull << kAgeShift;
  static constexpr unsigned kHashShift = 7;
  static constexpr uint64_t kHashMask = 3ull << kHashShift;
  static constexpr unsigned kClassShift = 9;
  static constexpr unsigned kRefsShift = 25;
  static constexpr unsigned kRawShift = 45;
  static constexpr uint32_t kMaxAge = 15;

  // A recognisable pattern for freed and evacuated memory: its tag (11) is
  // neither a header, a count word nor a forwarding pointer.
  static constexpr uint64_t kPoison = 0xDEAD'BEEF'DEAD'BEEFull;

  static constexpr uint64_t make(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
    return kHeaderTag | (static_cast<uint64_t>(class_id) << kClassShift) |
           (SizeCode::encode(nrefs, SizeCode::kRefMantissaBits) << kRefsShift) |
           (SizeCode::encode(raw_words, SizeCode::kRawMantissaBits) << kRawShift);
  }
  static constexpr bool is_header(uint64_t h) { return (h & kTagMask) == kHeaderTag; }
  static constexpr bool is_forwarded(uint64_t h) { return (h & kTagMask) == 0; }
  static constexpr uint32_t class_id(uint64_t h) {
    return static_cast<uint32_t>((h >> kClassShift) & 0xFFFF);
  }
  static constexpr uint64_t nrefs(uint64_t h) {
    uint64_t f = h >> kRefsShift;
    return (f & 0xFFFF) << ((f >> 16) & 0xF);
  }
  static constexpr uint64_t raw_words(uint64_t h) {
    uint64_t f = h >> kRawShift;
    return (f & 0x7FFF) << ((f >> 15) & 0xF);
  }
  static constexpr bool is_marked(uint64_t h) { return h & kMarkBit; }
  static constexpr uint32_t age(uint64_t h) { return static_cast<uint32_t>((h & kAgeMask) >> kAgeShift); }
  static constexpr uint64_t with_age(uint64_t h, uint32_t a) {
    return (h & ~kAgeMask) | (static_cast<uint64_t>(a) << kAgeShift);
  }
  static constexpr HashState hash_state(uint64_t h) {
    return static_cast<HashState>((h & kHashMask) >> kHashShift);
  }
  static constexpr uint64_t with_hash_state(uint64_t h, HashState s) {
    return (h & ~kHashMask) | (static_cast<uint64_t>(s) << kHashShift);
  }
  // The same header with its raw size changed (used when a hashed object
  // grows a hash word on its first move).
  static constexpr uint64_t with_raw_words(uint64_t h, uint64_t raw_words) {
    uint64_t low = h & ((1ull << kRawShift) - 1);
    return low | (SizeCode::encode(raw_words, SizeCode::kRawMantissaBits) << kRawShift);
  }
  static constexpr uint64_t count_word(uint64_t nrefs) { return (nrefs << 2) | kCountTag; }
};

// Geometry: everything a collector needs to move or walk an object.

using Word = uint64_t;
constexpr size_t kWordSize = sizeof(Word);

// Words below the header: the reference slots and, if there are any, the
// count word.
constexpr uint64_t words_below(uint64_t nrefs) { return nrefs ? nrefs + 1 : 0; }
constexpr uint64_t object_words(uint64_t nrefs, uint64_t raw_words) {
  return words_below(nrefs) + 1 + raw_words;
}
inline uint64_t object_words(uint64_t header) {
  return object_words(Header::nrefs(header), Header::raw_words(header));
}

inline Word* object_start(Word* header_addr, uint64_t header) {
  return header_addr - words_below(Header::nrefs(header));
}
// Slot i lies i+1 words below the header: slots form one unit-stride run.
inline Value* ref_slots_begin(Word* header_addr, uint64_t nrefs) {
  return reinterpret_cast<Value*>(header_addr - nrefs);
}
inline Value& ref_slot(Word* header_addr, uint64_t i) {
  return *reinterpret_cast<Value*>(header_addr - 1 - i);
}
inline Word* raw_words_begin(Word* header_addr) { return header_addr + 1; }

// From the first word of an object, its header (linear walks).
inline Word* header_from_start(Word* start) {
  Word w = *start;
  if ((w & Header::kTagMask) == Header::kCountTag) return start + 1 + (w >> 2);
  return start;
}
inline const Word* header_from_start(const Word* start) {
  return header_from_start(const_cast<Word*>(start));
}

// Writes a fresh object into zero-or-garbage memory at start: count word,
// reference slots set to nil, header, raw words zeroed. Returns the header
// address. nrefs and raw_words must already be representable (round_up).
inline Word* format_object(Word* start, uint32_t class_id, uint64_t nrefs, uint64_t raw_words) {
  Word* header = start + words_below(nrefs);
  if (nrefs) {
    start[0] = Header::count_word(nrefs);
    for (uint64_t i = 1; i <= nrefs; ++i) start[i] = Value::kNil;
  }
  *header = Header::make(class_id, nrefs, raw_words);
  if (raw_words) std::memset(header + 1, 0, raw_words * kWordSize);
  return header;
}

// Sizes the header can express (after rounding).
inline bool representable(uint64_t nrefs, uint64_t raw_words) {
  return nrefs <= SizeCode::max(SizeCode::kRefMantissaBits) &&
         raw_words <= SizeCode::max(SizeCode::kRawMantissaBits);
}

inline uint64_t rounded_refs(uint64_t n) { return SizeCode::round_up(n, SizeCode::kRefMantissaBits); }
inline uint64_t rounded_raw(uint64_t n) { return SizeCode::round_up(n, SizeCode::kRawMantissaBits); }

// Moving an object in state kHashed (HashState): its hash was its old
// address's, so the copy keeps it in a new last raw word, the raw size
// rounded up as the header requires, and is in state kHashedAndMoved.

inline bool grows_when_moved(Word header) { return Header::hash_state(header) == HashState::kHashed; }
// Raw words after the move, hash word included.
inline uint64_t raw_words_when_moved(Word header) {
  uint64_t raw = Header::raw_words(header);
  return grows_when_moved(header) ? rounded_raw(raw + 1) : raw;
}
inline uint64_t growth_when_moved(Word header) {
  return raw_words_when_moved(header) - Header::raw_words(header);
}
inline uint64_t object_words_when_moved(Word header) {
  return object_words(header) + growth_when_moved(header);
}
// At the copy's header, whose raw words are copied: zeroes the words it
// grew, writes hash (the old address's) in the last and returns the copy's
// header, for the caller to store. Only for a header that grows_when_moved.
inline Word grow_hash_word(Word* moved, Word header, uint64_t hash) {
  uint64_t raw = Header::raw_words(header);
  uint64_t grown = rounded_raw(raw + 1);
  for (uint64_t i = raw + 1; i < grown; ++i) moved[i] = 0;
  moved[grown] = hash;
  return Header::with_hash_state(Header::with_raw_words(header, grown), HashState::kHashedAndMoved);
}

}  // namespace gc
