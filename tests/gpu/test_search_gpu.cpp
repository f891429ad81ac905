// Every search variant against the CPU reference on fresh random data. Needs a GPU: without one
// this program prints why and exits 77, which CTest reports as skipped.
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <random>

#include "compiled_set.hpp"
#include "config/config.hpp"
#include "helpers.hpp"
#include "run/runner.hpp"

using namespace gpuk;

namespace {

struct Gpu {
  Runtime runtime{test::runtime_options()};
  const PluginRegistry& plugins = runtime.plugins();
  const KernelLibrary& kernels = runtime.kernels();
  Device device{0};
  const CompileCache& cache = runtime.cache();
  test::TempDir dir;  // data files of the cases that need exact contents
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

using test::fresh_seed;

// One case: the data (generated, or a .npy written here), how the value is chosen, and what the
// answer must be beyond agreeing with the CPU reference (find's index, or -1 when checked).
struct Case {
  std::string name;
  std::string data;    // YAML for data:
  std::string value;   // YAML lines choosing the value
  std::optional<std::int64_t> find;  // the index find must return, when the case knows it
};

template <class T> std::string write_npy_file(const std::vector<T>& values, const std::string& stem) {
  HostArray a(dtype_of<T>(), values.size());
  std::copy(values.begin(), values.end(), a.as<T>().begin());
  const auto path = gpu().dir.path() / (stem + "-" + std::to_string(fresh_seed()) + ".npy");
  write_npy(path, a);
  return "{file: " + path.string() + "}";
}

// Unique values (a permutation, exact in every dtype) with one value copied to three random
// places, far apart for large n: find must return the lowest of the four.
template <class T> Case several_matches(std::uint64_t n) {
  std::mt19937_64 rng(fresh_seed());
  std::vector<T> v(n);
  std::vector<std::uint64_t> order(n);
  for (std::uint64_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = static_cast<T>(order[i]);
  const std::uint64_t source = rng() % n;
  std::uint64_t first = source;
  for (int k = 0; k < 3; ++k) {
    const std::uint64_t at = rng() % n;
    v[at] = v[source];
    first = std::min(first, at);
  }
  return {"several matches", write_npy_file(v, "several"), "value_index: " + std::to_string(source) + "\n",
          static_cast<std::int64_t>(first)};
}

// Numbers in [1, 2) with a -0.0 and then a +0.0: searching 0.0 or -0.0 finds the -0.0.
template <class T> std::vector<Case> signed_zeros(std::uint64_t n) {
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<T> dist(T(1), T(2));
  std::vector<T> v(n);
  for (auto& x : v) x = dist(rng);
  const std::uint64_t p = rng() % n;
  v[p] = -T(0);
  if (p + 1 < n) v[p + 1 + rng() % (n - p - 1)] = T(0);
  const std::string data = write_npy_file(v, "zeros");
  return {{"-0.0 in the data, search 0.0", data, "value: 0.0\n", static_cast<std::int64_t>(p)},
          {"-0.0 in the data, search -0.0", data, "value: -0.0\n", static_cast<std::int64_t>(p)}};
}

std::vector<Case> cases(DType dtype, std::uint64_t n) {
  const std::string seed = "seed: " + std::to_string(fresh_seed());
  const std::string permutation = "{generator: permutation, " + seed + "}";
  std::vector<Case> out = {
      {"absent", permutation, "value_at: absent\n", -1},
      {"at index 0", permutation, "value_at: first\n", 0},
      {"at index n-1", permutation, "value_at: last\n", static_cast<std::int64_t>(n - 1)},
      {"at a random index", permutation, "value_at: random\n", std::nullopt},
      {"few distinct values", "{generator: few_distinct, distinct: 3, " + seed + "}", "value_at: middle\n",
       std::nullopt},
  };
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, std::uint64_t>) out.push_back(several_matches<T>(n));
    if constexpr (std::is_floating_point_v<T>) {
      const std::string nan = "{generator: uniform, low: -1, high: 1, nan: {count: " +
                              std::to_string(std::min<std::uint64_t>(3, n)) + ", at: [" + std::to_string(n / 2) +
                              "]}, " + seed + "}";
      out.push_back({"NaN in the data, search NaN", nan, "value: nan\n", -1});
      out.push_back({"NaN in the data, search the NaN at n/2", nan, "value_at: middle\n", -1});
      for (auto& c : signed_zeros<T>(n)) out.push_back(c);
    }
  });
  return out;
}

RunSpec spec_for(const std::string& kernel, const std::string& op, DType dtype, std::uint64_t size, const Case& c) {
  const std::string yaml = "family: search\noperation: " + op + "\nkernel: " + kernel + "\ndtype: " +
                           std::string(dtype_name(dtype)) + "\nsize: " + std::to_string(size) + "\ndata: " + c.data +
                           "\n" + c.value + "warmup: 1\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n";
  return parse_run_spec(yaml, "gpu-test.yaml", gpu().plugins, gpu().kernels);
}

