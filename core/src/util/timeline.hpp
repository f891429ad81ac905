// Where a call's wall time goes, across the processes of a sweep: with GPUK_TIMELINE set, each
// mark prints "gpuk timeline <monotonic seconds> <pid> <what>" on stderr (one write, so lines of
// several processes do not mix). The clock is the host's monotonic one, the same in every process:
// sort the lines and subtract the first. Nothing is printed, and nothing is read but the variable
// once, without it.
#pragma once
#include <string_view>

namespace gpuk {

void timeline(std::string_view what);

}  // namespace gpuk
