// The sort family's host semantics, mirroring kernels_src/include/gpuk/sort.cuh: the order a key
// sorts by, and the stable sort by it that defines the CPU reference and sort_on_cpu (both
// computed by the radix sort of host_radix_sort.hpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "sort_launcher.hpp"

namespace gpuk::sort {

template <class K> using BitsOf = std::conditional_t<sizeof(K) == 4, std::uint32_t, std::uint64_t>;

// The order-preserving unsigned image of a key, as gpuk::Sort::bits computes it: IEEE total order
// for floats with every NaN equal and last, or CUB's (every NaN by its bits; after the descending
// flip, the image of -0.0 ascending / +0.0 descending made that of the other zero); signed
// integers with the sign bit flipped; descending flips every bit; then bits [begin_bit, end_bit)
// alone, shifted down.
template <class K> BitsOf<K> key_bits(K k, const KeyOrder& o) {
  using B = BitsOf<K>;
  constexpr int kBits = 8 * sizeof(B);
  constexpr B sign = B{1} << (kBits - 1);
  B b;
  if constexpr (std::is_floating_point_v<K>) {
    std::memcpy(&b, &k, sizeof b);
    if (!o.cub && std::isnan(k)) b = ~B{0};
    else b = (b & sign) ? static_cast<B>(~b) : static_cast<B>(b | sign);
  } else if constexpr (std::is_signed_v<K>) {
    b = static_cast<B>(k) ^ sign;
  } else {
    b = static_cast<B>(k);
  }
  if (o.descending) b = static_cast<B>(~b);
  if constexpr (std::is_floating_point_v<K>) {
    if (o.cub && b == static_cast<B>(sign - 1)) b = sign;
  }
  b = static_cast<B>(b >> o.begin_bit);
  if (o.sort_bits() < kBits) b &= static_cast<B>((B{1} << o.sort_bits()) - 1);
  return b;
}

template <class T> std::string format_value(T v) {
  std::ostringstream out;
  if constexpr (std::is_floating_point_v<T>) out << std::setprecision(std::numeric_limits<T>::max_digits10);
  out << +v;
  return out.str();
}

template <class T> bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }


// The stable permutation that sorts `keys` by std::stable_sort of (bits, index) pairs: perm[i] is
// the input index of output element i. The definition the radix sort (host_radix_sort.hpp), which
// computes the reference, must match (tests/plugins/test_sort_radix_plugin.cpp).
template <class K, class I> std::vector<I> stable_sort_order(std::span<const K> keys, const KeyOrder& order) {
  struct Item {
    BitsOf<K> bits;
    I index;
  };
  std::vector<Item> items(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) items[i] = {key_bits(keys[i], order), static_cast<I>(i)};
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.bits < b.bits; });
  std::vector<I> perm(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) perm[i] = items[i].index;
  return perm;
}

// Stable sort of `keys` in place by `order`; `values` (as many, any dtype) follow their keys.
void sort_on_host(HostArray& keys, HostArray* values, const KeyOrder& order);

// The values a run of key-value pairs carries (sort_pairs, segmented pairs): distinct (an odd
// multiplier is a bijection), not sorted, so that any unstable reordering of equal keys shows.
template <class V> V pair_value(std::uint64_t i) { return static_cast<V>(i * 0x9E3779B97F4A7C15ull); }

}  // namespace gpuk::sort
