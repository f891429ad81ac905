// Host arrays, generators and data files: what a benchmark's input is, and how bad input fails.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "data/data.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp directory, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path = fs::temp_directory_path() /
           ("gpuk_test_data_" + std::to_string(stamp) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path operator/(const std::string& name) const { return path / name; }
};

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// An npy file with the given version and header text (padded to 64 bytes with a final '\n'),
// followed by `data`.
std::string npy_bytes(int major, std::string header, const std::string& data) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  const std::size_t len = header.size();
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  if (major != 1) {
    out.push_back(static_cast<char>((len >> 16) & 0xff));
    out.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  return out + header + data;
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

bool same_bytes(const HostArray& a, const HostArray& b) {
  return a.dtype() == b.dtype() && a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

DataSpec spec_for(Generator g, std::uint64_t seed = 1) {
  DataSpec spec;
  spec.generator = g;
  spec.seed = seed;
  return spec;
}

// The error message of a ConfigError thrown by f ("" if none was thrown).
template <class F>
std::string config_error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

using test::contains;
bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

const Generator kAllGenerators[] = {Generator::uniform, Generator::normal,
                                    Generator::permutation, Generator::sorted,
                                    Generator::reversed, Generator::few_distinct};

}  // namespace

// ------------------------------------------------------------------------------------------------
TEST_SUITE("HostArray") {
  TEST_CASE("a host array is 64-byte aligned and sized by its dtype") {
    for (DType dtype : all_dtypes()) {
      HostArray a(dtype, 1001);
      CHECK(a.dtype() == dtype);
      CHECK(a.size() == 1001);
      CHECK(a.bytes() == 1001 * dtype_size(dtype));
      CHECK(reinterpret_cast<std::uintptr_t>(a.data()) % 64 == 0);
    }
    HostArray empty;
    CHECK(empty.size() == 0);
    CHECK(empty.bytes() == 0);
  }

  TEST_CASE("viewing an array as the wrong type is an error naming both types") {
    HostArray a(DType::float32, 4);
    CHECK(a.as<float>().size() == 4);
    CHECK_THROWS_WITH_AS(a.as<std::int32_t>(), "array holds float32, not int32", Error);
    const HostArray& c = a;
    CHECK_THROWS_WITH_AS(c.as<double>(), "array holds float32, not float64", Error);
  }

  TEST_CASE("an impossible allocation is an error naming the bytes asked for") {
    const std::uint64_t n = std::uint64_t{1} << 61;  // 2^63 bytes of float32
    try {
      HostArray a(DType::float32, n);
      FAIL("allocating 2^63 bytes should fail");
    } catch (const Error& e) {
      CHECK(contains(e.what(), "9223372036854775808 bytes"));
    }
    // A byte count that does not even fit in 64 bits.
    CHECK_THROWS_AS(HostArray(DType::float64, std::uint64_t{1} << 62), Error);
  }
}

// ------------------------------------------------------------------------------------------------
TEST_SUITE("generator names") {
  TEST_CASE("every generator's name parses back to it") {
    for (Generator g : kAllGenerators) CHECK(parse_generator(generator_name(g)) == g);
    CHECK(generator_name(Generator::few_distinct) == "few_distinct");
    CHECK_FALSE(parse_generator("gaussian").has_value());
    CHECK_FALSE(parse_generator("").has_value());
  }
}

// ------------------------------------------------------------------------------------------------
TEST_SUITE("generate") {
  TEST_CASE("the same seed gives the same data; another seed different data") {
    for (Generator g : kAllGenerators)
      for (DType dtype : all_dtypes()) {
        CAPTURE(generator_name(g));
        CAPTURE(dtype_name(dtype));
        DataSpec spec = spec_for(g, 42);
        spec.low = -1000, spec.high = 1000;  // enough integers to tell seeds apart
        const HostArray a = generate(spec, dtype, 1000);
        const HostArray b = generate(spec, dtype, 1000);
        CHECK(same_bytes(a, b));
        spec.seed = 43;
        CHECK_FALSE(same_bytes(a, generate(spec, dtype, 1000)));
      }
  }

  TEST_CASE("the data does not depend on the number of threads") {
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    for (Generator g : kAllGenerators) {
      CAPTURE(generator_name(g));
      DataSpec spec = spec_for(g, 7);
      spec.nan.count = 100;
      omp_set_num_threads(1);
      const HostArray one = generate(spec, DType::float32, 300001);  // large enough to go parallel
      omp_set_num_threads(4);
      const HostArray four = generate(spec, DType::float32, 300001);
      CHECK(same_bytes(one, four));
    }
    omp_set_num_threads(saved);
#else
    MESSAGE("built without OpenMP: generation is single-threaded");
#endif
  }

  TEST_CASE("uniform and normal data of n elements is the first n of a longer run") {
    for (Generator g : {Generator::uniform, Generator::normal}) {
      const HostArray shorter = generate(spec_for(g), DType::float64, 101);
      const HostArray longer = generate(spec_for(g), DType::float64, 1000);
      CHECK(std::memcmp(shorter.data(), longer.data(), shorter.bytes()) == 0);
    }
  }

  TEST_CASE("uniform float32 stays inside [low, high)") {
    DataSpec spec = spec_for(Generator::uniform);
    spec.low = 2.5, spec.high = 3.0;
    const HostArray a = generate(spec, DType::float32, 100000);
    const auto v = a.as<float>();
    const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    CHECK(*mn >= 2.5f);
    CHECK(*mx < 3.0f);
    CHECK(*mn < 2.51f);  // and it fills the range
    CHECK(*mx > 2.99f);
    double sum = 0;
    for (float x : v) sum += x;
    CHECK(sum / v.size() == doctest::Approx(2.75).epsilon(0.01));
  }

  TEST_CASE("uniform floats never reach high, even when high is one ulp above low") {
    DataSpec spec = spec_for(Generator::uniform);
    spec.low = 1.0, spec.high = static_cast<double>(std::nextafter(1.0f, 2.0f));
    const HostArray a = generate(spec, DType::float32, 10000);
    for (float x : a.as<float>()) CHECK(x == 1.0f);
    spec.low = spec.high = 5.0;  // an empty [low, low) still means low
    const HostArray b = generate(spec, DType::float64, 100);
    for (double x : b.as<double>()) CHECK(x == 5.0);
  }

  TEST_CASE("uniform float64 covers the whole double range without overflowing") {
    DataSpec spec = spec_for(Generator::uniform);
    spec.low = -1e308, spec.high = 1e308;
    const HostArray a = generate(spec, DType::float64, 1000);
    for (double x : a.as<double>()) {
      CHECK(std::isfinite(x));
      CHECK(x >= -1e308);
      CHECK(x < 1e308);
    }
  }

  TEST_CASE("uniform integers cover [ceil(low), floor(high)] inclusive") {
    DataSpec spec = spec_for(Generator::uniform);
    spec.low = -2.5, spec.high = 3.5;
    const HostArray a = generate(spec, DType::int32, 10000);
    const auto v = a.as<std::int32_t>();
    const std::set<std::int32_t> seen(v.begin(), v.end());
    CHECK(seen == std::set<std::int32_t>{-2, -1, 0, 1, 2, 3});
  }

  TEST_CASE("integers with no range are uniform over the whole dtype: nearly all distinct") {
    const std::uint64_t n = 100000;
    const HostArray u = generate(spec_for(Generator::uniform), DType::uint32, n);
    const auto v = u.as<std::uint32_t>();
    // 10^5 draws from 2^32 values: about 1.2 pairs collide; all but a few are distinct.
    CHECK(std::set<std::uint32_t>(v.begin(), v.end()).size() > n - 10);
    CHECK(std::any_of(v.begin(), v.end(), [](std::uint32_t x) { return x > 0xf0000000u; }));
    CHECK(std::any_of(v.begin(), v.end(), [](std::uint32_t x) { return x < 0x10000000u; }));
    const HostArray s = generate(spec_for(Generator::sorted), DType::int32, n);
    const auto w = s.as<std::int32_t>();
    CHECK(std::is_sorted(w.begin(), w.end()));
    CHECK(w.front() < -(1 << 30));
    CHECK(w.back() > (1 << 30));
    const HostArray l = generate(spec_for(Generator::uniform), DType::int64, 1000);
    const auto x = l.as<std::int64_t>();
    CHECK(std::any_of(x.begin(), x.end(), [](std::int64_t y) { return y < -(std::int64_t{1} << 61); }));
    CHECK(std::any_of(x.begin(), x.end(), [](std::int64_t y) { return y > (std::int64_t{1} << 61); }));
    const HostArray b = generate(spec_for(Generator::uniform), DType::uint64, 1000);
    const auto y = b.as<std::uint64_t>();
    CHECK(std::any_of(y.begin(), y.end(), [](std::uint64_t z) { return z > (3ULL << 62); }));
  }

  TEST_CASE("floats with no range are uniform in [-1, 1); one bound set leaves the other the default") {
    const HostArray f = generate(spec_for(Generator::uniform), DType::float32, 10000);
    const auto v = f.as<float>();
    const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    CHECK(*mn >= -1.0f);
    CHECK(*mn < -0.99f);
    CHECK(*mx < 1.0f);
    CHECK(*mx > 0.99f);
    DataSpec spec = spec_for(Generator::uniform);
    spec.low = 0;  // integers: [0, the dtype's highest]
    const HostArray i = generate(spec, DType::int32, 10000);
    const auto w = i.as<std::int32_t>();
    CHECK(*std::min_element(w.begin(), w.end()) >= 0);
    CHECK(*std::max_element(w.begin(), w.end()) > (1 << 30));
    spec = spec_for(Generator::uniform);
    spec.high = 15;  // uint32: [0, 15], labels
    const HostArray labels = generate(spec, DType::uint32, 10000);
    const auto z = labels.as<std::uint32_t>();
    CHECK(std::set<std::uint32_t>(z.begin(), z.end()).size() == 16);
    CHECK(*std::max_element(z.begin(), z.end()) == 15u);
  }

  TEST_CASE("uniform_range: the stated bounds, else floats' [-1, 1) and integers' whole range") {
    DataSpec spec;
    CHECK(uniform_range(spec, DType::float32).low == -1.0);
    CHECK(uniform_range(spec, DType::float64).high == 1.0);
    CHECK(uniform_range(spec, DType::uint32).low == 0.0);
    CHECK(uniform_range(spec, DType::uint32).high == 4294967295.0);
    CHECK(uniform_range(spec, DType::int32).low == -2147483648.0);
    CHECK(uniform_range(spec, DType::int64).low == -9223372036854775808.0);
    spec.low = 3;
    spec.high = 7;
    CHECK(uniform_range(spec, DType::int32).low == 3.0);
    CHECK(uniform_range(spec, DType::float32).high == 7.0);
  }

  TEST_CASE("an integer range wider than the dtype is clamped to it") {
    DataSpec spec = spec_for(Generator::uniform);
    spec.low = -1e30, spec.high = 1e30;
    const HostArray a = generate(spec, DType::uint64, 1000);
    const auto v = a.as<std::uint64_t>();
    // Spread across the whole 64-bit range: some values in the top and the bottom quarter.
    CHECK(std::any_of(v.begin(), v.end(), [](std::uint64_t x) { return x > (3ULL << 62); }));
    CHECK(std::any_of(v.begin(), v.end(), [](std::uint64_t x) { return x < (1ULL << 62); }));
    const HostArray b = generate(spec, DType::int32, 1000);
    const auto w = b.as<std::int32_t>();
    CHECK(std::any_of(w.begin(), w.end(), [](std::int32_t x) { return x < -(1 << 29); }));
  }

  TEST_CASE("normal data has the requested mean and standard deviation") {
    DataSpec spec = spec_for(Generator::normal);
    spec.mean = 10.0, spec.stddev = 2.0;
    const HostArray a = generate(spec, DType::float64, 100001);  // odd: the last pair is half used
    const auto v = a.as<double>();
    double sum = 0, sq = 0;
    for (double x : v) sum += x;
    const double mean = sum / v.size();
    for (double x : v) sq += (x - mean) * (x - mean);
    CHECK(mean == doctest::Approx(10.0).epsilon(0.005));
    CHECK(std::sqrt(sq / v.size()) == doctest::Approx(2.0).epsilon(0.02));
    CHECK(std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }));
  }

  TEST_CASE("normal integers are rounded and clamped to the dtype") {
    DataSpec spec = spec_for(Generator::normal);
    spec.mean = 10.0, spec.stddev = 0.0;
    const HostArray tens = generate(spec, DType::int32, 100);
    for (std::int32_t x : tens.as<std::int32_t>()) CHECK(x == 10);
    spec.mean = -50.0, spec.stddev = 1.0;  // all negative: unsigned clamps to 0
    const HostArray zeros = generate(spec, DType::uint32, 100);
    for (std::uint32_t x : zeros.as<std::uint32_t>()) CHECK(x == 0);
    struct Case {
      double mean;
      std::int32_t expect;
    };
    for (const Case c : {Case{2.5, 3}, Case{-2.5, -3}, Case{2.4999, 2}, Case{-0.4, 0}, Case{1e12, 2147483647},
                         Case{-1e12, -2147483647 - 1}}) {
      CAPTURE(c.mean);
      spec.mean = c.mean, spec.stddev = 0.0;  // rounds half away from zero, like std::round
      const HostArray r = generate(spec, DType::int32, 3);
      CHECK(r.as<std::int32_t>()[0] == c.expect);
    }
    spec.mean = 0.0, spec.stddev = 3.0;
    const HostArray a = generate(spec, DType::int64, 1000);
    const auto v = a.as<std::int64_t>();
    CHECK(std::set<std::int64_t>(v.begin(), v.end()).size() > 5);
  }

  TEST_CASE("a permutation holds every value 0..n-1 exactly once") {
    for (std::uint64_t n : {1, 2, 3, 7, 64, 1000, 1025, 4096}) {
      for (DType dtype : all_dtypes()) {
        CAPTURE(n);
        CAPTURE(dtype_name(dtype));
        const HostArray a = generate(spec_for(Generator::permutation, n), dtype, n);
        std::vector<char> seen(n, 0);
        bool ok = true;
        visit_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          for (T x : a.as<T>()) {
            const auto i = static_cast<std::uint64_t>(x);
            if (static_cast<T>(i) != x || i >= n || seen[i]) ok = false;
            else seen[i] = 1;
          }
        });
        CHECK(ok);
      }
    }
  }

  TEST_CASE("a permutation is shuffled, not the identity") {
    const HostArray a = generate(spec_for(Generator::permutation), DType::int64, 10000);
    const auto v = a.as<std::int64_t>();
    std::int64_t fixed = 0, ascents = 0;
    for (std::size_t i = 0; i < v.size(); ++i) fixed += v[i] == static_cast<std::int64_t>(i);
    for (std::size_t i = 1; i < v.size(); ++i) ascents += v[i] > v[i - 1];
    CHECK(fixed < 10);                    // a random permutation has about 1 fixed point
    CHECK(ascents > 4500);                // and about n/2 ascents
    CHECK(ascents < 5500);
  }

  TEST_CASE("a permutation the dtype cannot count exactly is refused before allocating") {
    // 2^24 + 1 is the first integer float32 cannot hold.
    const std::string f32 = config_error_of([] {
      generate(spec_for(Generator::permutation), DType::float32, (1ULL << 24) + 2);
    });
    CHECK(contains(f32, "float32"));
    CHECK_THROWS_AS(
        generate(spec_for(Generator::permutation), DType::int32, (1ULL << 31) + 1), ConfigError);
    CHECK_THROWS_AS(
        generate(spec_for(Generator::permutation), DType::uint32, (1ULL << 32) + 1), ConfigError);
    CHECK_THROWS_AS(
        generate(spec_for(Generator::permutation), DType::float64, (1ULL << 53) + 2), ConfigError);
  }

  TEST_CASE("sorted is ascending, reversed descending, both over the same values as uniform") {
    DataSpec spec = spec_for(Generator::uniform, 5);
    // Small arrays are sorted whole, large ones bucket by bucket: both must agree with std::sort.
    for (std::uint64_t n : {5000, 100000})
    for (DType dtype : {DType::float32, DType::int32, DType::uint64}) {
      CAPTURE(n);
      CAPTURE(dtype_name(dtype));
      spec.low = 0, spec.high = 1e6;
      visit_dtype(dtype, [&](auto t) {
        using T = decltype(t);
        spec.generator = Generator::uniform;
        const HostArray u = generate(spec, dtype, n);
        spec.generator = Generator::sorted;
        const HostArray s = generate(spec, dtype, n);
        spec.generator = Generator::reversed;
        const HostArray r = generate(spec, dtype, n);
        std::vector<T> expect(u.as<T>().begin(), u.as<T>().end());
        std::sort(expect.begin(), expect.end());
        CHECK(std::equal(expect.begin(), expect.end(), s.as<T>().begin()));
        CHECK(std::equal(expect.rbegin(), expect.rend(), r.as<T>().begin()));
        CHECK(s.as<T>().front() < s.as<T>().back());
      });
    }
  }

  TEST_CASE("sorted data is ordered for ranges full of ties and for the whole double range") {
    struct Range {
      DType dtype;
      double low, high;
    };
    for (const Range r : {Range{DType::int32, 0, 3}, Range{DType::float32, 1, 1},
                          Range{DType::float64, -1e308, 1e308}, Range{DType::float64, 0, 1e-310},
                          Range{DType::uint64, 0, 1e30},
                          Range{DType::int64, 4e18, 4.0000000001e18}}) {
      CAPTURE(dtype_name(r.dtype));
      CAPTURE(r.low);
      DataSpec spec = spec_for(Generator::sorted);
      spec.low = r.low, spec.high = r.high;
      visit_dtype(r.dtype, [&](auto t) {
        using T = decltype(t);
        const HostArray s = generate(spec, r.dtype, 70000);
        CHECK(std::is_sorted(s.as<T>().begin(), s.as<T>().end()));
        spec.generator = Generator::reversed;
        const HostArray d = generate(spec, r.dtype, 70000);
        CHECK(std::is_sorted(d.as<T>().begin(), d.as<T>().end(), std::greater<T>()));
      });
    }
  }

  TEST_CASE("few_distinct has at most `distinct` values") {
    DataSpec spec = spec_for(Generator::few_distinct);
    for (std::uint64_t distinct : {1, 2, 5, 100}) {
      CAPTURE(distinct);
      spec.distinct = distinct;
      const HostArray a = generate(spec, DType::float64, 20000);
      const auto v = a.as<double>();
      const std::set<double> values(v.begin(), v.end());
      // At most `distinct`, and (in a wide float range, with many draws) exactly that many.
      CHECK(values.size() == distinct);
      for (double x : values) {
        CHECK(x >= -1.0);
        CHECK(x < 1.0);
      }
    }
    spec.distinct = 4;
    spec.low = 0, spec.high = 1;  // only two integers: the pool repeats, still at most 4
    const HostArray b = generate(spec, DType::int32, 1000);
    const auto w = b.as<std::int32_t>();
    CHECK(std::set<std::int32_t>(w.begin(), w.end()).size() <= 2);
  }

  TEST_CASE("few_distinct allows more distinct values than elements") {
    DataSpec spec = spec_for(Generator::few_distinct);
    spec.distinct = std::uint64_t{1} << 60;
    const HostArray a = generate(spec, DType::float32, 1000);
    CHECK(a.size() == 1000);
  }

  TEST_CASE("NaN lands exactly at the requested indices") {
    DataSpec spec = spec_for(Generator::uniform);
    spec.nan.at = {0, 17, 999};
    const HostArray a = generate(spec, DType::float32, 1000);
    const auto v = a.as<float>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      const bool expect_nan = i == 0 || i == 17 || i == 999;
      CHECK(std::isnan(v[i]) == expect_nan);
    }
  }

  TEST_CASE("NaN count puts exactly that many NaNs at seeded random places") {
    for (Generator g : kAllGenerators) {
      CAPTURE(generator_name(g));
      DataSpec spec = spec_for(g);
      spec.nan.count = 37;
      const HostArray a = generate(spec, DType::float64, 1000);
      const auto v = a.as<double>();
      CHECK(std::count_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }) == 37);
      CHECK(same_bytes(a, generate(spec, DType::float64, 1000)));
      spec.seed = 2;
      const HostArray b = generate(spec, DType::float64, 1000);
      const auto w = b.as<double>();
      bool same_places = true;
      for (std::size_t i = 0; i < v.size(); ++i)
        same_places &= std::isnan(v[i]) == std::isnan(w[i]);
      CHECK_FALSE(same_places);
    }
    DataSpec all = spec_for(Generator::uniform);
    all.nan.count = 100;
    const HostArray nans = generate(all, DType::float32, 100);
    for (float x : nans.as<float>()) CHECK(std::isnan(x));
  }

  TEST_CASE("NaN injection into int32 is refused") {
    DataSpec spec = spec_for(Generator::uniform);
    spec.nan.at = {3};
    CHECK_THROWS_WITH_AS(generate(spec, DType::int32, 10),
                         "NaN injection needs a floating-point dtype, not int32", ConfigError);
    spec.nan.at.clear();
    spec.nan.count = 1;
    CHECK_THROWS_WITH_AS(generate(spec, DType::uint64, 10),
                         "NaN injection needs a floating-point dtype, not uint64", ConfigError);
  }

  TEST_CASE("a NaN index or count beyond the array is refused") {
    DataSpec spec = spec_for(Generator::uniform);
    spec.nan.at = {10};
    CHECK(contains(config_error_of([&] { generate(spec, DType::float32, 10); }), "NaN index 10"));
    spec.nan.at.clear();
    spec.nan.count = 11;
    CHECK(contains(config_error_of([&] { generate(spec, DType::float32, 10); }), "NaN count 11"));
  }

  TEST_CASE("impossible requests are configuration errors") {
    DataSpec spec = spec_for(Generator::uniform);
    spec.low = 2, spec.high = 1;
    CHECK(contains(config_error_of([&] { generate(spec, DType::float32, 10); }), "greater than high"));
    spec.generator = Generator::sorted;
    CHECK_THROWS_AS(generate(spec, DType::float32, 10), ConfigError);

    spec = spec_for(Generator::uniform);
    spec.low = 0.2, spec.high = 0.8;  // no integer inside
    CHECK(contains(config_error_of([&] { generate(spec, DType::int32, 10); }), "no int32 value"));
    CHECK_NOTHROW(generate(spec, DType::float32, 10));
    spec.low = -1e39, spec.high = 0;  // beyond float32
    CHECK_THROWS_AS(generate(spec, DType::float32, 10), ConfigError);
    spec.low = -INFINITY;
    CHECK_THROWS_AS(generate(spec, DType::float64, 10), ConfigError);

    spec = spec_for(Generator::normal);
    spec.stddev = -1;
    CHECK(contains(config_error_of([&] { generate(spec, DType::float64, 10); }), "negative"));

    spec = spec_for(Generator::few_distinct);
    spec.distinct = 0;
    CHECK(contains(config_error_of([&] { generate(spec, DType::float64, 10); }), "distinct"));

    CHECK(contains(config_error_of([&] { generate(spec_for(Generator::uniform), DType::float32, 0); }),
                   "n = 0"));
  }

  TEST_CASE("settings of other generators are not checked") {
    DataSpec spec = spec_for(Generator::normal);
    spec.low = 5, spec.high = 1;  // unused by normal
    spec.distinct = 0;            // unused by normal
    CHECK_NOTHROW(generate(spec, DType::float32, 10));
  }
}

