// The sort family's CPU reference, a parallel LSD radix sort (plugins/sort/host_radix_sort.hpp),
// against the std::stable_sort of (bits, index) pairs it replaced (host_order.hpp): bit for bit
// the same keys and values, for every key dtype, order, float order, bit window, payload and
// thread count, on random keys, ties, NaNs of both signs and any payload, zeros of both signs,
// infinities and negatives.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "builtins.hpp"
#include "family_semantics.hpp"
#include "gpuk/sort.hpp"
#include "sort/host_radix_sort.hpp"
#include "sort/sorter.hpp"

using namespace gpuk;
using sort::KeyOrder;

namespace {

enum class Pattern { random, ties, specials };

template <class K> K from_bits(sort::BitsOf<K> b) {
  K k;
  std::memcpy(&k, &b, sizeof k);
  return k;
}

// Keys of `pattern`: any bits; a few distinct keys (long runs of equal ones); or for floats NaNs
// of both signs with assorted payloads, +-0.0, +-inf, denormals and ordinary values mixed (for
// integers the extremes, 0, -1 and ties).
template <class K> std::vector<K> keys_of(Pattern pattern, std::size_t n, std::uint64_t seed) {
  using B = sort::BitsOf<K>;
  std::mt19937_64 rng(seed);
  std::vector<K> out(n);
  std::vector<K> pool;
  if (pattern == Pattern::ties) {
    for (int i = 0; i < 5; ++i) pool.push_back(from_bits<K>(static_cast<B>(rng())));
  } else if (pattern == Pattern::specials) {
    if constexpr (std::is_floating_point_v<K>) {
      constexpr B sign = B{1} << (8 * sizeof(B) - 1);
      const K nan = std::numeric_limits<K>::quiet_NaN(), inf = std::numeric_limits<K>::infinity();
      B nan_bits;
      std::memcpy(&nan_bits, &nan, sizeof nan_bits);
      pool = {nan, -nan, from_bits<K>(static_cast<B>(nan_bits | 1)), from_bits<K>(static_cast<B>(nan_bits | 5 | sign)),
              // a signalling NaN: the quiet bit cleared, a payload kept
              from_bits<K>(static_cast<B>((nan_bits & ~(B{1} << (std::numeric_limits<K>::digits - 2))) | 3)),
              K(0), -K(0), inf, -inf, K(1), K(-1), K(-2.5), K(2.5), std::numeric_limits<K>::denorm_min(),
              -std::numeric_limits<K>::denorm_min(), std::numeric_limits<K>::max(), std::numeric_limits<K>::lowest()};
    } else {
      pool = {std::numeric_limits<K>::min(), std::numeric_limits<K>::max(), K(0), K(1), static_cast<K>(-1), K(7)};
    }
  }
  for (auto& k : out) {
    if (pattern == Pattern::random || (pattern == Pattern::specials && rng() % 4 == 0))
      k = from_bits<K>(static_cast<B>(rng()));
    else
      k = pool[rng() % pool.size()];
  }
  return out;
}

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

enum class Payload { none, values, indices };

// The radix sort and the std::stable_sort path on the same keys: the same keys bit for bit, the
// same values (given ones, or the input indices).
template <class K, class V>
void check_same(const std::vector<K>& keys, const KeyOrder& order, Payload payload, unsigned threads) {
  const std::size_t n = keys.size();
  std::vector<V> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<V>(i * 0x9E3779B97F4A7C15ull);
  const auto perm = sort::stable_sort_order<K, std::uint64_t>(std::span<const K>(keys), order);
  std::vector<K> want_keys(n);
  std::vector<V> want_values(n);
  for (std::size_t i = 0; i < n; ++i) {
    want_keys[i] = keys[perm[i]];
    want_values[i] = payload == Payload::indices ? static_cast<V>(perm[i]) : values[perm[i]];
  }
  std::vector<K> got_keys(n);
  std::vector<V> got_values(n);
  sort::radix_sort<K, V>(std::span<const K>(keys), payload == Payload::values ? values.data() : nullptr,
                         got_keys.data(), payload == Payload::none ? nullptr : got_values.data(), order, threads);
  CHECK(same_bits(got_keys, want_keys));
  if (payload != Payload::none) CHECK(got_values == want_values);
}

template <class K> std::vector<KeyOrder> orders_of() {
  const int width = 8 * static_cast<int>(sizeof(K));
  std::vector<KeyOrder> out;
  const std::vector<std::pair<int, int>> windows = {{0, width}, {3, width - 5}, {0, 1}, {width - 1, width}, {8, 16},
                                                    {width / 2, width}};
  for (const bool descending : {false, true})
    for (const bool cub : std::is_floating_point_v<K> ? std::vector<bool>{false, true} : std::vector<bool>{false})
      for (const auto& [begin, end] : windows) {
        KeyOrder o;
        o.descending = descending;
        o.cub = cub;
        o.begin_bit = begin;
        o.end_bit = end;
        out.push_back(o);
      }
  return out;
}

template <class K, class V> void check_dtype() {
  const std::vector<std::size_t> small = {0, 1, 2, 31, 4097};
  std::uint64_t seed = 1;
  for (const Pattern pattern : {Pattern::random, Pattern::ties, Pattern::specials}) {
    CAPTURE(static_cast<int>(pattern));
    for (const KeyOrder& o : orders_of<K>()) {
      CAPTURE(o.descending);
      CAPTURE(o.cub);
      CAPTURE(o.begin_bit);
      CAPTURE(o.end_bit);
      for (const std::size_t n : small) {
        CAPTURE(n);
        const auto keys = keys_of<K>(pattern, n, seed++);
        for (const Payload payload : {Payload::none, Payload::values, Payload::indices})
          check_same<K, V>(keys, o, payload, payload == Payload::none ? 1 : 3);
      }
    }
  }
  // 2^20 + 7 keys: several threads, each a share of every pass (ties and NaNs cross the shares'
  // borders); the whole key and a window, both orders.
  const std::size_t big = (std::size_t{1} << 20) + 7;
  for (const Pattern pattern : {Pattern::random, Pattern::specials}) {
    const auto keys = keys_of<K>(pattern, big, seed++);
    for (const KeyOrder& o : orders_of<K>()) {
      if (!(o.begin_bit == 0 && o.end_bit == static_cast<int>(8 * sizeof(K))) && !(o.begin_bit == 3)) continue;
      CAPTURE(static_cast<int>(pattern));
      CAPTURE(o.descending);
      CAPTURE(o.cub);
      CAPTURE(o.begin_bit);
      check_same<K, V>(keys, o, o.descending ? Payload::indices : Payload::values, o.cub ? 16 : 5);
    }
  }
  check_same<K, V>(keys_of<K>(Pattern::ties, big, seed++), orders_of<K>().front(), Payload::none, 7);
}

using test::sorter;

}  // namespace

