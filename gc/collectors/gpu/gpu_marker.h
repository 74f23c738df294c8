// The host side of the GPU mark phase: the steps of Maas et al. 2012's
// Figure 4 (L436-475) that gpu.h lists, as GpuMarker::mark's. What it
// leaves gray (the narrow-tail fallback, L1138-1150) the caller marks on
// the CPU.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "gc/collector.h"
#include "gc/collectors/gpu/gpu_options.h"
#include "gc/collectors/gpu/opencl.h"
#include "gc/collectors/gpu/reference_mirror.h"
#include "gc/layout.h"
#include "gc/observe/recorder.h"

namespace gc::gpu {

struct Region {
  Word* begin = nullptr;  // page-aligned
  Word* end = nullptr;
  uint64_t words() const { return static_cast<uint64_t>(end - begin); }
  bool contains(const Word* p) const { return p >= begin && p < end; }
};

// What the marker needs of a heap.
class MarkableHeap {
 public:
  virtual ~MarkableHeap() = default;
  // Every object lies in one of two regions: `dense`, where objects are
  // packed (size-class blocks), and `sparse`, where few large ones are.
  virtual void regions(Region* dense, Region* sparse) const = 0;
  // Where the two regions may ever reach (the heap's reservation): a buffer
  // kept over them from one collection to the next (--gpu-heap=shared) is
  // made within these bounds. The default: the regions as they are.
  virtual void reserved_regions(Region* dense, Region* sparse) const { regions(dense, sparse); }
  // Calls f with the header of every allocated object.
  virtual void for_each_object(const std::function<void(Word*)>& f) const = 0;
  // The graph its write barrier keeps (--gpu-graph=double-write), or
  // nullptr.
  virtual ReferenceMirror* reference_mirror() const { return nullptr; }
};

// The paper's Figure 3, out-degree of live objects, in buckets: exact up to
// 8 references, then by powers of two; the last bucket has no upper bound.
constexpr size_t kDegreeBuckets = 15;
extern const observe::Counter kDegreeCounters[kDegreeBuckets];
size_t degree_bucket(uint64_t nrefs);
// Out-degree histogram of the marked objects of heap, counting the slots
// that hold references.
std::array<uint64_t, kDegreeBuckets> marked_out_degrees(const MarkableHeap& heap);

// Phase names, in pipeline order (gc/observe; docs/collectors/gpu.md).
extern const char* const kPhaseBuildGraph;
extern const char* const kPhaseTransfer;
extern const char* const kPhaseRootsInPlace;  // --gpu-heap=shared's step 2: no transfer
extern const char* const kPhaseKernel;
extern const char* const kPhaseCopyBack;
extern const char* const kPhaseApplyMarks;

struct MarkReport {
  std::vector<uint64_t> frontier;    // queue width at the start of each level (the paper's Figure 2)
  uint64_t launches = 0;             // kernel launches (one per level under --gpu-launch=level)
  uint64_t kernel_ns = 0;            // device time of every launch (profiling; launch overhead excluded)
  uint64_t offloaded_bytes = 0;      // what the device traverses: the graph, or the heap span
  uint64_t objects = 0;              // graph: nodes built
  uint64_t graph_bytes_updated = 0;  // graph: bytes of nodes written (all of them when rebuilt)
  bool too_large = false;            // the heap or graph exceeds the device's largest buffer: all left gray
  uint64_t buffers_made = 0;         // --gpu-heap=shared: heap buffers (re)made in this collection
  std::vector<Word*> gray;           // objects the CPU must mark (and trace) to finish
};

class GpuMarker {
 public:
  GpuMarker(ClSession& session, const GpuOptions& options);
  ~GpuMarker();
  GpuMarker(const GpuMarker&) = delete;
  GpuMarker& operator=(const GpuMarker&) = delete;

  // Sets the mark bit of every object reachable from roots (header
  // addresses), except what report.gray says is left for the CPU; phases are
  // recorded on worker 0 of events.
  void mark(const MarkableHeap& heap, const std::vector<Word*>& roots, observe::Recorder& events,
            MarkReport& report);

  unsigned compute_units() const { return groups_; }
  unsigned work_group_size() const { return wg_size_; }

 private:
  // --- mark's steps, in the order of the paper's Figure 4
  void update_reference_graph(const MarkableHeap& heap, const std::vector<Word*>& roots,
                              observe::Recorder& events, MarkReport& report);
  bool fits_on_device(MarkReport& report) const;
  void copy_to_device();
  std::vector<uint64_t> mark_on_device(MarkReport& report);
  void copy_back(const MarkReport& report);
  void write_marks_back(const MarkableHeap& heap, const std::vector<uint64_t>& tail,
                        observe::Recorder& events, MarkReport& report);

