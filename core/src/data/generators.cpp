// Input generators.
//
// Generators are counter-based: element i is a pure function of (seed, stream, i), so any chunk
// of the array can be filled independently and the result does not depend on the thread count.
// Permutations (and the random NaN positions) come from a keyed bijection on [0, n): a small
// Feistel network over the next power of two, cycle-walked back into range.
#include "data/data.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <new>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <variant>

#include "gpuk/error.hpp"
#include "util/text.hpp"

#ifdef _OPENMP
#define GPUK_OMP(directive) _Pragma(directive)
#else
#define GPUK_OMP(directive)
#endif

namespace gpuk {

// ------------------------------------------------------------------------------------------------
// Generator names

namespace {
struct GeneratorName {
  Generator generator;
  std::string_view name;
};
constexpr GeneratorName kGeneratorNames[] = {
    {Generator::uniform, "uniform"},   {Generator::normal, "normal"},
    {Generator::permutation, "permutation"}, {Generator::sorted, "sorted"},
    {Generator::reversed, "reversed"}, {Generator::few_distinct, "few_distinct"},
};
}  // namespace

std::string_view generator_name(Generator g) {
  for (const auto& e : kGeneratorNames)
    if (e.generator == g) return e.name;
  return "unknown";
}

std::optional<Generator> parse_generator(std::string_view name) {
  for (const auto& e : kGeneratorNames)
    if (e.name == name) return e.generator;
  if (name == "few-distinct") return Generator::few_distinct;
  return std::nullopt;
}

// ------------------------------------------------------------------------------------------------
// Counter-based random numbers

namespace {

// The splitmix64 output function (Stafford's "mix13"): a strong 64-bit bijective mixer.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ULL;

// Independent streams derived from one seed.
enum class Stream : std::uint64_t { values = 1, pool = 2, pick = 3, permutation = 4, nan = 5 };

constexpr std::uint64_t stream_key(std::uint64_t seed, Stream stream) {
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
[[maybe_unused]] constexpr std::uint64_t kParallelMin = std::uint64_t{1} << 18;

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
  if constexpr (std::is_floating_point_v<T>) {
    return UniformFloat<T>(spec.low, spec.high);
  } else {
    const auto range = integer_range<T>(spec.low, spec.high);  // validated to exist
    return UniformInt<T>(range->first, range->second);
  }
}

// ------------------------------------------------------------------------------------------------
// Validation

[[noreturn]] void config_error(const std::string& message) { throw ConfigError(message); }

void validate_uniform_range(const DataSpec& spec, DType dtype) {
  if (!std::isfinite(spec.low) || !std::isfinite(spec.high))
    config_error(cat(generator_name(spec.generator), ": low and high must be finite (got low = ",
                     spec.low, ", high = ", spec.high, ")"));
  if (spec.low > spec.high)
    config_error(cat(generator_name(spec.generator), ": low (", spec.low,
                     ") is greater than high (", spec.high, ")"));
  visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T>) {
      const double m = static_cast<double>(std::numeric_limits<T>::max());
      if (std::fabs(spec.low) > m || std::fabs(spec.high) > m)
        config_error(cat(generator_name(spec.generator), ": range [", spec.low, ", ", spec.high,
                         ") does not fit in ", dtype_name(dtype)));
    } else {
      if (!integer_range<T>(spec.low, spec.high))
        config_error(cat(generator_name(spec.generator), ": range [", spec.low, ", ", spec.high,
                         "] holds no ", dtype_name(dtype), " value"));
    }
  });
}

// The largest integer m such that every integer in [0, m] is exactly representable in dtype.
std::uint64_t largest_exact_integer(DType dtype) {
  switch (dtype) {
    case DType::int32: return std::numeric_limits<std::int32_t>::max();
    case DType::uint32: return std::numeric_limits<std::uint32_t>::max();
    case DType::int64: return std::numeric_limits<std::int64_t>::max();
    case DType::uint64: return std::numeric_limits<std::uint64_t>::max();
    case DType::float32: return std::uint64_t{1} << 24;
    case DType::float64: return std::uint64_t{1} << 53;
  }
  return 0;
}

