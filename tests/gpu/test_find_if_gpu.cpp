// find_if on the GPU through the library API (typed calls and prepared handles on the test's own
// buffers and stream), every comparison and dtype against an answer known by construction and the
// CPU's std::find_if: n = 1, 2, odd n, one element past a whole wave of tiles; the first match at
// the start, the middle, the end, or none; NaN, -0.0 and +0.0, negatives, ties. Then the shipped
// config through `gpuk run`'s path, thrust::find_if agreeing in the same run. Without a GPU this
// program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <sstream>

#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/search.hpp"
#include "helpers.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"

using namespace gpuk;
using search::Compare;

namespace {

Engine& engine() {
  static Engine e;
  return e;
}

// Small ranges, so that ties are common; floats also NaN, -0.0, +0.0 and infinities.
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

// The values searched for: zeros of both signs and NaN for floats, the ends of the range for integers.
template <class T> std::vector<T> values() {
  if constexpr (std::is_floating_point_v<T>) return {T(0), -T(0), T(1.25), -T(3), std::numeric_limits<T>::quiet_NaN()};
  else if constexpr (std::is_signed_v<T>) return {T(0), T(-16), T(7)};
  else return {T(0), T(16), T(32)};
}

// A value meeting the comparison (want) or not; nullopt when none of the candidates does.
template <class T> std::optional<T> draw(std::mt19937_64& rng, Compare c, T v, bool want) {
  for (int i = 0; i < 400; ++i) {
    const T x = candidate<T>(rng);
    if (search::compare(c, x, v) == want) return x;
  }
  return std::nullopt;
}

std::string text(Compare c) { return search::info(c).symbol; }

template <class T> std::string show(T v) {
  std::ostringstream out;
  out << +v;
  return out.str();
}

struct Tally {
  int calls = 0;
  std::vector<std::string> failures;
};

// Every comparison and value at size n: the data fails the comparison everywhere but at the
// match (and at random places after it). Alternates the typed call and the prepared handle.
template <class T> void check_size(std::uint64_t n, std::mt19937_64& rng, const Stream& stream, Tally& tally) {
  DeviceBuffer d_in(n * sizeof(T)), d_out(sizeof(std::int64_t));
  const T* in = reinterpret_cast<const T*>(d_in.get());
  for (const search::CompareInfo& ci : search::kCompares) {
    if (ci.two_values) continue;  // the ranges: test_find_if_range_gpu.cpp
    auto prepared = search::prepare_find_if<T>(engine(), ci.op, n);
    for (const T v : values<T>()) {
      std::vector<std::uint64_t> positions = {0, n / 2, n - 1};
      positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
      std::vector<std::optional<std::uint64_t>> cases = {std::nullopt};
      for (auto p : positions) cases.push_back(p);
      for (const auto& at : cases) {
        std::vector<T> host(n);
        bool possible = true;
        for (std::uint64_t i = 0; i < n && possible; ++i) {
          const bool meets = at && (i == *at || (i > *at && rng() % 8 == 0));
          const auto x = draw<T>(rng, ci.op, v, meets);
          if (!x) possible = false;
          else host[i] = *x;
        }
        if (!possible) continue;  // no element can fail (x != NaN) or meet (x == NaN) the comparison
        const std::int64_t expected = at ? static_cast<std::int64_t>(*at) : -1;
        const auto it = std::find_if(host.begin(), host.end(), [&](T x) { return search::compare(ci.op, x, v); });
        REQUIRE((it == host.end() ? -1 : it - host.begin()) == expected);  // the construction is right
        d_in.upload(host.data(), n * sizeof(T), stream);
        d_out.fill_bytes(0xA5, stream);
        std::int64_t got = 0;
        if (++tally.calls % 2) {
          search::find_if(engine(), in, reinterpret_cast<std::int64_t*>(d_out.get()), n, ci.op, v, stream.get());
          d_out.download(&got, sizeof got, stream);
          stream.synchronize();
        } else {
          got = prepared(in, n, v, stream.get());
        }
        if (got != expected)
          tally.failures.push_back(std::string(dtype_name(dtype_of<T>())) + " n=" + std::to_string(n) + " x " +
                                   text(ci.op) + " " + show(v) + ": expected " + std::to_string(expected) + ", got " +
                                   std::to_string(got));
      }
    }
  }
}

}  // namespace

TEST_CASE("find_if: every comparison and dtype, first match at the start, middle, end or absent, NaN and -0.0") {
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
  MESSAGE(tally.calls << " find_if calls, " << tally.failures.size() << " wrong");
  for (const auto& f : tally.failures) FAIL_CHECK(f);
  CHECK(tally.calls > 1000);
}

TEST_CASE("find_if of n = 0 launches nothing and answers -1") {
  const Device device(0);
  const Stream stream;
  CHECK(search::find_if<float>(engine(), nullptr, 0, Compare::lt, 1.0f, stream.get()) == -1);
}

TEST_CASE("configs/find_if.yaml runs, and thrust::find_if agrees in the same run") {
  const Runtime runtime(test::runtime_options());
  Device device(0);
  const RunSpec spec = load_run_spec(test::source_dir() / "configs/find_if.yaml", runtime.plugins(), runtime.kernels());
  const RunReport r = run(spec, {runtime}, device);
  CHECK_MESSAGE(r.verification.passed, r.verification.detail);
  REQUIRE(r.baseline.has_value());
  CHECK(r.baseline->name.rfind("thrust::find_if (CCCL ", 0) == 0);
  if (test::baselines_built()) CHECK(r.baseline->ms.count > 0);
  if (test::baselines_built()) CHECK_MESSAGE(r.baseline->note.empty(), r.baseline->note);
  // absent (the full scan) and a comparison of each kind on the same data
  for (const char* c : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    CAPTURE(c);
    const std::string yaml = std::string("family: search\noperation: find_if\ncompare: ") + c +
                             "\ndtype: float64\nsize: 100003\nvalue_at: " + (std::string(c) == "ne" ? "middle" : "absent") +
                             "\ndata: {generator: sorted, low: -5, high: 5, seed: 2}\nrepeats: 3\n";
    const RunReport a = run(parse_run_spec(yaml, "find_if.yaml", runtime.plugins(), runtime.kernels()), {runtime}, device);
    CHECK_MESSAGE(a.verification.passed, a.verification.detail);
    REQUIRE(a.baseline.has_value());
    if (test::baselines_built()) CHECK_MESSAGE(a.baseline->note.empty(), a.baseline->note);
  }
}
