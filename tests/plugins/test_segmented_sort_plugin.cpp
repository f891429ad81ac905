// The sort family's segmented sort without a GPU: the CPU reference (which the GPU test verifies
// the kernels against) sorts each segment on its own, stably, in the family's order; the segments
// a config describes; the offsets' checks; the options' checks and the kernels' leading argument.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "builtins.hpp"
#include "config/config.hpp"
#include "family_semantics.hpp"
#include "gpuk/error.hpp"
#include "plugin/problem.hpp"
#include "sort/host_segmented.hpp"
#include "sort/host_segments.hpp"
#include "sort/sorter.hpp"

using namespace gpuk;

namespace {

using test::kernels;
using test::plugins;
using test::sorter;

sort::KeyOrder order_of(bool descending, DType keys) {
  sort::KeyOrder o;  // host_order.hpp's fields: the whole key, total float order
  o.descending = descending;
  o.end_bit = static_cast<int>(8 * dtype_size(keys));
  return o;
}

// Each segment against the family's whole-array stable sort (the radix sort of sort_on_cpu, an
// independent computation) with the indices as values: keys and values must match exactly.
template <class K>
void check_against_sort(const std::vector<K>& keys, const std::vector<std::int64_t>& off, bool descending) {
  std::vector<K> got(keys.size());
  std::vector<std::uint32_t> values(keys.size()), got_values(keys.size());
  std::iota(values.begin(), values.end(), 0u);
  sort::segmented_sort_on_host<K, std::uint32_t>(keys, values.data(), off, order_of(descending, dtype_of<K>()),
                                                 got.data(), got_values.data());
  for (std::size_t s = 0; s + 1 < off.size(); ++s) {
    const std::int64_t b = off[s], len = off[s + 1] - b;
    HostArray seg(dtype_of<K>(), len), index(DType::uint32, len);
    for (std::int64_t i = 0; i < len; ++i) seg.as<K>()[i] = keys[b + i], index.as<std::uint32_t>()[i] = b + i;
    sorter().sort_on_cpu(seg, &index, descending ? sort::Order::descending : sort::Order::ascending);
    for (std::int64_t i = 0; i < len; ++i) {
      REQUIRE(std::memcmp(&got[b + i], &seg.as<K>()[i], sizeof(K)) == 0);
      REQUIRE(got_values[b + i] == index.as<std::uint32_t>()[i]);
    }
  }
}

}  // namespace

TEST_CASE("segmented reference: each segment stably sorted alone, floats in the family's order") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Segments: empty, one key, NaN/zeros/infinities, all equal, empty at the end.
  const std::vector<float> keys = {3.0f, 0.0f, -0.0f, nan, -inf, inf, -1.0f, 0.0f, 2.0f, 2.0f, 2.0f, 2.0f};
  const std::vector<std::int64_t> off = {0, 0, 1, 8, 12, 12};
  std::vector<float> out(keys.size());
  std::vector<std::uint32_t> v(keys.size()), vout(keys.size());
  std::iota(v.begin(), v.end(), 0u);
  sort::segmented_sort_on_host<float, std::uint32_t>(keys, v.data(), off, order_of(false, DType::float32), out.data(),
                                                     vout.data());
  CHECK(out[0] == 3.0f);
  // -inf, -1, -0.0, +0.0, +0.0, inf, NaN (total order: -0.0 before +0.0, NaN last).
  CHECK(vout[1] == 4);
  CHECK(vout[2] == 6);
  CHECK(vout[3] == 2);
  CHECK(std::signbit(out[3]));
  CHECK(vout[4] == 1);
  CHECK(vout[5] == 7);
  CHECK(vout[6] == 5);
  CHECK(std::isnan(out[7]));
  CHECK(std::vector<std::uint32_t>(vout.begin() + 8, vout.end()) == std::vector<std::uint32_t>{8, 9, 10, 11});
  // Descending: NaN first, equal keys still in input order.
  sort::segmented_sort_on_host<float, std::uint32_t>(keys, v.data(), off, order_of(true, DType::float32), out.data(),
                                                     vout.data());
  // NaN, inf, +0.0, +0.0 (in input order), -0.0, -1, -inf.
  CHECK(std::isnan(out[1]));
  CHECK(vout[2] == 5);
  CHECK(vout[3] == 1);
  CHECK(vout[4] == 7);
  CHECK(vout[5] == 2);
  CHECK(vout[7] == 4);
  CHECK(std::vector<std::uint32_t>(vout.begin() + 8, vout.end()) == std::vector<std::uint32_t>{8, 9, 10, 11});
}

