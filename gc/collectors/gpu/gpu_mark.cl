// The mark kernel of the gpu collector (Maas et al. 2012, section 5,
// Algorithms 1 and 2). Work-group p (one per compute unit, the paper's
// section 5.3) owns partition p: a pair of queues and its state words. It
// takes its in-queue in steps of get_local_size(0) objects, one object per
// work-item, appends the references of the objects it marks to its
// out-queue, and at the end of the level swaps the two and goes on with
// the next level, "in a loop until the frontier queue is empty" (L776-792):
// one launch marks the whole heap. A work-group stops early, and the host
// launches again, when its out-queue is full (the host grows it), when it
// has begun `max_levels` levels in this launch (1: one launch per level,
// --gpu-launch=level; otherwise the length of the width history), or when
// its queue stays narrow (the CPU tail, L1138-1150).
//
// In `mark` nothing relies on memory consistency between work-groups, and
// no work-item waits for another work-group: partitions run independently,
// as the paper's two compute units did (L1084-1106), and two partitions
// that reach the same object both mark it (marking is idempotent,
// L894-897), so the only shared writes are identical header stores.
// `mark_shared` (below) is where work-groups wait on each other.
//
// Build options (the host compiles one program per combination):
//   GRAPH         the condensed reference graph (uint node indices; node =
//                 [count << 1 | mark, ref 0, ref 1, ...], 16-byte aligned);
//                 otherwise DIRECT: the heap words themselves, blocks and
//                 large objects as two buffers (ulong Values in the queue,
//                 references only; bidirectional objects, gc/layout.h)
//   MIRROR        with DIRECT's code, the reference graph the write barrier
//                 keeps (reference_mirror.h): uint entries at the heap's
//                 own positions, a node's header slots << 1 | mark, a
//                 slot's entry its referent's position or NO_REF; queue
//                 entries are positions
//   PREFIX_SUM    offsets by Blelloch's prefix sum (L909-925)
//   ATOMIC_OFFSETS  offsets by one local atomic add per work-item (a CPU
//                 device runs work-items one after another, so the add
//                 never contends, and the histogram's rounds and the
//                 scan's barriers are what cost); with neither, by the
//                 histogram of Algorithm 2 (L926-960)
//   VECTOR        128-bit loads (L1118-1130): GRAPH reads the header and
//                 three references in one uint4, then four at a time;
//                 DIRECT reads the header and slot 0 in one ulong2
//   SPLIT_REFS=k  objects with more than k slots go to a local stack that
//                 the whole work-group copies (L1070-1083); 0: off
//   WG_SIZE       the work-group size (a power of two)
//   MARK_BIT, REF_TAG, TAG_MASK, REFS_SHIFT   gc/layout.h's header fields

#if defined(GRAPH) || defined(MIRROR)
typedef uint qentry;
#else
typedef ulong qentry;
#endif

#ifdef MIRROR
// The heap's words, as DIRECT reads them, are the mirror's entries here.
typedef uint word_t;
typedef uint2 word2_t;
#define NO_REF 0xFFFFFFFFu
#define IS_REF(v) ((v) != NO_REF)
#define HDR_MARK 1u
#define HDR_COUNT(h) ((h) >> 1)
// Words from a region's start (b) to the header entry e names.
#define ENTRY_OFFSET(e, b) ((ulong)(e) - (b))
#elif !defined(GRAPH)
typedef ulong word_t;
typedef ulong2 word2_t;
#define IS_REF(v) (((v)&TAG_MASK) == REF_TAG)
#define HDR_MARK MARK_BIT
// layout.h: the reference count is a 16-bit mantissa and 4-bit exponent.
#define HDR_COUNT(h) ((ulong)(((h) >> REFS_SHIFT) & 0xFFFFul) << (((h) >> (REFS_SHIFT + 16)) & 0xFul))
#define ENTRY_OFFSET(e, b) ((((e) & ~TAG_MASK) - (b)) >> 3)
#endif

// Per partition, words the host reads and writes between launches (gpu_marker.cpp
// keeps the same numbering): where to go on in the in-queue, its end, the
// out-queue's length, which buffer is the in-queue, the levels begun over
// the whole mark, whether the current level is begun (its width recorded),
// how many widths this launch recorded, and why the work-group stopped.
#define ST_BEGIN 0
#define ST_END 1
#define ST_OUT 2
#define ST_FLIP 3
#define ST_LEVELS 4
#define ST_OPEN 5
#define ST_RECORDED 6
#define ST_WHY 7
#define ST_WORDS 8

