// One output array compared with its expected value, by a CompareRule (data/compare_rule.hpp):
// integers exactly unless a tolerance is given, floats within atol + rtol * |expected| or within
// `ulps` units in the last place, NaN only where NaN is expected. The result says how many
// elements differ, the first bad index, and the largest absolute and relative error.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "data/compare_rule.hpp"
#include "data/data.hpp"

namespace gpuk {

struct ArrayComparison {
  bool passed = true;
  std::uint64_t size = 0, mismatches = 0;
  std::uint64_t first_bad = 0;   // valid when mismatches > 0
  std::string got, expected;     // the values at first_bad
  double max_abs = 0, max_rel = 0;  // over every element (NaN pairs left out)
  std::string rule;  // "exact", "atol 1e-06 + rtol 1e-05 * |expected|", "4 ulps"
  bool total = false;  // CompareRule::sum: got and expected are the two totals

  // "out: 12 of 4096 differ; first at index 17 (got 0.5, expected 0.25); max abs error 0.25, max
  // rel error 1" or "out: 4096 elements within atol ... (max abs error 1e-07)".
  std::string text(const std::string& name) const;
};

// The default rule: exact for integers, atol 1e-6 and rtol 1e-5 for floats.
ArrayComparison compare_arrays(const HostArray& got, const HostArray& expected, const CompareRule& rule);

// A rule with its defaults filled in for a dtype, as compare_arrays applies it element by element
// (a device comparison applies the same; CompareRule::sum is not element by element).
struct ElementRule {
  bool exact = false;  // integers without a tolerance
  double atol = 0, rtol = 0;
  std::optional<std::int64_t> ulps;  // floats only
  std::string text;                  // ArrayComparison::rule
};
ElementRule element_rule(DType dtype, const CompareRule& rule);

}  // namespace gpuk
