// argminmax on the GPU, as a user gets it (the typed calls and a prepared handle on the default
// path, and configs/argminmax.yaml with CUB's baseline in the same run): edge shapes (n = 1, odd
// n, n a prime and 2^20 + 7, all-equal, NaN, +-0.0, negatives, ties, min and max at one index),
// every dtype, each answer against the CPU reference and against argmin and argmax run apart on
// the GPU, into poisoned outputs. Every dtype, |x| and onepass's switches also run in
// test_reduce_gpu.cpp's sweeps; onepass's FOLD 2 (float32 compared as floats) is named here on the
// same edge data and on infinities. Without a GPU it exits 77 (skipped); about 20 s on an H200
// before the FOLD 2 case.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include "api/engine_internals.hpp"
#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "helpers.hpp"
#include "plugin/plugin.hpp"
#include "reduce/reducer.hpp"
#include "run/runner.hpp"

using namespace gpuk;

namespace {

// The device's primary context made current on this thread first (the tests' own streams and
// buffers need it; the Engine makes it current only inside its calls), then the Engine.
Engine& engine() {
  static const Device device(0);
  static Engine e;
  return e;
}

const reduce::Reducer& reducer() {
  const auto* r = interface_of<reduce::Reducer>(EngineInternals::plugins(engine()).get("reduce"));
  REQUIRE(r != nullptr);
  return *r;
}

template <class T> HostArray host(const std::vector<T>& v) {
  HostArray a(dtype_of<T>(), v.size());
  std::copy(v.begin(), v.end(), a.as<T>().begin());
  return a;
}

template <class T> DeviceBuffer upload(const std::vector<T>& v, const Stream& s) {
  DeviceBuffer d(std::max<std::size_t>(16, v.size() * sizeof(T)));
  if (!v.empty()) d.upload(v.data(), v.size() * sizeof(T), s);
  return d;
}

template <class T> double as_double(T v) { return static_cast<double>(v); }

// A GPU candidate against the CPU's: the same index, the same value (both NaN, or equal; -0.0
// and +0.0 are equal, as the family's comparisons have them).
template <class T> std::string differs(const reduce::Best<T>& got, const reduce::Answer& want, const char* what) {
  const double expected = std::is_floating_point_v<T> ? want.float_value
                          : std::is_signed_v<T>       ? static_cast<double>(want.int_value)
                                                      : static_cast<double>(want.uint_value);
  bool same_value;
  if constexpr (std::is_floating_point_v<T>) {
    same_value = (std::isnan(got.value) && std::isnan(expected)) || as_double(got.value) == expected;
  } else {
    same_value = std::is_signed_v<T> ? static_cast<std::int64_t>(got.value) == want.int_value
                                     : static_cast<std::uint64_t>(got.value) == want.uint_value;
  }
  if (same_value && want.index && got.index == *want.index) return "";
  std::ostringstream o;
  o << what << ": got " << as_double(got.value) << " at " << got.index << ", expected " << expected << " at "
    << want.index.value_or(-1);
  return o.str();
}

template <class T> bool same(const reduce::Best<T>& a, const reduce::Best<T>& b) {
  if (a.index != b.index) return false;
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a.value) || std::isnan(b.value)) return std::isnan(a.value) && std::isnan(b.value);
  }
  return a.value == b.value;
}

