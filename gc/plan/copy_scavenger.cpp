#include "gc/plan/copy_scavenger.h"

namespace gc {

void describe_copy_counters(observe::Recorder& events) {
  for (const char* c : {"objects copied", "CAS forwardings", "CAS failures", "undone allocations",
                        "direct copies", "large objects marked"})
    events.describe_counter(c, "objects");
  for (const char* c : {"bytes copied", "LAB waste bytes", "bytes promoted"})
    events.describe_counter(c, "bytes");
  events.describe_counter("root groups", "groups");
  events.describe_counter("LABs taken", "buffers");
  events.describe_counter("survivor overflows", "threads");
  parallel::describe_work_sharing(events);
}

}  // namespace gc
