// lower_bound and upper_bound on the host: the order (the sort family's, as the kernels'
// gpuk::KeyBits computes it: -inf < ... < -0.0 < +0.0 < ... < +inf < NaN, every NaN equal), the
// CPU reference (std::lower_bound / std::upper_bound in that order), and the data of a run (the
// haystack sorted in that order, needles drawn from its seed). Header-only, for the search plugin
// and its tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "search_value.hpp"

namespace gpuk::search {

// ordered_bits and OrderedLess (the order) are in gpuk/search_ops.hpp, with the operations.

template <class T> bool is_ordered(std::span<const T> hay) {
  return std::is_sorted(hay.begin(), hay.end(), OrderedLess{});
}

// out[i] = std::lower_bound (or upper_bound) of needles[i] in hay, as an index in [0, n], on up to
// `threads` threads.
template <class T>
void bounds_range(std::span<const T> hay, std::span<const T> needles, bool upper, std::int64_t* out, int threads) {
  const auto m = static_cast<std::int64_t>(needles.size());
#if defined(_OPENMP)
#pragma omp parallel for num_threads(std::max(1, threads)) schedule(static) if (m > 4096)
#endif
  for (std::int64_t i = 0; i < m; ++i) {
    const T q = needles[static_cast<std::size_t>(i)];
    const auto it = upper ? std::upper_bound(hay.begin(), hay.end(), q, OrderedLess{})
                          : std::lower_bound(hay.begin(), hay.end(), q, OrderedLess{});
    out[i] = it - hay.begin();
  }
  (void)threads;
}

// A run's needles: `count` of them, from `seed`: a third are haystack keys (hitting runs of equal
// keys), a third lie between keys (a key moved one step up: ties of upper_bound and lower_bound
// differ there), a third anywhere in the dtype's range around the keys (below the least and above
// the greatest included); sorted in the bounds' order when `sorted`.
template <class T> std::vector<T> make_needles(std::span<const T> hay, std::uint64_t count, std::uint64_t seed, bool sorted) {
  std::vector<T> out(count);
  const std::uint64_t n = hay.size();
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t r = mix64(seed ^ mix64(i + 0x6e65'6564'6c65ULL));  // "needle"
    const T key = hay[static_cast<std::size_t>(r % n)];
    T q = key;
    switch ((r >> 40) % 3) {
      case 0: break;
      case 1:
        if constexpr (std::is_floating_point_v<T>) q = std::isnan(key) ? key : std::nextafter(key, std::numeric_limits<T>::infinity());
        else q = key == std::numeric_limits<T>::max() ? key : static_cast<T>(key + 1);
        break;
      default: {
        const std::uint64_t w = mix64(r);
        if constexpr (std::is_floating_point_v<T>) {
          const T lo = hay.front(), hi = std::isnan(hay.back()) ? T(1) : hay.back();
          const T span = std::isfinite(hi - lo) ? (hi - lo) * T(1.5) + T(1) : T(1);
          q = (std::isfinite(lo) ? lo : T(0)) - span / 4 + span * static_cast<T>(static_cast<double>(w >> 11) * 0x1p-53);
        } else {
          q = static_cast<T>(w);  // the whole range of the type
        }
      }
    }
    out[i] = q;
  }
  if (sorted) std::sort(out.begin(), out.end(), OrderedLess{});
  return out;
}

}  // namespace gpuk::search
