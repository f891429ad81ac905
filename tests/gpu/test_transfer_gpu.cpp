// Host <-> device copies from page-locked host arrays (HostArray::pin) and from pageable ones
// (the fallback, GPUK_NO_PIN=1): the bytes round-trip either way, and the page-locked copies of
// 2^28 float32 are timed against the pageable ones (printed: the figures of docs/PERFORMANCE.md).
// A run on a .npy file that the config does not size: verified, its input page-locked.
// Without a GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <random>

#include "config/config.hpp"
#include "data/data.hpp"
#include "device/device.hpp"
#include "helpers.hpp"
#include "run/runner.hpp"

using namespace gpuk;

namespace {

Device& device() {
  static Device d(0);
  return d;
}

HostArray random_bytes(std::uint64_t n, std::uint64_t seed) {
  HostArray a(DType::uint32, n);
  std::mt19937_64 rng(seed);
  for (auto& v : a.as<std::uint32_t>()) v = static_cast<std::uint32_t>(rng());
  return a;
}

// Uploads `in`, downloads into `out`, returns the two times in milliseconds (CUDA events).
std::pair<double, double> round_trip(const HostArray& in, HostArray& out) {
  const Stream stream;
  DeviceBuffer d(in.bytes());
  Event a, b, c;
  a.record(stream);
  d.upload(in.data(), in.bytes(), stream);
  b.record(stream);
  d.download(out.data(), out.bytes(), stream);
  c.record(stream);
  stream.synchronize();
  return {b.elapsed_since(a), c.elapsed_since(b)};
}

}  // namespace

TEST_CASE("page-locked host arrays round-trip their bytes through the device") {
  device();
  const std::uint64_t seed = test::fresh_seed();
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 22}) {
    CAPTURE(n);
    HostArray in = random_bytes(n, seed + n), out(DType::uint32, n);
    CHECK(in.pin() == "");
    CHECK(out.pin() == "");
    CHECK(in.pinned());
    CHECK(in.pin() == "");  // twice is harmless
    std::memset(out.data(), 0xab, out.bytes());
    round_trip(in, out);
    CHECK(std::memcmp(in.data(), out.data(), in.bytes()) == 0);
    // Moved, it stays page-locked (and is unregistered once, when freed).
    HostArray moved = std::move(in);
    CHECK(moved.pinned());
  }
}

TEST_CASE("with page-locking off the arrays stay pageable, say why, and still round-trip") {
  device();
  const test::ScopedEnv off("GPUK_NO_PIN", "1");
  HostArray in = random_bytes(std::uint64_t{1} << 20, test::fresh_seed()), out(DType::uint32, in.size());
  const std::string why = in.pin();
  CHECK(why.find("GPUK_NO_PIN") != std::string::npos);
  CHECK_FALSE(in.pinned());
  std::memset(out.data(), 0, out.bytes());
  round_trip(in, out);
  CHECK(std::memcmp(in.data(), out.data(), in.bytes()) == 0);
}

TEST_CASE("2^28 float32 up and down: page-locked against pageable (printed)") {
  device();
  const std::uint64_t n = std::uint64_t{1} << 28;
  const double gb = static_cast<double>(n * 4) / 1e9;
  const auto measure = [&](bool pin) {
    HostArray in(DType::float32, n), out(DType::float32, n);
    std::memset(in.data(), 0x3f, in.bytes());  // touched: no first-use page faults in the copy
    std::memset(out.data(), 0, out.bytes());
    if (pin) {
      REQUIRE(in.pin() == "");
      REQUIRE(out.pin() == "");
    }
    round_trip(in, out);  // warm-up
    const auto [up, down] = round_trip(in, out);
    CHECK(std::memcmp(in.data(), out.data(), in.bytes()) == 0);
    std::cout << std::fixed << std::setprecision(2) << "transfer 2^28 float32 (" << gb << " GB) "
              << (pin ? "page-locked" : "pageable   ") << ": upload " << up << " ms (" << gb / (up * 1e-3)
              << " GB/s), download " << down << " ms (" << gb / (down * 1e-3) << " GB/s) on " << device().info().name
              << "\n";
    return up;
  };
  const double pageable = measure(false);
  const double locked = measure(true);
  CHECK(locked < pageable);  // the point of page-locking
}

TEST_CASE("a .npy file with no size or dtype in the config runs, verified, from page-locked memory") {
  device();
  const test::TempDir dir;
  HostArray a(DType::int32, 100003);
  std::mt19937 rng(static_cast<std::uint32_t>(test::fresh_seed()));
  for (auto& v : a.as<std::int32_t>()) v = static_cast<std::int32_t>(rng() % 2000001) - 1000000;
  a.as<std::int32_t>()[77777] = 2000000;  // the one maximum
  write_npy(dir.path() / "mine.npy", a);
  const Runtime runtime(test::runtime_options({}, false));
  const PluginRegistry& plugins = runtime.plugins();
  const KernelLibrary& kernels = runtime.kernels();
  const auto config = dir.write("c.yaml", "family: reduce\noperation: argmax\ndata: {file: mine.npy}\nrepeats: 5\n");
  for (const bool by_option : {false, true}) {
    CAPTURE(by_option);
    // The same array given as `gpuk run --input` over a config whose own data is generated.
    const auto other = dir.write("o.yaml", "family: reduce\noperation: argmax\nsize: 1000\ndtype: float32\nrepeats: 5\n");
    const RunSpec spec = by_option ? load_run_spec(other, plugins, kernels, dir.path() / "mine.npy")
                                   : load_run_spec(config, plugins, kernels);
    CHECK(spec.size == 100003);
    CHECK(spec.dtype == DType::int32);
    const RunReport r = run(spec, {runtime}, device());
    CHECK(r.verification.passed);
    CHECK(r.pin_note == "");
    CHECK(r.upload_bytes == 100003 * 4);
    const auto index = std::find_if(r.result.begin(), r.result.end(), [](const auto& kv) { return kv.first == "index"; });
    REQUIRE(index != r.result.end());
    CHECK(index->second == "77777");
  }
}
