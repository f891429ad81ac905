// The Reducer family's CPU semantics, the mirror of kernels_src/include/gpuk/reduce.cuh: value
// types, comparisons (ties to the lowest index, a NaN wins), sums. The references of the plugin's
// workloads (contiguous, segmented, per channel) are written with it. Internal to the plugin.
#pragma once
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

#include "gpuk/reduce.hpp"

namespace gpuk::reduce {

// Host mirrors of the device types in reduce.cuh.
template <class T> struct Magnitude { using type = T; };
template <> struct Magnitude<std::int32_t> { using type = std::uint32_t; };
template <> struct Magnitude<std::int64_t> { using type = std::uint64_t; };

template <class V> struct SumAccumulator { using type = V; };
template <> struct SumAccumulator<float> { using type = double; };
template <> struct SumAccumulator<std::int32_t> { using type = std::int64_t; };
template <> struct SumAccumulator<std::uint32_t> { using type = std::uint64_t; };

template <class V> struct Candidate {
  V value;
  std::int64_t index;
};

constexpr std::int64_t kNoIndex = std::numeric_limits<std::int64_t>::max();

template <class V> inline bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
  else return false;
}

template <class V> inline std::string format_value(V v) {
  std::ostringstream out;
  if constexpr (std::is_floating_point_v<V>) out << std::setprecision(std::numeric_limits<V>::max_digits10);
  out << +v;
  return out.str();
}

template <class T, bool ABS> struct Semantics {
  using V = std::conditional_t<ABS, typename Magnitude<T>::type, T>;
  using Sum = typename SumAccumulator<V>::type;

  static V value(T x) {
    if constexpr (!ABS) {
      return x;
    } else if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(x);
    } else if constexpr (std::is_signed_v<T>) {
      return x < 0 ? V(0) - static_cast<V>(x) : static_cast<V>(x);
    } else {
      return x;
    }
  }
  static bool better(V v, V best, bool largest) {
    if (is_nan(v)) return !is_nan(best);
    return largest ? v > best : v < best;
  }
  static Candidate<V> best_of(const T* data, std::int64_t begin, std::int64_t end, bool largest) {
    Candidate<V> c{V(0), kNoIndex};
    for (std::int64_t i = begin; i < end; ++i) {
      const V v = value(data[i]);
      if (c.index == kNoIndex || better(v, c.value, largest)) c = {v, i};
    }
    return c;
  }
  // argminmax: best_of(smallest) and best_of(largest) in one loop, the same comparisons.
  static void both_of(const T* data, std::int64_t begin, std::int64_t end, Candidate<V>& lo, Candidate<V>& hi) {
    lo = hi = Candidate<V>{V(0), kNoIndex};
    for (std::int64_t i = begin; i < end; ++i) {
      const V v = value(data[i]);
      if (lo.index == kNoIndex || better(v, lo.value, false)) lo = {v, i};
      if (hi.index == kNoIndex || better(v, hi.value, true)) hi = {v, i};
    }
  }
  static Candidate<V> combine(Candidate<V> a, Candidate<V> b, bool largest) {
    if (b.index == kNoIndex) return a;
    if (a.index == kNoIndex) return b;
    if (better(a.value, b.value, largest)) return a;
    if (better(b.value, a.value, largest)) return b;
    return a.index < b.index ? a : b;
  }
  // Sums: integers wrap like the device's (two's complement); floats in long double, to serve as
  // a reference for the tolerance.
  using RefSum = std::conditional_t<std::is_floating_point_v<V>, long double, Sum>;
  static RefSum sum(const T* data, std::int64_t begin, std::int64_t end, long double* abs_sum) {
    RefSum s = 0;
    long double a = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const V v = value(data[i]);
      if constexpr (std::is_floating_point_v<V>) {
        s += v;
        a += std::fabs(static_cast<long double>(v));
      } else {
        s = static_cast<RefSum>(static_cast<std::uint64_t>(s) + static_cast<std::uint64_t>(static_cast<Sum>(v)));
      }
    }
    if (abs_sum) *abs_sum += a;
    return s;
  }
};

// The DType of the value compared or summed: |x| of a signed integer is its unsigned magnitude.
inline DType value_dtype(DType t, bool abs) {
  if (!abs) return t;
  return t == DType::int32 ? DType::uint32 : t == DType::int64 ? DType::uint64 : t;
}
// Sums accumulate in 64 bits: floats in double, integers in (unsigned) int64.
inline DType sum_dtype(DType v) {
  if (dtype_is_float(v)) return DType::float64;
  return dtype_is_signed(v) ? DType::int64 : DType::uint64;
}

}  // namespace gpuk::reduce
