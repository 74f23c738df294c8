// Counters that several collectors report under one name, so that one
// figure compares across them (--compare, the report's panels).
#pragma once

#include "gc/observe/counter.h"

namespace gc::observe {

inline constexpr Counter kObjectsMarked{"objects marked", Unit::kObjects};
inline constexpr Counter kLargeObjectsMarked{"large objects marked", Unit::kObjects};
inline constexpr Counter kObjectsMoved{"objects moved", Unit::kObjects};
inline constexpr Counter kBytesMoved{"bytes moved", Unit::kBytes};
inline constexpr Counter kBytesCopied{"bytes copied", Unit::kBytes};
inline constexpr Counter kRootGroups{"root groups", Unit::kGroups};

}  // namespace gc::observe
