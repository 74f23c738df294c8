#include "gc/verify/verifier.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "gc/collector.h"

namespace gc::verify {

std::string Failure::message() const {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                " (object 0x%" PRIxPTR ", slot %" PRId64 ", space %s, collection %" PRIu64 ")", object, slot,
                space.empty() ? "-" : space.c_str(), collection);
  return "gc-verify: " + what + buf;
}

namespace {

// The verifier decodes headers through layout.h's Header accessors only; it
// never calls a collector's code.
// What the mark bits must say: nothing (none set), exactly the trace's
// reach, or at least it.
enum class Marks { kNone, kExact, kReachableMarked };

class Checker {
 public:
  Checker(const HeapShape& shape, uint64_t collection, Marks marks = Marks::kNone)
      : shape_(shape), collection_(collection), marks_(marks), marking_(marks != Marks::kNone) {}

  std::optional<Failure> run(RootSet& roots) {
    for (const SpaceRange& s : shape_.linear_spaces)
      if (!walk_linear_space(s)) return failure_;
    for (const CellRange& c : shape_.cell_spaces)
      if (!walk_cells(c)) return failure_;
    for (const Word* h : shape_.large_objects)
      if (!check_large_object(h)) return failure_;
    if (!trace_from_roots(roots)) return failure_;
    if (marks_ == Marks::kExact && !compare_marks()) return failure_;
    return std::nullopt;
  }

  uintptr_t unmarked() const { return unmarked_; }
  // Marked objects the trace did not reach.
  uint64_t floating() const {
    uint64_t n = 0;
    for (const auto& [h, space] : objects_) n += Header::is_marked(*h) && !visited_.count(h);
    return n;
  }

 private:
  bool fail(std::string what, const Word* object, int64_t slot, const char* space) {
    failure_ =
        Failure{std::move(what), reinterpret_cast<uintptr_t>(object), slot, space ? space : "-", collection_};
    return false;
  }

  // A header word that a live object may have: tag 01, a class id in range,
  // a defined hash state, and no mark left over from a collection.
  const char* header_problem(Word h) const {
    if ((h & Header::kTagMask) != Header::kHeaderTag) {
      if (h == Header::kPoison) return "poisoned header";
      if ((h & Header::kTagMask) == 0) return "forwarding pointer where a header belongs";
      return "not a header";
    }
    if (Header::class_id(h) > shape_.max_class_id) return "class id out of range";
    if (static_cast<uint64_t>(Header::hash_state(h)) > static_cast<uint64_t>(HashState::kHashedAndMoved))
      return "undefined hash state";
    if (Header::is_marked(h) && !marking_) return "mark bit set outside a collection";
    return nullptr;
  }

  // What is wrong with the object starting at p, whose count word must
  // leave it under `words` words (too_long otherwise), or nullptr; header
  // is where it was found wrong, or its header.
  const char* object_problem(const Word* p, uint64_t words, const char* too_long, const Word*& header) const {
    header = p;
    if ((*p & Header::kTagMask) != Header::kCountTag) {
      if (const char* why = header_problem(*p)) return why;
      return Header::nrefs(*p) != 0 ? "object with references lacks its count word" : nullptr;
    }
    uint64_t n = *p >> 2;
    if (n == 0 || n + 1 >= words) return too_long;
    header = p + 1 + n;
    if (const char* why = header_problem(*header)) return why;
    return Header::nrefs(*header) != n ? "count word disagrees with header" : nullptr;
  }

  bool walk_linear_space(const SpaceRange& s) {
    const Word* p = s.begin;
    while (p < s.end) {
      const Word* header;
      if (const char* why =
              object_problem(p, static_cast<uint64_t>(s.end - p), "count word runs past the space", header))
        return fail(why, header, -1, s.name);
      uint64_t raw = Header::raw_words(*header);
      if (raw >= static_cast<uint64_t>(s.end - header))
        return fail("object runs past the end of its space", header, -1, s.name);
      if (Header::class_id(*header) != kFillerClass) objects_.emplace(header, s.name);
      p = header + 1 + raw;
    }
    return true;
  }

  bool walk_cells(const CellRange& c) {
    for (const Word* cell = c.begin; cell < c.end; cell += c.cell_words) {
      if ((*cell & Header::kTagMask) == 0) continue;  // free: a free-list link
      const Word* header;
      if (const char* why = object_problem(cell, c.cell_words, "count word runs past its cell", header))
        return fail(why, header, -1, c.name);
      if (static_cast<uint64_t>(header - cell) + 1 + Header::raw_words(*header) > c.cell_words)
        return fail("object runs past the end of its cell", header, -1, c.name);
      if (Header::class_id(*header) == kFillerClass)
        return fail("filler object in a cell", header, -1, c.name);
      objects_.emplace(header, c.name);
    }
    return true;
  }

