// How one output is compared with its expected value (a declared kernel's `compare:`, carried by
// its Problem, plugin/problem.hpp; applied by compare_arrays, data/compare_arrays.hpp).
#pragma once
#include <cstdint>
#include <optional>

namespace gpuk {

// Exact for integers unless given; for floats |got - want| <= atol + rtol * |want|, or within
// `ulps` units in the last place; NaN matches NaN; `skip` leaves the output uncompared. With
// `sum`, the output's total is compared instead of each element (partial sums of a reduction,
// whose split differs between variants): the same rule on the two totals, summed in double
// (integers: exactly, in 64 bits).
struct CompareRule {
  std::optional<double> atol, rtol;
  std::optional<std::int64_t> ulps;
  bool skip = false;
  bool sum = false;
};

}  // namespace gpuk
