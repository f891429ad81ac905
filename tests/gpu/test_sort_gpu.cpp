// Every sort variant against std::stable_sort on fresh random data, element by element, values
// included (which proves stability). Needs a GPU: without one this program prints why and exits
// 77, which CTest reports as skipped.
#include <doctest/doctest.h>

#include <algorithm>

#include <chrono>
#include <cmath>
#include <functional>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>

#include "gpuk/error.hpp"
#include "sort_gpu.hpp"

using namespace gpuk;

using namespace gpuk::test::sort_gpu;

namespace {

// The sweep's cases: every operation, both value widths for pairs, both orders.
const std::vector<Case> kCases = {
    {"sort", "uint32", false},       {"sort", "uint32", true},         {"sort_pairs", "uint32", false},
    {"sort_pairs", "uint32", true},  {"sort_pairs", "uint64", false},  {"sort_pairs", "uint64", true},
    {"argsort", "uint32", false},    {"argsort", "uint32", true},
};

// n floats mixing NaN of both signs, +-0.0, +-inf and ordinary numbers, as a .npy file.
std::filesystem::path special_floats(DType dtype, std::uint64_t n) {
  std::mt19937_64 rng(fresh_seed());
  const auto path = gpu().dir.path() / ("special-" + std::to_string(rng()) + ".npy");
  HostArray a(dtype, n);
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T>) {
      const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
      const T pick[] = {nan, -nan, T(0), -T(0), inf, -inf, T(1.5), T(-1.5)};
      std::uniform_real_distribution<double> uniform(-100, 100);
      for (auto& x : a.as<T>()) {
        const auto r = rng() % 16;
        x = r < 8 ? pick[r] : static_cast<T>(uniform(rng));
      }
    }
  });
  write_npy(path, a);
  return path;
}

struct Pattern {
  const char* name;
  std::string data;
};

// The data patterns for a dtype and size: random first, then the edge cases. `edge`: every one
// (-1), or only the edge case of that number (modulo their count), beside random.
std::vector<Pattern> patterns(DType dtype, std::uint64_t size, long edge = -1) {
  const std::string seed = "seed: " + std::to_string(fresh_seed());
  const std::string range = range_of(dtype);
  std::vector<std::pair<const char*, std::function<std::string()>>> all = {
      {"random", [&] { return "{generator: uniform, " + range + ", " + seed + "}"; }},
      {"sorted", [&] { return "{generator: sorted, " + range + ", " + seed + "}"; }},
      {"reversed", [&] { return "{generator: reversed, " + range + ", " + seed + "}"; }},
      {"all equal", [&] { return "{generator: few_distinct, distinct: 1, " + range + ", " + seed + "}"; }},
      {"few distinct", [&] { return "{generator: few_distinct, distinct: 5, " + range + ", " + seed + "}"; }},
  };
  if (dtype_is_float(dtype))
    all.push_back({"NaN, +-0.0, +-inf", [&] { return "{file: " + special_floats(dtype, size).string() + "}"; }});
  std::vector<Pattern> p;
  const std::size_t edges = all.size() - 1;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (edge < 0 || i == 0 || i == 1 + static_cast<std::size_t>(edge) % edges) p.push_back({all[i].first, all[i].second()});
  return p;
}

RunSpec spec_for(const std::string& kernel, const Case& c, DType dtype, std::uint64_t size, const std::string& data) {
  const std::string yaml = "family: sort\noperation: " + c.op + "\nkernel: " + kernel + "\ndtype: " +
                           std::string(dtype_name(dtype)) + "\norder: " + (c.descending ? "descending" : "ascending") +
                           "\nvalues: " + c.values + "\nsize: " + std::to_string(size) + "\ndata: " + data +
                           "\nwarmup: 1\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n";
  return parse_run_spec(yaml, "gpu-test.yaml", gpu().plugins, gpu().kernels);
}

// The kernels of a case (template arguments depend on dtype, operation, order and values, not on n).
std::vector<std::string> names_of(const std::shared_ptr<const KernelFile>& file, const RunSpec& spec) {
  const Variant v(file, gpu().plugins.get("sort").template_args(problem_of(spec)), {});
  std::vector<std::string> names;
  for (const auto& l : file->launches) names.push_back(v.name_expression(l));
  return names;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The O(n^2) rank sorts are run where that stays quick.
std::uint64_t largest_size_for(const std::string& kernel) {
  return kernel.rfind("rank_", 0) == 0 ? 4097 : std::numeric_limits<std::uint64_t>::max();
}

}  // namespace

// The files that sort (topk_radix and topk_rows implement topk alone: tests/gpu/test_topk_gpu.cpp); and
// GPUK_SORT_KERNELS=radix_block,rank_shared limits the sweep below to those files.
bool selected(const KernelFile& file) {
  const auto& ops = file.operations;
  if (!ops.empty() && std::find(ops.begin(), ops.end(), "sort") == ops.end()) return false;
  const char* only = std::getenv("GPUK_SORT_KERNELS");
  if (!only || !*only) return true;
  const std::string list = "," + std::string(only) + ",";
  return list.find("," + file.name + ",") != std::string::npos;
}

