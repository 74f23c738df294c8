// Termination detection by message counts (Zhou and Demsky, section 2.1.1,
// L107-116), for marking by message passing, where a core with nothing
// left to do can still receive work from another core's `mark` message:
//
//   1. A core that has scanned every object it knows of sends the master a
//      `finished` message with the counts of mark messages it has sent and
//      received (it may send several in one phase).
//   2. The master, itself out of work, checks a necessary condition: every
//      core has sent `finished` and the totals sent and received are equal.
//      It stores the totals and sends every core `verify`.
//   3. Each core answers `verifyresponse`: whether it is out of work now,
//      and its counts now.
//   4. When every answer is in: if every core is out of work and the totals
//      equal the stored ones, marking has terminated. Otherwise the master
//      starts again at the next `finished`.
//
// Core 0 is the master. `finished` and `verifyresponse` travel through the
// master's mailbox; `verify` is a round number every core polls, and the
// end is a flag. The master's own counts take part like any core's, read
// directly. Whoever runs a core calls, from its loop:
//   finished(core, sent, received)        when the core has just run out of work
//   answer_verify(core, idle, sent, rcvd) every time round (cheap when no round waits)
//   master_poll(idle, sent, received)     core 0's runner, when core 0 is idle
//   terminated()                          everyone, to stop
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gc/parallel/mailbox.h"

namespace gc::parallel {

class FinishedVerify {
 public:
  struct Counts {
    uint64_t sent = 0;
    uint64_t received = 0;
    bool operator==(const Counts&) const = default;
  };

  // Before a phase of `cores` cores.
  void start(unsigned cores);

  void finished(unsigned core, Counts counts);
  void answer_verify(unsigned core, bool idle, Counts counts);
  // Runs the master's side; true once termination is detected (every core
  // then sees terminated()).
  bool master_poll(bool idle, Counts counts);
  bool terminated() const { return terminated_.load(std::memory_order_acquire); }

  // For the statistics: rounds of `verify` sent, and `finished` messages.
  uint64_t verify_rounds() const { return verify_rounds_; }
  uint64_t finished_messages() const { return finished_messages_; }

 private:
  struct Message {
    Message* next = nullptr;
    unsigned core = 0;
    bool response = false;  // verifyresponse, else finished
    bool idle = false;
    uint64_t round = 0;
    Counts counts;
  };
  void receive(const Message& m);
  void start_round(const Counts& totals);

  unsigned cores_ = 0;
  Mailbox<Message> to_master_;
  std::atomic<uint64_t> round_{0};  // the verify round being asked; 0: none yet
  std::atomic<bool> terminated_{false};
  // Per core, the last round it answered (each core's runner writes its own).
  std::vector<uint64_t> answered_;

  // The master's state (core 0's runner only).
  std::vector<Counts> last_finished_;
  std::vector<bool> has_finished_;
  unsigned finished_cores_ = 0;
  bool new_finished_ = false;  // since the last round was started or failed
  bool verifying_ = false;
  Counts stored_;
  unsigned responses_ = 0;
  bool all_idle_ = true;
  Counts response_totals_;
  Counts master_last_;
  uint64_t verify_rounds_ = 0;
  std::atomic<uint64_t> finished_messages_{0};
};

}  // namespace gc::parallel
