#include "gc/snapshot/replay.h"

#include <cstring>
#include <unordered_set>

#include "gc/mutator.h"

namespace gc::snapshot {

bool Replay::build(Collector& heap) {
  building_ = true;
  uint64_t collections_before = heap.stats().collections;
  objects_.assign(snapshot_.objects.size(), Value::nil());
  for (size_t k = 0; k < snapshot_.objects.size(); ++k) {
    const Object& o = snapshot_.objects[k];
    Word* h = o.class_id == kStackClass ? heap.allocate_pinned(o.class_id, o.nrefs, o.raw_words)
                                        : allocate(heap, o.class_id, o.nrefs, o.raw_words);
    if (!h) {
      building_ = false;
      return false;
    }
    objects_[k] = Value::ref(h);
  }
  // Nothing allocates from here on, so every address stays put.
  for (size_t k = 0; k < snapshot_.objects.size(); ++k) {
    const Object& o = snapshot_.objects[k];
    Word* h = objects_[k].as_ref();
    for (uint64_t i = 0; i < o.nrefs; ++i)
      write_ref(heap, h, &ref_slot(h, i), resolved(snapshot_.values[o.first_value + i]));
    if (o.raw_words) std::memcpy(raw_words_begin(h), &snapshot_.raw[o.first_raw], o.raw_words * kWordSize);
    *h = Header::with_hash_state(Header::with_age(*h, o.age), o.hash_state);
  }
  roots_.clear();
  for (const Group& g : snapshot_.groups)
    for (uint64_t i = 0; i < g.count; ++i) roots_.push_back(resolved(snapshot_.values[g.first_value + i]));
  build_collections_ = heap.stats().collections - collections_before;
  objects_ = {};
  building_ = false;
  return true;
}

void Replay::root_groups(std::vector<RootGroup>& out) {
  if (building_) {
    out.push_back({objects_.data(), objects_.size(), "replay: objects being built"});
    return;
  }
  Value* slots = roots_.data();
  for (const Group& g : snapshot_.groups) {
    if (g.count) out.push_back({slots, g.count, g.name.c_str()});
    slots += g.count;
  }
}

Replay::Reachable Replay::reachable() {
  Reachable r;
  std::unordered_set<Word*> seen;
  std::vector<Word*> grey;
  auto reach = [&](Value v) {
    if (v.is_ref() && seen.insert(v.as_ref()).second) grey.push_back(v.as_ref());
  };
  for (Value v : roots_) reach(v);
  while (!grey.empty()) {
    Word* h = grey.back();
    grey.pop_back();
    r.objects++;
    r.bytes += object_words(*h) * kWordSize;
    for (uint64_t i = 0, n = Header::nrefs(*h); i < n; ++i) reach(ref_slot(h, i));
  }
  return r;
}

}  // namespace gc::snapshot
