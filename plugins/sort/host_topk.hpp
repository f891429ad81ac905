// Top-k on the host: the CPU reference of a topk run and Sorter::topk_on_cpu. The rule of
// docs/kernels/sort.md, "Top-k": per row, the keys whose key_bits (host_order.hpp) are the k
// smallest, ties by the lower index; sorted by (bits, index), or in input order. Computed by
// std::nth_element on the row's bits (the k-th key's bits T), then one scan taking the keys below
// T and the first keys equal to T, in index order. tests/plugins/test_topk_plugin.cpp checks it
// against the first k of stable_sort_order, the definition.
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include "host_order.hpp"

namespace gpuk::sort {

// keys: rows * row_len keys; values and indices: rows * k each (indices in the row).
template <class K>
void topk_on_host(std::span<const K> keys, std::uint64_t rows, std::uint64_t k, const KeyOrder& order, bool sorted,
                  K* values, std::int64_t* indices, unsigned threads) {
  using B = BitsOf<K>;
  const std::uint64_t row_len = rows ? keys.size() / rows : 0;
  const auto one_row = [&](std::uint64_t r, std::vector<B>& bits) {
    const K* row = keys.data() + r * row_len;
    bits.resize(row_len);
    for (std::uint64_t i = 0; i < row_len; ++i) bits[i] = key_bits(row[i], order);
    std::vector<B> copy(bits);
    std::nth_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(k - 1), copy.end());
    const B kth = copy[k - 1];
    std::uint64_t below = 0;
    for (const B b : bits) below += b < kth;
    std::uint64_t ties = k - below, at = 0;
    std::int64_t* out = indices + r * k;
    for (std::uint64_t i = 0; i < row_len && at < k; ++i)
      if (bits[i] < kth || (bits[i] == kth && ties > 0)) {
        if (bits[i] == kth) --ties;
        out[at++] = static_cast<std::int64_t>(i);
      }
    if (sorted)
      std::sort(out, out + k, [&](std::int64_t a, std::int64_t b) {
        return bits[a] != bits[b] ? bits[a] < bits[b] : a < b;
      });
    for (std::uint64_t j = 0; j < k; ++j) values[r * k + j] = row[out[j]];
  };
  const unsigned use = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, rows)));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < use; ++t)
    pool.emplace_back([&, t] {
      std::vector<B> bits;
      for (std::uint64_t r = t; r < rows; r += use) one_row(r, bits);
    });
  for (auto& th : pool) th.join();
}

}  // namespace gpuk::sort
