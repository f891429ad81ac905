// What the sort GPU test programs share: the GPU, the cases (operation, values, order), each
// key dtype's range, and a sweep of one kernel file's shapes with its variants compiled first.
#pragma once
#include <string>
#include <vector>

#include "compiled_set.hpp"
#include "config/config.hpp"
#include "helpers.hpp"
#include "run/runner.hpp"

namespace gpuk::test::sort_gpu {

struct Gpu {
  Runtime runtime{test::runtime_options()};
  const PluginRegistry& plugins = runtime.plugins();
  const KernelLibrary& kernels = runtime.kernels();
  Device device{0};
  const CompileCache& cache = runtime.cache();
  test::TempDir dir;
};

inline Gpu& gpu() {
  static Gpu g;
  return g;
}

using test::fresh_seed;

// What the test runs: an operation, a value dtype for pairs, an order.
struct Case {
  std::string op;
  std::string values;  // sort_pairs: uint32 / uint64
  bool descending;
};

inline std::string range_of(DType dtype) {
  switch (dtype) {
    case DType::uint32: return "low: 0, high: 4294967295";
    case DType::int32: return "low: -2147483648, high: 2147483647";
    case DType::uint64: return "low: 0, high: 18000000000000000000";
    case DType::int64: return "low: -9000000000000000000, high: 9000000000000000000";
    default: return "low: -1000000, high: 1000000";
  }
}

// `kernel` at each of `params` (YAML maps) on every dtype and case given, at n = 1, 33, 5,000 and
// 2^18 + 3, few distinct keys (ties across many tiles), every answer checked; the variants
// compiled first, on every core. Returns the number of runs.
inline std::size_t shape_sweep(const std::string& kernel, const std::vector<std::string>& params,
                               const std::vector<DType>& dtypes, const std::vector<Case>& cases) {
  const auto file = gpu().kernels.find("sort", kernel);
  std::vector<RunSpec> specs;
  std::vector<std::string> labels;
  for (const std::string& p : params)
    for (DType dtype : dtypes)
      for (std::uint64_t size : {1ull, 33ull, 5000ull, (1ull << 18) + 3})
        for (const Case& c : cases) {
          const std::string data = "{generator: few_distinct, distinct: 100, " + range_of(dtype) +
                                   ", seed: " + std::to_string(fresh_seed()) + "}";
          const std::string yaml = "family: sort\noperation: " + c.op + "\nkernel: " + kernel + "\nparams: " + p +
                                   "\ndtype: " + std::string(dtype_name(dtype)) + "\norder: " +
                                   (c.descending ? "descending" : "ascending") + "\nvalues: " + c.values +
                                   "\nsize: " + std::to_string(size) + "\ndata: " + data +
                                   "\nwarmup: 2\nrepeats: 3\ncpu_repeats: 1\nbaseline: false\n";
          specs.push_back(parse_run_spec(yaml, "gpu-test.yaml", gpu().plugins, gpu().kernels));
          labels.push_back(kernel + " " + p + " " + std::string(dtype_name(dtype)) + " " +
                           (c.descending ? "descending " : "") + "n=" + std::to_string(size) + " " + c.op + " values " +
                           c.values);
        }
  const auto names = [&](const RunSpec& spec) {
    const Variant v(file, gpu().plugins.get("sort").template_args(problem_of(spec)), spec.params);
    std::vector<std::string> out;
    for (const auto& l : file->launches) out.push_back(v.name_expression(l));
    return out;
  };
  CompiledSet set;
  std::vector<std::vector<std::string>> variants;
  for (const auto& spec : specs) variants.push_back(names(spec));
  set.add(file, variants, 2);
  set.compile(Jit(jit_options(gpu().device.info().arch(), gpu().kernels), &gpu().cache));
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const RunReport r = run(specs[i], {gpu().runtime}, gpu().device, &set.holding(*file, names(specs[i]).front()));
    CHECK_MESSAGE(r.verification.passed, (labels[i] + ": " + r.verification.detail));
  }
  return specs.size();
}

}  // namespace gpuk::test::sort_gpu
