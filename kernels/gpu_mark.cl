// The mark kernel of the gpu collector (Maas et al. 2012, section 5,
// Algorithms 1 and 2). One launch is one iteration of the frontier queue:
// work-group p (one per compute unit, the paper's section 5.3) takes its
// partition's in-queue in steps of get_local_size(0) objects, one object per
// work-item, and appends the references of the objects it marks to its
// partition's out-queue. The host swaps the queues between launches.
//
// Nothing here relies on memory consistency between work-groups inside a
// launch, and no work-item waits for another work-group: each partition
// owns its queue segments and its state words, and two partitions that
// reach the same object both mark it (marking is idempotent, L1100-1104), so
// the only shared writes are identical header stores.
//
// Build options (the host compiles one program per combination):
//   GRAPH         the condensed reference graph (uint node indices; node =
//                 [count << 1 | mark, ref 0, ref 1, ...], 16-byte aligned);
//                 otherwise DIRECT: the heap words themselves, blocks and
//                 large objects as two buffers (ulong Values in the queue;
//                 bidirectional objects, gc/layout.h)
//   PREFIX_SUM    offsets by Blelloch's prefix sum (L909-925); otherwise by
//                 the histogram of Algorithm 2 (L926-960)
//   VECTOR        128-bit loads (L1118-1130): GRAPH reads the header and
//                 three references in one uint4, then four at a time;
//                 DIRECT reads the header and slot 0 in one ulong2, then
//                 two slots at a time
//   SPLIT_REFS=k  objects with more than k references go to a local stack
//                 that the whole work-group copies (L1070-1083); 0: off
//   WG_SIZE       the work-group size (a power of two)
//   MARK_BIT, REF_TAG, TAG_MASK, REFS_SHIFT   gc/layout.h's header fields

#ifdef GRAPH
typedef uint qentry;
#else
typedef ulong qentry;
#endif

// Per partition, three words the host reads and writes between launches:
// where to start in the in-queue, where it ends, and how long the out-queue
// is. The kernel stops early (and says where in `begin`) when the next step
// would overflow the out-queue; the host grows it and relaunches from there.
#define ST_BEGIN 0
#define ST_END 1
#define ST_OUT 2
#define ST_WORDS 4

#ifdef GRAPH
#define NODE_COUNT(h) ((h) >> 1)
#define NODE_MARKED(h) ((h)&1u)
#else
// layout.h: the reference count is a 16-bit mantissa and 4-bit exponent.
#define HDR_COUNT(h) ((ulong)(((h) >> REFS_SHIFT) & 0xFFFFul) << (((h) >> (REFS_SHIFT + 16)) & 0xFul))
#endif

// An object of the in-queue, read once: where it is, how many references
// the work-item will copy (0 if it is already marked or is no reference),
// and the first granule of its references when loads are vectorised.
typedef struct {
#ifndef GRAPH
  __global ulong* mem;  // the region holding the object: blocks or large objects
#endif
  ulong at;  // graph: node index in uints; direct: header word index in mem
  uint count;
  uint fresh;  // an object not marked yet: this work-item marks it
#ifdef VECTOR
#ifdef GRAPH
  uint4 granule;
#else
  ulong2 granule;
#endif
#endif
} object_t;

#ifdef GRAPH
object_t read_object(__global uint* graph, qentry e) {
  object_t o;
  o.at = (ulong)e * 4;
#ifdef VECTOR
  o.granule = vload4(0, graph + o.at);
  uint h = o.granule.s0;
#else
  uint h = graph[o.at];
#endif
  o.fresh = !NODE_MARKED(h);
  o.count = o.fresh ? NODE_COUNT(h) : 0;
  return o;
}
void mark_object(__global uint* graph, object_t o) { graph[o.at] |= 1u; }
// Reference i of the object; with VECTOR, the granule holding it is loaded
// when i is its first reference (references are read in order).
qentry ref_at(__global uint* graph, object_t* o, uint i) {
#ifdef VECTOR
  uint lane = (i + 1) & 3;
  if (i > 2 && lane == 0) o->granule = vload4(0, graph + o->at + i + 1);
  return lane == 0 ? o->granule.s0 : lane == 1 ? o->granule.s1 : lane == 2 ? o->granule.s2 : o->granule.s3;
#else
  return graph[o->at + 1 + i];
#endif
}
#define HEAP_ARGS __global uint *heap, ulong base, __global ulong *large, ulong large_base, ulong large_words
#define READ(e) read_object(heap, (e))
#else
// Objects live in two regions, each its own buffer: the blocks (heap, from
// base) and the large objects (large, from large_base). The reservation
// between them is never handed to the device.
object_t read_object(__global ulong* heap, ulong base, __global ulong* large, ulong large_base, ulong large_words,
                     qentry e) {
  object_t o;
  o.mem = heap;
  o.count = 0;
  o.fresh = 0;
  o.at = 0;
  // A slot may hold a number, nil or a boolean: no object, nothing to mark.
  if ((e & TAG_MASK) != REF_TAG) return o;
  ulong addr = e & ~TAG_MASK;
  if (((addr - large_base) >> 3) < large_words) {
    o.mem = large;
    o.at = (addr - large_base) >> 3;
  } else {
    o.at = (addr - base) >> 3;
  }
#ifdef VECTOR
  // Slot 0 lies just below the header: one 128-bit load reads both (the
  // word below a header at the buffer's start is not there to read).
  o.granule = o.at ? vload2(0, o.mem + o.at - 1) : (ulong2)(0, o.mem[0]);
  ulong h = o.granule.s1;
#else
  ulong h = o.mem[o.at];
#endif
  o.fresh = !(h & MARK_BIT);
  o.count = o.fresh ? (uint)HDR_COUNT(h) : 0;
  return o;
}
void mark_object(__global ulong* heap, object_t o) { o.mem[o.at] |= MARK_BIT; }
// Slot i lies i + 1 words below the header.
qentry ref_at(__global ulong* heap, object_t* o, uint i) {
#ifdef VECTOR
  if (i > 0 && (i & 1)) o->granule = vload2(0, o->mem + o->at - 2 - i);
  return (i & 1) ? o->granule.s1 : o->granule.s0;
#else
  return o->mem[o->at - 1 - i];
#endif
}
#define HEAP_ARGS __global ulong *heap, ulong base, __global ulong *large, ulong large_base, ulong large_words
#define READ(e) read_object(heap, base, large, large_base, large_words, (e))
// Wide objects on the stack keep their region in the top bit.
#define IN_LARGE (1ul << 63)
#endif