  bool check_large_object(const Word* h) {
    const char* space = shape_.large_space.name;
    if (h < shape_.large_space.begin || h >= shape_.large_space.end)
      return fail("large object outside its space", h, -1, space);
    if (const char* why = header_problem(*h)) return fail(why, h, -1, space);
    if (Header::class_id(*h) == kFillerClass) return fail("large object of the filler class", h, -1, space);
    uint64_t n = Header::nrefs(*h);
    if (n && *(h - 1 - n) != Header::count_word(n))
      return fail("count word disagrees with header", h, -1, space);
    objects_.emplace(h, space);
    return true;
  }

  bool young(const Word* p) const {
    for (const SpaceRange& s : shape_.young_spaces)
      if (p >= s.begin && p < s.end) return true;
    return false;
  }

  const char* evacuated_space_of(const Word* p) const {
    for (const SpaceRange& s : shape_.evacuated_spaces)
      if (p >= s.begin && p < s.end) return s.name;
    return nullptr;
  }

  // Checks one reference; holder is the object (or nullptr for a root).
  bool check_reference(Value v, const Word* holder, int64_t slot, const char* holder_space) {
    if (!v.is_ref()) return true;
    const Word* target = v.as_ref();
    if (objects_.count(target)) {
      if (marks_ == Marks::kReachableMarked && !Header::is_marked(*target)) {
        unmarked_ = reinterpret_cast<uintptr_t>(target);
        return fail("reachable object not marked", holder, slot, holder_space);
      }
      if (visited_.insert(target).second) stack_.push_back(target);
      return true;
    }
    if (const char* ev = evacuated_space_of(target))
      return fail(std::string("reference into evacuated space ") + ev, holder, slot, holder_space);
    return fail("reference to no live object", holder, slot, holder_space);
  }

  bool trace_from_roots(RootSet& roots) {
    std::vector<RootGroup> groups;
    roots.root_groups(groups);
    for (size_t g = 0; g < groups.size(); ++g) {
      std::string space = "roots (group " + std::to_string(g) + ")";
      for (size_t i = 0; i < groups[g].count; ++i)
        if (!check_reference(groups[g].slots[i], nullptr, static_cast<int64_t>(i), space.c_str()))
          return false;
    }
    while (!stack_.empty()) {
      const Word* h = stack_.back();
      stack_.pop_back();
      const char* space = objects_.at(h);
      uint64_t n = Header::nrefs(*h);
      bool check_cards = shape_.card_base && !young(h);
      for (uint64_t i = 0; i < n; ++i) {
        const Value* slot = reinterpret_cast<const Value*>(h - 1 - i);
        if (!check_reference(*slot, h, static_cast<int64_t>(i), space)) return false;
        if (check_cards && slot->is_ref() && young(slot->as_ref()) &&
            shape_.card_base[reinterpret_cast<uintptr_t>(slot) >> kCardShift] != kCardDirty)
          return fail("old-to-young reference on a clean card", h, static_cast<int64_t>(i), space);
      }
    }
    return true;
  }

  // The mark bit of every object found by the walks is set exactly when
  // the trace reached it.
  bool compare_marks() {
    for (const auto& [h, space] : objects_) {
      bool reached = visited_.count(h) != 0;
      if (reached && !Header::is_marked(*h)) return fail("reachable object not marked", h, -1, space);
      if (!reached && Header::is_marked(*h)) return fail("unreachable object marked", h, -1, space);
    }
    return true;
  }

  const HeapShape& shape_;
  uint64_t collection_;
  Marks marks_;
  bool marking_;
  std::optional<Failure> failure_;
  uintptr_t unmarked_ = 0;
  std::unordered_map<const Word*, const char*> objects_;  // header -> space name
  std::unordered_set<const Word*> visited_;
  std::vector<const Word*> stack_;
};

}  // namespace

std::optional<Failure> check_heap(const HeapShape& shape, RootSet& roots, uint64_t collection) {
  return Checker(shape, collection).run(roots);
}

std::optional<Failure> check_marks(const HeapShape& shape, RootSet& roots, uint64_t collection) {
  return Checker(shape, collection, Marks::kExact).run(roots);
}

ReachableMarked check_reachable_marked(const HeapShape& shape, RootSet& roots, uint64_t collection) {
  Checker checker(shape, collection, Marks::kReachableMarked);
  ReachableMarked r;
  r.failure = checker.run(roots);
  r.unmarked = checker.unmarked();
  if (!r.failure) r.floating = checker.floating();
  return r;
}

void report_and_exit(const Failure& failure) {
  std::fprintf(stderr, "%s\n", failure.message().c_str());
  std::fflush(stderr);
  std::_Exit(kExitVerifyFailure);
}

void verify_marks_or_exit(const Collector& heap, RootSet& roots, uint64_t collection) {
  HeapShape shape;
  heap.describe_heap(shape);
  if (std::optional<Failure> f = check_marks(shape, roots, collection)) {
    f->what += ", between mark and sweep";
    report_and_exit(*f);
  }
}

void verify_heap_or_exit(const Collector& heap, RootSet& roots, uint64_t collection, const char* when) {
  HeapShape shape;
  heap.describe_heap(shape);
  if (std::optional<Failure> f = check_heap(shape, roots, collection)) {
    f->what += std::string(", ") + when + " collection";
    report_and_exit(*f);
  }
}

}  // namespace gc::verify
