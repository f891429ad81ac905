// The sort family's CUB-compatible options on the GPU: begin_bit / end_bit windows (fewer digit
// passes, an odd number of them too) and CUB's float order, each verified element by element
// against the CPU reference, and, where CUB runs in the same run, CUB's answer against the same
// reference. Without a GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <cstring>
#include <iostream>
#include <limits>
#include <random>

#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "run/runner.hpp"
#include "sort_gpu.hpp"

using namespace gpuk;

namespace {

using test::sort_gpu::gpu;
using test::sort_gpu::range_of;

// n floats mixing NaNs of both signs and several payloads, +-0.0, +-inf, ties and ordinary
// numbers, as a .npy file: what tells the two float orders apart.
std::filesystem::path special_floats(DType dtype, std::uint64_t n) {
  std::mt19937_64 rng(test::fresh_seed());
  const auto path = gpu().dir.path() / ("special-" + std::to_string(rng()) + ".npy");
  HostArray a(dtype, n);
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T>) {
      using B = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
      const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
      std::uniform_real_distribution<double> uniform(-100, 100);
      for (auto& x : a.as<T>()) {
        const auto r = rng() % 20;
        if (r < 8) {
          const T pick[] = {nan, -nan, T(0), -T(0), inf, -inf, T(1.5), T(-1.5)};
          x = pick[r];
        } else if (r < 10) {  // a NaN with a payload of 1 to 8, either sign
          B bits;
          T base = r == 8 ? nan : -nan;
          std::memcpy(&bits, &base, sizeof bits);
          bits |= static_cast<B>(1 + rng() % 8);
          std::memcpy(&x, &bits, sizeof bits);
        } else {
          x = static_cast<T>(uniform(rng));
        }
      }
    }
  });
  write_npy(path, a);
  return path;
}

struct Case {
  std::string kernel, params, op, dtype, order, extra;  // extra: begin_bit / end_bit / float_order lines
  std::uint64_t size;
  bool special;   // the special floats, else uniform random keys
  bool baseline;  // CUB in the same run, checked against the reference too
};

RunReport run_case(const Case& c) {
  const DType dtype = *parse_dtype(c.dtype);
  const std::string data =
      c.special ? "{file: " + special_floats(dtype, c.size).string() + "}"
                : "{generator: uniform, " + range_of(dtype) + ", seed: " + std::to_string(test::fresh_seed()) + "}";
  const std::string yaml = "family: sort\noperation: " + c.op + "\nkernel: " + c.kernel +
                           (c.params.empty() ? "" : "\nparams: " + c.params) + "\ndtype: " + c.dtype +
                           "\norder: " + c.order + "\n" + c.extra + "size: " + std::to_string(c.size) +
                           "\ndata: " + data + "\nwarmup: 2\nrepeats: 3\ncpu_repeats: 1\nbaseline: " +
                           (c.baseline ? "true" : "false") + "\n";
  const RunSpec spec = parse_run_spec(yaml, "gpu-test.yaml", gpu().plugins, gpu().kernels);
  return run(spec, {gpu().runtime}, gpu().device);
}

// Each case run and verified against the reference; where CUB runs too, CUB's answer as well.
void check_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const std::string what = c.kernel + " " + c.params + " " + c.op + " " + c.dtype + " " + c.order + " n=" +
                             std::to_string(c.size) + " " + c.extra;
    CAPTURE(what);
    const RunReport r = run_case(c);
    CHECK_MESSAGE(r.verification.passed, r.verification.detail);
    if (c.baseline) {
      REQUIRE(r.baseline.has_value());
      if (test::baselines_built()) CHECK_MESSAGE(r.baseline->note.empty(), r.baseline->note);
    }
    std::cout << what << ": " << r.verification.detail << "; " << r.kernel.median << " ms"
              << (r.baseline ? ", " + r.baseline->name + " agrees" : std::string()) << "\n";
  }
}

}  // namespace

