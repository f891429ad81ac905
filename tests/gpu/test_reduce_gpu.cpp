// Every reduce variant against the CPU reference on fresh random data. Needs a GPU: without one
// this program prints why and exits 77, which CTest reports as skipped.
#include <doctest/doctest.h>

#include <chrono>
#include <iostream>
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
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

using test::fresh_seed;

struct Pattern {
  const char* name;
  std::string data;  // YAML for the data: key
  bool floats_only;
  bool signed_only = false;
};

std::vector<Pattern> patterns(std::uint64_t size) {
  const std::string seed = "seed: " + std::to_string(fresh_seed());
  return {
      {"random", "{generator: uniform, low: -1000000, high: 1000000, " + seed + "}", false},
      {"ties", "{generator: few_distinct, distinct: 3, " + seed + "}", false},
      {"all negative", "{generator: uniform, low: -1000, high: -1, " + seed + "}", false, true},
      {"NaN", "{generator: uniform, low: -1, high: 1, nan: {count: " + std::to_string(std::min<std::uint64_t>(3, size)) +
                  ", at: [" + std::to_string(size / 2) + "]}, " + seed + "}",
       true},
  };
}

RunSpec spec_for(const std::string& kernel, const std::string& op, DType dtype, bool abs, std::uint64_t size,
                 const std::string& data, const std::string& params = "") {
  const std::string yaml = "family: reduce\noperation: " + op + "\nkernel: " + kernel +
                           (params.empty() ? std::string() : "\nparams: " + params) + "\ndtype: " +
                           std::string(dtype_name(dtype)) + "\nabs: " + (abs ? "true" : "false") +
                           "\nsize: " + std::to_string(size) + "\ndata: " + data +
                           "\nwarmup: 1\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n";
  return parse_run_spec(yaml, "gpu-test.yaml", gpu().plugins, gpu().kernels);
}

// The files this sweep runs: those of one contiguous array. segmented_* and per_channel take
// segments or channels (their entries say so) and have their own program, test_segmented_gpu.cpp.
bool contiguous(const KernelFile& file) {
  for (const auto& l : file.launches)
    if (l.entry.rfind("reduce_segmented_", 0) == 0 || l.entry.rfind("reduce_per_channel", 0) == 0) return false;
  return true;
}

