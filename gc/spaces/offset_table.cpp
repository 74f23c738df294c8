#include "gc/spaces/offset_table.h"

#include <sys/mman.h>

#include "gc/exit_status.h"
#include "gc/heap/lab.h"
#include "gc/heap/reservation.h"

namespace gc {

OffsetTable::OffsetTable(Word* begin, Word* end)
    : first_card_(reinterpret_cast<uintptr_t>(begin) >> kCardShift),
      cards_((reinterpret_cast<uintptr_t>(end) >> kCardShift) - first_card_) {
  uint64_t bytes = round_up_pages(cards_ * sizeof(uint32_t) + 1);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw CreationError(kExitSoftware, "cannot reserve address space for the offset table");
  entries_ = static_cast<uint32_t*>(p);
}

OffsetTable::~OffsetTable() { munmap(entries_, round_up_pages(cards_ * sizeof(uint32_t) + 1)); }

void OffsetTable::fill(Word* begin, Word* end) {
  fill_dead_space(begin, end);
  rebuild(begin, end);
}

void OffsetTable::rebuild(Word* begin, Word* end) {
  for (Word* p = begin; p < end;) {
    Word* h = header_from_start(p);
    uint64_t words = static_cast<uint64_t>(h + 1 + Header::raw_words(*h) - p);
    record(p, words);
    p += words;
  }
}

}  // namespace gc