#define WHY_EMPTY 0   // the queue is empty: this partition is marked
#define WHY_FULL 1    // the out-queue cannot take the next step
#define WHY_LEVELS 2  // max_levels levels begun in this launch
#define WHY_TAIL 3    // narrower than tail_width: the CPU finishes

#ifdef GRAPH
#define NODE_COUNT(h) ((h) >> 1)
#define NODE_MARKED(h) ((h)&1u)
#endif

// An object of the in-queue, read once: where it is, whether this
// work-item marks it, how many references it copies (0 if the object is
// already marked), or, for a wide object (more than SPLIT_REFS slots), how
// many slots the work-group copies, and the first granule of its
// references when loads are vectorised.
typedef struct {
#ifndef GRAPH
  __global word_t* mem;  // the region holding the object: blocks or large objects
  ulong cursor;         // the next slot to look at for a reference
#endif
  ulong at;  // graph: node index in uints; direct: header word index in mem
  uint count;
  uint fresh;  // an object not marked yet: this work-item marks it
  uint wide;   // count is of slots, copied by the whole work-group
#ifdef VECTOR
#ifdef GRAPH
  uint4 granule;
#else
  word2_t granule;
#endif
#endif
} object_t;

#if SPLIT_REFS > 0
#define IS_WIDE(n) ((n) > SPLIT_REFS)
#else
#define IS_WIDE(n) 0
#endif

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
  o.wide = IS_WIDE(o.count);
  return o;
}
void mark_object(__global uint* graph, object_t o) { graph[o.at] |= 1u; }
// Reference i of the object, called for i = 0, 1, ... in order; with
// VECTOR, the granule holding it is loaded when i is its first reference.
qentry next_ref(__global uint* graph, object_t* o, uint i) {
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
// between them is never handed to the device. Every queue entry is a
// reference (numbers, nil and booleans in slots never enter the queue).
object_t read_object(__global word_t* heap, ulong base, __global word_t* large, ulong large_base,
                     ulong large_words, qentry e) {
  object_t o;
  o.mem = heap;
  o.cursor = 0;
  o.count = 0;
  o.fresh = 0;
  o.wide = 0;
  o.at = 0;
  if (ENTRY_OFFSET(e, large_base) < large_words) {
    o.mem = large;
    o.at = ENTRY_OFFSET(e, large_base);
  } else {
    o.at = ENTRY_OFFSET(e, base);
  }
#ifdef VECTOR
  // Slot 0 lies just below the header: one 128-bit load reads both (the
  // word below a header at the buffer's start is not there to read).
  o.granule = o.at ? vload2(0, o.mem + o.at - 1) : (word2_t)(0, o.mem[0]);
  word_t h = o.granule.s1;
#else
  word_t h = o.mem[o.at];
#endif
  o.fresh = !(h & HDR_MARK);
  uint slots = o.fresh ? (uint)HDR_COUNT(h) : 0;
  o.wide = IS_WIDE(slots);
  o.count = slots;
  if (o.wide || slots == 0) return o;
  // A narrow object's references are counted here, so that only they take
  // places in the out-queue.
#ifdef VECTOR
  uint refs = IS_REF(o.granule.s0);
  for (uint i = 1; i < slots; ++i) refs += IS_REF(o.mem[o.at - 1 - i]);
#else
  uint refs = 0;
  for (uint i = 0; i < slots; ++i) refs += IS_REF(o.mem[o.at - 1 - i]);
#endif
  o.count = refs;
  return o;
}
void mark_object(__global word_t* heap, object_t o) { o.mem[o.at] |= HDR_MARK; }
// The object's next reference: slot `cursor` onwards (slot i lies i + 1
// words below the header), skipping what is not a reference.
qentry next_ref(__global word_t* heap, object_t* o, uint i) {
  for (;;) {
    ulong k = o->cursor++;
#ifdef VECTOR
    word_t v = k == 0 ? o->granule.s0 : o->mem[o->at - 1 - k];
#else
    word_t v = o->mem[o->at - 1 - k];
#endif
    if (IS_REF(v)) return v;
  }
}
#define HEAP_ARGS __global word_t *heap, ulong base, __global word_t *large, ulong large_base, ulong large_words
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

// The local memory of a work-group's step.
typedef struct {
  uint x[WG_SIZE];          // per work-item reference counts (prefix sum)
  uint total;               // references this step appends (narrow objects)
  uint max_count;           // histogram: the most references of a narrow object
  uint wide_refs;           // references of the wide objects
  uint hist[4];             // Algorithm 2's counters, used cyclically
  ulong stack_at[WG_SIZE];  // wide objects (SPLIT_REFS)
  uint stack_count[WG_SIZE];
  uint stack_top;
  uint wide_len;            // references of wide objects this step (direct)
} step_t;

// A step's first half (Algorithm 1, lines 2-13): every work-item's object
// counted (o read already; an object already marked counts as one with no
// references), wide objects stacked. Returns, the same in every work-item,
// how many places in the out-queue the step fills.
ulong count_step(HEAP_ARGS, object_t* o, uint* mine, uint* my_offset, __local step_t* t) {
  const uint id = get_local_id(0);
  if (id == 0) {
    t->total = 0;
    t->max_count = 0;
    t->stack_top = 0;
    t->wide_len = 0;
    t->wide_refs = 0;
    t->hist[0] = t->hist[1] = t->hist[2] = t->hist[3] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  *mine = o->count;
#if SPLIT_REFS > 0
  if (o->wide) {
    uint s = atomic_inc(&t->stack_top);
#ifdef GRAPH
    t->stack_at[s] = o->at;
    atomic_add(&t->wide_refs, o->count);
#else
    t->stack_at[s] = o->at | (o->mem == large ? IN_LARGE : 0);
#endif
    t->stack_count[s] = *mine;
    *mine = 0;
  }
#endif
  // The narrow objects' references; with ATOMIC_OFFSETS the add that sums
  // them also gives each work-item its places.
#ifdef ATOMIC_OFFSETS
  *my_offset = atomic_add(&t->total, *mine);
#else
  atomic_add(&t->total, *mine);
#endif
#if !defined(PREFIX_SUM) && !defined(ATOMIC_OFFSETS)
  atomic_max(&t->max_count, *mine);
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
#if SPLIT_REFS > 0 && !defined(GRAPH)
  // A wide object's references, counted by the whole work-group, so that
  // the step takes exactly the places it fills.
  if (t->stack_top) {
    uint refs = 0;
    for (uint s = 0; s < t->stack_top; ++s) {
      ulong w = t->stack_at[s];
      __global word_t* mem = (w & IN_LARGE) ? large : heap;
      w &= ~IN_LARGE;
      for (uint i = id; i < t->stack_count[s]; i += WG_SIZE) refs += IS_REF(mem[w - 1 - i]);
    }
    atomic_add(&t->wide_refs, refs);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif
  return (ulong)t->total + t->wide_refs;
}

// OpenCL 1.2 makes a plain global store visible to another work-group at
// no particular time (section 3.3.1), and a compiler may keep a polled
// value in a register: every word that one work-group waits for another to
// write is written and read with atomics, 32 bits at a time (the 64-bit
// atomics are an extension). A 64-bit entry is two such words, each
// waited for on its own: neither half of a reference is all ones (the high
// half holds REF_TAG's 0xFFFC, the low half is 8-byte aligned), so a half
// that reads all ones is one not written yet.
#define EMPTY_WORD 0xFFFFFFFFu
uint atomic_read(__global uint* p) { return atomic_or(p, 0u); }

void store_entry(__global qentry* q, ulong i, qentry v) {
#if defined(GRAPH) || defined(MIRROR)
  atomic_xchg(q + i, v);
#else
  __global uint* w = (__global uint*)(q + i);
  uint2 halves = as_uint2(v);
  atomic_xchg(w, halves.s0);
  atomic_xchg(w + 1, halves.s1);
#endif
}

// An entry of `mark`'s own queues, or of mark_shared's shared one, where
// another work-group may be waiting for it.
void put_entry(__global qentry* q, ulong i, qentry v, uint shared) {
  if (shared)
    store_entry(q, i, v);
  else
    q[i] = v;
}

// A step's second half (lines 5 and 14-18): mark, and append the
// references at out[at...] (`shared`: with store_entry). Returns how many
// it appended: count_step's total.
ulong write_step(HEAP_ARGS, object_t* o, uint mine, uint my_offset, __global qentry* out, ulong at,
                 uint shared, __local step_t* t) {
  const uint id = get_local_id(0);
  if (o->fresh) mark_object(heap, *o);
#if defined(ATOMIC_OFFSETS)
  for (uint i = 0; i < mine; ++i) put_entry(out, at + my_offset + i, next_ref(heap, o, i), shared);
  uint mine_total = t->total;
#elif defined(PREFIX_SUM)
  // Each object's references are consecutive, after those of lower ids.
  t->x[id] = mine;
  uint mine_total = exclusive_scan(t->x, id);
  for (uint i = 0; i < mine; ++i) put_entry(out, at + t->x[id] + i, next_ref(heap, o, i), shared);
#else
  // Algorithm 2: all first references, then all second references, ...
  // hist[i & 3] counts the work-items with an (i+1)-th reference; a slot
  // is cleared two steps after its use, once every work-item has read it.
  uint mine_total = 0;
  for (uint i = 0; i < t->max_count; ++i) {
    if (i < mine) {
      uint local_offset = atomic_inc(&t->hist[i & 3]);
      put_entry(out, at + mine_total + local_offset, next_ref(heap, o, i), shared);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    mine_total += t->hist[i & 3];
    if (id == 0) t->hist[(i + 2) & 3] = 0;
  }
#endif
  const ulong first = at;
  at += mine_total;
#if SPLIT_REFS > 0
  // Wide objects: every work-item copies one slot at a time (direct: only
  // the references, each at the next place). Most steps have none, and
  // skip the barriers (stack_top is the same in every work-item).
  if (t->stack_top) {
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 0; s < t->stack_top; ++s) {
    ulong w = t->stack_at[s];
    uint count = t->stack_count[s];
#ifdef GRAPH
    for (uint i = id; i < count; i += WG_SIZE) put_entry(out, at + i, heap[w + 1 + i], shared);
    at += count;
#else
    __global word_t* mem = (w & IN_LARGE) ? large : heap;
    w &= ~IN_LARGE;
    for (uint i = id; i < count; i += WG_SIZE) {
      word_t v = mem[w - 1 - i];
      if (IS_REF(v)) put_entry(out, at + atomic_inc(&t->wide_len), v, shared);
    }
#endif
  }
#ifndef GRAPH
  barrier(CLK_LOCAL_MEM_FENCE);
  at += t->wide_len;
#endif
  }
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  return at - first;
}

// An object of the queue, or none for a work-item past the step's end.
object_t no_object(void) {
  object_t o;
  o.count = 0;
  o.fresh = 0;
  o.wide = 0;
  o.at = 0;
  return o;
}

// One level's steps, from *begin to end of `in`, appending to `out` from
// *out_len. Returns false, with *begin at the first step not taken, when
// the out-queue cannot take the next step; the whole work-group sees the
// same totals, so it stops together, before marking anything of that step.
bool mark_level(HEAP_ARGS, __global const qentry* in, __global qentry* out, ulong capacity, ulong* begin,
                const ulong end, ulong* out_len, __local step_t* t) {
  const uint id = get_local_id(0);
  for (; *begin < end; *begin += WG_SIZE) {
    const ulong l = min((ulong)WG_SIZE, end - *begin);
    object_t o = no_object();
    if (id < l) o = READ(in[*begin + id]);
    uint mine = 0, my_offset = 0;
    ulong most = count_step(heap, base, large, large_base, large_words, &o, &mine, &my_offset, t);
    if (*out_len + most > capacity) return false;
    *out_len += write_step(heap, base, large, large_base, large_words, &o, mine, my_offset, out, *out_len, 0, t);
  }
  return true;
}

// The paper's loop (L776-792): level after level, the out-queue becoming
// the next in-queue, until the queue is empty or a reason to stop (WHY_*)
// sends the work-group back to the host. A level's width (the paper's
// Figure 2) is recorded in `history` when the level begins.
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void mark(
    HEAP_ARGS, __global qentry* queue_a, __global qentry* queue_b, ulong capacity, __global ulong* state,
    __global ulong* history, uint max_levels, uint tail_width, uint tail_min_levels) {
  const uint id = get_local_id(0);
  const uint p = get_group_id(0);
  __global ulong* st = state + p * ST_WORDS;
  __global ulong* widths = history + p * max_levels;

  __local step_t t;

  ulong begin = st[ST_BEGIN], end = st[ST_END], out_len = st[ST_OUT], levels = st[ST_LEVELS];
  uint flip = (uint)st[ST_FLIP], open = (uint)st[ST_OPEN], recorded = 0, why = WHY_EMPTY;
  for (;;) {
    __global qentry* in = (flip ? queue_b : queue_a) + p * capacity;
    __global qentry* out = (flip ? queue_a : queue_b) + p * capacity;
    if (!open) {
      if (end == 0) {
        why = WHY_EMPTY;
        break;
      }
      if (recorded == max_levels) {
        why = WHY_LEVELS;
        break;
      }
      if (tail_width && levels >= tail_min_levels && end < tail_width) {
        why = WHY_TAIL;
        break;
      }
      if (id == 0) widths[recorded] = end;
      ++recorded;
      ++levels;
      open = 1;
    }
    if (!mark_level(heap, base, large, large_base, large_words, in, out, capacity, &begin, end, &out_len, &t)) {
      why = WHY_FULL;
      break;
    }
    // The next level reads what every work-item of the group wrote.
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    flip ^= 1;
    end = out_len;
    begin = 0;
    out_len = 0;
    open = 0;
  }
  if (id == 0) {
    st[ST_BEGIN] = begin;
    st[ST_END] = end;
    st[ST_OUT] = out_len;
    st[ST_FLIP] = flip;
    st[ST_LEVELS] = levels;
    st[ST_OPEN] = open;
    st[ST_RECORDED] = recorded;
    st[ST_WHY] = why;
  }
}

// Several compute units under one launch: one queue for all work-groups,
// with atomic counters, so that work the roots gave one work-group flows to
// the others. Levels are not kept apart (the queue is first in, first out,
// but a level's entries interleave with the next one's), so no widths are
// recorded.
//
//   counters[Q_HEAD]    the next entry to claim
//   counters[Q_TAIL]    the end of the entries reserved (claims stop there)
//   counters[Q_ACTIVE]  work-groups that have started and hold or seek work
//   counters[Q_STOP]    set when the queue is narrow (fewer than tail_width
//                       entries, no other work-group in a step, after this
//                       one's tail_min_claims claims): every work-group
//                       leaves, and the CPU finishes (L1138-1150)
//
// A work-group claims up to WG_SIZE entries with a compare-and-swap of the
// head, and reserves its step's places with one of the tail; an entry
// reserved but not yet written reads as EMPTY_ENTRY, and a claimer waits
// for it. A work-group with nothing to claim leaves the active count and
// waits while some started work-group is active (it may append); it leaves
// when none is. Every one of these words is read and written with atomics
// (store_entry, await_entry, atomic_read).
//
// Why every wait ends, on a device that runs work-groups concurrently or
// one after another: a work-group waits only for one that has started (it
// made the reservation waited on, or counted itself active), and a started
// work-group, in a step or seeking work, waits for nothing that has not
// already happened, so it writes what it reserved, and it leaves the
// active count when it finds nothing to claim. One that has not started
// holds nothing and is not counted, so a device that runs them one at a
// time has the first mark everything. The host launches at most one
// work-group per compute unit (gpu_marker.cpp), so on a GPU every
// work-group is resident at once and a started one is never left waiting
// for a place to run.
//
// A work-group whose step does not fit stops, leaving its claim in its
// state words (ST_BEGIN, ST_END), the places it needed (ST_OUT) and
// WHY_FULL; the host moves the claims and the unclaimed entries to the
// front of a larger queue and launches again.
#define Q_HEAD 0
#define Q_TAIL 1
#define Q_ACTIVE 2
#define Q_STOP 3
#define Q_WORDS 4

#if defined(GRAPH) || defined(MIRROR)
#define EMPTY_ENTRY 0xFFFFFFFFu
#else
#define EMPTY_ENTRY 0xFFFFFFFFFFFFFFFFul
#endif

// Entry i, once written. Its place is below the tail, so a work-group
// reserved it inside a step (or the host wrote it before the launch), and
// that work-group writes it before the step ends, waiting for nothing in
// between: the wait ends.
qentry await_entry(__global qentry* q, ulong i) {
  __global uint* w = (__global uint*)(q + i);
  uint lo;
  while ((lo = atomic_read(w)) == EMPTY_WORD) {
  }
#if defined(GRAPH) || defined(MIRROR)
  return lo;
#else
  uint hi;
  while ((hi = atomic_read(w + 1)) == EMPTY_WORD) {
  }
  return as_ulong((uint2)(lo, hi));
#endif
}

// Claims up to WG_SIZE entries: returns how many, their first in *first;
// 0 when the queue is empty or the mark is stopping. The compare-and-swap
// fails only when another work-group's succeeded, so the loop ends.
uint claim(__global uint* counters, __local uint* first, uint tail_width, uint* claims, uint tail_min_claims) {
  for (;;) {
    if (atomic_read(counters + Q_STOP)) return 0;
    uint h = atomic_read(counters + Q_HEAD);
    uint t = atomic_read(counters + Q_TAIL);
    if (h >= t) return 0;
    // Narrow: few entries, and no other work-group in a step to add more.
    if (tail_width && *claims >= tail_min_claims && t - h < tail_width &&
        atomic_read(counters + Q_ACTIVE) <= 1) {
      atomic_xchg(&counters[Q_STOP], 1u);
      return 0;
    }
    uint n = min((uint)WG_SIZE, t - h);
    if (atomic_cmpxchg(&counters[Q_HEAD], h, h + n) == h) {
      *first = h;
      ++*claims;
      return n;
    }
  }
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void mark_shared(
    HEAP_ARGS, __global qentry* queue, uint capacity, __global uint* counters, __global ulong* state,
    uint tail_width, uint tail_min_claims) {
  const uint id = get_local_id(0);
  __global ulong* st = state + get_group_id(0) * ST_WORDS;
  __local step_t t;
  __local uint first, n, done;
  __local ulong at;
  uint claims = 0;
  if (id == 0) {
    atomic_inc(&counters[Q_ACTIVE]);
    st[ST_WHY] = WHY_EMPTY;
    st[ST_BEGIN] = st[ST_END] = 0;
  }
  for (;;) {
    if (id == 0) {
      done = 0;
      n = claim(counters, &first, tail_width, &claims, tail_min_claims);
      while (n == 0 && !done) {
        // Idle: out of the active count while waiting for work. The wait
        // ends: each active work-group is in a step (which ends, above) or
        // seeking work, and then claims some or leaves the count.
        atomic_dec(&counters[Q_ACTIVE]);
        for (;;) {
          if (atomic_read(counters + Q_STOP)) {
            done = 1;
            break;
          }
          if (atomic_read(counters + Q_HEAD) < atomic_read(counters + Q_TAIL)) break;
          if (atomic_read(counters + Q_ACTIVE) == 0) {
            done = 1;
            break;
          }
        }
        if (!done) {
          atomic_inc(&counters[Q_ACTIVE]);
          n = claim(counters, &first, tail_width, &claims, tail_min_claims);
        }
      }
      if (n == 0 && done == 0) done = 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (done) break;
    object_t o = no_object();
    if (id < n) o = READ(await_entry(queue, first + id));
    uint mine = 0, my_offset = 0;
    ulong most = count_step(heap, base, large, large_base, large_words, &o, &mine, &my_offset, &t);
    if (id == 0) {
      at = capacity;
      for (;;) {
        uint tl = atomic_read(counters + Q_TAIL);
        if (tl + most > capacity) break;
        if (atomic_cmpxchg(&counters[Q_TAIL], tl, tl + (uint)most) == tl) {
          at = tl;
          break;
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (at == capacity) {
      // Full: the claim goes back to the host, nothing of it marked.
      if (id == 0) {
        st[ST_WHY] = WHY_FULL;
        st[ST_BEGIN] = first;
        st[ST_END] = first + n;
        st[ST_OUT] = most;
        atomic_dec(&counters[Q_ACTIVE]);
      }
      return;
    }
    // The claimed entries are consumed: back to empty for the next launch.
    if (id < n) store_entry(queue, first + id, EMPTY_ENTRY);
    write_step(heap, base, large, large_base, large_words, &o, mine, my_offset, queue, at, 1, &t);
  }
}