TEST_CASE("bit windows and CUB's float order: every kernel kind against the reference, and CUB agrees") {
  const std::vector<Case> cases = {
      // onesweep, one digit pass (odd: the look-back's parity carries over between runs)
      {"onesweep", "", "sort", "uint32", "ascending", "begin_bit: 0\nend_bit: 8\n", (1u << 20) + 7, false, true},
      // onesweep, 25 bits in 4 passes, CUB's order of floats, descending, pairs
      {"onesweep", "", "sort_pairs", "float32", "descending", "begin_bit: 3\nend_bit: 28\nfloat_order: cub\n",
       (1u << 20) + 3, true, true},
      // onesweep, CUB's order on the whole key (NaN payloads, +-0.0 equal and stable)
      {"onesweep", "", "sort", "float64", "ascending", "float_order: cub\n", (1u << 19) + 5, true, true},
      // onesweep, 64-bit keys, a window in the middle (3 passes), argsort
      {"onesweep", "", "argsort", "int64", "descending", "begin_bit: 20\nend_bit: 41\n", (1u << 19) + 9, false, true},
      // radix's digit passes (two look-back buffers): 16 bits in 2 passes, 12 in 3 of 5 bits
      {"radix", "{SMALL: 0}", "sort_pairs", "int32", "ascending", "begin_bit: 4\nend_bit: 20\n", 300001, false, true},
      {"radix", "{SMALL: 0, RADIX_BITS: 5}", "sort", "uint64", "descending", "begin_bit: 50\nend_bit: 62\n", 200003,
       false, false},
      // radix's one-block path and rank_bucket (small n): one launch
      {"radix", "", "argsort", "float32", "ascending", "begin_bit: 16\nend_bit: 32\nfloat_order: cub\n", 3000, true,
       true},
      {"rank_bucket", "", "sort", "float32", "descending", "float_order: cub\n", 4096, true, true},
      {"rank_bucket", "{ITEMS: 16}", "sort_pairs", "uint32", "ascending", "begin_bit: 28\nend_bit: 32\n", 10000, false,
       true},
  };
  check_cases(cases);
}

TEST_CASE("onesweep with a tile's loads issued together (BATCH 1): the special floats in both orders, signed and descending keys, windows") {
  // BATCH 1 maps float keys (and flips signed or descending integer keys) after the tile's last
  // load, through a zero made of every key, and marks positions past n by an OR: the answers
  // must not change, NaN payloads and +-0.0 included, in a partial last tile too.
  const std::string pairs = "{BLOCK: 384, ITEMS: 20, MIN_BLOCKS: 2, VLOAD: 0, LB32: 1, BATCH: 1}";
  const std::string keys = "{BLOCK: 384, ITEMS: 20, MIN_BLOCKS: 3, LB32: 1, BATCH: 1}";
  // CUB is asked to agree only in its own order of floats (float_order: cub): in gpuk's total order
  // its answer for NaN and -0.0 differs by design (docs/api.md), so there the reference alone judges.
  const std::vector<Case> cases = {
      {"onesweep", pairs, "argsort", "float32", "ascending", "", (1u << 20) + 3, true, false},
      {"onesweep", pairs, "argsort", "float32", "descending", "float_order: cub\n", (1u << 20) + 5, true, true},
      {"onesweep", "{VLOAD: 1, BATCH: 1}", "argsort", "float32", "descending", "", 300007, true, false},
      {"onesweep", pairs, "sort_pairs", "float32", "descending", "begin_bit: 3\nend_bit: 28\n", 300001, true, false},
      {"onesweep", keys, "sort", "float32", "ascending", "float_order: cub\n", (1u << 19) + 7, true, true},
      {"onesweep", keys, "sort", "float32", "descending", "", (1u << 19) + 9, true, false},
      {"onesweep", "{ITEMS: 12, MIN_BLOCKS: 3, BATCH: 1}", "sort", "float64", "descending", "", 200003, true, false},
      {"onesweep", keys, "sort", "int32", "descending", "begin_bit: 5\nend_bit: 29\n", 300011, false, true},
      {"onesweep", pairs, "argsort", "int64", "ascending", "", 200013, false, false},
      {"onesweep", "{BLOCK: 384, ITEMS: 20, MIN_BLOCKS: 3, VLOAD: 2, KLOAD: 1, LB32: 1, BATCH: 1}", "sort_pairs",
       "int32", "descending", "", 300017, false, true},
  };
  check_cases(cases);
}

TEST_CASE("a narrow window takes fewer digit passes: 2^24 uint32 keys, all 32 bits against bits [0, 16)") {
  double ms[2] = {0, 0};
  int i = 0;
  for (const char* extra : {"", "begin_bit: 0\nend_bit: 16\n"}) {
    const RunReport r = run_case({"onesweep", "", "sort", "uint32", "ascending", extra, 1u << 24, false, false});
    CHECK_MESSAGE(r.verification.passed, r.verification.detail);
    ms[i++] = r.kernel.median;
  }
  std::cout << "onesweep uint32 n=2^24: all 32 bits " << ms[0] << " ms, bits [0, 16) " << ms[1] << " ms\n";
  CHECK(ms[1] < 0.75 * ms[0]);  // 2 of 4 digit passes (and the histogram): well under the whole key's time
}