TEST_CASE("every sort variant matches std::stable_sort: every dtype, order, operation, size and pattern") {
  // Quick: sizes 1, 2, 33, 4097 and a many-tile 2^18 + 7 (35 tiles of onesweep's 384 x 20); each
  // (file, dtype, operation, order, size) runs random data and one edge pattern, number
  // (case + size) among them, so that each size meets every edge pattern across the eight cases and
  // each case meets them across the sizes. Exhaustive (GPUK_EXHAUSTIVE=1): every pattern at every
  // size up to 2^20 + 7.
  const bool all = test::exhaustive();
  const std::uint64_t many_tiles = all ? (1u << 20) + 7 : (1u << 18) + 7;
  const std::vector<std::uint64_t> sizes = all ? std::vector<std::uint64_t>{1, 2, 31, 33, 4096, 4097, many_tiles}
                                               : std::vector<std::uint64_t>{1, 2, 33, 4097, many_tiles};
  // Every variant the sweep runs, compiled first, on every core: programs of two variants.
  auto start = std::chrono::steady_clock::now();
  test::CompiledSet set;
  for (const auto& file : gpu().kernels.family("sort")) {
    if (!selected(*file)) continue;
    for (DType dtype : file->dtypes) {
      std::vector<std::vector<std::string>> variants;
      for (const auto& c : kCases) variants.push_back(names_of(file, spec_for(file->name, c, dtype, 1, "{generator: uniform}")));
      set.add(file, variants, 2);
    }
  }
  set.compile(Jit(jit_options(gpu().device.info().arch(), gpu().kernels), &gpu().cache));
  std::cout << "compiled " << set.programs() << " programs in " << seconds_since(start) << " s\n";
  for (const auto& file : gpu().kernels.family("sort")) {
    if (!selected(*file)) continue;
    start = std::chrono::steady_clock::now();
    int runs = 0, failures = 0, refused = 0;
    for (DType dtype : file->dtypes)
      for (std::size_t ci = 0; ci < kCases.size(); ++ci)
        for (std::size_t si = 0; si < sizes.size(); ++si) {
          const Case& c = kCases[ci];
          const std::uint64_t size = sizes[si];
          if (size > largest_size_for(file->name)) continue;
          for (const auto& pattern : patterns(dtype, size, all ? -1 : static_cast<long>(ci + si))) {
            const std::string what = file->name + " " + c.op + (c.op == "sort_pairs" ? "(" + c.values + ")" : "") +
                                     (c.descending ? " descending " : " ascending ") +
                                     std::string(dtype_name(dtype)) + " n=" + std::to_string(size) + " " +
                                     pattern.name + " data " + pattern.data;
            try {
              const RunSpec spec = spec_for(file->name, c, dtype, size, pattern.data);
              const CompiledKernels& compiled = set.holding(*file, names_of(file, spec).front());
              const RunReport r = run(spec, {gpu().runtime}, gpu().device, &compiled);
              ++runs;
              if (!r.verification.passed) ++failures;
              CHECK_MESSAGE(r.verification.passed, (what + ": " + r.verification.detail));
            } catch (const ConfigError& e) {
              // A size the file's metadata refuses (rank_shared, radix_block: one block's worth).
              if (std::string(e.what()).find("breaks the constraint") == std::string::npos) {
                ++failures;
                FAIL_CHECK((what + ": " + std::string(e.what())));
              }
              ++refused;
            } catch (const Error& e) {
              ++runs;
              ++failures;
              FAIL_CHECK((what + ": " + std::string(e.what())));
            }
          }
        }
    MESSAGE(file->name << ": " << runs << " runs, " << failures << " failed, " << refused << " refused by constraints");
    std::cout << file->name << ": " << runs << " runs, " << failures << " failed, " << refused
              << " refused by constraints, in " << seconds_since(start) << " s\n";
    CHECK(runs > 0);
  }
}

TEST_CASE("a sort kernel that writes nothing fails verification: outputs are poisoned before every run") {
  const test::TempDir dir;
  dir.write("lazy.cu",
            "/* gpuk\nfamily: sort\noperations: [sort, sort_pairs, argsort]\n"
            "launch:\n  - {entry: lazy, grid: 1, block: 32}\n*/\n"
            "#include \"gpuk/sort.cuh\"\n"
            "template <class S> __global__ void lazy(gpuk::SortArgs<S> a) {}\n");
  const Runtime runtime(test::runtime_options({dir.path()}, false));
  const KernelLibrary& kernels = runtime.kernels();
  for (const char* op : {"sort", "sort_pairs", "argsort"}) {
    const std::string yaml = std::string("family: sort\noperation: ") + op +
                             "\nkernel: lazy\ndtype: uint32\nsize: 1000\nrepeats: 1\nbaseline: false\n";
    const RunSpec spec = parse_run_spec(yaml, "lazy.yaml", gpu().plugins, kernels);
    const RunReport r = run(spec, {runtime}, gpu().device);
    CHECK_FALSE(r.verification.passed);
  }
}

TEST_CASE("the sort configs run, verify, and CUB runs in the same run and agrees") {
  for (const char* config :
       {"configs/sort.yaml", "configs/sort_pairs.yaml", "configs/sort_small.yaml", "configs/ranksort.yaml"}) {
    CAPTURE(config);
    RunSpec spec = load_run_spec(test::source_dir() / config, gpu().plugins, gpu().kernels);
    spec.warmup = 2;
    spec.repeats = 5;
    const RunReport r = run(spec, {gpu().runtime}, gpu().device);
    CHECK_MESSAGE(r.verification.passed, r.verification.detail);
    REQUIRE(r.baseline.has_value());
    if (test::baselines_built()) CHECK(r.baseline->ms.count > 0);
    if (test::baselines_built()) CHECK_MESSAGE(r.baseline->note.empty(), r.baseline->note);
    CHECK(r.kernel.median > 0);
  }
}
