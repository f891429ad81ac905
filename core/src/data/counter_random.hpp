// Counter-based random numbers and their mapping to values of T: what the input generators
// (generators.cpp) are made of. Element i is a pure function of (seed, stream, i), so any chunk of
// an array can be filled on its own and the result does not depend on the thread count.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "data/data.hpp"

#ifdef _OPENMP
#define GPUK_OMP(directive) _Pragma(directive)
#else
#define GPUK_OMP(directive)
#endif

namespace gpuk::counter_random {

// The splitmix64 output function (Stafford's "mix13"): a strong 64-bit bijective mixer.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ULL;

// Independent streams derived from one seed.
enum class RandomStream : std::uint64_t { values = 1, pool = 2, pick = 3, permutation = 4, nan = 5 };

constexpr std::uint64_t stream_key(std::uint64_t seed, RandomStream stream) {
  return mix64(mix64(seed + kGamma) ^ mix64(static_cast<std::uint64_t>(stream) * 0xd1b54a32d192ed03ULL));
}

// The i-th output of splitmix64 started at `key`: 64 random bits for counter i.
constexpr std::uint64_t random_bits(std::uint64_t key, std::uint64_t i) {
  return mix64(key + (i + 1) * kGamma);
}

// [0, 1) with 53 random bits.
inline double unit_open(std::uint64_t bits) {
  return static_cast<double>(static_cast<std::int64_t>(bits >> 11)) * 0x1p-53;  // signed: faster
}

// A keyed bijection on [0, n): a 4-round Feistel network over b = bit_width(n - 1) bits (halves
// of floor(b/2) and ceil(b/2) bits), cycle-walked until the result falls inside [0, n). The
// domain is < 2n, so the expected number of walks is below 2.
class Bijection {
 public:
  Bijection(std::uint64_t n, std::uint64_t key) : n_(n) {
    const int b = n <= 1 ? 0 : std::bit_width(n - 1);
    lo_bits_ = (b + 1) / 2;
    const int hi_bits = b / 2;
    lo_mask_ = lo_bits_ == 0 ? 0 : (~std::uint64_t{0} >> (64 - lo_bits_));
    hi_mask_ = hi_bits == 0 ? 0 : (~std::uint64_t{0} >> (64 - hi_bits));
    for (int r = 0; r < kRounds; ++r) keys_[r] = random_bits(key, static_cast<std::uint64_t>(r));
  }

  std::uint64_t operator()(std::uint64_t x) const {
    do x = encrypt(x);
    while (x >= n_);
    return x;
  }

 private:
  static constexpr int kRounds = 4;
  std::uint64_t encrypt(std::uint64_t x) const {
    std::uint64_t hi = x >> lo_bits_;  // lo_bits_ <= 32
    std::uint64_t lo = x & lo_mask_;
    for (int r = 0; r < kRounds; r += 2) {
      hi ^= mix64(keys_[r] ^ lo) & hi_mask_;
      lo ^= mix64(keys_[r + 1] ^ (hi * kGamma)) & lo_mask_;
    }
    return (hi << lo_bits_) | lo;
  }

  std::uint64_t n_;
  int lo_bits_ = 0;
  std::uint64_t lo_mask_ = 0, hi_mask_ = 0;
  std::uint64_t keys_[kRounds] = {};
};

// Below this many elements, waking threads costs more than it saves.
inline constexpr std::uint64_t kParallelMin = std::uint64_t{1} << 18;

// Calls f(i) for i in [0, n), in parallel chunks. f should capture by value: each chunk works on
// a private copy, whose fields the compiler can keep in registers whatever the loop stores.
template <class F>
void parallel_for(std::uint64_t n, const F& f) {
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 15;
  const std::uint64_t chunks = (n + kChunk - 1) / kChunk;
  GPUK_OMP("omp parallel for schedule(static) if (n >= kParallelMin)")
  for (std::uint64_t c = 0; c < chunks; ++c) {
    F local = f;
    const std::uint64_t end = std::min(n, (c + 1) * kChunk);
    for (std::uint64_t i = c * kChunk; i < end; ++i) local(i);
  }
}

// ------------------------------------------------------------------------------------------------
// Value mappings: random bits -> a value of T

// Uniform in [low, high) for floating-point T (low <= high, both finite in T).
template <class T>
struct UniformFloat {
  double low, range, half_low, half_range;
  bool halve;  // high - low overflows double: work with halves
  T tlow, thigh, below_high;

  UniformFloat(double lo, double hi) : low(lo), range(hi - lo) {
    halve = !std::isfinite(range);
    half_low = lo / 2;
    half_range = hi / 2 - lo / 2;
    tlow = static_cast<T>(lo);
    thigh = static_cast<T>(hi);
    below_high = tlow < thigh ? std::nextafter(thigh, tlow) : tlow;
  }

