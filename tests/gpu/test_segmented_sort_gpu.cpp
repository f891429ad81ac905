// The sort family's segmented sort on the GPU, through the Engine on device buffers: every key
// dtype, both orders, keys and pairs (uint32 and uint64 values), on the edge shapes (empty
// segments, one-key segments, 32 and 33 keys (the warp and block bins' edge), a tile and a tile
// plus one, all-equal keys, NaN, +-0.0, negatives, one segment spanning everything, a power-law
// mix), each answer checked key by key and value by value against the CPU reference
// (host_segmented.hpp), the outputs poisoned before each call. Also the kernel's extreme
// parameters. And the C++ API's typed calls and prepared handles (gpuk/sort.hpp) on begin and end
// arrays: shuffled segments with gaps (keys in no segment stay unwritten), more segments than
// keys, one offsets array serving as both. Long segments by digit passes (LONG 1):
// test_segmented_long_gpu.cpp. Without a GPU it exits 77 (skipped).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "api/engine_internals.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/sort.hpp"
#include "helpers.hpp"
#include "segmented_sort_gpu.hpp"
#include "sort/host_segmented.hpp"
#include "sort/host_segments.hpp"

using namespace gpuk;
using namespace gpuk::test::segmented_sort_gpu;

namespace {

// --- The C++ API (gpuk/sort.hpp): typed calls and prepared handles on begin and end arrays ---

// The segments as CUB takes them: one begin and one end each.
struct Segments {
  std::string name;
  std::uint64_t n;
  std::vector<std::int64_t> begin, end;
};

Segments of_offsets(const std::string& name, const std::vector<std::int64_t>& off) {
  return {name, static_cast<std::uint64_t>(off.back()), {off.begin(), off.end() - 1}, {off.begin() + 1, off.end()}};
}

// n = 20011 (a prime) keys in shuffled segments around the bins' edges, with gaps (keys in no
// segment, which must stay unwritten), empty segments and one with end < begin.
Segments scattered(std::mt19937_64& rng) {
  Segments s{"scattered", 20011, {}, {}};
  std::int64_t at = 0;
  for (const std::int64_t length : {0, 1, 17, 32, 33, 500, 4097, 3, 0, 9000}) {
    at += static_cast<std::int64_t>(rng() % 5);
    s.begin.push_back(at);
    s.end.push_back(at + length);
    at += length;
  }
  s.begin.push_back(7);
  s.end.push_back(3);
  std::vector<std::size_t> order(s.begin.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  Segments shuffled{s.name, s.n, {}, {}};
  for (const std::size_t i : order) shuffled.begin.push_back(s.begin[i]), shuffled.end.push_back(s.end[i]);
  return shuffled;
}

// The outputs a call must leave: poison outside every segment, each segment's stable sort in it.
template <class K, class V>
void expected(const std::vector<K>& keys, const std::vector<V>& values, const Segments& s, bool pairs, bool descending,
              std::vector<K>& want, std::vector<V>& want_v) {
  want.assign(keys.size(), K{});
  want_v.assign(keys.size(), V{});
  std::memset(want.data(), kPoison, want.size() * sizeof(K));
  std::memset(want_v.data(), kPoison, want_v.size() * sizeof(V));
  sort::KeyOrder order;
  order.descending = descending;
  order.end_bit = static_cast<int>(8 * sizeof(K));
  for (std::size_t i = 0; i < s.begin.size(); ++i) {
    if (s.end[i] <= s.begin[i]) continue;
    const std::vector<std::int64_t> one = {s.begin[i], s.end[i]};
    sort::segmented_sort_on_host<K, V>(keys, pairs ? values.data() : nullptr, one, order, want.data(), want_v.data());
  }
}

// Calls `call(keys_in, keys_out, values_in, values_out, begin, end)` twice into poisoned outputs;
// the first difference from the CPU reference, or "".
template <class K, class V, class Call>
std::string api_check(const std::vector<K>& keys, const Segments& s, bool pairs, bool descending, const Stream& stream,
                      const Call& call) {
  const std::uint64_t n = keys.size();
  std::vector<V> values(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t bits = (i + 1) * 0x9E3779B97F4A7C15ull;
    std::memcpy(&values[i], &bits, sizeof(V));  // any bits: a float value may be a NaN, carried as it is
  }
  std::vector<K> want, got(n);
  std::vector<V> want_v, got_v(n);
  expected<K, V>(keys, values, s, pairs, descending, want, want_v);
  const DeviceBuffer d_keys = upload(keys, stream), d_values = upload(values, stream);
  const DeviceBuffer d_begin = upload(s.begin, stream), d_end = upload(s.end, stream);
  DeviceBuffer d_out(std::max<std::size_t>(16, n * sizeof(K))), d_vout(std::max<std::size_t>(16, n * sizeof(V)));
  for (int round = 0; round < 2; ++round) {
    d_out.fill_bytes(kPoison, stream);
    d_vout.fill_bytes(kPoison, stream);
    call(reinterpret_cast<const K*>(d_keys.get()), reinterpret_cast<K*>(d_out.get()),
         reinterpret_cast<const V*>(d_values.get()), reinterpret_cast<V*>(d_vout.get()),
         reinterpret_cast<const std::int64_t*>(d_begin.get()), reinterpret_cast<const std::int64_t*>(d_end.get()));
    if (n > 0) {
      d_out.download(got.data(), n * sizeof(K), stream);
      d_vout.download(got_v.data(), n * sizeof(V), stream);
    }
    stream.synchronize();
    for (std::uint64_t i = 0; i < n; ++i)
      if (std::memcmp(&got[i], &want[i], sizeof(K)) != 0 || (pairs && std::memcmp(&got_v[i], &want_v[i], sizeof(V)))) {
        std::ostringstream why;
        why << "round " << round << ": element " << i << " of " << n << " differs (key " << sort::format_value(got[i])
            << ", want " << sort::format_value(want[i]) << ")";
        return why.str();
      }
  }
  return "";
}

template <class K> void api_cases(const Stream& stream, std::mt19937_64& rng) {
  // Nine segments of five keys, as CUB allows: empty ones, one with end < begin.
  const Segments few{"more segments than keys", 5, {0, 2, 2, 5, 5, 5, 4, 5, 3}, {2, 2, 5, 5, 5, 5, 1, 5, 3}};
  const std::vector<Segments> shapes = {of_offsets("edge lengths", edge_offsets(4096)), scattered(rng), few};
  std::uint64_t max_n = 0;
  for (const Segments& s : shapes) max_n = std::max(max_n, s.n);
  // One handle of each kind for every shape: pairs with 8-byte values descending, keys ascending
  // on the caller's scratch.
  const sort::Options down(sort::Order::descending), up;
  auto pairs_handle = sort::prepare_segmented_pairs<K, std::uint64_t>(engine(), max_n, 32, down);
  auto keys_handle = sort::prepare_segmented_keys<K>(engine(), max_n, 32, up, Scratch::caller);
  const DeviceBuffer scratch(keys_handle.scratch_bytes() + 256);
  keys_handle.use_scratch((scratch.get() + 255) / 256 * 256, keys_handle.scratch_bytes(), stream.get());
  const CUstream cs = stream.get();
  for (const Segments& s : shapes) {
    const std::uint64_t n = s.n, count = s.begin.size();
    for (const bool all_equal : {false, true}) {
      if (all_equal && s.name != "scattered") continue;
      const auto keys = make_keys<K>(static_cast<std::size_t>(n), all_equal, rng);
      const std::string what = std::string(dtype_name(dtype_of<K>())) + " " + s.name + (all_equal ? " all equal" : "");
      INFO(what);
      // Each call as an application writes it: (keys in, keys out, values in, values out, begin, end).
      const auto typed_keys = [&](const sort::Options& o) {
        return [&, o](auto k, auto ko, auto, auto, auto b, auto e) {
          sort::segmented_keys(engine(), k, ko, n, count, b, e, cs, o);
        };
      };
      const auto typed_pairs = [&](const sort::Options& o) {
        return [&, o](auto k, auto ko, auto v, auto vo, auto b, auto e) {
          sort::segmented_pairs(engine(), k, ko, v, vo, n, count, b, e, cs, o);
        };
      };
      const auto prepared_pairs = [&](auto k, auto ko, auto v, auto vo, auto b, auto e) {
        pairs_handle(k, ko, v, vo, n, count, b, e, cs);
      };
      const auto prepared_keys = [&](auto k, auto ko, auto, auto, auto b, auto e) {
        keys_handle(k, ko, n, count, b, e, cs);
      };
      CHECK(api_check<K, std::uint32_t>(keys, s, false, false, stream, typed_keys(up)) == "");
      CHECK(api_check<K, std::uint32_t>(keys, s, false, true, stream, typed_keys(down)) == "");
      // Pairs: a float's bits carried as uint32 ascending; uint64 descending.
      CHECK(api_check<K, float>(keys, s, true, false, stream, typed_pairs(up)) == "");
      CHECK(api_check<K, std::uint64_t>(keys, s, true, true, stream, typed_pairs(down)) == "");
      CHECK(api_check<K, std::uint64_t>(keys, s, true, true, stream, prepared_pairs) == "");
      CHECK(api_check<K, std::uint32_t>(keys, s, false, false, stream, prepared_keys) == "");
    }
  }
  // n + 1 offsets serve as both arrays (d_off, d_off + 1), as in CUB.
  const auto off = sort::segment_offsets({300, true}, 100003);
  const auto keys = make_keys<K>(100003, false, rng);
  const Segments s = of_offsets("power law", off);
  const DeviceBuffer d_off = upload(off, stream);
  const auto* d = reinterpret_cast<const std::int64_t*>(d_off.get());
  INFO(dtype_name(dtype_of<K>()), " power law through one offsets array");
  CHECK(api_check<K, std::uint32_t>(keys, s, true, true, stream, [&](auto k, auto ko, auto v, auto vo, auto, auto) {
    sort::segmented_pairs(engine(), k, ko, v, vo, 100003, 300, d, d + 1, cs, down);
  }) == "");
}

}  // namespace

TEST_CASE("segmented sort from C++: typed calls and prepared handles against the CPU reference") {
  const Device device(0);
  const Stream stream;
  std::mt19937_64 rng(test::fresh_seed());
  api_cases<float>(stream, rng);
  api_cases<std::int32_t>(stream, rng);
  api_cases<double>(stream, rng);
  api_cases<std::uint64_t>(stream, rng);
}

TEST_CASE("segmented sort: every key dtype, both orders, keys and pairs, on the edge shapes") {
  const Device device(0);
  const Stream stream;
  cases_for<float>(stream, false);
  cases_for<std::int32_t>(stream, false);
  cases_for<double>(stream, true);
  cases_for<std::uint32_t>(stream, true);
  cases_for<std::int64_t>(stream, true);
  cases_for<std::uint64_t>(stream, true);
}

TEST_CASE("segmented sort: the kernel's extreme parameters, on float32 edge shapes") {
  const Device device(0);
  const Stream stream;
  std::mt19937_64 rng(5);
  for (const auto& params : std::vector<std::map<std::string, std::int64_t>>{
           {{"WARPS", 4}, {"BLOCK", 128}, {"ITEMS", 4}}, {{"WARPS", 16}, {"BLOCK", 512}, {"ITEMS", 16}}}) {
    const std::int64_t tile = params.at("BLOCK") * params.at("ITEMS");
    const auto off = edge_offsets(tile);
    const auto keys = make_keys<float>(static_cast<std::size_t>(off.back()), false, rng);
    INFO("tile ", tile);
    CHECK(run<float, std::uint32_t>(params, false, false, keys, off, stream) == "");
    CHECK(run<float, std::uint64_t>(params, true, true, keys, off, stream) == "");
  }
}