#ifdef PREFIX_SUM
// Blelloch's work-efficient exclusive scan of x[0..WG_SIZE) in local memory;
// returns the total. Every work-item calls it.
uint exclusive_scan(__local uint* x, uint id) {
  for (uint d = 1; d < WG_SIZE; d <<= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    uint i = (id + 1) * (d << 1) - 1;
    if (i < WG_SIZE) x[i] += x[i - d];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint total = x[WG_SIZE - 1];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (id == 0) x[WG_SIZE - 1] = 0;
  for (uint d = WG_SIZE >> 1; d >= 1; d >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    uint i = (id + 1) * (d << 1) - 1;
    if (i < WG_SIZE) {
      uint t = x[i - d];
      x[i - d] = x[i];
      x[i] += t;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void mark_iteration(
    HEAP_ARGS, __global const qentry* in_queue, __global qentry* out_queue, ulong capacity,
    __global ulong* state) {
  const uint id = get_local_id(0);
  const uint p = get_group_id(0);
  __global const qentry* in = in_queue + p * capacity;
  __global qentry* out = out_queue + p * capacity;

  __local uint x[WG_SIZE];           // per work-item reference counts
  __local uint total;                // references this step appends
  __local uint max_count;
  __local uint hist[4];              // Algorithm 2's counters, used cyclically
  __local ulong stack_at[WG_SIZE];   // wide objects (SPLIT_REFS)
  __local uint stack_count[WG_SIZE];
  __local uint stack_top;

  ulong begin = state[p * ST_WORDS + ST_BEGIN];
  const ulong end = state[p * ST_WORDS + ST_END];
  ulong out_len = state[p * ST_WORDS + ST_OUT];

  for (; begin < end; begin += WG_SIZE) {
    // Algorithm 1, lines 2-11: read each object's header; an object already
    // marked counts as one with no references.
    const ulong l = min((ulong)WG_SIZE, end - begin);
    object_t o;
    o.count = 0;
    o.fresh = 0;
    o.at = 0;
    if (id < l) o = READ(in[begin + id]);
    if (id == 0) {
      total = 0;
      max_count = 0;
      stack_top = 0;
      hist[0] = hist[1] = hist[2] = hist[3] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = o.count;
#if SPLIT_REFS > 0
    if (mine > SPLIT_REFS) {
      uint s = atomic_inc(&stack_top);
#ifdef GRAPH
      stack_at[s] = o.at;
#else
      stack_at[s] = o.at | (o.mem == large ? IN_LARGE : 0);
#endif
      stack_count[s] = mine;
      mine = 0;
    }
#endif
    atomic_add(&total, o.count);
#ifndef PREFIX_SUM
    atomic_max(&max_count, mine);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    // The whole work-group sees the same total, so it stops together when
    // the out-queue is full, before marking anything of this step.
    if (out_len + total > capacity) break;
    if (o.fresh) mark_object(heap, o);

#ifdef PREFIX_SUM
    // Each object's references are consecutive, after those of lower ids.
    x[id] = mine;
    uint mine_total = exclusive_scan(x, id);
    for (uint i = 0; i < mine; ++i) out[out_len + x[id] + i] = ref_at(heap, &o, i);
#else
    // Algorithm 2: all first references, then all second references, ...
    // hist[i & 3] counts the work-items with an (i+1)-th reference; a slot
    // is cleared two steps after its use, once every work-item has read it.
    uint mine_total = 0;
    for (uint i = 0; i < max_count; ++i) {
      if (i < mine) {
        uint local_offset = atomic_inc(&hist[i & 3]);
        out[out_len + mine_total + local_offset] = ref_at(heap, &o, i);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      mine_total += hist[i & 3];
      if (id == 0) hist[(i + 2) & 3] = 0;
    }
#endif
    ulong at = out_len + mine_total;
#if SPLIT_REFS > 0
    // Wide objects: every work-item copies one reference at a time.
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 0; s < stack_top; ++s) {
      ulong w = stack_at[s];
      uint count = stack_count[s];
#ifdef GRAPH
      for (uint i = id; i < count; i += WG_SIZE) out[at + i] = heap[w + 1 + i];
#else
      __global ulong* mem = (w & IN_LARGE) ? large : heap;
      w &= ~IN_LARGE;
      for (uint i = id; i < count; i += WG_SIZE) out[at + i] = mem[w - 1 - i];
#endif
      at += count;
    }
#endif
    out_len = at;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (id == 0) {
    state[p * ST_WORDS + ST_BEGIN] = begin;
    state[p * ST_WORDS + ST_OUT] = out_len;
  }
}
