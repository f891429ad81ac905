// The value a search run looks for: `value:` parsed exactly in the dtype, a random position
// from the data's seed, and values that no element matches (value_at: absent). Header-only, for
// the search plugin and its tests.
#pragma once
#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpuk/search_ops.hpp"

namespace gpuk::search {

template <class T> inline std::string format_value(T v) {
  std::ostringstream out;
  if constexpr (std::is_floating_point_v<T>) out << std::setprecision(std::numeric_limits<T>::max_digits10);
  out << +v;
  return out.str();
}

// `value:` as written in the config, exactly, in T. Integers are parsed as integers (so int64
// values above 2^53 stay exact); "42.0" is accepted for an integer dtype, "42.5" is not.
template <class T> std::optional<T> parse_literal(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  if constexpr (std::is_integral_v<T>) {
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    Wide wide{};
    const char* end = text.data() + text.size();
    const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
    if (std::is_unsigned_v<T> && begin != end && *begin == '-') {
      // "-0" is 0; other negatives are out of range
      std::int64_t neg{};
      const auto [p, ec] = std::from_chars(begin, end, neg);
      if (ec == std::errc() && p == end && neg == 0) return T(0);
      return std::nullopt;
    }
    const auto [p, ec] = std::from_chars(begin, end, wide);
    if (ec == std::errc() && p == end) {
      if (wide < static_cast<Wide>(std::numeric_limits<T>::lowest()) ||
          wide > static_cast<Wide>(std::numeric_limits<T>::max()))
        return std::nullopt;
      return static_cast<T>(wide);
    }
    if (ec == std::errc::result_out_of_range) return std::nullopt;
    char* stop = nullptr;
    const double d = std::strtod(text.c_str(), &stop);
    if (stop != text.c_str() + text.size() || !std::isfinite(d) || d != std::trunc(d) || std::fabs(d) > 0x1p53)
      return std::nullopt;
    if (d < static_cast<double>(std::numeric_limits<T>::lowest()) || d > static_cast<double>(std::numeric_limits<T>::max()))
      return std::nullopt;
    return static_cast<T>(d);
  } else {
    char* stop = nullptr;
    const T v = std::is_same_v<T, float> ? static_cast<T>(std::strtof(text.c_str(), &stop))
                                         : static_cast<T>(std::strtod(text.c_str(), &stop));
    if (text.empty() || stop != text.c_str() + text.size()) return std::nullopt;
    // A number past the dtype (1e39 in float32) rounds to infinity: not the value written.
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (std::isinf(v) && lower.find("inf") == std::string::npos) return std::nullopt;
    return v;
  }
}

// The splitmix64 mixer: the random position is a pure function of the data seed and n.
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline std::uint64_t random_position(std::uint64_t seed, std::uint64_t n) {
  constexpr std::uint64_t kSalt = 0x5ea4c4'7a46e7ULL;  // "search target": apart from the data's own streams
  return mix64(mix64(seed + 0x9e3779b97f4a7c15ULL) ^ kSalt) % n;
}

// A value that no element equals: one above the largest (or below the smallest), else the first
// gap between the sorted distinct values.
template <class T> std::optional<T> absent_value(std::span<const T> data) {
  bool any = false;
  T lo{}, hi{};
  for (T x : data) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) continue;
    if (!any || x < lo) lo = x;
    if (!any || x > hi) hi = x;
    any = true;
  }
  if (!any) return T(0);  // all NaN: 0 equals none of them
  constexpr T kMax = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  constexpr T kLow = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  const auto next_up = [](T x) {
    if constexpr (std::is_floating_point_v<T>) return std::nextafter(x, std::numeric_limits<T>::infinity());
    else return static_cast<T>(x + 1);
  };
  if (hi < kMax) return next_up(hi);
  if (lo > kLow) {
    if constexpr (std::is_floating_point_v<T>) return std::nextafter(lo, -std::numeric_limits<T>::infinity());
    else return static_cast<T>(lo - 1);
  }
  std::vector<T> sorted;
  for (T x : data) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) continue;
    sorted.push_back(x == T(0) ? T(0) : x);  // -0.0 and 0.0 are one value
  }
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i + 1 < sorted.size(); ++i) {
    const T gap = next_up(sorted[i]);
    if (gap < sorted[i + 1]) return gap;
  }
  return std::nullopt;
}

// A value that no element meets `x OP value` with, or nullopt: eq as above; lt the smallest
// element (nothing is below it), le one below it; gt the largest, ge one above it; ne the one
// value every element holds (NaN elements meet != always, so then none).
template <class T> std::optional<T> absent_value(std::span<const T> data, Compare compare) {
  if (compare == Compare::eq) return absent_value(data);
  bool any = false, nan = false;
  T lo{}, hi{};
  for (T x : data) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) {
        nan = true;
        continue;
      }
    if (!any || x < lo) lo = x;
    if (!any || x > hi) hi = x;
    any = true;
  }
  if (!any) return compare == Compare::ne ? std::nullopt : std::optional<T>(T(0));
  switch (compare) {
    case Compare::ne: return !nan && lo == hi ? std::optional<T>(lo) : std::nullopt;
    case Compare::lt: return lo;
    case Compare::gt: return hi;
    case Compare::le:
      if constexpr (std::is_floating_point_v<T>)
        return lo == -std::numeric_limits<T>::infinity() ? std::nullopt
                                                         : std::optional<T>(std::nextafter(lo, -std::numeric_limits<T>::infinity()));
      else return lo == std::numeric_limits<T>::lowest() ? std::nullopt : std::optional<T>(static_cast<T>(lo - 1));
    default:  // ge
      if constexpr (std::is_floating_point_v<T>)
        return hi == std::numeric_limits<T>::infinity() ? std::nullopt
                                                        : std::optional<T>(std::nextafter(hi, std::numeric_limits<T>::infinity()));
      else return hi == std::numeric_limits<T>::max() ? std::nullopt : std::optional<T>(static_cast<T>(hi + 1));
  }
}

// A range that no element falls in (value_at: absent with compare: range or closed_range): around
// v, a value no element equals, [v, v] (closed) or [v, the next value above v) (range; [v, v), an
// empty range, when v is the dtype's largest). nullopt when every value occurs.
template <class T> std::optional<std::pair<T, T>> absent_range(std::span<const T> data, bool closed) {
  const std::optional<T> v = absent_value(data);
  if (!v) return std::nullopt;
  if (closed) return std::pair<T, T>(*v, *v);
  if constexpr (std::is_floating_point_v<T>) {
    if (*v == std::numeric_limits<T>::infinity()) return std::pair<T, T>(*v, *v);
    return std::pair<T, T>(*v, std::nextafter(*v, std::numeric_limits<T>::infinity()));
  } else {
    if (*v == std::numeric_limits<T>::max()) return std::pair<T, T>(*v, *v);
    return std::pair<T, T>(*v, static_cast<T>(*v + 1));
  }
}

}  // namespace gpuk::search
