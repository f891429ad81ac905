// find_if over a range on the GPU through the library API: find_if_range (into device memory and
// to the host) and prepare_find_if_range on the test's own buffers and stream, half-open
// [lo, hi) and closed [lo, hi], every dtype, against an answer known by construction and the
// CPU's std::find_if: n = 1, 2, odd n, one element past a whole wave of tiles; the first element
// in the range at the start, the middle, the end, or none; NaN data, -0.0 and +0.0, negatives,
// infinities, ranges that hold nothing (hi <= lo, a NaN bound). Then configs/find_if_range.yaml
// through `gpuk run`'s path, thrust::find_if agreeing in the same run. Without a GPU this program
// prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <utility>

#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/search.hpp"
#include "helpers.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"

using namespace gpuk;
using search::Compare;
using search::Range;

namespace {

Engine& engine() {
  static Engine e;
  return e;
}

// Small values, so that the ranges' edges are hit often; floats also NaN, -0.0, +0.0, infinities.
template <class T> T candidate(std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (rng() % 16) {
      case 0: return std::numeric_limits<T>::quiet_NaN();
      case 1: return -T(0);
      case 2: return T(0);
      case 3: return (rng() % 2 ? 1 : -1) * std::numeric_limits<T>::infinity();
      default: return static_cast<T>(static_cast<int>(rng() % 33) - 16) / T(4);
    }
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int>(rng() % 33) - 16);
  } else {
    return static_cast<T>(rng() % 33);
  }
}

// The ranges asked for (lo, hi): edges at zeros of both signs, negatives, the candidates' ends
// and beyond, and ranges that hold nothing.
template <class T> std::vector<std::pair<T, T>> ranges() {
  if constexpr (std::is_floating_point_v<T>) {
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    return {{T(0), T(1.25)}, {-T(3), -T(0)}, {-inf, inf}, {T(1), inf}, {-T(0.5), T(0)}, {T(1), T(1)},
            {T(2), -T(2)}, {nan, T(1)}, {-T(1), nan}};
  } else if constexpr (std::is_signed_v<T>) {
    return {{T(-16), T(0)}, {T(7), T(8)}, {T(0), std::numeric_limits<T>::max()}, {T(3), T(3)}, {T(5), T(-5)}};
  } else {
    return {{T(0), T(1)}, {T(16), T(33)}, {T(20), std::numeric_limits<T>::max()}, {T(5), T(5)}, {T(9), T(2)}};
  }
}

// A value in the range (want) or not; nullopt when none of the candidates is.
template <class T> std::optional<T> draw(std::mt19937_64& rng, Compare c, T lo, T hi, bool want) {
  for (int i = 0; i < 400; ++i) {
    const T x = candidate<T>(rng);
    if (search::compare(c, x, lo, hi) == want) return x;
  }
  return std::nullopt;
}

template <class T> std::string show(T v) {
  std::ostringstream out;
  out << +v;
  return out.str();
}

struct Tally {
  int calls = 0;
  std::vector<std::string> failures;
};

// Every range at size n, both closures: the data is outside the range everywhere but at the
// first element in it (and at random places after it). Cycles through the asynchronous call,
// the waiting call and the prepared handle.
template <class T> void check_size(std::uint64_t n, std::mt19937_64& rng, const Stream& stream, Tally& tally) {
  DeviceBuffer d_in(n * sizeof(T)), d_out(sizeof(std::int64_t));
  const T* in = reinterpret_cast<const T*>(d_in.get());
  for (const Range range : {Range::half_open, Range::closed}) {
    const Compare c = range == Range::closed ? Compare::closed_range : Compare::range;
    auto prepared = search::prepare_find_if_range<T>(engine(), n, range);
    for (const auto& bounds : ranges<T>()) {
      const T lo = bounds.first, hi = bounds.second;
      std::vector<std::uint64_t> positions = {0, n / 2, n - 1};
      positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
      std::vector<std::optional<std::uint64_t>> cases = {std::nullopt};
      for (auto p : positions) cases.push_back(p);
      for (const auto& at : cases) {
        std::vector<T> host(n);
        bool possible = true;
        for (std::uint64_t i = 0; i < n && possible; ++i) {
          const bool in_range = at && (i == *at || (i > *at && rng() % 8 == 0));
          const auto x = draw<T>(rng, c, lo, hi, in_range);
          if (!x) possible = false;
          else host[i] = *x;
        }
        if (!possible) continue;  // an empty range: nothing can be in it
        const std::int64_t expected = at ? static_cast<std::int64_t>(*at) : -1;
        const auto it = std::find_if(host.begin(), host.end(), [&](T x) { return search::compare(c, x, lo, hi); });
        REQUIRE((it == host.end() ? -1 : it - host.begin()) == expected);  // the construction is right
        d_in.upload(host.data(), n * sizeof(T), stream);
        d_out.fill_bytes(0xA5, stream);
        std::int64_t got = 0;
        const int way = tally.calls++ % 3;
        if (way == 0) {
          search::find_if_range(engine(), in, reinterpret_cast<std::int64_t*>(d_out.get()), n, lo, hi, stream.get(),
                                range);
          d_out.download(&got, sizeof got, stream);
          stream.synchronize();
        } else if (way == 1) {
          got = search::find_if_range(engine(), in, n, lo, hi, stream.get(), range);
        } else {
          got = prepared(in, n, lo, hi, stream.get());
        }
        if (got != expected)
          tally.failures.push_back(std::string(dtype_name(dtype_of<T>())) + " n=" + std::to_string(n) + " " +
                                   search::info(c).name + " [" + show(lo) + ", " + show(hi) + "] call " +
                                   std::to_string(way) + ": expected " + std::to_string(expected) + ", got " +
                                   std::to_string(got));
      }
    }
  }
}

}  // namespace

