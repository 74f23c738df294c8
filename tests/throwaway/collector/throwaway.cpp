#include "gc/collectors/throwaway/throwaway.h"

#include <algorithm>

#include "gc/heap/identity_hash.h"
#include "gc/heap/lab.h"
#include "gc/heap/reservation.h"
#include "gc/verify/verifier.h"

#ifndef GCLAB_THROWAWAY_BUILD_PART
#error "built without gc/collectors/throwaway/collector.cmake, the folder's own build part"
#endif

namespace gc {

namespace {

constexpr OptionSpec kChunkOption =
    size_option("throwaway-chunk", 64u << 10, "bytes handed to the mutator's bump buffer at a time",
                "chunk size", "4K to 1G", 4096, 1ull << 30);
constexpr OptionSpec kOptions[] = {kChunkOption};

class ThrowawayCollector final : public Collector {
 public:
  ThrowawayCollector(RootSet& roots, const HeapOptions& options)
      : Collector(roots, options),
        reservation_(options.max_heap_bytes),
        cards_(reservation_),
        next_(reservation_.base()),
        chunk_words_(option_size(options.collector_options, kChunkOption) / kWordSize) {
    card_base = cards_.biased_base();
    top = limit = next_;
  }

  Word* allocate_slow(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override {
    uint64_t words = object_words(nrefs, raw_words);
    if (static_cast<uint64_t>(limit - top) < words && !refill(words)) {
      live_at_exhaustion_ = heap_used();
      return nullptr;
    }
    Word* p = top;
    top += words;
    return format_object(p, class_id, nrefs, raw_words);
  }
  Word* allocate_pinned(uint32_t class_id, uint64_t nrefs, uint64_t raw_words) override {
    return allocate_slow(class_id, nrefs, raw_words);  // nothing ever moves
  }
  void collect(GcCause) override { stats_.collections++; }

  const char* name() const override { return "throwaway"; }
  // One space, walkable to the bump pointer: a refill fills the tail it
  // leaves behind.
  void describe_heap(verify::HeapShape& out) const override {
    out.linear_spaces.push_back({"heap", reservation_.base(), top});
  }
  uint64_t heap_used() const override { return static_cast<uint64_t>(top - reservation_.base()) * kWordSize; }
  uint64_t heap_size() const override {
    return static_cast<uint64_t>(next_ - reservation_.base()) * kWordSize;
  }
  void flush_stats() override {
    stats_.bytes_allocated = heap_used();
    stats_.peak_heap_bytes = heap_size();
  }
  bool in_heap(const void* addr) const override { return reservation_.contains(addr); }
  uint64_t identity_hash(Word* header) override {
    *header = Header::with_hash_state(*header, HashState::kHashed);
    return address_hash(reservation_, header);
  }

 private:
  // A new buffer of at least `words` after the current one; false when the
  // heap is used up.
  bool refill(uint64_t words) {
    uint64_t want = std::max(words, chunk_words_);
    if (static_cast<uint64_t>(reservation_.end() - next_) < want) return false;
    fill_dead_space(top, limit);
    top = next_;
    limit = next_ = next_ + want;
    return true;
  }

  Reservation reservation_;
  CardTable cards_;
  Word* next_;
  uint64_t chunk_words_;
};

}  // namespace

std::unique_ptr<Collector> create_throwaway(RootSet& roots, const HeapOptions& options) {
  return std::make_unique<ThrowawayCollector>(roots, options);
}

std::span<const OptionSpec> throwaway_option_table() { return kOptions; }

}  // namespace gc