  // The frontier queue: two buffers of groups_ segments of capacity_
  // entries each, kept from one collection to the next; each partition's
  // state says which of the two is its in-queue.
  void ensure_capacity(uint64_t entries, const std::vector<uint64_t>& state);
  void write_roots(const std::vector<uint64_t>& entries, std::vector<uint64_t>& state);
  void iterate(MarkReport& report, std::vector<uint64_t>& tail);
  void launch(std::vector<uint64_t>& state, MarkReport& report);
  void run_kernel(cl_kernel kernel, MarkReport& report);
  void mark_with_one_queue(MarkReport& report, std::vector<uint64_t>& tail);
  void take_one_queue_tail(uint64_t head, uint64_t end, std::vector<uint64_t>& tail);
  void write_roots_to_one_queue(const std::vector<uint64_t>& entries);
  cl_mem empty_queue(uint64_t entries);
  cl_mem queue_buffer(uint64_t bytes);
  void put_roots(cl_mem queue, uint64_t offset, uint64_t bytes, const void* src);
  void ensure_one_queue(uint64_t entries);
  template <class Chosen>
  void take_tail(const std::vector<uint64_t>& state, Chosen chosen, std::vector<uint64_t>& tail);
  struct OffloadedRegion {
    void* host;
    uint64_t bytes;
    uint64_t base;
  };
  OffloadedRegion offloaded(const Region& r) const;
  // --gpu-heap=graph rebuilt for each collection (graph_, node indices),
  // as opposed to the heap itself or the double-write graph at its
  // positions, which the device reads through offloaded().
  bool condensed_graph() const { return options_.graph && !options_.double_write; }
  void set_heap_args(cl_mem dense, cl_mem sparse, uint64_t base, uint64_t large_base, uint64_t large_words);
  void set_heap_args(cl_mem dense, cl_mem sparse, const Region& d, const Region& s);
  void build_graph(const MarkableHeap& heap, const Region& dense);
  uint32_t node_of(const Word* header, const Region& dense) const;
  void keep_shared_buffers(const MarkableHeap& heap);

  ClSession& session_;
  GpuOptions options_;
  cl_kernel kernel_;
  std::string build_options_;
  unsigned groups_;
  unsigned wg_size_;
  size_t entry_bytes_;
  cl_mem queue_a_ = nullptr;
  cl_mem queue_b_ = nullptr;
  cl_mem state_ = nullptr;
  cl_mem history_ = nullptr;  // each work-group's level widths in one launch
  // Several work-groups under one launch share one queue (mark_shared):
  // its buffer, capacity and counters (head, tail, active, stop).
  bool one_queue_ = false;
  cl_kernel shared_kernel_ = nullptr;
  cl_mem one_queue_buffer_ = nullptr;
  uint64_t one_capacity_ = 0;
  cl_mem counters_ = nullptr;
  std::array<uint32_t, 4> counters_host_{};
  uint32_t levels_per_launch_ = 1;
  uint64_t capacity_ = 0;
  // The reference graph (host copy) and, while it is built, the node index
  // of each dense-region header word and of each sparse object.
  std::vector<uint32_t> graph_;
  std::vector<uint32_t> node_of_;
  std::unordered_map<const Word*, uint32_t> sparse_node_of_;
  std::vector<Word*> objects_;
  // One mark's offload: the heap's regions, the roots as queue entries, and
  // the device buffers (an empty region's is the placeholder).
  Region dense_;
  Region sparse_;
  ReferenceMirror* mirror_ = nullptr;  // --gpu-graph=double-write: the heap's graph
  std::vector<uint64_t> root_entries_;
  std::vector<std::vector<uint64_t>> staged_roots_;         // per partition, as written to the queue
  std::vector<std::vector<uint32_t>> staged_narrow_roots_;  // the same as graph node indices
  std::vector<uint64_t> state_host_;                        // the partitions' state words (ST_*)
  cl_mem dense_buffer_ = nullptr;
  cl_mem sparse_buffer_ = nullptr;
  // --gpu-heap=shared: buffers over the host's heap itself, kept from one
  // collection to the next, each over a region that covers what is in use
  // (made again, larger, only when the heap outgrows it).
  struct SharedBuffer {
    cl_mem buffer = nullptr;
    Region covers;
  };
  SharedBuffer shared_dense_, shared_sparse_;
  uint64_t shared_buffers_made_ = 0;
  Word placeholder_[2] = {0, 0};
};

}  // namespace gc::gpu
