// The Searcher family's operations: one table, read by the plugin (configs, kernels' leading
// template argument, CPU reference), its Thrust baseline and the typed calls of gpuk/search.hpp.
// The device policy's enumerator is named here as text ("gpuk::SearchOp::Find"), so no integer
// has to match the device header's. Plain C++17: nvcc compiles the baseline with it.
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "gpuk/op_table.hpp"

namespace gpuk::search {

enum class Mode { find, any, count, find_if, lower_bound, upper_bound };

struct ModeInfo {
  Mode op;
  const char* name;    // in configs and OperationSpec: "find"
  const char* device;  // the policy's enumerator in kernels_src/include/gpuk/search.cuh
  const char* thrust;  // the library baseline's call
  bool bounds = false;  // many needles in a sorted haystack, an index each (gpuk::Bounds)
};

inline constexpr ModeInfo kModes[] = {
    {Mode::find, "find", "gpuk::SearchOp::Find", "thrust::find"},
    {Mode::any, "any", "gpuk::SearchOp::Any", "thrust::find"},  // Thrust has no "any index" search
    {Mode::count, "count", "gpuk::SearchOp::Count", "thrust::count"},
    // find with the `compare` option's comparison: the same kernels, the policy's third argument
    {Mode::find_if, "find_if", "gpuk::SearchOp::Find", "thrust::find_if"},
    // lower_bound / upper_bound of each needle in a sorted haystack (docs/kernels/search.md, "Bounds")
    {Mode::lower_bound, "lower_bound", "gpuk::Side::Lower", "thrust::lower_bound", true},
    {Mode::upper_bound, "upper_bound", "gpuk::Side::Upper", "thrust::upper_bound", true},
};

// The bounds' `needles` option: the needles' order, which picks the kernel (sorted: one that
// reads each window of the haystack once per tile; both kernels are correct for either order).
enum class Needles { unsorted, sorted };

inline constexpr const ModeInfo& info(Mode mode) { return table_entry(kModes, mode); }

// find_if's comparisons: `x OP value` as C++ compares, so any comparison with a NaN is false but
// `!=`, which is true (docs/kernels/search.md, "find_if"). The ranges take two values, lo and hi:
// range is `lo <= x && x < hi` (half-open, as C++ and CUB write a range), closed_range
// `lo <= x && x <= hi`; a NaN is in no range, and a range that holds nothing (hi <= lo, or a NaN
// bound) finds nothing.
enum class Compare { eq, ne, lt, le, gt, ge, range, closed_range };

struct CompareInfo {
  Compare op;
  const char* name;    // the `compare` option's value in configs and tuning keys: "lt"
  const char* symbol;  // the C++ operator, which Python's find_if(x, "<", v) also takes
  const char* device;  // the policy's enumerator in kernels_src/include/gpuk/search.cuh
  bool two_values = false;  // a range: lo (the `value`) and hi (`value_hi`)
};

inline constexpr CompareInfo kCompares[] = {
    {Compare::eq, "eq", "==", "gpuk::Compare::Eq"}, {Compare::ne, "ne", "!=", "gpuk::Compare::Ne"},
    {Compare::lt, "lt", "<", "gpuk::Compare::Lt"},  {Compare::le, "le", "<=", "gpuk::Compare::Le"},
    {Compare::gt, "gt", ">", "gpuk::Compare::Gt"},  {Compare::ge, "ge", ">=", "gpuk::Compare::Ge"},
    {Compare::range, "range", "[)", "gpuk::Compare::Range", true},
    {Compare::closed_range, "closed_range", "[]", "gpuk::Compare::ClosedRange", true},
};

inline constexpr const CompareInfo& info(Compare c) { return table_entry(kCompares, c); }

// `x OP value` (a range: lo = value, hi), as the kernels compare (the CPU reference, and the
// Thrust baseline's predicate on the device).
#if defined(__CUDACC__)
#define GPUK_SEARCH_HOST_DEVICE __host__ __device__
#else
#define GPUK_SEARCH_HOST_DEVICE
#endif
template <class T> GPUK_SEARCH_HOST_DEVICE constexpr bool compare(Compare c, T x, T value, T hi = T()) {
  switch (c) {
    case Compare::eq: return x == value;
    case Compare::ne: return x != value;
    case Compare::lt: return x < value;
    case Compare::le: return x <= value;
    case Compare::gt: return x > value;
    case Compare::ge: return x >= value;
    case Compare::range: return value <= x && x < hi;
    case Compare::closed_range: return value <= x && x <= hi;
  }
  return false;
}

// lower_bound / upper_bound order keys as the sort family does (gpuk::KeyBits in the kernels):
// -inf < ... < -0.0 < +0.0 < ... < +inf < NaN, every NaN equal. ordered_bits(x) is x's unsigned
// image whose integer order is that order; OrderedLess is `a goes before b`.
template <class T> using OrderedBits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
template <class T> GPUK_SEARCH_HOST_DEVICE OrderedBits<T> ordered_bits(T x) {
  using B = OrderedBits<T>;
  constexpr B sign = B{1} << (8 * sizeof(B) - 1);
  if constexpr (std::is_floating_point_v<T>) {
    if (!(x == x)) return static_cast<B>(~B{0});  // NaN
    B b;
    std::memcpy(&b, &x, sizeof b);
    return (b & sign) ? static_cast<B>(~b) : static_cast<B>(b | sign);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<B>(x) ^ sign;
  } else {
    return static_cast<B>(x);
  }
}
struct OrderedLess {
  template <class T> GPUK_SEARCH_HOST_DEVICE bool operator()(T a, T b) const { return ordered_bits(a) < ordered_bits(b); }
};

}  // namespace gpuk::search
