#include "gc/snapshot/snapshot.h"

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>

namespace gc::snapshot {

namespace {

// A value's first byte (docs/snapshot.md, "Values").
enum ValueTag : uint8_t {
  kNumberTag = 0,
  kRefTag = 1,
  kNilTag = 2,
  kFalseTag = 3,
  kTrueTag = 4,
  kUndefinedTag = 5,
  kTombstoneTag = 6,
};

// Where the header ends: magic, version, flags.
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 + 4;
constexpr size_t kChecksumBytes = 8;
// Names longer than this are not names (a class name is source text).
constexpr uint64_t kMaxNameBytes = 1 << 16;

void put_fixed(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// LEB128, unsigned.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_string(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

// The breadth-first numbering: each object's index the first time a slot
// or root reaches it.
class Numbering {
 public:
  uint64_t index_of(Word* header) {
    auto [it, fresh] = index_.try_emplace(header, index_.size());
    if (fresh) queue_.push_back(header);
    return it->second;
  }
  bool next(Word** header) {
    if (queue_.empty()) return false;
    *header = queue_.front();
    queue_.pop_front();
    return true;
  }
  uint64_t count() const { return index_.size(); }

 private:
  std::unordered_map<Word*, uint64_t> index_;
  std::deque<Word*> queue_;
};

void put_value(std::string& out, Value v, Numbering& numbering) {
  if (v.is_ref()) {
    out.push_back(kRefTag);
    put_varint(out, numbering.index_of(v.as_ref()));
  } else if (v.is_num()) {
    out.push_back(kNumberTag);
    put_fixed(out, v.bits, 8);
  } else {
    switch (v.bits) {
      case Value::kNil:
        out.push_back(kNilTag);
        break;
      case Value::kFalse:
        out.push_back(kFalseTag);
        break;
      case Value::kTrue:
        out.push_back(kTrueTag);
        break;
      case Value::kUndefined:
        out.push_back(kUndefinedTag);
        break;
      default:
        out.push_back(kTombstoneTag);
        break;
    }
  }
}

// Reads the format back, every length checked against what is left.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  size_t offset() const { return pos_; }
  void skip(size_t n) { pos_ += std::min<size_t>(n, left()); }
  uint64_t left() const { return bytes_.size() - pos_; }
  bool fixed(uint64_t* v, int n) {
    if (left() < static_cast<uint64_t>(n)) return false;
    *v = 0;
    for (int i = 0; i < n; ++i)
      *v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    pos_ += n;
    return true;
  }
  bool byte(uint8_t* b) {
    if (!left()) return false;
    *b = static_cast<uint8_t>(bytes_[pos_++]);
    return true;
  }
  // False if truncated or longer than ten bytes (no uint64 needs more).
  bool varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!byte(&b)) return false;
      if (shift == 63 && b > 1) return false;
      *v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool string(std::string* s, uint64_t max) {
    uint64_t n;
    if (!varint(&n) || n > max || n > left()) return false;
    s->assign(bytes_.substr(pos_, n));
    pos_ += n;
    return true;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace

Encoded encode(RootSet& roots, const HeapSchema& schema, const Origin& origin) {
  Numbering numbering;
  std::vector<RootGroup> groups;
  roots.root_groups(groups);
  std::string group_bytes;
  put_varint(group_bytes, groups.size());
  for (const RootGroup& g : groups) {
    put_string(group_bytes, g.name);
    put_varint(group_bytes, g.count);
    for (size_t i = 0; i < g.count; ++i) put_value(group_bytes, g.slots[i], numbering);
  }

  Encoded result;
  std::string object_bytes;
  std::map<uint32_t, uint32_t> native_words;  // the classes met, ascending
  Word* h;
  while (numbering.next(&h)) {
    Word header = *h;
    uint32_t class_id = Header::class_id(header);
    uint64_t nrefs = Header::nrefs(header);
    uint64_t raw = Header::raw_words(header);
    auto [known, fresh] = native_words.try_emplace(class_id, 0);
    if (fresh) known->second = schema.native_raw_words(class_id);
    put_varint(object_bytes, class_id);
    object_bytes.push_back(
        static_cast<char>(static_cast<uint8_t>(Header::hash_state(header)) | Header::age(header) << 2));
    put_varint(object_bytes, nrefs);
    put_varint(object_bytes, raw);
    for (uint64_t i = 0; i < nrefs; ++i) put_value(object_bytes, ref_slot(h, i), numbering);
    for (uint64_t i = 0; i < raw; ++i) put_fixed(object_bytes, i < known->second ? 0 : h[1 + i], 8);
    result.objects++;
    result.object_bytes += object_words(header) * kWordSize;
  }

  std::string& out = result.bytes;
  out.append(kMagic, sizeof(kMagic));
  put_fixed(out, kVersion, 4);
  put_fixed(out, 0, 4);
  put_string(out, origin.program);
  put_string(out, origin.collector);
  put_varint(out, origin.collection);
  put_varint(out, native_words.size());
  for (const auto& [class_id, unused] : native_words) {
    put_varint(out, class_id);
    put_string(out, schema.name_of_class(class_id));
  }
  out += group_bytes;
  put_varint(out, result.objects);
  out += object_bytes;
  put_fixed(out, checksum(out), 8);
  return result;
}

uint64_t checksum(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

uint64_t ref_index(Value v) { return v.bits & ~Value::kTagMask; }

uint64_t Snapshot::object_bytes() const {
  uint64_t total = 0;
  for (const Object& o : objects) total += object_words(o.nrefs, o.raw_words) * kWordSize;
  return total;
}

std::string Snapshot::class_name(uint32_t class_id) const {
  auto it = std::lower_bound(classes.begin(), classes.end(), class_id,
                             [](const auto& entry, uint32_t id) { return entry.first < id; });
  return it != classes.end() && it->first == class_id ? it->second : std::string();
}

namespace {

// The header and the checksum: an error message, or empty if the file may
// be read.
std::string check_envelope(std::string_view bytes, bool check_sum) {
  if (bytes.size() < sizeof(kMagic) ||
      bytes.substr(0, sizeof(kMagic)) != std::string_view(kMagic, sizeof(kMagic)))
    return "not a gclab heap snapshot (no magic number)";
  uint64_t version, flags;
  Reader header(bytes.substr(sizeof(kMagic)));
  if (!header.fixed(&version, 4) || !header.fixed(&flags, 4))
    return "truncated in the header (" + std::to_string(bytes.size()) + " bytes)";
  if (version != kVersion)
    return "snapshot version " + std::to_string(version) + "; this vm reads version " +
           std::to_string(kVersion);
  if (flags != 0) return "unknown flags " + std::to_string(flags) + " in the header";
  if (bytes.size() < kHeaderBytes + kChecksumBytes)
    return "truncated: no checksum (" + std::to_string(bytes.size()) + " bytes)";
  if (check_sum) {
    std::string_view body = bytes.substr(0, bytes.size() - kChecksumBytes);
    uint64_t stored = 0;
    Reader tail(bytes.substr(body.size()));
    tail.fixed(&stored, 8);
    if (stored != checksum(body)) return "checksum mismatch: the file is truncated or corrupt";
  }
  return "";
}

// The body, one section after another in the file's order (docs/snapshot.md);
// each section returns false with the error set.
class BodyDecoder {
 public:
  BodyDecoder(std::string_view body, std::string* error) : in_(body), error_(error) {
    in_.skip(kHeaderBytes);
  }

  std::optional<Snapshot> decode() {
    if (!origin() || !class_table() || !root_groups() || !objects() || !references()) return std::nullopt;
    return std::move(s_);
  }

 private:
  // Positions in messages count from the file's start.
  bool fail(const std::string& what) {
    *error_ = what + " (at byte " + std::to_string(in_.offset()) + ")";
    return false;
  }
  bool truncated(const std::string& where) { return fail("truncated or corrupt in " + where); }

  bool origin() {
    if (!in_.string(&s_.origin.program, kMaxNameBytes) || !in_.string(&s_.origin.collector, kMaxNameBytes) ||
        !in_.varint(&s_.origin.collection))
      return truncated("the origin");
    return true;
  }

  bool class_table() {
    uint64_t class_count;
    if (!in_.varint(&class_count) || class_count > in_.left()) return truncated("the class table");
    for (uint64_t k = 0; k < class_count; ++k) {
      uint64_t id;
      std::string name;
      if (!in_.varint(&id) || !in_.string(&name, kMaxNameBytes)) return truncated("the class table");
      if (id == kFillerClass || id > kMaxClassId)
        return fail("class id " + std::to_string(id) + " out of range");
      if (name.empty()) return fail("class " + std::to_string(id) + " has no name");
      if (!s_.classes.empty() && id <= s_.classes.back().first)
        return fail("class table not in ascending order at class " + std::to_string(id));
      s_.classes.emplace_back(static_cast<uint32_t>(id), std::move(name));
    }
    return true;
  }

  // One value; a reference's index is checked once the object count is
  // known (references()).
  bool value(Value* v) {
    uint8_t tag;
    if (!in_.byte(&tag)) return false;
    switch (tag) {
      case kNumberTag: {
        uint64_t bits;
        if (!in_.fixed(&bits, 8)) return false;
        *v = Value::from_bits(bits);
        // A tagged pattern here would forge a reference or a special.
        return v->is_num();
      }
      case kRefTag: {
        uint64_t index;
        if (!in_.varint(&index) || index >= (1ull << 48)) return false;
        refs_.emplace_back(s_.values.size(), in_.offset());
        *v = Value::from_bits(Value::kRefTag | index);
        return true;
      }
      case kNilTag:
        *v = Value::nil();
        return true;
      case kFalseTag:
        *v = Value::boolean(false);
        return true;
      case kTrueTag:
        *v = Value::boolean(true);
        return true;
      case kUndefinedTag:
        *v = Value::undefined();
        return true;
      case kTombstoneTag:
        *v = Value::tombstone();
        return true;
      default:
        return false;
    }
  }

  bool values(uint64_t count, const std::string& where) {
    for (uint64_t i = 0; i < count; ++i) {
      Value v;
      if (!value(&v)) return truncated(where + ", slot " + std::to_string(i));
      s_.values.push_back(v);
    }
    return true;
  }

  bool root_groups() {
    uint64_t group_count;
    if (!in_.varint(&group_count) || group_count > in_.left()) return truncated("the root groups");
    for (uint64_t g = 0; g < group_count; ++g) {
      Group group;
      std::string where = "root group " + std::to_string(g);
      if (!in_.string(&group.name, kMaxNameBytes) || !in_.varint(&group.count) || group.count > in_.left())
        return truncated(where);
      group.first_value = s_.values.size();
      if (!values(group.count, where)) return false;
      s_.groups.push_back(std::move(group));
    }
    return true;
  }

  bool objects() {
    // Every object takes at least four bytes.
    if (!in_.varint(&object_count_) || object_count_ > in_.left() / 4) return truncated("the object count");
    s_.objects.reserve(object_count_);
    for (uint64_t k = 0; k < object_count_; ++k)
      if (!object("object " + std::to_string(k))) return false;
    if (in_.left()) return fail(std::to_string(in_.left()) + " bytes after the last object");
    return true;
  }

  bool object(const std::string& where) {
    uint64_t class_id, nrefs, raw_words;
    uint8_t flags_byte;
    if (!in_.varint(&class_id) || !in_.byte(&flags_byte) || !in_.varint(&nrefs) || !in_.varint(&raw_words))
      return truncated(where);
    if (class_id > kMaxClassId || s_.class_name(static_cast<uint32_t>(class_id)).empty())
      return fail(where + " has class id " + std::to_string(class_id) + ", which the class table lacks");
    uint32_t hash_state = flags_byte & 3;
    if (hash_state > static_cast<uint32_t>(HashState::kHashedAndMoved))
      return fail(where + " has hash state " + std::to_string(hash_state));
    if (nrefs > in_.left() || raw_words > in_.left() / 8 || !representable(nrefs, raw_words) ||
        rounded_refs(nrefs) != nrefs || rounded_raw(raw_words) != raw_words)
      return fail(where + " has a size no object has (" + std::to_string(nrefs) + " references, " +
                  std::to_string(raw_words) + " raw words)");
    if (hash_state == static_cast<uint32_t>(HashState::kHashedAndMoved) && raw_words == 0)
      return fail(where + " keeps its hash in a raw word but has none");
    Object o{.class_id = static_cast<uint32_t>(class_id),
             .hash_state = static_cast<HashState>(hash_state),
             .age = static_cast<uint32_t>(flags_byte >> 2),
             .nrefs = nrefs,
             .raw_words = raw_words,
             .first_value = s_.values.size(),
             .first_raw = s_.raw.size()};
    if (o.age > Header::kMaxAge) return fail(where + " has age " + std::to_string(o.age));
    if (!values(nrefs, where)) return false;
    for (uint64_t i = 0; i < raw_words; ++i) {
      uint64_t w;
      if (!in_.fixed(&w, 8)) return truncated(where + ", raw word " + std::to_string(i));
      s_.raw.push_back(w);
    }
    s_.objects.push_back(o);
    return true;
  }

  bool references() {
    for (auto [value, offset] : refs_) {
      uint64_t index = ref_index(s_.values[value]);
      if (index >= object_count_) {
        *error_ = "a reference to object " + std::to_string(index) + " of " + std::to_string(object_count_) +
                  " (at byte " + std::to_string(offset) + ")";
        return false;
      }
    }
    return true;
  }

  Reader in_;
  std::string* error_;
  Snapshot s_;
  uint64_t object_count_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> refs_;  // value index, where in the file
};

}  // namespace

std::optional<Snapshot> decode(std::string_view bytes, std::string* error, bool check_sum) {
  *error = check_envelope(bytes, check_sum);
  if (!error->empty()) return std::nullopt;
  return BodyDecoder(bytes.substr(0, bytes.size() - kChecksumBytes), error).decode();
}

void Request::at_collection_start(uint64_t collection, RootSet& roots) {
  if (wanted_ && *wanted_ != collection) return;
  capture_ = encode(roots, *schema_, origin_);
  collection_ = collection;
  capturing_ = true;
  captured_ = true;
}

void Request::at_collection_end(uint64_t live_bytes) {
  if (!capturing_) return;
  live_after_ = live_bytes;
  capturing_ = false;
}

}  // namespace gc::snapshot