TEST_CASE("the radix sort gives std::stable_sort's keys and values, bit for bit: 32-bit keys") {
  check_dtype<std::uint32_t, std::uint32_t>();
  check_dtype<std::int32_t, std::uint32_t>();
  check_dtype<float, std::uint32_t>();
}

TEST_CASE("the radix sort gives std::stable_sort's keys and values, bit for bit: 64-bit keys") {
  check_dtype<std::uint64_t, std::uint64_t>();
  check_dtype<std::int64_t, std::uint32_t>();
  check_dtype<double, std::uint64_t>();
}

TEST_CASE("the radix sort moves keys without rewriting them: NaN payloads and signs survive") {
  const std::vector<float> keys = keys_of<float>(Pattern::specials, 3000, 99);
  KeyOrder o;
  o.end_bit = 32;
  std::vector<float> out(keys.size());
  sort::radix_sort<float>(std::span<const float>(keys), nullptr, out.data(), nullptr, o, 2);
  // The multiset of bit patterns is unchanged.
  auto bits_of = [](const std::vector<float>& v) {
    std::vector<std::uint32_t> b(v.size());
    std::memcpy(b.data(), v.data(), v.size() * 4);
    std::sort(b.begin(), b.end());
    return b;
  };
  CHECK(bits_of(out) == bits_of(keys));
  // Every NaN last, in input order (total order, ascending).
  std::vector<std::uint32_t> nans_in, nans_out;
  for (const float k : keys)
    if (std::isnan(k)) nans_in.push_back(std::bit_cast<std::uint32_t>(k));
  for (std::size_t i = out.size() - nans_in.size(); i < out.size(); ++i) {
    REQUIRE(std::isnan(out[i]));
    nans_out.push_back(std::bit_cast<std::uint32_t>(out[i]));
  }
  CHECK(nans_out == nans_in);
}

TEST_CASE("sort_on_cpu (the radix sort) agrees with the std::stable_sort path through the plugin") {
  const auto keys = keys_of<double>(Pattern::specials, 70'001, 5);
  for (const auto order : {sort::Order::ascending, sort::Order::descending})
    for (const auto floats : {sort::FloatOrder::total, sort::FloatOrder::cub}) {
      const sort::Options options(order, 2, 60, floats);
      HostArray k(DType::float64, keys.size());
      std::memcpy(k.data(), keys.data(), k.bytes());
      HostArray v(DType::float32, keys.size());
      for (std::size_t i = 0; i < keys.size(); ++i) v.as<float>()[i] = static_cast<float>(i);
      sorter().sort_on_cpu(k, &v, options);
      KeyOrder o;
      o.descending = order == sort::Order::descending;
      o.cub = floats == sort::FloatOrder::cub;
      o.begin_bit = 2;
      o.end_bit = 60;
      const auto perm = sort::stable_sort_order<double, std::uint64_t>(std::span<const double>(keys), o);
      bool same = true;
      for (std::size_t i = 0; i < keys.size() && same; ++i)
        same = std::bit_cast<std::uint64_t>(k.as<double>()[i]) == std::bit_cast<std::uint64_t>(keys[perm[i]]) &&
               v.as<float>()[i] == static_cast<float>(perm[i]);
      CHECK(same);
    }
}