std::vector<std::string> names_of(const KernelFile& file, const RunSpec& spec) {
  const Variant v(std::make_shared<const KernelFile>(file), gpu().plugins.get("reduce").template_args(problem_of(spec)),
                  spec.params);
  std::vector<std::string> names;
  for (const auto& l : file.launches) names.push_back(v.name_expression(l));
  return names;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("every reduce variant matches the CPU reference: odd sizes, ties, NaN, all-negative data") {
  // Quick: one element, a warp's edges, a few blocks and a grid with blocks left empty (2^18 + 7);
  // each (file, operation, dtype, |x|, size) runs random data and one of the dtype's edge patterns
  // (ties, all negative, NaN), number (|x| + size) among them, so that every size meets each.
  // Exhaustive (GPUK_EXHAUSTIVE=1): every pattern at every size up to 2^20 + 7, a grid with every
  // block busy.
  const bool all = test::exhaustive();
  const std::vector<std::uint64_t> sizes = all
                                               ? std::vector<std::uint64_t>{1, 31, 32, 33, 1000, (1u << 20) + 7}
                                               : std::vector<std::uint64_t>{1, 31, 33, 1000, (1u << 18) + 7};
  // Every variant the sweep runs, compiled first, on every core.
  auto start = std::chrono::steady_clock::now();
  test::CompiledSet set;
  for (const auto& file : gpu().kernels.family("reduce")) {
    if (!contiguous(*file)) continue;
    set.add_every_variant(gpu().plugins.get("reduce"), file, 8);
  }
  set.compile(Jit(jit_options(gpu().device.info().arch(), gpu().kernels), &gpu().cache));
  std::cout << "compiled " << set.programs() << " programs in " << seconds_since(start) << " s\n";
  for (const auto& file : gpu().kernels.family("reduce")) {
    if (!contiguous(*file)) continue;
    start = std::chrono::steady_clock::now();
    int runs = 0, failures = 0;
    for (const auto& op : file->operations)
      for (DType dtype : file->dtypes)
        for (bool abs : {false, true})
          for (std::size_t si = 0; si < sizes.size(); ++si) {
            const std::uint64_t size = sizes[si];
            std::vector<Pattern> chosen;
            for (const auto& pattern : patterns(size))
              if ((!pattern.floats_only || dtype_is_float(dtype)) && (!pattern.signed_only || dtype_is_signed(dtype)))
                chosen.push_back(pattern);
            if (!all) {  // random (the first) and one edge pattern in turn
              const std::size_t edge = 1 + (si + (abs ? 1 : 0)) % (chosen.size() - 1);
              chosen = {chosen[0], chosen[edge]};
            }
            for (const auto& pattern : chosen) {
              const RunSpec spec = spec_for(file->name, op, dtype, abs, size, pattern.data);
              const std::string what = file->name + " " + op + (abs ? " |x|" : "") + " " +
                                       std::string(dtype_name(dtype)) + " n=" + std::to_string(size) + " " +
                                       pattern.name + " data " + pattern.data;
              ++runs;
              try {
                const CompiledKernels& compiled = set.holding(*file, names_of(*file, spec).front());
                const RunReport r = run(spec, {gpu().runtime}, gpu().device, &compiled);
                if (!r.verification.passed) ++failures;
                CHECK_MESSAGE(r.verification.passed, (what + ": " + r.verification.detail));
              } catch (const Error& e) {
                ++failures;
                FAIL_CHECK((what + ": " + std::string(e.what())));
              }
            }
          }
    MESSAGE(file->name << ": " << runs << " runs, " << failures << " failed");
    std::cout << file->name << ": " << runs << " runs, " << failures << " failed, in " << seconds_since(start) << " s\n";
  }
}

TEST_CASE("onepass's switches match the CPU reference: odd sizes, ties, NaN, all-negative data") {
  // LOAD, SPLIT, WAVES and FOLD away from their defaults (kernels_src/reduce/onepass.cu), on
  // both of its paths: packed candidates (32-bit values) and partials (float64, and every sum).
  // Sizes: one element, one block's partial tile, a grid of more blocks than whole tiles (SPLIT 1
  // leaves blocks empty), and a grid of several waves (2^20 + 7).
  const std::vector<std::string> settings = {
      "{BLOCK: 256, UNROLL: 4, BLOCKS_PER_SM: 2, LOAD: 1, SPLIT: 1, WAVES: 4, FOLD: 1}",
      "{BLOCK: 128, UNROLL: 1, BLOCKS_PER_SM: 2, LOAD: 2, SPLIT: 1, WAVES: 1, FOLD: 1}",
      "{BLOCK: 512, UNROLL: 8, BLOCKS_PER_SM: 4, LOAD: 1, SPLIT: 0, WAVES: 8, FOLD: 1}",
      "{BLOCK: 256, UNROLL: 8, BLOCKS_PER_SM: 8, LOAD: 2, SPLIT: 1, WAVES: 2, FOLD: 0}"};
  const std::vector<std::uint64_t> sizes = {1, 1000, 5000, (1u << 20) + 7};
  std::shared_ptr<const KernelFile> file;
  for (const auto& f : gpu().kernels.family("reduce"))
    if (f->name == "onepass") file = f;
  REQUIRE(file);
  const std::vector<DType> dtypes = {DType::float32, DType::int32, DType::float64};
  struct Case {
    RunSpec spec;
    std::string what;
  };
  std::vector<Case> cases;
  std::vector<std::vector<std::string>> variants;
  for (std::size_t k = 0; k < settings.size(); ++k)
    for (const auto& op : file->operations)
      for (DType dtype : dtypes)
        for (bool abs : {false, true})
          for (std::size_t si = 0; si < sizes.size(); ++si) {
            std::vector<Pattern> chosen;
            for (const auto& pattern : patterns(sizes[si]))
              if ((!pattern.floats_only || dtype_is_float(dtype)) && (!pattern.signed_only || dtype_is_signed(dtype)))
                chosen.push_back(pattern);
            for (const auto& pattern : {chosen[0], chosen[1 + (si + k) % (chosen.size() - 1)]}) {
              RunSpec spec = spec_for("onepass", op, dtype, abs, sizes[si], pattern.data, settings[k]);
              variants.push_back(names_of(*file, spec));
              cases.push_back({std::move(spec), "onepass " + settings[k] + " " + op + (abs ? " |x|" : "") + " " +
                                                    std::string(dtype_name(dtype)) + " n=" + std::to_string(sizes[si]) +
                                                    " " + pattern.name + " data " + pattern.data});
            }
          }
  test::CompiledSet set;
  set.add(file, variants, 4);
  set.compile(Jit(jit_options(gpu().device.info().arch(), gpu().kernels), &gpu().cache));
  int failures = 0;
  for (const auto& c : cases) {
    try {
      const RunReport r = run(c.spec, {gpu().runtime}, gpu().device, &set.holding(*file, names_of(*file, c.spec).front()));
      if (!r.verification.passed) ++failures;
      CHECK_MESSAGE(r.verification.passed, (c.what + ": " + r.verification.detail));
    } catch (const Error& e) {
      ++failures;
      FAIL_CHECK((c.what + ": " + std::string(e.what())));
    }
  }
  std::cout << "onepass switches: " << cases.size() << " runs, " << failures << " failed\n";
}

TEST_CASE("a kernel that writes nothing fails verification: outputs are poisoned before every run") {
  const test::TempDir dir;
  dir.write("lazy.cu",
            "/* gpuk\nfamily: reduce\noperations: [max, min, sum, argmax, argmin]\n"
            "launch:\n  - {entry: lazy, grid: 1, block: 32}\n*/\n"
            "#include \"gpuk/reduce.cuh\"\n"
            "template <class R> __global__ void lazy(const typename R::T* in, long long n,"
            " typename R::Acc* out, typename R::Acc* p, unsigned* c) {}\n");
  const Runtime runtime(test::runtime_options({dir.path()}, false));
  const KernelLibrary& kernels = runtime.kernels();
  for (const char* op : {"max", "sum", "argmax"}) {
    const std::string yaml = std::string("family: reduce\noperation: ") + op +
                             "\nkernel: lazy\nsize: 1000\nrepeats: 1\nbaseline: false\n";
    const RunSpec spec = parse_run_spec(yaml, "lazy.yaml", gpu().plugins, kernels);
    const RunReport r = run(spec, {runtime}, gpu().device);
    CHECK_FALSE(r.verification.passed);
  }
}

TEST_CASE("the CUB baseline runs in the same run and agrees on ordinary data") {
  const RunSpec spec = load_run_spec(test::source_dir() / "configs/argmax.yaml", gpu().plugins, gpu().kernels);
  const RunReport r = run(spec, {gpu().runtime}, gpu().device);
  CHECK(r.verification.passed);
  REQUIRE(r.baseline.has_value());
  if (test::baselines_built()) CHECK(r.baseline->ms.count > 0);
  if (test::baselines_built()) CHECK(r.baseline->note.empty());
  CHECK(r.kernel.median > 0);
}
