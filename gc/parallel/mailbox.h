// A lock-free mailbox with many senders and one receiver: messages are
// nodes with a `next` pointer, pushed with one compare-and-swap (a Treiber
// stack) and taken all at once with one exchange. The receiver sees them in
// no particular order, which message-passing marking does not need. Used by
// cacheaware's cores (Zhou and Demsky's `mark` and `ptrquery` messages).
#pragma once

#include <atomic>

namespace gc::parallel {

template <class Node>
class Mailbox {
 public:
  void send(Node* n) {
    Node* head = head_.load(std::memory_order_relaxed);
    do {
      n->next = head;
    } while (!head_.compare_exchange_weak(head, n, std::memory_order_release, std::memory_order_relaxed));
  }
  // Every message sent so far, as a list through `next`, or nullptr.
  Node* take_all() {
    if (head_.load(std::memory_order_relaxed) == nullptr) return nullptr;
    return head_.exchange(nullptr, std::memory_order_acquire);
  }
  bool looks_empty() const { return head_.load(std::memory_order_relaxed) == nullptr; }

 private:
  std::atomic<Node*> head_{nullptr};
};

}  // namespace gc::parallel
