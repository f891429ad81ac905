// `gpuk run --devices`: the same config's report on several GPUs, one row per GPU, so that a slow
// or throttled one shows at once.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "run/runner.hpp"

namespace gpuk {

// One GPU's run: its report, or why it has none (the error's one line).
struct DeviceRun {
  int ordinal = 0;
  std::optional<RunReport> report;
  std::string error;
};

// The table: GPU, name, kernel median, baseline median and ratio, GB/s, % of peak, the answer's
// check; and, under it, how far each GPU's kernel median is from the fastest's.
void print_side_by_side(std::ostream& out, const std::string& config, const std::vector<DeviceRun>& runs);

}  // namespace gpuk
