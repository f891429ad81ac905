// Named points where a writer of shared files (the tuning database, compile cache entries, the
// sweep's journal) can die. A test sets a hook that stops or kills the process at one of them, so
// that each interleaving of a killed writer with the others is forced, not hoped for
// (tests/core/test_killed_writers.cpp). Without a hook a point costs one atomic load.
#pragma once
#include <string_view>

namespace gpuk {

using FaultHook = void (*)(std::string_view point);

// nullptr (the default): no hook. Process-wide; a forked child keeps its parent's.
void set_fault_hook(FaultHook hook);

// Calls the hook, if one is set, with the point's name ("atomic file: written", ...).
void fault_point(std::string_view point);

}  // namespace gpuk