  T operator()(std::uint64_t bits) const {
    const double u = unit_open(bits);
    const double v = halve ? 2.0 * (half_low + u * half_range) : low + u * range;
    T t = static_cast<T>(v);
    if (!(t < thigh)) t = below_high;  // rounding reached high (or low == high)
    if (t < tlow) t = tlow;
    if (t == T(0)) t = T(0);  // never -0.0 (a tiny negative that rounded to zero in float32)
    return t;
  }
};

// The integers of T inside [ceil(low), floor(high)], or nullopt if there are none.
template <class T>
std::optional<std::pair<T, T>> integer_range(double low, double high) {
  using L = std::numeric_limits<T>;
  const double tmin = static_cast<double>(L::min());   // exact: 0, -2^31 or -2^63
  const double tend = std::ldexp(1.0, L::digits);       // max + 1, exact
  const double l = std::ceil(low), h = std::floor(high);
  if (l > h || h < tmin || l >= tend) return std::nullopt;
  const T lo = l <= tmin ? L::min() : static_cast<T>(l);
  const T hi = h >= tend ? L::max() : static_cast<T>(h);
  return std::pair<T, T>{lo, hi};
}

// Uniform over the integers [lo, hi] of T (multiply-shift: bias below 2^-64 * span).
template <class T>
struct UniformInt {
  std::uint64_t base, span;  // span == 0 means all 2^64 values
  UniformInt(T lo, T hi)
      : base(static_cast<std::uint64_t>(lo)),
        span(static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1) {}
  T operator()(std::uint64_t bits) const {
    const std::uint64_t offset =
        span == 0 ? bits
                  : static_cast<std::uint64_t>((static_cast<unsigned __int128>(bits) * span) >> 64);
    return static_cast<T>(base + offset);
  }
};

// The standard normal quantile at 64 random bits: the top bit picks the sign, 52 more bits give
// p in (0, 1/2), and Acklam's rational approximation (relative error < 1.2e-9) maps p to z <= 0.
// One hash and no trigonometry per element, so it is several times faster than Box-Muller;
// |z| reaches about 8.3.
inline double standard_normal(std::uint64_t bits) {
  constexpr double a1 = -3.969683028665376e+01, a2 = 2.209460984245205e+02,
                   a3 = -2.759285104469687e+02, a4 = 1.383577518672690e+02,
                   a5 = -3.066479806614716e+01, a6 = 2.506628277459239e+00;
  constexpr double b1 = -5.447609879822406e+01, b2 = 1.615858368580409e+02,
                   b3 = -1.556989798598866e+02, b4 = 6.680131188771972e+01,
                   b5 = -1.328068155288572e+01;
  constexpr double c1 = -7.784894002430293e-03, c2 = -3.223964580411365e-01,
                   c3 = -2.400758277161838e+00, c4 = -2.549732539343734e+00,
                   c5 = 4.374664141464968e+00, c6 = 2.938163982698783e+00;
  constexpr double d1 = 7.784695709041462e-03, d2 = 3.224671290700398e-01,
                   d3 = 2.445134137142996e+00, d4 = 3.754408661907416e+00;
  constexpr double p_low = 0.02425;
  const double p =
      (static_cast<double>(static_cast<std::int64_t>((bits >> 11) & ((std::uint64_t{1} << 52) - 1))) +
       0.5) * 0x1p-53;
  double z;
  if (p >= p_low) {
    const double q = p - 0.5, r = q * q;
    z = (((((a1 * r + a2) * r + a3) * r + a4) * r + a5) * r + a6) * q /
        (((((b1 * r + b2) * r + b3) * r + b4) * r + b5) * r + 1.0);
  } else {
    const double q = std::sqrt(-2.0 * std::log(p));
    z = (((((c1 * q + c2) * q + c3) * q + c4) * q + c5) * q + c6) /
        ((((d1 * q + d2) * q + d3) * q + d4) * q + 1.0);
  }
  return (bits >> 63) ? -z : z;
}

// Rounds (integers) and clamps a double into T.
template <class T>
T to_dtype(double v) {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_floating_point_v<T>) {
    if (v > static_cast<double>(L::max())) return L::max();
    if (v < static_cast<double>(L::lowest())) return L::lowest();
    return static_cast<T>(v);
  } else {
    // Round half away from zero, like std::round, without the libm call.
    const double tmin = static_cast<double>(L::min());  // exact
    const double tend = std::ldexp(1.0, L::digits);     // max + 1, exact
    if (!(v > tmin)) return L::min();                   // also NaN, which cannot happen
    if (v >= tend - 0.5) return L::max();
    const T t = static_cast<T>(v);  // truncates toward zero, in range
    const double frac = v - static_cast<double>(t);
    // Branch-free: these are unpredictable. Cannot overflow given the two checks above.
    return static_cast<T>(t + static_cast<T>(frac >= 0.5) - static_cast<T>(frac <= -0.5));
  }
}

// Uniform values of T for the spec's [low, high) / [low, high].
template <class T>
auto uniform_mapping(const DataSpec& spec) {
  const ValueRange r = uniform_range(spec, dtype_of<T>());
  if constexpr (std::is_floating_point_v<T>) {
    return UniformFloat<T>(r.low, r.high);
  } else {
    const auto range = integer_range<T>(r.low, r.high);  // validated to exist
    return UniformInt<T>(range->first, range->second);
  }
}

}  // namespace gpuk::counter_random
