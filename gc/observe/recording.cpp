#include "gc/observe/recording.h"

#include <algorithm>

#include "gc/observe/json.h"
#include "gc/parallel/clock.h"

namespace gc::observe {

extern const char* const kAnimationPage;

namespace {

const char* step_name(StepKind k) {
  switch (k) {
    case StepKind::kPhaseStart:
      return "phase start";
    case StepKind::kPhaseEnd:
      return "phase end";
    case StepKind::kGrey:
      return "grey";
    case StepKind::kScan:
      return "scan";
    case StepKind::kCopy:
      return "copy";
    case StepKind::kForward:
      return "forward";
    case StepKind::kMove:
      return "move";
    case StepKind::kFree:
      return "free";
    case StepKind::kSteal:
      return "steal";
    case StepKind::kLevel:
      return "level";
    case StepKind::kMessage:
      return "message";
    case StepKind::kAllocate:
      return "allocate";
    case StepKind::kBarrier:
      return "barrier";
    case StepKind::kCard:
      return "card";
    case StepKind::kRedirect:
      return "redirect";
    case StepKind::kBalance:
      return "balance";
  }
  return "?";
}

}  // namespace

bool Recording::wants(uint64_t id, bool full, bool cycle_start) const {
  if (done_ || active_) return false;
  if (target_.collection) return cycle_start ? id >= *target_.collection : id == *target_.collection;
  if (target_.first_full) return full;
  return true;
}

void Recording::start(uint64_t id, bool full, const char* collector, const verify::HeapShape& shape,
                      RootSet& roots, unsigned workers) {
  collection_ = id;
  full_ = full;
  collector_ = collector;
  take_heap(shape, &roots);
  done_ = true;
  if (heap_.objects.size() > limit_) {
    refused_ = "GC(" + std::to_string(id) + ") starts with " + std::to_string(heap_.objects.size()) +
               " objects, more than --gc-animate-limit=" + std::to_string(limit_) +
               " allows; record a smaller heap (a smaller input), or raise the limit";
    heap_ = {};
    return;
  }
  workers_ = std::max(1u, workers);
  steps_.assign(workers_ + 1, {});  // the last: the device's
  start_ns_ = static_cast<int64_t>(parallel::now_ns());
  active_ = true;
  active_recording_ = this;
}

void Recording::finish(const verify::HeapShape& after) {
  active_ = false;
  active_recording_ = nullptr;
  RecordedHeap initial = std::move(heap_);
  heap_ = {};
  take_heap(after, nullptr);
  for (const RecordedObject& o : heap_.objects) after_.push_back(o.header);
  heap_ = std::move(initial);
  if (over_limit_.load(std::memory_order_relaxed) && refused_.empty()) {
    refused_ = "GC(" + std::to_string(collection_) + ") took more than " +
               std::to_string(limit_ * kStepsPerObject) +
               " steps, the most --gc-animate-limit=" + std::to_string(limit_) + " allows (" +
               std::to_string(kStepsPerObject) +
               " per object); record a smaller heap (a smaller input), or raise the limit";
    steps_.clear();
    heap_ = {};
  }
}

void Recording::add(unsigned worker, StepKind kind, uint64_t a, uint64_t b) {
  if (worker == kDevice) worker = workers_;
  if (worker >= steps_.size()) return;
  if (step_count_.fetch_add(1, std::memory_order_relaxed) >= limit_ * kStepsPerObject) {
    over_limit_.store(true, std::memory_order_relaxed);
    return;
  }
  steps_[worker].push_back({static_cast<int64_t>(parallel::now_ns()) - start_ns_, a, b, nullptr, kind,
                            static_cast<uint8_t>(worker == workers_ ? kDevice : worker)});
}

void Recording::use_actors(unsigned n, const char* noun) {
  actor_noun_ = noun;
  if (!active_ || n <= workers_) return;
  // The steps so far stay; the device's lane, empty while a collection of
  // cores reports, moves to the end.
  workers_ = n;
  steps_.resize(workers_ + 1);
}

void Recording::phase(unsigned worker, const char* name, bool start) {
  if (worker >= workers_) return;
  steps_[worker].push_back({static_cast<int64_t>(parallel::now_ns()) - start_ns_, 0, 0, name,
                            start ? StepKind::kPhaseStart : StepKind::kPhaseEnd,
                            static_cast<uint8_t>(worker)});
}

// Every object of every space and every free cell, walked as the verifier
// walks them (the heap is whole at a collection's start), and the roots'
// referents.
void Recording::take_heap(const verify::HeapShape& shape, RootSet* roots) {
  auto add_object = [&](const Word* start, const Word* h, uint32_t space) {
    uint64_t n = Header::nrefs(*h);
    RecordedObject o{addr(start),
                     addr(h),
                     static_cast<uint32_t>(h + 1 + Header::raw_words(*h) - start),
                     static_cast<uint32_t>(n),
                     Header::class_id(*h),
                     space,
                     heap_.targets.size()};
    const Value* slots = reinterpret_cast<const Value*>(h - n);
    for (uint64_t i = 0; i < n; ++i) heap_.targets.push_back(slots[i].is_ref() ? addr(slots[i].as_ref()) : 0);
    heap_.objects.push_back(o);
  };
  for (const verify::SpaceRange& s : shape.linear_spaces) {
    auto space = static_cast<uint32_t>(heap_.spaces.size());
    heap_.spaces.push_back({s.name, addr(s.begin), addr(s.end)});
    for (const Word* p = s.begin; p < s.end;) {
      const Word* h = header_from_start(p);
      if (Header::class_id(*h) != kFillerClass) add_object(p, h, space);
      p = h + 1 + Header::raw_words(*h);
    }
  }
  for (const verify::CellRange& c : shape.cell_spaces) {
    auto space = static_cast<uint32_t>(heap_.spaces.size());
    heap_.spaces.push_back({c.name, addr(c.begin), addr(c.end)});
    for (const Word* cell = c.begin; cell < c.end; cell += c.cell_words) {
      if ((*cell & Header::kTagMask) == 0)
        heap_.free_cells.push_back({addr(cell), static_cast<uint32_t>(c.cell_words)});
      else
        add_object(cell, header_from_start(cell), space);
    }
  }
  // Large objects lie far apart in their space: each is a range of its own.
  for (const Word* h : shape.large_objects) {
    uint64_t n = Header::nrefs(*h);
    const Word* start = h - words_below(n);
    auto space = static_cast<uint32_t>(heap_.spaces.size());
    heap_.spaces.push_back({shape.large_space.name, addr(start), addr(h + 1 + Header::raw_words(*h))});
    add_object(start, h, space);
  }
  if (!roots) return;
  std::vector<RootGroup> groups;
  roots->root_groups(groups);
  for (const RootGroup& g : groups)
    for (size_t i = 0; i < g.count; ++i)
      if (g.slots[i].is_ref()) heap_.roots.push_back(addr(g.slots[i].as_ref()));
}

std::string Recording::json() const {
  std::vector<RecordedStep> all;
  for (const auto& w : steps_) all.insert(all.end(), w.begin(), w.end());
  std::stable_sort(all.begin(), all.end(),
                   [](const RecordedStep& x, const RecordedStep& y) { return x.ns < y.ns; });
  std::string out;
  JsonWriter j(out);
  j.begin_object().field("collector", collector_).field("collection", collection_).field("full", full_);
  j.field("cycle", cycle_);
  j.field("workers", static_cast<uint64_t>(workers_))
      .field("device", uint64_t{kDevice})
      .field("actor", actor_noun_);
  j.key("spaces").begin_array();
  for (const RecordedSpace& s : heap_.spaces)
    j.begin_object().field("name", s.name).field("begin", s.begin).field("end", s.end).end_object();
  j.end_array().key("objects").begin_array();
  // [start, header, words, class, space, [targets]]
  for (const RecordedObject& o : heap_.objects) {
    j.begin_array().value(o.start).value(o.header).value(static_cast<uint64_t>(o.words));
    j.value(static_cast<uint64_t>(o.class_id)).value(static_cast<uint64_t>(o.space)).begin_array();
    for (uint32_t i = 0; i < o.nrefs; ++i) j.value(heap_.targets[o.first_target + i]);
    j.end_array().end_array();
  }
  j.end_array().key("free_cells").begin_array();
  for (auto [start, words] : heap_.free_cells)
    j.begin_array().value(start).value(static_cast<uint64_t>(words)).end_array();
  j.end_array().key("roots").begin_array();
  for (uint64_t r : heap_.roots) j.value(r);
  j.end_array().key("after").begin_array();
  for (uint64_t h : after_) j.value(h);
  j.end_array().key("step_kinds").begin_array();
  for (int k = 0; k < kStepKinds; ++k) j.value(step_name(static_cast<StepKind>(k)));
  // MessageKind's names, in its order: a message step's b holds the number
  // in its high half.
  j.end_array().key("message_kinds").begin_array().value("mark").value("ptrquery");
  // [ns, kind, worker, a, b] or, for a phase, [ns, kind, worker, name]
  j.end_array().key("steps").begin_array();
  for (const RecordedStep& s : all) {
    j.begin_array().value(static_cast<uint64_t>(std::max<int64_t>(s.ns, 0)));
    j.value(static_cast<uint64_t>(s.kind)).value(static_cast<uint64_t>(s.worker));
    if (s.phase)
      j.value(s.phase);
    else
      j.value(s.a).value(s.b);
    j.end_array();
  }
  j.end_array().end_object();
  return out;
}

std::string Recording::html() const {
  std::string page = kAnimationPage;
  const std::string data_marker = "/*GCLAB_DATA*/null";
  page.replace(page.find(data_marker), data_marker.size(), json());
  size_t t = page.find("<title></title>");
  // A collector's name needs no escaping: the registry's names are words.
  page.replace(t, 15,
               "<title>gclab: GC(" + std::to_string(collection_) + ") under " + collector_ + "</title>");
  return page;
}

}  // namespace gc::observe
