// What a collector counts and records, each declared once as a constant:
// counting (Recorder::count), ratios and panels take the constant, so a
// misspelt counter does not compile, and its unit and kind travel with it
// to every output.
#pragma once

#include <cstdint>

namespace gc::observe {

// One word for each kind of thing gclab counts, so that figures in one unit
// compare across collectors and a reader knows what each one counts.
enum class Unit : uint8_t {
  kBytes,         // memory
  kObjects,       // heap objects
  kCells,         // marksweep's size-class cells
  kSlots,         // reference fields read
  kCards,         // card-table entries
  kBlocks,        // marksweep blocks, cacheaware allocation blocks
  kLines,         // cache lines
  kAreas,         // free areas left by compaction
  kTasks,         // units of parallel work: deque tasks, chunks, card stripes
  kGroups,        // root groups
  kMessages,      // messages between cores
  kHops,          // mesh links crossed
  kRounds,        // rounds of a protocol
  kDestinations,  // compaction destinations
  kRequests,      // memory requests of a simulated unit
  kLookups,       // address translations
  kCommands,      // DRAM commands
  kEntries,       // queue entries
  kLevels,        // breadth-first levels of a traversal
  kLaunches,      // kernel launches
  kBuffers,       // device buffers, LABs
  kThreads,       // GC threads
  kEvents,        // occurrences: steal attempts, deque overflows, refills
  kUnits,         // pMarkcompact's units of the old space
  kCollections,   // collections in which something happened
  kCycles,        // clock cycles of a simulated machine
  kNs,            // time
  kUs,            // time
};

// The units' names as outputs print them, in Unit's order.
inline constexpr const char* kUnitNames[] = {
    "bytes",    "objects", "cells",    "slots",       "cards",  "blocks",   "lines",
    "areas",    "tasks",   "groups",   "messages",    "hops",   "rounds",   "destinations",
    "requests", "lookups", "commands", "entries",     "levels", "launches", "buffers",
    "threads",  "events",  "units",    "collections", "cycles", "ns",       "us",
};
static_assert(sizeof(kUnitNames) / sizeof(kUnitNames[0]) == static_cast<unsigned>(Unit::kUs) + 1,
              "a name for every unit");
inline const char* unit_name(Unit unit) { return kUnitNames[static_cast<unsigned>(unit)]; }

// What a counter's run total is. kSum: the sum over collections (bytes
// copied). kPeak: a peak or a level read once per collection (a queue's
// high-water mark, memory held at a collection's end), whose sum would mean
// nothing: its run total is the largest collection's.
enum class CounterKind : uint8_t { kSum, kPeak };
const char* counter_kind_name(CounterKind kind);  // "sum", "peak"

// A counter, declared `inline constexpr Counter kName{"name", Unit::k...}`
// where what counts it can see it. Counters that several collectors report
// under one name, so that their figures compare, are declared once for all
// (common_counters.h). One made at run time (one per size class) must
// outlive the recorder's use of it: keep it in the collector.
struct Counter {
  const char* name;
  Unit unit;
  CounterKind kind = CounterKind::kSum;
};

// Numbers one collection records in order (Recorder::sequence), named once
// like a counter so that a sequence panel cannot name one nobody records.
struct Sequence {
  const char* name;
};

}  // namespace gc::observe
