// The segmented sort's CPU reference (docs/kernels/sort.md, "Segmented sort"): each segment
// [offsets[s], offsets[s + 1]) stably sorted on its own by std::stable_sort of (bits, index)
// (host_order.hpp's stable_sort_order), values following their keys; keys outside every segment
// are left as they are in the outputs.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "gpuk/error.hpp"
#include "host_order.hpp"

namespace gpuk::sort {

// Throws gpuk::Error on offsets that are not a segmentation of [0, n): first 0... never
// decreasing, last at most n.
inline void check_offsets(std::span<const std::int64_t> offsets, std::uint64_t n) {
  if (offsets.empty()) throw Error("segmented sort: offsets need at least one entry (segments + 1)");
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    if (offsets[i] < 0 || static_cast<std::uint64_t>(offsets[i]) > n)
      throw Error("segmented sort: offsets[" + std::to_string(i) + "] = " + std::to_string(offsets[i]) +
                  " is outside [0, " + std::to_string(n) + "]");
    if (i > 0 && offsets[i] < offsets[i - 1])
      throw Error("segmented sort: offsets[" + std::to_string(i) + "] = " + std::to_string(offsets[i]) +
                  " is less than offsets[" + std::to_string(i - 1) + "] = " + std::to_string(offsets[i - 1]));
  }
}

// keys_out (and values_out, when values is not null) get each segment's stable sort; V any type.
template <class K, class V>
void segmented_sort_on_host(std::span<const K> keys, const V* values, std::span<const std::int64_t> offsets,
                            const KeyOrder& order, K* keys_out, V* values_out) {
  check_offsets(offsets, keys.size());
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::int64_t b = offsets[s], e = offsets[s + 1];
    const auto perm = stable_sort_order<K, std::uint32_t>(keys.subspan(b, e - b), order);
    for (std::int64_t i = 0; i < e - b; ++i) {
      keys_out[b + i] = keys[b + perm[i]];
      if (values) values_out[b + i] = values[b + perm[i]];
    }
  }
}

}  // namespace gpuk::sort