// Every variant of `files`, compiled on every core (small programs at once).
test::CompiledSet compile_all(const std::vector<std::shared_ptr<const KernelFile>>& files) {
  test::CompiledSet set;
  for (const auto& file : files) {
    set.add_every_variant(gpu().plugins.get("search"), file, 8);
  }
  set.compile(Jit(jit_options(gpu().device.info().arch(), gpu().kernels), &gpu().cache));
  return set;
}

std::string first_name(const std::shared_ptr<const KernelFile>& file, const RunSpec& spec) {
  return Variant(file, gpu().plugins.get("search").template_args(problem_of(spec)), {}).name_expression(file->launches[0]);
}

std::string result_of(const RunReport& r, const std::string& key) {
  for (const auto& [k, v] : r.result)
    if (k == key) return v;
  return "";
}

}  // namespace

TEST_CASE("every search variant matches the CPU reference: absent, first, last, several matches, NaN, -0.0") {
  // Three of fast.cu's default waves of 4-byte tiles (sm_count * BLOCKS_PER_SM 4 blocks, each tile
  // BLOCK 256 * UNROLL 4 16-byte vectors) and one element: every block strides over 3 tiles (6 of
  // 8-byte keys) with the last one partial, on any GPU (6.5 million elements on 132 SMs; it was
  // 3 * 2^22 + 1, sized for an H100, and most of the program's time).
  const std::uint64_t wave = static_cast<std::uint64_t>(gpu().device.info().sm_count) * 4 * 256 * 4 * 4;
  const std::vector<std::uint64_t> sizes = {1, 31, 33, (1u << 20) + 7, 3 * wave + 1};
  const auto files = gpu().kernels.family("search");
  const test::CompiledSet compiled = compile_all(files);
  std::vector<int> runs(files.size()), failures(files.size());
  for (DType dtype : gpu().plugins.get("search").dtypes())
    for (auto size : sizes) {
      const std::vector<Case> all = cases(dtype, size);  // the same data for every variant
      for (std::size_t f = 0; f < files.size(); ++f)
        for (const auto& c : all)
          for (const auto& op : files[f]->operations) {
            const RunSpec spec = spec_for(files[f]->name, op, dtype, size, c);
            const std::string what = files[f]->name + " " + op + " " + std::string(dtype_name(dtype)) +
                                     " n=" + std::to_string(size) + " " + c.name + " (data " + c.data + ")";
            ++runs[f];
            try {
              const RunReport r = run(spec, {gpu().runtime}, gpu().device,
                                      &compiled.holding(*files[f], first_name(files[f], spec)));
              bool ok = r.verification.passed;
              CHECK_MESSAGE(r.verification.passed, (what + ": " + r.verification.detail));
              if ((op == "find" || op == "find_if") && c.find) {  // find_if's default compare is eq
                ok = ok && result_of(r, "index") == std::to_string(*c.find);
                CHECK_MESSAGE(result_of(r, "index") == std::to_string(*c.find), what);
              }
              if (op == "any" && c.find && *c.find < 0) {
                ok = ok && result_of(r, "index") == "-1";
                CHECK_MESSAGE(result_of(r, "index") == "-1", what);
              }
              if (!ok) ++failures[f];
            } catch (const Error& e) {
              ++failures[f];
              FAIL_CHECK((what + ": " + std::string(e.what())));
            }
          }
      std::error_code ec;  // the data files of this dtype and size are done with
      for (const auto& entry : std::filesystem::directory_iterator(gpu().dir.path(), ec))
        std::filesystem::remove(entry.path(), ec);
    }
  for (std::size_t f = 0; f < files.size(); ++f) {
    MESSAGE(files[f]->name << ": " << runs[f] << " runs, " << failures[f] << " failed");
    std::cout << files[f]->name << ": " << runs[f] << " runs, " << failures[f] << " failed\n";
  }
}

