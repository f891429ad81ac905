// What the segmented sort's GPU test programs share: the Engine, poisoned runs of one variant
// checked against the CPU reference (host_segmented.hpp), keys with NaN, +-0.0, negatives and
// ties, the lengths around every bin's edge, and the sweep of one key dtype over those shapes.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/engine_internals.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "helpers.hpp"
#include "sort/host_segmented.hpp"
#include "sort/host_segments.hpp"

namespace gpuk::test::segmented_sort_gpu {

inline Engine& engine() {
  static Engine e;
  return e;
}

constexpr unsigned char kPoison = 0xA5;

template <class T> DeviceBuffer upload(const std::vector<T>& v, const Stream& s) {
  DeviceBuffer d(std::max<std::size_t>(16, v.size() * sizeof(T)));
  if (!v.empty()) d.upload(v.data(), v.size() * sizeof(T), s);
  return d;
}

// Ties, negatives, NaN of both signs, +-0.0, infinities; or all equal.
template <class K> std::vector<K> make_keys(std::size_t n, bool all_equal, std::mt19937_64& rng) {
  std::vector<K> v(n);
  for (auto& x : v) {
    const std::uint64_t r = rng();
    if (all_equal) {
      x = K(3);
    } else if constexpr (std::is_floating_point_v<K>) {
      switch (r % 12) {
        case 0: x = std::numeric_limits<K>::quiet_NaN(); break;
        case 1: x = -std::numeric_limits<K>::quiet_NaN(); break;
        case 2: x = K(0); break;
        case 3: x = -K(0); break;
        case 4: x = std::numeric_limits<K>::infinity() * ((r >> 8) % 2 ? 1 : -1); break;
        default: x = static_cast<K>(static_cast<std::int64_t>((r >> 8) % 2001) - 1000) / K(8);
      }
    } else {
      x = static_cast<K>(static_cast<std::int64_t>((r >> 8) % 2001) - 1000);
      if (r % 64 == 0) x = std::numeric_limits<K>::max();
      if (r % 64 == 1) x = std::numeric_limits<K>::min();
    }
  }
  return v;
}

// Runs one variant into poisoned outputs; the first mismatch, or "".
template <class K, class V>
std::string run(const std::map<std::string, std::int64_t>& params, bool pairs, bool descending,
                const std::vector<K>& keys, const std::vector<std::int64_t>& off, const Stream& stream) {
  const std::uint64_t n = keys.size(), segments = off.size() - 1;
  OperationSpec spec;
  spec.family = "sort";
  spec.operation = pairs ? "segmented_sort_pairs" : "segmented_sort";
  spec.dtype = dtype_of<K>();
  spec.n = n;
  spec.options = {{"segments", std::to_string(segments)}, {"order", descending ? "descending" : "ascending"}};
  if (pairs) spec.options["values"] = std::string(dtype_name(dtype_of<V>()));
  spec.kernel = "segmented";
  spec.params = params;
  Operation op = engine().prepare(spec);
  std::vector<V> values(n);
  for (std::uint64_t i = 0; i < n; ++i) values[i] = static_cast<V>(i * 0x9E3779B97F4A7C15ull);
  std::vector<K> want(n), got(n);
  std::vector<V> want_v(n), got_v(n);
  sort::KeyOrder order;  // the whole key, total float order
  order.descending = descending;
  order.end_bit = static_cast<int>(8 * sizeof(K));
  sort::segmented_sort_on_host<K, V>(keys, pairs ? values.data() : nullptr, off, order, want.data(), want_v.data());
  const DeviceBuffer d_keys = upload(keys, stream), d_values = upload(values, stream), d_off = upload(off, stream);
  DeviceBuffer d_out(std::max<std::size_t>(16, n * sizeof(K))), d_vout(std::max<std::size_t>(16, n * sizeof(V)));
  const Scalar count = Scalar::of(static_cast<std::int64_t>(segments));
  for (int round = 0; round < 2; ++round) {
    d_out.fill_bytes(kPoison, stream);
    d_vout.fill_bytes(kPoison, stream);
    if (pairs)
      op.launch({d_keys.get(), d_out.get(), d_values.get(), d_vout.get(), d_off.get(), d_off.get() + 8}, n, stream.get(),
                &count);
    else
      op.launch({d_keys.get(), d_out.get(), d_off.get(), d_off.get() + 8}, n, stream.get(), &count);
    d_out.download(got.data(), n * sizeof(K), stream);
    if (pairs) d_vout.download(got_v.data(), n * sizeof(V), stream);
    stream.synchronize();
    for (std::uint64_t i = 0; i < n; ++i)
      if (std::memcmp(&got[i], &want[i], sizeof(K)) != 0 || (pairs && got_v[i] != want_v[i])) {
        std::ostringstream why;
        why << "round " << round << ": element " << i << " of " << n << " differs (key "
            << sort::format_value(got[i]) << ", want " << sort::format_value(want[i]) << ")";
        return why.str();
      }
  }
  return "";
}

// Lengths around every bin's edge (BLOCK * ITEMS at the defaults: 1024), empty ones among them.
inline std::vector<std::int64_t> edge_offsets(std::int64_t tile) {
  const std::vector<std::int64_t> lengths = {0, 1, 2, 0, 31, 32, 33, 64, 100, 1000, tile - 1, tile, tile + 1,
                                             3 * tile + 5, 4 * tile, 0, 1, 9 * tile + 7, 0};
  std::vector<std::int64_t> off = {0};
  for (std::int64_t l : lengths) off.push_back(off.back() + l);
  return off;
}

template <class K> void cases_for(const Stream& stream, bool quick, const std::map<std::string, std::int64_t>& params = {}) {
  std::mt19937_64 rng(17 + sizeof(K));
  const std::map<std::string, std::int64_t>& defaults = params;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes;
  shapes.push_back({"edge lengths", edge_offsets(1024)});
  shapes.push_back({"power law", sort::segment_offsets({1000, true}, 200001)});
  shapes.push_back({"one segment", {0, 70001}});
  for (const auto& shape : shapes) {
    const std::string& name = shape.first;  // not a structured binding: INFO's lambda cannot take one in clang 14
    const std::vector<std::int64_t>& off = shape.second;
    for (const bool all_equal : {false, true}) {
      if (all_equal && name != "edge lengths") continue;
      const auto keys = make_keys<K>(static_cast<std::size_t>(off.back()), all_equal, rng);
      for (const bool desc : {false, true}) {
        INFO(dtype_name(dtype_of<K>()), " ", name, all_equal ? " all equal" : "", desc ? " descending" : " ascending");
        CHECK(run<K, std::uint32_t>(defaults, false, desc, keys, off, stream) == "");
        if (quick && desc) continue;
        CHECK(run<K, std::uint32_t>(defaults, true, desc, keys, off, stream) == "");
        CHECK(run<K, std::uint64_t>(defaults, true, !desc, keys, off, stream) == "");
      }
    }
  }
}

}  // namespace gpuk::test::segmented_sort_gpu
