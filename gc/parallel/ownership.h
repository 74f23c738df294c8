// Ownership of a space's chunks, and the inboxes through which work on an
// owned chunk reaches its owner: the two pieces a parallel phase needs to
// let one thread alone write the objects of a chunk, with plain stores,
// instead of deciding every write with a locked instruction.
//
// The first thread to touch a chunk claims it with one compare-and-swap.
// Another thread that finds work on the chunk asks the owner, once, to
// share it, and until then sends it the work as tasks; the owner shares
// the chunk at its next safe point (no write half done), and from then on
// every thread writes there with a compare-and-swap. Tasks travel in
// batches, one lock a batch. A batch in flight holds the phase open as an
// active thread does (Termination::hold), so that termination is never
// declared with work in an inbox.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "gc/parallel/task.h"
#include "gc/parallel/termination.h"

namespace gc::parallel {

class ChunkOwners {
 public:
  // 128 KiB, measured on the forest (docs/collectors/semispace.md,
  // "Forwarding by ownership"): smaller chunks are shared more often at
  // the edges of stolen subtrees and make a larger table, larger ones leave
  // more objects to the compare-and-swap once a chunk is shared.
  static constexpr unsigned kChunkShift = 17;
  // Entries hold a thread's id + 1 below kAsked, and kShared is all ones.
  static constexpr unsigned kMaxThreads = 0x7FFE;

  // How a thread may write the header of an object in a chunk.
  enum class Access {
    kOwn,    // it owns the chunk: a plain store
    kShare,  // the chunk is shared: a compare-and-swap
    kSend,   // another thread owns it: send it the work
  };

  // The table as one thread uses it, copied into the thread for each phase
  // so that the per-object check loads nothing but the chunk's entry.
  class View {
   public:
    // The access this thread has to the chunk holding addr: a free chunk it
    // claims; another's it asks to share (once), and meanwhile sends the
    // work to `owner`.
    [[gnu::always_inline]] Access access(const void* addr, unsigned& owner) const {
      size_t chunk = (reinterpret_cast<uintptr_t>(addr) - begin_) >> kChunkShift;
      // Acquire: the owner's plain forwarding stores come before its
      // release of a shared chunk.
      uint16_t seen = table_[chunk].load(std::memory_order_acquire);
      if ((seen & ~kAsked) == mine_) [[likely]]
        return Access::kOwn;
      if (seen == kShared) return Access::kShare;
      return owners_->contested(chunk, seen, mine_, owner);
    }

    // At a point where this thread has no object half forwarded (no header
    // read and not yet written): the chunks it was asked to share become
    // shared.
    [[gnu::always_inline]] void share_asked() const {
      if (asked()) [[unlikely]]
        owners_->share_asked(static_cast<unsigned>(mine_ - 1));
    }
    bool asked() const { return asked_->load(std::memory_order_relaxed); }

   private:
    friend class ChunkOwners;
    ChunkOwners* owners_ = nullptr;
    std::atomic<uint16_t>* table_ = nullptr;
    uintptr_t begin_ = 0;
    const std::atomic<bool>* asked_ = nullptr;
    uint16_t mine_ = 0;
  };

  // Before a phase, on one thread: every chunk of [begin, end) unowned,
  // and no requests (a request made as the last phase ended may be
  // unanswered). `threads` is the same at every phase.
  void reset(const void* begin, const void* end, unsigned threads) {
    begin_ = reinterpret_cast<uintptr_t>(begin);
    uint64_t bytes = reinterpret_cast<uintptr_t>(end) - begin_;
    size_t chunks = static_cast<size_t>((bytes + (uint64_t{1} << kChunkShift) - 1) >> kChunkShift);
    if (chunks > capacity_) {
      table_ = std::make_unique<std::atomic<uint16_t>[]>(chunks);
      capacity_ = chunks;
    }
    for (size_t i = 0; i < chunks; ++i) table_[i].store(kFree, std::memory_order_relaxed);
    if (!requests_) requests_ = std::make_unique<Requests[]>(threads);
    for (unsigned t = 0; t < threads; ++t) {
      requests_[t].chunks.clear();
      requests_[t].pending.store(false, std::memory_order_relaxed);
    }
  }

  // Thread `me`'s view for this phase (after reset).
  View view(unsigned me) {
    View v;
    v.owners_ = this;
    v.table_ = table_.get();
    v.begin_ = begin_;
    v.asked_ = &requests_[me].pending;
    v.mine_ = static_cast<uint16_t>(me + 1);
    return v;
  }

 private:
  static constexpr uint16_t kFree = 0;
  static constexpr uint16_t kShared = 0xFFFF;
  static constexpr uint16_t kAsked = 0x8000;  // with the owner's id + 1

  struct Requests {
    std::mutex lock;
    std::vector<size_t> chunks;
    std::atomic<bool> pending{false};
  };

  [[gnu::noinline]] Access contested(size_t chunk, uint16_t seen, uint16_t mine, unsigned& owner) {
    std::atomic<uint16_t>& entry = table_[chunk];
    if (seen == kFree) {
      if (entry.compare_exchange_strong(seen, mine, std::memory_order_acquire)) return Access::kOwn;
      if (seen == kShared) return Access::kShare;
    }
    if ((seen & kAsked) == 0) {
      if (entry.compare_exchange_strong(seen, static_cast<uint16_t>(seen | kAsked),
                                        std::memory_order_acquire)) {
        Requests& r = requests_[seen - 1u];
        std::lock_guard<std::mutex> hold(r.lock);
        r.chunks.push_back(chunk);
        r.pending.store(true, std::memory_order_release);
      } else if (seen == kShared) {
        return Access::kShare;
      }
    }
    owner = (seen & ~kAsked) - 1u;
    return Access::kSend;
  }

  [[gnu::noinline]] void share_asked(unsigned me) {
    Requests& r = requests_[me];
    std::lock_guard<std::mutex> hold(r.lock);
    for (size_t chunk : r.chunks) table_[chunk].store(kShared, std::memory_order_release);
    r.chunks.clear();
    r.pending.store(false, std::memory_order_relaxed);
  }

  uintptr_t begin_ = 0;
  size_t capacity_ = 0;
  std::unique_ptr<std::atomic<uint16_t>[]> table_;
  std::unique_ptr<Requests[]> requests_;
};

// One thread's incoming tasks, sent by the others in batches.
class Inbox {
 public:
  // Appends a batch (left empty); the batch holds the phase open until the
  // owner takes it.
  void deliver(std::vector<Task>& batch, Termination& termination) {
    termination.hold();
    {
      std::lock_guard<std::mutex> hold(lock_);
      tasks_.insert(tasks_.end(), batch.begin(), batch.end());
      batches_.fetch_add(1, std::memory_order_release);
    }
    batch.clear();
  }

  bool looks_empty() const { return batches_.load(std::memory_order_relaxed) == 0; }

  // Every task delivered so far into `into` (emptied first), by the owner,
  // which is active: the batches' hold on the phase passes to it.
  void take(std::vector<Task>& into, Termination& termination) {
    into.clear();
    uint32_t batches;
    {
      std::lock_guard<std::mutex> hold(lock_);
      into.swap(tasks_);
      batches = batches_.exchange(0, std::memory_order_acquire);
    }
    termination.release(batches);
  }

 private:
  std::mutex lock_;
  std::vector<Task> tasks_;
  std::atomic<uint32_t> batches_{0};
};

}  // namespace gc::parallel