// One input through argminmax (the typed call into poisoned device memory, and the host-returning
// call), checked against the CPU reference and against argmin and argmax run apart.
template <class T> void check_input(const std::vector<T>& x, const std::string& what) {
  CAPTURE(what);
  engine();  // first: the context the stream and buffers below need
  const Stream stream;
  const DeviceBuffer d_x = upload(x, stream);
  const auto* in = reinterpret_cast<const T*>(d_x.get());
  const std::uint64_t n = x.size();
  DeviceBuffer d_out(sizeof(reduce::MinMax<T>));
  d_out.fill_bytes(0xA5, stream);
  reduce::argminmax(engine(), in, reinterpret_cast<reduce::MinMax<T>*>(d_out.get()), n, stream.get());
  reduce::MinMax<T> got{};
  d_out.download(&got, sizeof got, stream);
  stream.synchronize();

  const auto want = reducer().argminmax_on_cpu(host(x), false);
  const reduce::Answer &lo = want.first, &hi = want.second;
  CHECK_MESSAGE(differs(got.min, lo, "min").empty(), differs(got.min, lo, "min"));
  CHECK_MESSAGE(differs(got.max, hi, "max").empty(), differs(got.max, hi, "max"));

  const reduce::MinMax<T> again = reduce::argminmax(engine(), in, n, stream.get());
  CHECK(same(again.min, got.min));
  CHECK(same(again.max, got.max));
  const reduce::Best<T> apart_min = reduce::argmin(engine(), in, n, stream.get());
  const reduce::Best<T> apart_max = reduce::argmax(engine(), in, n, stream.get());
  CHECK_MESSAGE(same(got.min, apart_min), "argmin apart: " << as_double(apart_min.value) << " at " << apart_min.index);
  CHECK_MESSAGE(same(got.max, apart_max), "argmax apart: " << as_double(apart_max.value) << " at " << apart_max.index);
}

template <class T> std::vector<T> random_values(std::size_t n, std::uint64_t seed, int distinct) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  for (auto& v : x) {
    const auto k = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(distinct)) - distinct / 2;
    v = std::is_signed_v<T> || std::is_floating_point_v<T> ? static_cast<T>(k) : static_cast<T>(k + distinct / 2);
  }
  return x;
}

// One float32 input through onepass with `params` named (not the lookup's choice), of x and of
// |x|, each run twice into a fresh Operation's result (the counter and the packed words must be
// zero again after a run), against the CPU reference.
void check_named(const std::vector<float>& x, const std::string& what, const std::map<std::string, std::int64_t>& params) {
  CAPTURE(what);
  engine();  // first: the context the stream and buffers below need
  const Stream stream;
  const DeviceBuffer d_x = upload(x, stream);
  for (const bool abs : {false, true}) {
    CAPTURE(abs);
    const OperationSpec spec{"reduce", "argminmax", DType::float32, {{"abs", abs ? "true" : "false"}},
                             x.size(), std::string("onepass"), params};
    Operation op = engine().prepare(spec);
    const auto want = reducer().argminmax_on_cpu(host(x), abs);
    const reduce::Answer &lo = want.first, &hi = want.second;
    for (int run = 0; run < 2; ++run) {
      CAPTURE(run);
      const std::vector<std::byte> bytes = op.launch_and_read({d_x.get(), 0}, x.size(), stream.get());
      REQUIRE(bytes.size() == sizeof(reduce::MinMax<float>));
      reduce::MinMax<float> got{};
      std::memcpy(&got, bytes.data(), sizeof got);
      CHECK_MESSAGE(differs(got.min, lo, "min").empty(), differs(got.min, lo, "min"));
      CHECK_MESSAGE(differs(got.max, hi, "max").empty(), differs(got.max, hi, "max"));
    }
  }
}

}  // namespace

TEST_CASE("argminmax is argmin's and argmax's answer from one pass: edge shapes of float32") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::uint64_t seed = test::fresh_seed();
  CAPTURE(seed);
  check_input<float>({3.5f}, "n = 1: both answers at index 0");
  check_input<float>({-3, -1, -7, -1, -7, -2, -3}, "odd n, all negative, ties: min -7 at 2, max -1 at 1");
  check_input<float>({0.0f, -0.0f, 0.0f, -0.0f, 0.0f}, "+0.0 and -0.0 are equal: both at index 0");
  check_input<float>({-0.0f, 0.0f, 1.0f, -1.0f}, "-0.0 first");
  check_input<float>({1, nan, -5, nan, 9}, "a NaN wins both, the first NaN's index");
  for (const std::uint64_t n : {33ull, 4096ull, 4097ull, 100003ull, 1000003ull, (1ull << 20) + 7}) {
    const std::string at = " at n = " + std::to_string(n);
    check_input(std::vector<float>(n, 0.25f), "all equal: min and max at index 0" + at);
    std::vector<float> x(n);
    std::mt19937_64 rng(seed + n);
    std::uniform_real_distribution<float> uniform(-1, 1);
    for (auto& v : x) v = uniform(rng);
    check_input(x, "uniform" + at);
    x[n - 1] = -2;  // the minimum at the last element, the maximum twice
    x[n / 3] = 2;
    x[n / 2] = 2;
    check_input(x, "min at the end, max tied" + at);
    x[n / 2 + 1] = nan;
    x[n - 2] = -nan;
    check_input(x, "two NaNs (one negative)" + at);
    check_input(random_values<float>(n, seed + 1, 5), "five distinct values, ties everywhere" + at);
  }
}