// ------------------------------------------------------------------------------------------------
TEST_SUITE("summarize_data") {
  TEST_CASE("the default integer data is stated with its whole range and bound on distinct values") {
    const DataSummary s = summarize_data(DataSpec{}, DType::uint32, 1u << 28);
    CHECK(s.generator == "uniform");
    CHECK(s.range == "[0, 4294967295]");
    CHECK(s.seed == 1);
    REQUIRE(s.distinct_at_most);
    CHECK(*s.distinct_at_most == (1u << 28));  // n bounds it: fewer elements than values
    CHECK(s.text() == "uniform in [0, 4294967295], seed 1, at most 268435456 distinct values");
    CHECK(summarize_data(DataSpec{}, DType::int64, 10).range == "[-9223372036854775808, 9223372036854775807]");
    CHECK(summarize_data(DataSpec{}, DType::uint64, 10).range == "[0, 18446744073709551615]");
  }

  TEST_CASE("floats state their half-open range and no bound; few_distinct, permutation, normal, NaN, file") {
    const DataSummary f = summarize_data(DataSpec{}, DType::float32, 1000);
    CHECK(f.range == "[-1, 1)");
    CHECK_FALSE(f.distinct_at_most);
    CHECK(f.text() == "uniform in [-1, 1), seed 1");

    DataSpec few = spec_for(Generator::few_distinct, 9);
    few.distinct = 1024;
    CHECK(summarize_data(few, DType::int32, 1u << 20).text() ==
          "few_distinct in [-2147483648, 2147483647], seed 9, at most 1024 distinct values");
    few.low = 0, few.high = 15;  // a smaller range than the pool: the range bounds it
    CHECK(*summarize_data(few, DType::uint32, 1u << 20).distinct_at_most == 16);

    CHECK(summarize_data(spec_for(Generator::permutation), DType::uint32, 100).text() ==
          "permutation in [0, 99], seed 1, 100 distinct values");
    DataSpec normal = spec_for(Generator::normal);
    normal.nan.count = 3;
    CHECK(summarize_data(normal, DType::float64, 100).text() == "normal (mean 0, stddev 1), seed 1, 3 NaNs");

    DataSpec file;
    file.file = "in.npy";
    const DataSummary fs = summarize_data(file, DType::float32, 10);
    CHECK(fs.generator == "file");
    CHECK(fs.text() == "file in.npy");
  }
}

