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
  kBytes,
  kObjects,
  kCells,
  kSlots,
  kCards,
  kBlocks,
  kLines,
  kAreas,
  kTasks,
  kGroups,
  kMessages,
  kHops,
  kRounds,
  kDestinations,
  kRequests,
  kLookups,
  kCommands,
  kEntries,
  kLevels,
  kLaunches,
  kBuffers,
  kThreads,
  kEvents,
  kUnits,
  kCollections,
  kCycles,
  kNs,
  kUs,
};

// Each unit with the word outputs print, in Unit's order (checked below).
struct UnitName {
  Unit unit;
  const char* name;
};
inline constexpr UnitName kUnitNames[] = {
    {Unit::kBytes, "bytes"},                // memory
    {Unit::kObjects, "objects"},            // heap objects
    {Unit::kCells, "cells"},                // marksweep's size-class cells
    {Unit::kSlots, "slots"},                // reference fields read
    {Unit::kCards, "cards"},                // card-table entries
    {Unit::kBlocks, "blocks"},              // marksweep blocks, cacheaware allocation blocks
    {Unit::kLines, "lines"},                // cache lines
    {Unit::kAreas, "areas"},                // free areas left by compaction
    {Unit::kTasks, "tasks"},                // units of parallel work: deque tasks, chunks, card stripes
    {Unit::kGroups, "groups"},              // root groups
    {Unit::kMessages, "messages"},          // messages between cores
    {Unit::kHops, "hops"},                  // mesh links crossed
    {Unit::kRounds, "rounds"},              // rounds of a protocol
    {Unit::kDestinations, "destinations"},  // compaction destinations
    {Unit::kRequests, "requests"},          // memory requests of a simulated unit
    {Unit::kLookups, "lookups"},            // address translations
    {Unit::kCommands, "commands"},          // DRAM commands
    {Unit::kEntries, "entries"},            // queue entries
    {Unit::kLevels, "levels"},              // breadth-first levels of a traversal
    {Unit::kLaunches, "launches"},          // kernel launches
    {Unit::kBuffers, "buffers"},            // device buffers, LABs
    {Unit::kThreads, "threads"},            // GC threads
    {Unit::kEvents, "events"},              // occurrences: steal attempts, deque overflows, refills
    {Unit::kUnits, "units"},                // pMarkcompact's units of the old space
    {Unit::kCollections, "collections"},    // collections in which something happened
    {Unit::kCycles, "cycles"},              // clock cycles of a simulated machine
    {Unit::kNs, "ns"},                      // time
    {Unit::kUs, "us"},                      // time
};
constexpr bool units_in_order() {
  unsigned i = 0;
  for (const UnitName& u : kUnitNames)
    if (static_cast<unsigned>(u.unit) != i++) return false;
  return i == static_cast<unsigned>(Unit::kUs) + 1;
}
static_assert(units_in_order(), "kUnitNames names every unit once, in Unit's order");
inline const char* unit_name(Unit unit) { return kUnitNames[static_cast<unsigned>(unit)].name; }

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
