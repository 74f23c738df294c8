#include "gc/heap/reservation.h"

#include <sys/mman.h>

#include <cstring>
#include <string>

#include "gc/exit_status.h"

namespace gc {

namespace {

void* reserve(uint64_t bytes, const char* what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw CreationError(kExitSoftware, "cannot reserve " + std::to_string(bytes) +
                                           " bytes of address space for the " + what + ": " +
                                           std::strerror(errno));
  return p;
}

}  // namespace

Reservation::Reservation(uint64_t bytes) : size_(round_up_pages(bytes)) {
  base_ = static_cast<Word*>(reserve(size_, "heap"));
  // Transparent huge pages where the system allows them: a trace of a
  // large heap touches a new page at nearly every object, and with 4 KB
  // pages each of those loads also waits on a page-table walk. A failure
  // (no THP support) leaves ordinary pages.
  madvise(base_, size_, MADV_HUGEPAGE);
}

Reservation::~Reservation() { munmap(base_, size_); }

void Reservation::release_pages(Word* begin, Word* end) {
  if (end > begin) madvise(begin, static_cast<size_t>(end - begin) * kWordSize, MADV_DONTNEED);
}

void Reservation::release_pages_lazily(Word* begin, Word* end) {
  if (end <= begin) return;
  size_t bytes = static_cast<size_t>(end - begin) * kWordSize;
  // Kernels before 4.5 do not know MADV_FREE.
  if (madvise(begin, bytes, MADV_FREE) != 0) madvise(begin, bytes, MADV_DONTNEED);
}

void Reservation::use_small_pages(Word* begin, Word* end) {
  uintptr_t first = round_up_pages(reinterpret_cast<uintptr_t>(begin));
  uintptr_t last = round_down_pages(reinterpret_cast<uintptr_t>(end));
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_NOHUGEPAGE);
}

void Reservation::populate(Word* begin, Word* end) {
#ifdef MADV_POPULATE_WRITE
  uintptr_t first = round_down_pages(reinterpret_cast<uintptr_t>(begin));
  uintptr_t last = round_up_pages(reinterpret_cast<uintptr_t>(end));
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
#else
  (void)begin;
  (void)end;
#endif
}

CardTable::CardTable(const Reservation& heap) {
  uintptr_t first = reinterpret_cast<uintptr_t>(heap.base()) >> kCardShift;
  uintptr_t last = (reinterpret_cast<uintptr_t>(heap.end()) + (1u << kCardShift) - 1) >> kCardShift;
  table_bytes_ = round_up_pages(last - first);
  table_ = static_cast<uint8_t*>(reserve(table_bytes_, "card table"));
  // Computed on integers: the biased pointer lies outside the table, and
  // only biased_ + (address >> kCardShift) is ever dereferenced.
  biased_ = reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(table_) - first);
}

CardTable::~CardTable() { munmap(table_, table_bytes_); }

void CardTable::clean(const Word* begin, const Word* end) {
  if (end <= begin) return;
  uintptr_t first = reinterpret_cast<uintptr_t>(begin) >> kCardShift;
  uintptr_t last = (reinterpret_cast<uintptr_t>(end) + (1u << kCardShift) - 1) >> kCardShift;
  std::memset(biased_ + first, kCardClean, last - first);
}

}  // namespace gc