// ------------------------------------------------------------------------------------------------
TEST_SUITE("npy files") {
  TEST_CASE("npy round-trips every dtype") {
    TempDir dir;
    for (DType dtype : all_dtypes()) {
      CAPTURE(dtype_name(dtype));
      DataSpec spec = spec_for(Generator::uniform);
      spec.low = -100, spec.high = 100;
      const HostArray a = generate(spec, dtype, 333);
      const fs::path path = dir / (std::string(dtype_name(dtype)) + ".npy");
      write_npy(path, a);
      const HostArray b = read_npy(path);
      CHECK(same_bytes(a, b));
    }
  }

  TEST_CASE("write_npy writes a version 1.0 file whose data starts on a 64-byte boundary") {
    TempDir dir;
    const HostArray a = generate(spec_for(Generator::permutation), DType::int32, 10);
    write_npy(dir / "a.npy", a);
    const std::string bytes = read_bytes(dir / "a.npy");
    REQUIRE(bytes.size() == 128 + 40);  // the header fills two 64-byte lines
    CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t header_len = static_cast<unsigned char>(bytes[8]) |
                                   (static_cast<unsigned char>(bytes[9]) << 8);
    CHECK((10 + header_len) % 64 == 0);
    const std::string header = bytes.substr(10, header_len);
    CHECK(contains(header, "'descr': '<i4'"));
    CHECK(contains(header, "'fortran_order': False"));
    CHECK(contains(header, "'shape': (10,)"));
    CHECK(header.back() == '\n');
  }

  TEST_CASE("npy versions 2.0 and 3.0 are read too") {
    TempDir dir;
    const std::vector<double> values = {1.5, -2.5, 3.25};
    for (int major : {2, 3}) {
      CAPTURE(major);
      write_bytes(dir / "v.npy",
                  npy_bytes(major, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                            bytes_of(values)));
      const HostArray a = read_npy(dir / "v.npy");
      REQUIRE(a.dtype() == DType::float64);
      CHECK(std::equal(values.begin(), values.end(), a.as<double>().begin(), a.as<double>().end()));
    }
  }

  TEST_CASE("a multi-dimensional npy array is read flat in C order") {
    TempDir dir;
    const std::vector<std::uint32_t> values = {1, 2, 3, 4, 5, 6};
    write_bytes(dir / "m.npy",
                npy_bytes(1, "{\"descr\": \"<u4\", \"fortran_order\": False, \"shape\": (2, 3)}",
                          bytes_of(values)));
    const HostArray a = read_npy(dir / "m.npy");
    REQUIRE(a.dtype() == DType::uint32);
    CHECK(std::equal(values.begin(), values.end(), a.as<std::uint32_t>().begin(),
                     a.as<std::uint32_t>().end()));

    // A 0-d array holds one element; trailing bytes past the shape are ignored, as numpy does.
    write_bytes(dir / "s.npy", npy_bytes(1, "{'descr': '<i8', 'fortran_order': False, 'shape': ()}",
                                         bytes_of(std::vector<std::int64_t>{42, 99})));
    const HostArray s = read_npy(dir / "s.npy");
    REQUIRE(s.size() == 1);
    CHECK(s.as<std::int64_t>()[0] == 42);
  }

  TEST_CASE("fortran_order True is accepted for 1-D arrays and refused otherwise") {
    TempDir dir;
    const std::vector<float> values = {1, 2, 3, 4};
    write_bytes(dir / "f1.npy", npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (4,)}",
                                          bytes_of(values)));
    CHECK(read_npy(dir / "f1.npy").size() == 4);
    write_bytes(dir / "f2.npy",
                npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}",
                          bytes_of(values)));
    CHECK(contains(config_error_of([&] { read_npy(dir / "f2.npy"); }), "fortran_order"));
  }

  TEST_CASE("a truncated npy file is a clear error, not a crash") {
    TempDir dir;
    write_npy(dir / "full.npy", generate(spec_for(Generator::uniform), DType::float32, 10));
    const std::string full = read_bytes(dir / "full.npy");
    const fs::path cut = dir / "cut.npy";
    write_bytes(cut, full);
    fs::resize_file(cut, full.size() - 3);
    const std::string message = config_error_of([&] { read_npy(cut); });
    CHECK(contains(message, "needs 40 bytes"));
    CHECK(contains(message, "holds 37"));
    // Every proper prefix of a valid file fails with a ConfigError naming the file.
    for (std::size_t len = full.size(); len-- > 0;) {
      CAPTURE(len);
      fs::resize_file(cut, len);
      CHECK(starts_with(config_error_of([&] { read_npy(cut); }), cut.string() + ": "));
    }
  }

  TEST_CASE("npy header declaring a huge shape is refused without allocating") {
    TempDir dir;
    const fs::path path = dir / "huge.npy";
    // 2^60 float64 elements (8 EiB) in a 72-byte file.
    write_bytes(path, npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,)}",
                                "12345678"));
    const std::string message = config_error_of([&] { read_npy(path); });
    CHECK(starts_with(message, path.string() + ": "));
    CHECK(contains(message, "holds 8"));
    // A shape whose product overflows 64 bits.
    write_bytes(path, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16)}",
                                ""));
    CHECK(contains(config_error_of([&] { read_npy(path); }), "overflows"));
    for (const char* shape : {"(99999999999999999999999,)", "(18446744073709551616, 0)"}) {
      CAPTURE(shape);
      write_bytes(path, npy_bytes(1, std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") +
                                         shape + "}", ""));
      CHECK(contains(config_error_of([&] { read_npy(path); }), "overflows"));
    }
    // A zero extent is an empty array, not an error.
    write_bytes(path, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 0)}", ""));
    CHECK(read_npy(path).size() == 0);
  }

  TEST_CASE("malformed npy files are errors that start with the path and say what is wrong") {
    TempDir dir;
    const fs::path path = dir / "bad.npy";
    const std::string ok_data = bytes_of(std::vector<float>{1, 2});
    auto error_for = [&](const std::string& bytes) {
      write_bytes(path, bytes);
      const std::string message = config_error_of([&] { read_npy(path); });
      CHECK(starts_with(message, path.string() + ": "));
      return message;
    };
    auto header_error = [&](const std::string& header) { return error_for(npy_bytes(1, header, ok_data)); };

    CHECK(contains(error_for("PK\x03\x04 this is a zip file, not an npy file at all"), "magic"));
    CHECK(contains(error_for(std::string("\x93NUMPY\x04\x00\x10\x00", 10) + std::string(64, ' ')),
                   "version 4.0"));
    CHECK(contains(error_for(std::string("\x93NUMPY\x01\x00\xff\xff{}", 12)), "past the end"));
    CHECK(contains(error_for(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f{}", 14)), "past the end"));
    CHECK(contains(header_error("['descr', '<f4']"), "not a Python dict"));
    CHECK(contains(header_error("{'descr': '<f4', 'fortran_order': False"), "header"));
    CHECK(contains(header_error("{'fortran_order': False, 'shape': (2,)}"), "'descr'"));
    CHECK(contains(header_error("{'descr': '<f4', 'shape': (2,)}"), "'fortran_order'"));
    CHECK(contains(header_error("{'descr': '<f4', 'fortran_order': False}"), "'shape'"));
    CHECK(contains(header_error("{'descr': '<f2', 'fortran_order': False, 'shape': (2,)}"), "'<f2'"));
    CHECK(contains(header_error("{'descr': '|u1', 'fortran_order': False, 'shape': (8,)}"), "'|u1'"));
    CHECK(contains(header_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}"),
                   "structured"));
    CHECK(contains(header_error("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}"),
                   "big-endian"));
    CHECK(contains(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}"),
                   "bad dimension"));
    CHECK(contains(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': 2}"),
                   "not a tuple"));
    CHECK(contains(header_error("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}"),
                   "fortran_order"));
    CHECK(contains(header_error(std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}") +
                                "\x01 garbage"),
                   "header"));
    // The well-formed version of the same file is fine.
    write_bytes(path, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", ok_data));
    CHECK(read_npy(path).size() == 2);
  }

  TEST_CASE("a missing file or a directory is an error naming it") {
    TempDir dir;
    CHECK(contains(config_error_of([&] { read_npy(dir / "missing.npy"); }), "missing.npy: no such file"));
    CHECK(starts_with(config_error_of([&] { read_npy(dir.path); }), dir.path.string() + ": "));
  }
}