TEST_CASE("argminmax of every dtype matches the CPU reference and argmin and argmax apart") {
  const std::uint64_t seed = test::fresh_seed();
  CAPTURE(seed);
  for (const std::uint64_t n : {1ull, 31ull, 1000ull, 100003ull, (1ull << 20) + 7}) {
    const std::string at = " at n = " + std::to_string(n);
    check_input(random_values<std::int32_t>(n, seed, 1000), "int32" + at);
    check_input(random_values<std::uint32_t>(n, seed, 1000), "uint32" + at);
    check_input(random_values<std::int64_t>(n, seed, 1000), "int64" + at);
    check_input(random_values<std::uint64_t>(n, seed, 1000), "uint64" + at);
    check_input(random_values<double>(n, seed, 1000), "float64" + at);
  }
  std::vector<std::int32_t> extremes = {0, std::numeric_limits<std::int32_t>::max(), -5,
                                        std::numeric_limits<std::int32_t>::min(), 7,
                                        std::numeric_limits<std::int32_t>::min()};
  check_input(extremes, "int32 extremes, INT_MIN twice");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  check_input<double>({2, -0.0, nan, -1e300, nan}, "float64 NaN");
}

TEST_CASE("a prepared argminmax serves every n up to its max_n, and n = 0 answers index -1") {
  const std::uint64_t seed = test::fresh_seed();
  CAPTURE(seed);
  engine();  // the context, before the stream
  const Stream stream;
  const std::uint64_t max_n = (1u << 22) + 3;
  auto handle = reduce::prepare_argminmax<float>(engine(), max_n);
  std::vector<float> x(max_n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-100, 100);
  for (auto& v : x) v = uniform(rng);
  const DeviceBuffer d_x = upload(x, stream);
  const auto* in = reinterpret_cast<const float*>(d_x.get());
  for (const std::uint64_t n : std::vector<std::uint64_t>{1, 7, 4096, 65537, 1000003, max_n}) {
    CAPTURE(n);
    const reduce::MinMax<float> got = handle(in, n, stream.get());
    const auto want = reducer().argminmax_on_cpu(host(std::vector<float>(x.begin(), x.begin() + n)), false);
    const reduce::Answer &lo = want.first, &hi = want.second;
    CHECK_MESSAGE(differs(got.min, lo, "min").empty(), differs(got.min, lo, "min"));
    CHECK_MESSAGE(differs(got.max, hi, "max").empty(), differs(got.max, hi, "max"));
  }
  const reduce::MinMax<float> none = handle(in, 0, stream.get());
  CHECK(none.min.index == -1);
  CHECK(none.max.index == -1);
  const reduce::MinMax<float> typed_none = reduce::argminmax(engine(), in, 0, stream.get());
  CHECK(typed_none.max.index == -1);
}

TEST_CASE("configs/argminmax.yaml: verified, CUB's ArgMin + ArgMax in the same run, agreeing") {
  const Runtime runtime(test::runtime_options());
  Device device(0);
  const RunSpec spec = load_run_spec(test::source_dir() / "configs/argminmax.yaml", runtime.plugins(), runtime.kernels());
  const RunReport r = run(spec, {runtime}, device);
  CHECK_MESSAGE(r.verification.passed, r.verification.detail);
  REQUIRE(r.baseline.has_value());
  CHECK(r.baseline->name == "cub::DeviceReduce::ArgMin + ArgMax");
  if (test::baselines_built()) CHECK(r.baseline->ms.count > 0);
  if (test::baselines_built()) CHECK_MESSAGE(r.baseline->note.empty(), r.baseline->note);
  CHECK(r.kernel.median > 0);
  MESSAGE("argminmax of 2^24 float32: " << r.kernel.median << " ms against CUB's " << r.baseline->ms.median << " ms");
}

