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

#include "data/counter_random.hpp"
#include "gpuk/error.hpp"
#include "util/text.hpp"

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

namespace {

using namespace counter_random;

// ------------------------------------------------------------------------------------------------
// Validation

[[noreturn]] void config_error(const std::string& message) { throw ConfigError(message); }

void validate_uniform_range(const DataSpec& spec, DType dtype) {
  // Plain names, not a structured binding: clang before 16 cannot capture one in the lambda below.
  const ValueRange range = uniform_range(spec, dtype);
  const double low = range.low, high = range.high;
  if (!std::isfinite(low) || !std::isfinite(high))
    config_error(cat(generator_name(spec.generator), ": low and high must be finite (got low = ", low,
                     ", high = ", high, ")"));
  if (low > high)
    config_error(cat(generator_name(spec.generator), ": low (", low, ") is greater than high (", high, ")"));
  visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T>) {
      const double m = static_cast<double>(std::numeric_limits<T>::max());
      if (std::fabs(low) > m || std::fabs(high) > m)
        config_error(cat(generator_name(spec.generator), ": range [", low, ", ", high, ") does not fit in ",
                         dtype_name(dtype)));
    } else {
      if (!integer_range<T>(low, high))
        config_error(cat(generator_name(spec.generator), ": range [", low, ", ", high, "] holds no ",
                         dtype_name(dtype), " value"));
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
  const std::uint64_t key = stream_key(spec.seed, RandomStream::values);
  T* p = out.data();
  parallel_for(out.size(), [=](std::uint64_t i) { p[i] = map(random_bits(key, i)); });
}

template <class T>
void fill_normal(std::span<T> out, const DataSpec& spec) {
  const std::uint64_t key = stream_key(spec.seed, RandomStream::values);
  const double mean = spec.mean, stddev = spec.stddev;
  T* p = out.data();
  parallel_for(out.size(), [=](std::uint64_t i) {
    p[i] = to_dtype<T>(mean + stddev * standard_normal(random_bits(key, i)));
  });
}

template <class T>
void fill_permutation(std::span<T> out, const DataSpec& spec) {
  const Bijection perm(out.size(), stream_key(spec.seed, RandomStream::permutation));
  T* p = out.data();
  parallel_for(out.size(), [=](std::uint64_t i) { p[i] = static_cast<T>(perm(i)); });
}

template <class T>
void fill_few_distinct(std::span<T> out, const DataSpec& spec) {
  // The pool is virtual: value k of the pool is the uniform value for counter k of the pool
  // stream, so pools of any size cost nothing and are the same for every n.
  const auto map = uniform_mapping<T>(spec);
  const std::uint64_t pool_key = stream_key(spec.seed, RandomStream::pool);
  const std::uint64_t pick_key = stream_key(spec.seed, RandomStream::pick);
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
  const std::uint64_t key = stream_key(spec.seed, RandomStream::values);
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
      const Bijection positions(out.size(), stream_key(seed, RandomStream::nan));
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