// ------------------------------------------------------------------------------------------------
TEST_SUITE("raw files and load_file") {
  TEST_CASE("a raw file is read whole as elements of the given dtype") {
    TempDir dir;
    const std::vector<std::int64_t> values = {5, -6, 7};
    write_bytes(dir / "a.bin", bytes_of(values));
    const HostArray a = read_raw(dir / "a.bin", DType::int64);
    CHECK(std::equal(values.begin(), values.end(), a.as<std::int64_t>().begin(),
                     a.as<std::int64_t>().end()));
    CHECK(read_raw(dir / "a.bin", DType::int32).size() == 6);
  }

  TEST_CASE("a raw file that is empty or not a whole number of elements is refused") {
    TempDir dir;
    write_bytes(dir / "odd.bin", std::string(10, 'x'));
    const std::string odd = config_error_of([&] { read_raw(dir / "odd.bin", DType::float32); });
    CHECK(starts_with(odd, (dir / "odd.bin").string() + ": "));
    CHECK(contains(odd, "not a multiple"));
    write_bytes(dir / "empty.bin", "");
    CHECK(contains(config_error_of([&] { read_raw(dir / "empty.bin", DType::float32); }), "empty"));
    CHECK(contains(config_error_of([&] { read_raw(dir / "none.bin", DType::float32); }), "no such file"));
  }

  TEST_CASE("load_file reads .npy by extension, in any case, and raw files with a dtype") {
    TempDir dir;
    const HostArray a = generate(spec_for(Generator::normal), DType::float32, 50);
    write_npy(dir / "UPPER.NPY", a);
    DataSpec spec;
    spec.file = dir / "UPPER.NPY";
    spec.raw_dtype = DType::int64;  // ignored: an npy file carries its own dtype
    CHECK(same_bytes(load_file(spec), a));

    write_bytes(dir / "x.dat", bytes_of(std::vector<float>{1, 2, 3}));
    spec.file = dir / "x.dat";
    spec.raw_dtype.reset();
    CHECK(contains(config_error_of([&] { load_file(spec); }), "raw file needs a dtype"));
    spec.raw_dtype = DType::float32;
    const HostArray r = load_file(spec);
    CHECK(r.dtype() == DType::float32);
    CHECK(r.size() == 3);

    CHECK_THROWS_AS(load_file(DataSpec{}), ConfigError);
  }
}
