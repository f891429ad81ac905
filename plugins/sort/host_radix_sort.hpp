// The stable sort by key_bits (host_order.hpp) that the sort family's CPU reference and
// sort_on_cpu run: a parallel LSD radix sort on every core. It gives, bit for bit, what
// stable_sort_order (std::stable_sort of (bits, index) pairs) gives.
#pragma once
#include <algorithm>
#include <array>
#include <barrier>
#include <cstdint>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "host_order.hpp"

namespace gpuk::sort {

// Below this many keys a radix sort runs on one thread: waking threads costs more than it saves.
inline constexpr std::size_t kRadixParallelMin = std::size_t{1} << 16;

// The hardware threads of this machine (at least 1): the radix sort's default.
inline unsigned host_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Stable sort of `keys` by key_bits(key, order), least significant 11-bit digit first (3 passes
// for 32-bit keys, 6 for 64-bit; 2^24 uint32 keys in 0.45 s against 0.53 s with 8-bit digits, on
// one core of an AMD EPYC VM), into keys_out; the keys are moved, never rewritten (a NaN keeps
// its sign and payload). With values_out, each key's value goes with it: values[i], or with
// values == nullptr the key's input index i (argsort; V an integer wide enough). A digit that
// every key shares costs no pass.
// `threads` std::threads (0: every hardware thread) each take a contiguous share of the keys in
// every pass, so equal digits keep their input order across shares too. keys_out and values_out
// hold keys.size() elements and overlap neither the input nor each other.
template <class K, class V = std::uint32_t>
void radix_sort(std::span<const K> keys, const std::type_identity_t<V>* values, K* keys_out,
                std::type_identity_t<V>* values_out, const KeyOrder& order, unsigned threads = 0) {
  constexpr int kRadix = 11;
  constexpr std::size_t kDigits = std::size_t{1} << kRadix;
  using Count = std::array<std::size_t, kDigits>;
  const std::size_t n = keys.size();
  if (n == 0) return;
  const int passes = (order.sort_bits() + kRadix - 1) / kRadix;
  const bool with_values = values_out != nullptr;
  if (threads == 0) threads = host_threads();
  const std::size_t shares = n < kRadixParallelMin ? 1 : std::min<std::size_t>(threads, n / (kRadixParallelMin / 4));
  const KeyOrder o = order;  // a local copy: the stores of keys cannot alias it
  const auto digit = [o](K k, int pass) {
    return static_cast<std::size_t>((key_bits(k, o) >> (pass * kRadix)) & (kDigits - 1));
  };
  // Buffers: the output and one spare, written in turn so that the last pass writes the output.
  // Not zeroed: the threads' scatter writes every element, and its first touch of a page puts
  // the page near the thread that writes it.
  std::unique_ptr<K[]> spare_keys = std::make_unique_for_overwrite<K[]>(passes > 1 ? n : 0);
  std::unique_ptr<V[]> spare_values = std::make_unique_for_overwrite<V[]>(passes > 1 && with_values ? n : 0);
  std::vector<std::vector<Count>> totals(shares, std::vector<Count>(static_cast<std::size_t>(passes)));
  std::vector<Count> counts(shares);
  std::vector<int> active;  // the passes whose digit is not the same for every key
  std::barrier sync(static_cast<std::ptrdiff_t>(shares));

  const auto run = [&](std::size_t s) {
    const std::size_t lo = n * s / shares, hi = n * (s + 1) / shares;
    // Every pass's digit counts over this share of the input, to find the passes to skip.
    for (auto& c : totals[s]) c.fill(0);
    for (std::size_t i = lo; i < hi; ++i) {
      const auto bits = key_bits(keys[i], o);
      for (int p = 0; p < passes; ++p) ++totals[s][static_cast<std::size_t>(p)][(bits >> (p * kRadix)) & (kDigits - 1)];
    }
    sync.arrive_and_wait();
    if (s == 0) {
      for (int p = 0; p < passes; ++p) {
        bool skip = false;
        for (std::size_t d = 0; d < kDigits && !skip; ++d) {
          std::size_t all = 0;
          for (std::size_t t = 0; t < shares; ++t) all += totals[t][static_cast<std::size_t>(p)][d];
          skip = all == n;
        }
        if (!skip) active.push_back(p);
      }
    }
    sync.arrive_and_wait();
    // The pass writing keys_out last; the one before it the spare, and so on back to the first.
    const std::size_t m = active.size();
    const K* from_keys = keys.data();
    const V* from_values = values;
    for (std::size_t a = 0; a < m; ++a) {
      const int pass = active[a];
      const bool to_out = (m - 1 - a) % 2 == 0;
      K* to_keys = to_out ? keys_out : spare_keys.get();
      V* to_values = to_out ? values_out : spare_values.get();
      if (a == 0) {
        counts[s] = totals[s][static_cast<std::size_t>(pass)];
      } else {
        Count mine{};  // on the stack: the compiler keeps it apart from the arrays
        for (std::size_t i = lo; i < hi; ++i) ++mine[digit(from_keys[i], pass)];
        counts[s] = mine;
      }
      sync.arrive_and_wait();
      // This share's first position for each digit: every key of a smaller digit, then this
      // digit's keys in the shares before this one.
      Count at;
      std::size_t base = 0;
      for (std::size_t d = 0; d < kDigits; ++d) {
        std::size_t before = 0;
        for (std::size_t t = 0; t < shares; ++t) {
          if (t == s) before = base;
          base += counts[t][d];
        }
        at[d] = before;
      }
      for (std::size_t i = lo; i < hi; ++i) {
        const std::size_t to = at[digit(from_keys[i], pass)]++;
        to_keys[to] = from_keys[i];
        if (with_values) to_values[to] = from_values ? from_values[i] : static_cast<V>(i);
      }
      sync.arrive_and_wait();  // every key of this pass written before the next reads them
      from_keys = to_keys;
      from_values = to_values;
    }
    if (m == 0) {  // every digit shared by every key: the input order is the sorted order
      std::copy(keys.begin() + static_cast<std::ptrdiff_t>(lo), keys.begin() + static_cast<std::ptrdiff_t>(hi),
                keys_out + lo);
      if (with_values)
        for (std::size_t i = lo; i < hi; ++i) values_out[i] = values ? values[i] : static_cast<V>(i);
    }
  };
  std::vector<std::jthread> helpers;
  for (std::size_t s = 1; s < shares; ++s) helpers.emplace_back(run, s);
  run(0);
}

}  // namespace gpuk::sort
