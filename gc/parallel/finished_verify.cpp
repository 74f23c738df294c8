#include "gc/parallel/finished_verify.h"

namespace gc::parallel {

void FinishedVerify::start(unsigned cores) {
  cores_ = cores;
  while (Message* m = to_master_.take_all()) {
    while (m) {
      Message* next = m->next;
      delete m;
      m = next;
    }
  }
  round_.store(0, std::memory_order_relaxed);
  terminated_.store(false, std::memory_order_relaxed);
  answered_.assign(cores, 0);
  last_finished_.assign(cores, Counts{});
  has_finished_.assign(cores, false);
  finished_cores_ = 0;
  new_finished_ = false;
  verifying_ = false;
  stored_ = Counts{};
  responses_ = 0;
  master_last_ = Counts{};
  verify_rounds_ = 0;
  finished_messages_.store(0, std::memory_order_relaxed);
}

void FinishedVerify::finished(unsigned core, Counts counts) {
  finished_messages_.fetch_add(1, std::memory_order_relaxed);
  if (core == 0) return;  // the master reads its own counts in master_poll
  auto* m = new Message{.core = core, .counts = counts};
  to_master_.send(m);
}

void FinishedVerify::answer_verify(unsigned core, bool idle, Counts counts) {
  uint64_t round = round_.load(std::memory_order_acquire);
  if (core == 0 || round == answered_[core]) return;
  answered_[core] = round;
  auto* m = new Message{.core = core, .response = true, .idle = idle, .round = round, .counts = counts};
  to_master_.send(m);
}

void FinishedVerify::receive(const Message& m) {
  if (!m.response) {
    last_finished_[m.core] = m.counts;
    if (!has_finished_[m.core]) {
      has_finished_[m.core] = true;
      finished_cores_++;
    }
    new_finished_ = true;
    return;
  }
  if (!verifying_ || m.round != round_.load(std::memory_order_relaxed)) return;
  responses_++;
  all_idle_ = all_idle_ && m.idle;
  response_totals_.sent += m.counts.sent;
  response_totals_.received += m.counts.received;
}

void FinishedVerify::start_round(const Counts& totals) {
  stored_ = totals;
  verifying_ = true;
  responses_ = 0;
  all_idle_ = true;
  response_totals_ = Counts{};
  new_finished_ = false;
  verify_rounds_++;
  round_.fetch_add(1, std::memory_order_release);
}

bool FinishedVerify::master_poll(bool idle, Counts counts) {
  // The mailbox gives the newest first; one core's messages must be read
  // in the order it sent them.
  Message* sent_order = nullptr;
  for (Message* m = to_master_.take_all(); m;) {
    Message* next = m->next;
    m->next = sent_order;
    sent_order = m;
    m = next;
  }
  for (Message* m = sent_order; m;) {
    receive(*m);
    Message* next = m->next;
    delete m;
    m = next;
  }
  if (!idle) return false;
  // The master running out of work again counts as its own `finished`.
  if (!has_finished_[0] || !(counts == master_last_)) {
    if (!has_finished_[0]) finished_cores_++;
    has_finished_[0] = true;
    master_last_ = counts;
    last_finished_[0] = counts;
    new_finished_ = true;
  }
  if (verifying_) {
    if (responses_ + 1 < cores_) return false;
    verifying_ = false;
    Counts now{response_totals_.sent + counts.sent, response_totals_.received + counts.received};
    if (all_idle_ && now == stored_) {
      terminated_.store(true, std::memory_order_release);
      return true;
    }
  }
  if (!new_finished_ || finished_cores_ < cores_) return false;
  Counts totals;
  for (const Counts& c : last_finished_) {
    totals.sent += c.sent;
    totals.received += c.received;
  }
  if (totals.sent != totals.received) return false;
  if (cores_ == 1) {
    terminated_.store(true, std::memory_order_release);
    return true;
  }
  start_round(totals);
  return false;
}

}  // namespace gc::parallel