TEST_CASE("segmented reference matches the family's sort of each segment on random data") {
  std::mt19937_64 rng(3);
  const std::uint64_t n = 3001;
  for (const bool power_law : {false, true}) {
    const auto off = sort::segment_offsets({97, power_law}, n);
    std::vector<std::int32_t> i32(n);
    std::vector<double> f64(n);
    std::vector<std::uint64_t> u64(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      i32[i] = static_cast<std::int32_t>(rng() % 41) - 20;  // ties and negatives
      f64[i] = (rng() % 7 == 0) ? -0.0 : static_cast<double>(static_cast<std::int64_t>(rng() % 2001) - 1000) / 8;
      u64[i] = rng();
    }
    f64[5] = std::numeric_limits<double>::quiet_NaN();
    for (const bool desc : {false, true}) {
      check_against_sort(i32, off, desc);
      check_against_sort(f64, off, desc);
      check_against_sort(u64, off, desc);
    }
  }
  // One segment spanning everything.
  std::vector<float> f(1000);
  for (auto& x : f) x = static_cast<float>(static_cast<std::int64_t>(rng() % 100) - 50);
  check_against_sort(f, {0, 1000}, false);
}

TEST_CASE("segment offsets: equal and power-law segmentations of n, and the offsets' checks") {
  const auto eq = sort::segment_offsets({4, false}, 10);
  CHECK(eq == std::vector<std::int64_t>{0, 2, 5, 7, 10});
  const auto pl = sort::segment_offsets({4096, true}, std::uint64_t{1} << 20);
  REQUIRE(pl.size() == 4097);
  CHECK(pl.front() == 0);
  CHECK(pl.back() == (std::int64_t{1} << 20));
  std::int64_t empty = 0, longest = 0, tiny = 0;
  for (std::size_t i = 0; i + 1 < pl.size(); ++i) {
    REQUIRE(pl[i + 1] >= pl[i]);
    empty += pl[i + 1] == pl[i];
    tiny += pl[i + 1] - pl[i] <= 32;
    longest = std::max(longest, pl[i + 1] - pl[i]);
  }
  CHECK(empty > 0);        // empty segments among them
  CHECK(tiny > 1000);      // most are one warp's
  CHECK(longest > 4096);   // and some need the merges
  CHECK(sort::segment_offsets({4096, true}, std::uint64_t{1} << 20) == pl);  // a fixed seed
  std::vector<float> k(4), o(4);
  std::vector<std::uint32_t> v(4);
  CHECK_THROWS_WITH_AS((sort::segmented_sort_on_host<float, std::uint32_t>(k, nullptr, std::vector<std::int64_t>{0, 3, 2},
                                                                          order_of(false, DType::float32), o.data(), v.data())),
                       doctest::Contains("offsets[2] = 2 is less than offsets[1] = 3"), Error);
  CHECK_THROWS_WITH_AS((sort::segmented_sort_on_host<float, std::uint32_t>(k, nullptr, std::vector<std::int64_t>{0, 5},
                                                                          order_of(false, DType::float32), o.data(), v.data())),
                       doctest::Contains("outside [0, 4]"), Error);
  // More segments than keys, as CUB allows: the extra ones are empty (a prepared handle's first
  // size buckets hold fewer keys than its segment count).
  CHECK_NOTHROW(sort::check_segments({11, false}, 10));
  CHECK(sort::segment_offsets({11, false}, 10) == std::vector<std::int64_t>{0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK_THROWS_WITH_AS(sort::check_segments({std::uint64_t{1} << 31, false}, 10),
                       "segments must be fewer than 2^31, not 2147483648", ConfigError);
  CHECK_THROWS_WITH_AS(sort::check_segments({1, false}, (std::uint64_t{1} << 32) - 1),
                       "segmented_sort takes fewer than 2^32 - 1 keys, not 4294967295", ConfigError);
}

TEST_CASE("segmented_sort configs: segments and segment_lengths are checked, and segmented_sort's alone") {
  const std::string base = "family: sort\noperation: segmented_sort\nkernel: segmented\ndtype: float32\nsize: 4096\n";
  const RunSpec plain = parse_run_spec(base, "c.yaml", plugins(), kernels());
  CHECK(plain.options.count("segments") == 0);
  const RunSpec pl = parse_run_spec(base + "segments: 64\nsegment_lengths: power_law\norder: descending\n", "c.yaml",
                                    plugins(), kernels());
  CHECK(pl.options.at("segments") == "64");
  CHECK(plugins().get("sort").template_args(problem_of(pl)) ==
        std::vector<std::string>{"gpuk::Sort<float, gpuk::NoValue, true, gpuk::SortKind::Keys>"});
  const RunSpec pairs = parse_run_spec(
      "family: sort\noperation: segmented_sort_pairs\nkernel: segmented\nvalues: uint64\ndtype: int64\nsize: 100\n"
      "segments: 10\n",
      "c.yaml", plugins(), kernels());
  CHECK(plugins().get("sort").template_args(problem_of(pairs)) ==
        std::vector<std::string>{"gpuk::Sort<long long, unsigned long long, false, gpuk::SortKind::Pairs>"});
  CHECK(plugins().get("sort").choose_kernel(problem_of(pairs))->kernel == "segmented");
  // The untuned tile by the mean segment length (docs/kernels/sort.md, "segmented.cu").
  const auto tile_of = [&](const std::string& dtype, const std::string& size, const std::string& segments) {
    const RunSpec r = parse_run_spec("family: sort\noperation: segmented_sort\ndtype: " + dtype + "\nsize: " + size +
                                         "\nsegments: " + segments + "\n",
                                     "c.yaml", plugins(), kernels());
    const auto choice = plugins().get("sort").choose_kernel(problem_of(r));
    REQUIRE(choice);
    CHECK(choice->kernel == "segmented");
    const auto long_passes = choice->params.find("LONG");
    return choice->params.at("BLOCK") * choice->params.at("ITEMS") *
           (long_passes != choice->params.end() && long_passes->second == 1 ? -1 : 1);
  };
  // From 2^17 keys a segment on average: digit passes over 8192-key tiles (LONG 1; as -8192);
  // from 2^15, merges from 8192-key tiles for 4-byte keys.
  CHECK(tile_of("float32", "2^26", "64") == -8192);
  CHECK(tile_of("uint32", "2^20", "8") == -8192);
  CHECK(tile_of("float64", "2^26", "64") == -8192);
  CHECK(tile_of("uint32", "2^20", "16") == 8192);
  CHECK(tile_of("float64", "2^20", "16") == 4096);  // 8-byte keys keep the 4096-key tile there
  CHECK(tile_of("float32", "2^20", "64") == 4096);
  CHECK(tile_of("float32", "2^20", "256") == 4096);
  CHECK(tile_of("float32", "2^20", "512") == 4096);
  CHECK(tile_of("float32", "2^20", "513") == 1024);
  CHECK(tile_of("float32", "2^20", "65536") == 1024);
  // From 2048 keys a segment on average, one launch (WARP 0: the tickets' warps take the few
  // short segments); shorter means keep a launch of warps for them (WARP 1, the file's default).
  const auto warp_of = [&](const std::string& size, const std::string& segments) {
    const RunSpec r = parse_run_spec("family: sort\noperation: segmented_sort\ndtype: float32\nsize: " + size +
                                         "\nsegments: " + segments + "\n",
                                     "c.yaml", plugins(), kernels());
    const auto params = plugins().get("sort").choose_kernel(problem_of(r))->params;
    const auto warp = params.find("WARP");
    return warp == params.end() ? std::int64_t{1} : warp->second;
  };
  CHECK(warp_of("2^26", "64") == 0);
  CHECK(warp_of("2^20", "16") == 0);
  CHECK(warp_of("2^20", "512") == 0);
  CHECK(warp_of("2^20", "513") == 1);
  CHECK(warp_of("2^20", "65536") == 1);
  const auto error = [&](const std::string& yaml) {
    try {
      parse_run_spec(yaml, "c.yaml", plugins(), kernels());
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error(base + "segments: 5000\n").empty());  // 904 of them empty
  CHECK(error(base + "segments: 2147483648\n").find("segments must be fewer than 2^31") != std::string::npos);
  CHECK(error(base + "segments: 0\n").find("segments must be at least 1") != std::string::npos);
  CHECK(error(base + "segment_lengths: zipf\n").find("segment_lengths") != std::string::npos);
  CHECK(error(base + "begin_bit: 4\n").find("sorts by the whole key") != std::string::npos);
  CHECK(error("family: sort\noperation: sort\ndtype: float32\nsize: 10\nsegments: 2\n")
            .find("options of segmented_sort, not of sort") != std::string::npos);
  // No kernel named: the family's default (radix) does not implement segmented_sort, so the first
  // file that does is taken (core/src/kernel/default_kernel.hpp).
  CHECK(error("family: sort\noperation: segmented_sort\ndtype: float32\nsize: 10\n").empty());
  CHECK(parse_run_spec("family: sort\noperation: segmented_sort\ndtype: float32\nsize: 10\n", "c.yaml", plugins(),
                       kernels()).kernel == "segmented");
}