TEST_CASE("find_if_range: both closures, every dtype, first element in range at the start, middle, end or none") {
  const Device device(0);
  const Stream stream;
  std::mt19937_64 rng(test::fresh_seed());
  // fast.cu's default tile holds BLOCK 256 * UNROLL 4 16-byte vectors; one wave is sm_count *
  // BLOCKS_PER_SM 4 tiles: a wave of 8-byte elements and one more makes every block stride
  // and the last tile partial.
  const std::uint64_t wave = static_cast<std::uint64_t>(device.info().sm_count) * 4 * 256 * 4 * 2;
  Tally tally;
  for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{31}, std::uint64_t{33},
                                std::uint64_t{4097}, wave + 1}) {
    check_size<std::int32_t>(n, rng, stream, tally);
    check_size<std::uint32_t>(n, rng, stream, tally);
    check_size<std::int64_t>(n, rng, stream, tally);
    check_size<float>(n, rng, stream, tally);
    check_size<double>(n, rng, stream, tally);
  }
  MESSAGE(tally.calls << " find_if_range calls, " << tally.failures.size() << " wrong");
  for (const auto& f : tally.failures) FAIL_CHECK(f);
  CHECK(tally.calls > 1000);
}

TEST_CASE("find_if_range of n = 0 launches nothing and answers -1; a range to find_if's one value is refused") {
  const Device device(0);
  const Stream stream;
  CHECK(search::find_if_range<float>(engine(), nullptr, 0, 0.0f, 1.0f, stream.get()) == -1);
  DeviceBuffer d_in(16 * sizeof(float));
  const float* in = reinterpret_cast<const float*>(d_in.get());
  CHECK_THROWS_WITH_AS(search::find_if<float>(engine(), in, 16, Compare::range, 1.0f, stream.get()),
                       doctest::Contains("takes 2 range values, not 1"), ConfigError);
  CHECK_THROWS_AS(search::prepare_find_if<float>(engine(), Compare::closed_range, 16), ConfigError);
}

TEST_CASE("configs/find_if_range.yaml runs, and thrust::find_if agrees in the same run") {
  const Runtime runtime(test::runtime_options());
  Device device(0);
  const RunSpec spec =
      load_run_spec(test::source_dir() / "configs/find_if_range.yaml", runtime.plugins(), runtime.kernels());
  const RunReport r = run(spec, {runtime}, device);
  CHECK_MESSAGE(r.verification.passed, r.verification.detail);
  REQUIRE(r.baseline.has_value());
  CHECK(r.baseline->name.rfind("thrust::find_if (CCCL ", 0) == 0);
  if (test::baselines_built()) CHECK_MESSAGE(r.baseline->note.empty(), r.baseline->note);
  // absent (the full scan), a range picked at the middle, NaN bounds, on float64 and int32
  for (const char* dtype : {"float64", "int32"})
    for (const char* c : {"range", "closed_range"})
      for (const char* pick : {"value_at: absent", "value_at: middle\nvalue_hi: 4", "value: nan\nvalue_hi: 1",
                               "value: 3\nvalue_hi: -3"}) {
        if (std::string(dtype) == "int32" && std::string(pick).find("nan") != std::string::npos) continue;
        CAPTURE(dtype);
        CAPTURE(c);
        CAPTURE(pick);
        const std::string yaml = std::string("family: search\noperation: find_if\ncompare: ") + c + "\ndtype: " +
                                 dtype + "\nsize: 100003\n" + pick +
                                 "\ndata: {generator: sorted, low: -5, high: 5, seed: 2}\nrepeats: 3\n";
        const RunReport a =
            run(parse_run_spec(yaml, "find_if_range.yaml", runtime.plugins(), runtime.kernels()), {runtime}, device);
        CHECK_MESSAGE(a.verification.passed, a.verification.detail);
        REQUIRE(a.baseline.has_value());
        if (test::baselines_built()) CHECK_MESSAGE(a.baseline->note.empty(), a.baseline->note);
      }
}
