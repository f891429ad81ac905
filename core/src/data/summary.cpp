// The range a generator draws from, and the one-line account of a run's data its reports give.
#include <algorithm>
#include <limits>
#include <sstream>
#include <type_traits>

#include "data/counter_random.hpp"
#include "data/data.hpp"

namespace gpuk {

ValueRange uniform_range(const DataSpec& spec, DType dtype) {
  return visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T>) {
      return ValueRange{spec.low.value_or(-1.0), spec.high.value_or(1.0)};
    } else {
      using L = std::numeric_limits<T>;
      // min() is exact; max() + 1 is what max() rounds to for 64 bits, and clamps back to max().
      return ValueRange{spec.low.value_or(static_cast<double>(L::min())),
                        spec.high.value_or(static_cast<double>(L::max()))};
    }
  });
}

namespace {

// The values a uniform draw of T can take: "[lo, hi]" for integers (exact, from the clamped
// range) with their count (nullopt: all 2^64), "[lo, hi)" for floats (no count).
template <class T>
std::pair<std::string, std::optional<std::uint64_t>> range_text(const ValueRange& r) {
  std::ostringstream out;
  if constexpr (std::is_floating_point_v<T>) {
    out.precision(std::numeric_limits<double>::max_digits10);
    out << "[" << r.low << ", " << r.high << ")";
    return {out.str(), std::nullopt};
  } else {
    const auto range = counter_random::integer_range<T>(r.low, r.high);
    if (!range) return {"(no integer)", std::uint64_t{0}};
    out << "[" << +range->first << ", " << +range->second << "]";
    // hi - lo + 1 values; 0 when that is all 2^64 (more than any n).
    const std::uint64_t span = static_cast<std::uint64_t>(range->second) - static_cast<std::uint64_t>(range->first) + 1;
    return {out.str(), span == 0 ? std::nullopt : std::optional<std::uint64_t>(span)};
  }
}

std::optional<std::uint64_t> smaller(std::optional<std::uint64_t> a, std::uint64_t b) {
  return a ? std::min(*a, b) : b;
}

}  // namespace

DataSummary summarize_data(const DataSpec& spec, DType dtype, std::uint64_t n) {
  DataSummary s;
  s.seed = spec.seed;
  if (spec.file) {
    s.generator = "file";
    s.file = spec.file->string();
    return s;
  }
  s.generator = std::string(generator_name(spec.generator));
  s.nans = spec.nan.count + spec.nan.at.size();
  const auto [range, span] = visit_dtype(dtype, [&](auto t) { return range_text<decltype(t)>(uniform_range(spec, dtype)); });
  switch (spec.generator) {
    case Generator::uniform:
    case Generator::sorted:
    case Generator::reversed:
      s.range = range;
      if (!dtype_is_float(dtype)) s.distinct_at_most = smaller(span, n);  // floats: no useful bound
      break;
    case Generator::few_distinct:
      s.range = range;
      s.distinct_at_most = std::min(smaller(span, n).value(), spec.distinct);
      break;
    case Generator::normal: {
      std::ostringstream out;
      out << "mean " << spec.mean << ", stddev " << spec.stddev;
      s.range = out.str();
      break;
    }
    case Generator::permutation:
      s.range = "[0, " + std::to_string(n - 1) + "]";
      s.distinct_at_most = n;
      break;
  }
  return s;
}

std::string DataSummary::text() const {
  std::string t = array.empty() ? "" : array + ": ";
  if (generator == "file") {
    t += "file " + file;
  } else {
    t += generator;
    if (!range.empty()) t += (generator == "normal" ? " (" : " in ") + range + (generator == "normal" ? ")" : "");
    t += ", seed " + std::to_string(seed);
    if (distinct_at_most)
      t += generator == "permutation" ? ", " + std::to_string(*distinct_at_most) + " distinct values"
                                      : ", at most " + std::to_string(*distinct_at_most) + " distinct values";
    if (nans) t += ", " + std::to_string(nans) + " NaN" + (nans == 1 ? "" : "s");
  }
  for (const DataSummary& other : others) t += "; " + other.text();
  return t;
}

}  // namespace gpuk
