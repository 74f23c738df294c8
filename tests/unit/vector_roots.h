// A root set for unit tests: root slots in a vector, handed over in groups
// of four (many more groups than GC threads, as the VM's are), and weak
// references in another, resolved in place.
#pragma once

#include <algorithm>
#include <vector>

#include "gc/collector.h"

namespace gc::test {

struct VectorRoots final : RootSet {
  std::vector<Value> roots;
  std::vector<Word*> weak;
  void root_groups(std::vector<RootGroup>& out) override {
    for (size_t i = 0; i < roots.size(); i += 4)
      out.push_back({roots.data() + i, std::min<size_t>(4, roots.size() - i)});
  }
  void process_weak(WeakResolver& r) override {
    for (Word*& w : weak)
      if (w) w = r.resolve(w);
  }
};

}  // namespace gc::test