TEST_CASE("onepass FOLD 2 (float32 compared as floats, NaN screened per tile) keeps the family's rules on edge data") {
  // Named explicitly, in three shapes: the one measured at 2^28 (a tile of 8192 elements, streaming
  // loads, 4 waves), the smallest tile with contiguous runs of tiles (SPLIT 1), and a wide block.
  // Sizes: one element, a few, a warp and one, a block's partial tile, a grid with a partial tile.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::uint64_t seed = test::fresh_seed();
  CAPTURE(seed);
  const std::vector<std::map<std::string, std::int64_t>> shapes = {
      {{"BLOCK", 256}, {"UNROLL", 8}, {"BLOCKS_PER_SM", 4}, {"LOAD", 2}, {"WAVES", 4}, {"FOLD", 2}},
      {{"BLOCK", 128}, {"UNROLL", 1}, {"BLOCKS_PER_SM", 2}, {"SPLIT", 1}, {"FOLD", 2}},
      {{"BLOCK", 512}, {"UNROLL", 4}, {"BLOCKS_PER_SM", 2}, {"LOAD", 1}, {"WAVES", 8}, {"FOLD", 2}}};
  for (const auto& params : shapes) {
    std::ostringstream shape;
    for (const auto& [name, value] : params) shape << name << "=" << value << " ";
    CAPTURE(shape.str());
    check_named({3.5f}, "n = 1", params);
    check_named({nan}, "n = 1, a NaN", params);
    check_named({2, -1, 2, -1, 0}, "n = 5, ties: min -1 at 1, max 2 at 0", params);
    for (const std::uint64_t n : {33ull, 4097ull, 100003ull, (1ull << 20) + 7}) {
      const std::string at = " at n = " + std::to_string(n);
      std::vector<float> x(n);
      std::mt19937_64 rng(seed + n);
      std::uniform_real_distribution<float> uniform(-1, 1);
      for (auto& v : x) v = uniform(rng);
      check_named(x, "uniform" + at, params);
      std::vector<float> y = x;
      y[0] = nan;
      check_named(y, "NaN first" + at, params);
      y = x;
      y[n / 2] = -nan;
      y[n / 2 + 3] = nan;
      check_named(y, "-NaN in the middle, then a NaN" + at, params);
      y = x;
      y[n - 1] = nan;
      check_named(y, "NaN last" + at, params);
      check_named(std::vector<float>(n, -0.75f), "all equal" + at, params);
      y.assign(n, 0.0f);
      for (std::uint64_t i = 0; i < n; i += 3) y[i] = -0.0f;
      check_named(y, "+0.0 and -0.0 only: both answers at index 0" + at, params);
      y = x;
      y[0] = y[n - 1] = 4;
      y[1] = y[n - 2] = -4;
      check_named(y, "ties at both ends: the first of each" + at, params);
      y = x;
      y[n / 3] = inf;
      y[n / 4] = -inf;
      check_named(y, "one +inf, one -inf" + at, params);
      for (std::uint64_t i = 0; i < n; ++i) y[i] = i % 2 ? inf : -inf;
      check_named(y, "only infinities (every tile's sum NaN, no NaN)" + at, params);
      check_named(std::vector<float>(n, inf), "all +inf" + at, params);
      check_named(std::vector<float>(n, -inf), "all -inf" + at, params);
      for (std::uint64_t i = 0; i < n; ++i) y[i] = static_cast<float>(n - i);
      check_named(y, "descending: a new minimum at every element" + at, params);
      check_named(random_values<float>(n, seed + 1, 5), "five distinct values" + at, params);
      for (std::uint64_t i = 0; i < n; ++i) y[i] = (rng() % 2 ? 1e-40f : -1e-40f) * static_cast<float>(rng() % 7);
      check_named(y, "subnormals and zeros of both signs" + at, params);
    }
  }
}