TEST_CASE("fast.cu with every BLOCK, UNROLL and BLOCKS_PER_SM, and every POLL, finds the first of several matches") {
  const auto file = gpu().kernels.find("search", "fast");
  const std::uint64_t n = 3 * (1u << 22) + 1;
  const Case c = several_matches<std::int32_t>(n);
  std::vector<std::map<std::string, std::int64_t>> combos;
  std::vector<std::string> names;
  for (std::int64_t block : {128, 256, 512, 1024})
    for (std::int64_t unroll : {1, 2, 4, 8})
      for (std::int64_t per_sm : {1, 2, 4, 8}) {
        if (block * per_sm > 2048) continue;
        combos.push_back({{"BLOCK", block}, {"UNROLL", unroll}, {"BLOCKS_PER_SM", per_sm}, {"POLL", 4}});
      }
  REQUIRE(combos.size() == 52);
  for (std::int64_t poll : {1, 2, 8}) combos.push_back({{"BLOCK", 256}, {"UNROLL", 8}, {"BLOCKS_PER_SM", 4}, {"POLL", poll}});
  for (const auto& combo : combos)
    names.push_back(Variant(file, {"gpuk::Search<int, gpuk::SearchOp::Find>"}, combo).name_expression(file->launches[0]));
  test::CompiledSet compiled;  // programs of 8 variants, compiled at once
  std::vector<std::vector<std::string>> variants;
  for (const auto& n : names) variants.push_back({n});
  compiled.add(file, variants, 8);
  compiled.compile(Jit(jit_options(gpu().device.info().arch(), gpu().kernels), &gpu().cache));
  for (std::size_t i = 0; i < combos.size(); ++i) {
    const auto& combo = combos[i];
    const std::string yaml = "family: search\noperation: find\nkernel: fast\ndtype: int32\nsize: " +
                             std::to_string(n) + "\ndata: " + c.data + "\n" + c.value +
                             "params: {BLOCK: " + std::to_string(combo.at("BLOCK")) + ", UNROLL: " +
                             std::to_string(combo.at("UNROLL")) + ", BLOCKS_PER_SM: " +
                             std::to_string(combo.at("BLOCKS_PER_SM")) + ", POLL: " + std::to_string(combo.at("POLL")) +
                             "}\nwarmup: 1\nrepeats: 3\ncpu_repeats: 1\nbaseline: false\n";
    const RunSpec spec = parse_run_spec(yaml, "fast.yaml", gpu().plugins, gpu().kernels);
    const RunReport r = run(spec, {gpu().runtime}, gpu().device, &compiled.holding(*file, names[i]));
    CHECK_MESSAGE(r.verification.passed, (r.variant + ": " + r.verification.detail));
    CHECK_MESSAGE(result_of(r, "index") == std::to_string(*c.find), r.variant);
  }
}

TEST_CASE("a search kernel that writes nothing fails verification: the output is poisoned before every run") {
  const test::TempDir dir;
  dir.write("lazy.cu",
            "/* gpuk\nfamily: search\noperations: [find, any, count]\ndtypes: [int32]\n"
            "launch:\n  - {entry: lazy, grid: 1, block: 32}\n*/\n"
            "#include \"gpuk/search.cuh\"\n"
            "template <class S> __global__ void lazy(const typename S::T* in, long long n, typename S::T value,"
            " long long* out, gpuk::SearchState* state) {}\n");
  const Runtime runtime(test::runtime_options({dir.path()}, false));
  const KernelLibrary& kernels = runtime.kernels();
  for (const char* op : {"find", "any", "count"}) {
    const std::string yaml = std::string("family: search\noperation: ") + op +
                             "\nkernel: lazy\ndtype: int32\nsize: 1000\nrepeats: 1\nbaseline: false\n";
    const RunSpec spec = parse_run_spec(yaml, "lazy.yaml", gpu().plugins, kernels);
    const RunReport r = run(spec, {runtime}, gpu().device);
    CHECK_FALSE(r.verification.passed);
    CHECK(r.verification.detail.find("poison") != std::string::npos);
  }
}

TEST_CASE("configs/search.yaml runs, and thrust::find agrees in the same run") {
  const RunSpec spec = load_run_spec(test::source_dir() / "configs/search.yaml", gpu().plugins, gpu().kernels);
  const RunReport r = run(spec, {gpu().runtime}, gpu().device);
  CHECK(r.verification.passed);
  CHECK(result_of(r, "found") == "yes");
  REQUIRE(r.baseline.has_value());
  CHECK(r.baseline->name.rfind("thrust::find (CCCL ", 0) == 0);  // the CCCL it was built with
  if (test::baselines_built()) CHECK(r.baseline->ms.count > 0);
  if (test::baselines_built()) CHECK(r.baseline->note.empty());
  CHECK(r.kernel.median > 0);
}

TEST_CASE("thrust::count and thrust::find (for any) agree with the reference") {
  for (const char* op : {"count", "any"}) {
    const std::string yaml = std::string("family: search\noperation: ") + op +
                             "\ndtype: float64\nsize: 100000\nvalue_at: middle\n"
                             "data: {generator: few_distinct, distinct: 5, seed: 4}\nrepeats: 3\n";
    const RunSpec spec = parse_run_spec(yaml, "thrust.yaml", gpu().plugins, gpu().kernels);
    const RunReport r = run(spec, {gpu().runtime}, gpu().device);
    CHECK(r.verification.passed);
    REQUIRE(r.baseline.has_value());
    if (test::baselines_built()) CHECK(r.baseline->note.empty());
  }
}