void validate(const DataSpec& spec, DType dtype, std::uint64_t n) {
  if (n == 0) config_error("cannot generate an empty array (n = 0)");

  const bool wants_nan = !spec.nan.at.empty() || spec.nan.count > 0;
  if (wants_nan && !dtype_is_float(dtype))
    config_error(cat("NaN injection needs a floating-point dtype, not ", dtype_name(dtype)));
  for (std::uint64_t index : spec.nan.at)
    if (index >= n)
      config_error(cat("NaN index ", index, " is out of range for ", n, " elements"));
  if (spec.nan.count > n)
    config_error(cat("NaN count ", spec.nan.count, " exceeds the ", n, " elements"));

  switch (spec.generator) {
    case Generator::uniform:
    case Generator::sorted:
    case Generator::reversed: validate_uniform_range(spec, dtype); break;
    case Generator::few_distinct:
      if (spec.distinct == 0) config_error("few_distinct: distinct must be at least 1");
      validate_uniform_range(spec, dtype);
      break;
    case Generator::normal:
      if (!std::isfinite(spec.mean) || !std::isfinite(spec.stddev))
        config_error(cat("normal: mean and stddev must be finite (got mean = ", spec.mean,
                         ", stddev = ", spec.stddev, ")"));
      if (spec.stddev < 0) config_error(cat("normal: stddev (", spec.stddev, ") is negative"));
      break;
    case Generator::permutation: {
      const std::uint64_t limit = largest_exact_integer(dtype);
      if (n - 1 > limit)
        config_error(cat("a permutation of ", n, " values needs ", n - 1, " to be exact in ",
                         dtype_name(dtype), ", whose exact integers stop at ", limit));
      break;
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Fills

template <class T>
void fill_uniform(std::span<T> out, const DataSpec& spec) {
  const auto map = uniform_mapping<T>(spec);
  const std::uint64_t key = stream_key(spec.seed, Stream::values);
  T* p = out.data();
  parallel_for(out.size(), [=](std::uint64_t i) { p[i] = map(random_bits(key, i)); });
}

template <class T>
void fill_normal(std::span<T> out, const DataSpec& spec) {
  const std::uint64_t key = stream_key(spec.seed, Stream::values);
  const double mean = spec.mean, stddev = spec.stddev;
  T* p = out.data();
  parallel_for(out.size(), [=](std::uint64_t i) {
    p[i] = to_dtype<T>(mean + stddev * standard_normal(random_bits(key, i)));
  });
}

template <class T>
void fill_permutation(std::span<T> out, const DataSpec& spec) {
  const Bijection perm(out.size(), stream_key(spec.seed, Stream::permutation));
  T* p = out.data();
  parallel_for(out.size(), [=](std::uint64_t i) { p[i] = static_cast<T>(perm(i)); });
}

template <class T>
void fill_few_distinct(std::span<T> out, const DataSpec& spec) {
  // The pool is virtual: value k of the pool is the uniform value for counter k of the pool
  // stream, so pools of any size cost nothing and are the same for every n.
  const auto map = uniform_mapping<T>(spec);
  const std::uint64_t pool_key = stream_key(spec.seed, Stream::pool);
  const std::uint64_t pick_key = stream_key(spec.seed, Stream::pick);
  const UniformInt<std::uint64_t> pick(0, spec.distinct - 1);
  T* p = out.data();
  parallel_for(out.size(), [=](std::uint64_t i) {
    p[i] = map(random_bits(pool_key, pick(random_bits(pick_key, i))));
  });
}

template <class T>
void sort_small(T* first, T* last, bool descending) {
  if (last - first <= 16) {  // insertion sort
    for (T* i = first + (first != last); i < last; ++i) {
      const T v = *i;
      T* j = i;
      for (; j > first && (descending ? *(j - 1) < v : v < *(j - 1)); --j) *j = *(j - 1);
      *j = v;
    }
  } else if (descending) {
    std::sort(first, last, std::greater<T>());
  } else {
    std::sort(first, last);
  }
}

// Sorts roughly uniformly distributed values in expected linear time: distributes them into as
// many sub-buckets as there are values by linear interpolation between the minimum and the
// maximum (a non-decreasing key, so the sub-buckets are ordered), then sorts each sub-bucket
// (expected size 1). Correct for any data; fast for the uniform data it is used on.
template <class T>
class BucketSorter {
 public:
  void sort(T* first, T* last, bool descending) {
    const std::size_t m = static_cast<std::size_t>(last - first);
    if (m <= 64) return sort_small(first, last, descending);
    const auto [lo_it, hi_it] = std::minmax_element(first, last);
    const T lo = *lo_it, hi = *hi_it;
    if (!(lo < hi)) return;  // all equal
    // Interpolate in halves so that hi - lo cannot overflow (e.g. -1e308 .. 1e308).
    const double dlo = static_cast<double>(lo) / 2, dhi = static_cast<double>(hi) / 2;
    if (!(dlo < dhi)) return sort_small(first, last, descending);  // 64-bit ints closer than a double ulp
    const double scale = static_cast<double>(m) / (dhi - dlo);
    if (!std::isfinite(scale)) return sort_small(first, last, descending);  // subnormal spread
    const std::size_t top = m - 1;
    auto sub = [=](T v) {
      const double x = (static_cast<double>(v) / 2 - dlo) * scale;
      const std::size_t b = x <= 0 ? 0 : x >= static_cast<double>(top) ? top : static_cast<std::size_t>(x);
      return descending ? top - b : b;
    };
    count_.assign(m + 1, 0);
    scratch_.resize(m);
    for (T* it = first; it != last; ++it) ++count_[sub(*it) + 1];
    for (std::size_t b = 0; b < m; ++b) count_[b + 1] += count_[b];  // count_[b] = start of b
    for (T* it = first; it != last; ++it) scratch_[count_[sub(*it)]++] = *it;  // count_[b] = end of b
    std::copy(scratch_.begin(), scratch_.end(), first);
    std::size_t begin = 0;
    for (std::size_t b = 0; b < m; ++b) {
      const std::size_t end = count_[b];
      if (end - begin > 1) sort_small(first + begin, first + end, descending);
      begin = end;
    }
  }

 private:
  std::vector<std::size_t> count_;
  std::vector<T> scratch_;
};

// Uniform values in ascending (or descending) order: the uniform data, sorted. Each value is a
// non-decreasing function of its 64 random bits, so bucketing by the top bits of those bits
// orders the buckets: one pass counts the bucket sizes (per part of the index range), a second
// pass regenerates the values straight into their buckets, then the buckets are sorted
// independently. All in parallel, no scratch array, and the result is the unique sorted
// sequence of the uniform data (the values hold no NaN and no -0.0, so ties are identical).
template <class T>
void fill_sorted(std::span<T> out, const DataSpec& spec, bool descending) {
  const auto map = uniform_mapping<T>(spec);
  const std::uint64_t key = stream_key(spec.seed, Stream::values);
  const std::uint64_t n = out.size();
  T* p = out.data();
  const int n_bits = std::bit_width(n);
  constexpr int kBucketBits = 14;  // aim for buckets of ~2^14 elements
  if (n_bits <= kBucketBits + 1) {
    parallel_for(n, [=](std::uint64_t i) { p[i] = map(random_bits(key, i)); });
    BucketSorter<T>().sort(p, p + n, descending);
    return;
  }
  const int k = std::min(n_bits - kBucketBits, 16);  // 2^k buckets
  const std::uint64_t buckets = std::uint64_t{1} << k;
  const int shift = 64 - k;
  // Parts of the index range, each with its own row of bucket counters. Fixed, not per thread.
  const std::uint64_t parts = std::min<std::uint64_t>(64, (n + (1 << 16) - 1) >> 16);
  const std::uint64_t part_size = (n + parts - 1) / parts;
  std::vector<std::uint64_t> cursor(parts * buckets, 0);  // counts, then write positions
  std::uint64_t* const cur = cursor.data();

  GPUK_OMP("omp parallel for schedule(dynamic, 1) if (n >= kParallelMin)")
  for (std::uint64_t part = 0; part < parts; ++part) {
    std::uint64_t* const row = cur + part * buckets;
    const std::uint64_t end = std::min(n, (part + 1) * part_size);
    for (std::uint64_t i = part * part_size; i < end; ++i) ++row[random_bits(key, i) >> shift];
  }

  std::vector<std::uint64_t> bucket_start(buckets + 1);
  std::uint64_t position = 0;
  for (std::uint64_t j = 0; j < buckets; ++j) {
    const std::uint64_t b = descending ? buckets - 1 - j : j;
    bucket_start[j] = position;
    for (std::uint64_t part = 0; part < parts; ++part) {
      const std::uint64_t count = cur[part * buckets + b];
      cur[part * buckets + b] = position;
      position += count;
    }
  }
  bucket_start[buckets] = position;

  GPUK_OMP("omp parallel for schedule(dynamic, 1) if (n >= kParallelMin)")
  for (std::uint64_t part = 0; part < parts; ++part) {
    const auto m = map;
    std::uint64_t* const row = cur + part * buckets;
    const std::uint64_t end = std::min(n, (part + 1) * part_size);
    for (std::uint64_t i = part * part_size; i < end; ++i) {
      const std::uint64_t bits = random_bits(key, i);
      p[row[bits >> shift]++] = m(bits);
    }
  }

  const std::uint64_t* const start = bucket_start.data();
  GPUK_OMP("omp parallel if (n >= kParallelMin)")
  {
    BucketSorter<T> sorter;
    GPUK_OMP("omp for schedule(dynamic, 16)")
    for (std::uint64_t j = 0; j < buckets; ++j) sorter.sort(p + start[j], p + start[j + 1], descending);
  }
}

template <class T>
void inject_nan(std::span<T> out, const NanSpec& nan, std::uint64_t seed) {
  if constexpr (std::is_floating_point_v<T>) {
    const T q = std::numeric_limits<T>::quiet_NaN();
    for (std::uint64_t index : nan.at) out[index] = q;
    if (nan.count > 0) {
      const Bijection positions(out.size(), stream_key(seed, Stream::nan));
      T* p = out.data();
      parallel_for(nan.count, [=](std::uint64_t j) { p[positions(j)] = q; });
    }
  }
}

}  // namespace

HostArray generate(const DataSpec& spec, DType dtype, std::uint64_t n) {
  validate(spec, dtype, n);
  HostArray array(dtype, n);
  visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    const std::span<T> out = array.as<T>();
    switch (spec.generator) {
      case Generator::uniform: fill_uniform(out, spec); break;
      case Generator::normal: fill_normal(out, spec); break;
      case Generator::permutation: fill_permutation(out, spec); break;
      case Generator::sorted: fill_sorted(out, spec, false); break;
      case Generator::reversed: fill_sorted(out, spec, true); break;
      case Generator::few_distinct: fill_few_distinct(out, spec); break;
    }
    inject_nan(out, spec.nan, spec.seed);
  });
  return array;
}

}  // namespace gpuk
