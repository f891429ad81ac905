// The declaration features for kernels written for Kernel Tuner, without a GPU: constant memory
// (its declaration, the run's values, the module cache's key), compiler_options and untuned
// defines, outputs compared by their total, named parameters checked together, a tune config's
// kernel: and kernels: with declare:, a launch's own parameters and a metric as the objective.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include "config/config.hpp"
#include "data/compare_arrays.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "jit/jit.hpp"
#include "kernel/constants.hpp"
#include "kernel/declaration.hpp"
#include "plugin/plugin.hpp"
#include "run/prepare.hpp"
#include "tune/sweep/sweep.hpp"

using namespace gpuk;
using namespace gpuk::test;
namespace fs = std::filesystem;

namespace {

// A Kernel Tuner style kernel: -D parameters, a __constant__ filter, a coupled constraint, and a
// second launch of the same entry with its own num_blocks.
const char* kKernel = R"K(/* gpuk
family: kernel
sizes: [n]
params_as: defines
params:
  block_size_x: {default: 64, values: [32, 64]}
  block_size_y: {default: 8, values: [8, 16]}
  tile_size_y: {default: 8, values: [2, 4, 8]}
  num_blocks: {default: 16, values: [16, 32]}
constraints:
  - block_size_x == block_size_y * tile_size_y
defines: {FW: 5, label: "x y"}
compiler_options: [-use_fast_math, --maxrregcount=64, -DEXTRA=1]
args:
  - {name: out, array: float32, length: 1, role: out}
  - {name: x, array: float32, length: n, role: in}
  - {name: n, scalar: int32, value: n}
  - {name: parts, scalar: int32, value: num_blocks}
constants:
  - {name: d_filter, array: float32, length: 25, data: {generator: uniform, seed: 11}}
  - {name: d_lut, array: int32, length: n, data: {npy: lut.npy}}
scratch:
  - {name: partial, array: float32, length: 32}
launch:
  - {entry: k, grid: num_blocks, block: block_size_x, args: [partial, x, n]}
  - {entry: k, grid: num_blocks, block: block_size_x, params: {num_blocks: 1}, args: [out, partial, parts]}
metrics:
  GB/s: n * 4 / seconds / 1e9
*/
__constant__ float d_filter[25];
extern "C" __global__ void k(float* o, const float* x, int n) {}
)K";

std::string parse_error(const std::string& source) {
  try {
    KernelFile::parse(source, "k/kernel/k.cu");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

HostArray floats(std::initializer_list<float> values) {
  HostArray a(DType::float32, values.size());
  std::size_t i = 0;
  for (const float v : values) a.as<float>()[i++] = v;
  return a;
}

}  // namespace

TEST_CASE("constants: declared with their data, made for the sizes, given from memory, checked") {
  const KernelFile file = KernelFile::parse(kKernel, "k/kernel/k.cu");
  const Declaration& d = *file.declaration;
  REQUIRE(d.constants.size() == 2);
  CHECK(d.constants[0].name == "d_filter");
  CHECK(d.constants[0].dtype == DType::float32);
  CHECK(d.constants[0].length.text() == "25");
  REQUIRE(d.constants[0].data);
  CHECK(d.constants[0].data->seed == 11);
  CHECK(d.constants[1].data->file->filename() == "lut.npy");

  // The data of d_lut from the config (here generated), d_filter's from its declaration: the
  // same bytes as an input array with the same data.
  DataSpec lut;
  lut.seed = 3;
  const auto values = constant_values(d, {{"n", 10}}, {{"d_lut", lut}});
  REQUIRE(values);
  DataSpec filter;
  filter.seed = 11;
  const HostArray want = generate(filter, DType::float32, 25);
  REQUIRE(values->at("d_filter")->bytes() == 100);
  CHECK(std::memcmp(values->at("d_filter")->data(), want.data(), 100) == 0);
  CHECK(values->at("d_lut")->size() == 10);
  CHECK(values->at("d_lut")->dtype() == DType::int32);

  // From memory (the C++ and Python calls): checked against the declared dtype and length.
  const HostArray mine = floats({1, 2, 3});
  const auto given = host_array_from(DType::float32, mine.data(), 12);
  CHECK_THROWS_WITH_AS(constant_values(d, {{"n", 10}}, {{"d_lut", lut}}, {{"d_filter", given}}),
                       doctest::Contains("the value given for constant d_filter (25 float32"), ConfigError);
  std::vector<float> ones(25, 1.0f);
  const auto ok = constant_values(d, {{"n", 10}}, {{"d_lut", lut}},
                                  {{"d_filter", host_array_from(DType::float32, ones.data(), 100)}});
  CHECK(ok->at("d_filter")->as<float>()[24] == 1.0f);
  CHECK_THROWS_WITH_AS(constant_values(d, {{"n", 10}}, {}, {{"d_filtre", given}}),
                       doctest::Contains("'d_filtre' is not a declared constant (did you mean 'd_filter'?)"), ConfigError);
  CHECK_THROWS_WITH_AS(host_array_from(DType::float32, ones.data(), 6), doctest::Contains("not a whole number"), ConfigError);
  // 64 KiB of constant memory for every constant together.
  CHECK_THROWS_WITH_AS(constant_values(d, {{"n", 20000}}, {{"d_lut", lut}}), doctest::Contains("constant memory holds 65536"),
                       ConfigError);

  // The module cache's key: equal values hash and compare alike, others do not.
  const auto again = constant_values(d, {{"n", 10}}, {{"d_lut", lut}});
  CHECK(constants_hash(values.get()) == constants_hash(again.get()));
  CHECK(same_constants(values.get(), again.get()));
  CHECK(!same_constants(values.get(), ok.get()));
  CHECK(!same_constants(values.get(), nullptr));
  CHECK(same_constants(nullptr, nullptr));

  // Errors at their place.
  const std::string k = kKernel;
  CHECK(parse_error(replace(k, "name: d_filter, array: float32", "name: n, array: float32")).find("constant name 'n' is taken") !=
        std::string::npos);
  CHECK(parse_error(replace(k, "name: d_filter, array: float32", "name: d_filter, array: float2"))
            .find("(a float2 array is float32 of twice the length)") != std::string::npos);
  CHECK(parse_error(replace(k, "length: 25, data", "length: block_size_x, data")).find("length of d_filter") != std::string::npos);
  CHECK(parse_error(replace(k, "data: {generator: uniform, seed: 11}", "data: {generator: unifrom}"))
            .find("unknown generator 'unifrom' (did you mean 'uniform'?)") != std::string::npos);
}

TEST_CASE("compiler_options from an allow-list and untuned defines reach NVRTC and key the compile cache") {
  const KernelFile file = KernelFile::parse(kKernel, "k/kernel/k.cu");
  CHECK(file.compile_options ==
        std::vector<std::string>{"-use_fast_math", "--maxrregcount=64", "-DEXTRA=1", "-DFW=5", "-Dlabel=x y"});
  const std::string k = kKernel;
  CHECK(parse_error(replace(k, "-use_fast_math", "-G")).find("compiler option '-G' is not allowed") != std::string::npos);
  CHECK(parse_error(replace(k, "-use_fast_math", "-I/tmp")).find("compiler option '-I/tmp' is not allowed") != std::string::npos);
  CHECK(parse_error(replace(k, "-use_fast_math", "--gpu-architecture=sm_80")).find("is not allowed") != std::string::npos);
  CHECK(parse_error(replace(k, "--maxrregcount=64", "-maxrregcount=lots")).find("takes =N, a positive integer") !=
        std::string::npos);
  CHECK(parse_error(replace(k, "-use_fast_math", "-ftz=maybe")).find("-ftz takes =true|false") != std::string::npos);
  CHECK(parse_error(replace(k, "defines: {FW: 5", "defines: {num_blocks: 5")).find("define 'num_blocks' is a parameter") !=
        std::string::npos);
  // Part of the compile cache's key.
  const Jit jit(JitOptions{"sm_90", {}, {}, false}, nullptr);
  KernelFile other = file;
  other.compile_options.pop_back();
  CHECK(jit.cache_key(file, {"k"}) != jit.cache_key(other, {"k"}));
  CHECK(jit.cache_key(file, {"k"}) == jit.cache_key(KernelFile(file), {"k"}));
}

TEST_CASE("a launch's own parameters: its expressions, its arguments and its -D definitions") {
  const auto file = std::make_shared<const KernelFile>(KernelFile::parse(kKernel, "k/kernel/k.cu"));
  REQUIRE(file->launches.size() == 2);
  CHECK(file->launches[1].params == std::map<std::string, std::int64_t>{{"num_blocks", 1}});
  const Variant v(file, {}, {{"num_blocks", 32}});
  LaunchLimits limits{1000, 132, 4, 1024, 100 << 10};
  limits.sizes = {{"n", 1000}};
  const LaunchPlan plan = plan_launches(v, limits);
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].grid == 32);
  CHECK(plan.launches[1].grid == 1);
  CHECK(plan.launches[0].name_expression == "k -Dblock_size_x=64 -Dblock_size_y=8 -Dtile_size_y=8 -Dnum_blocks=32");
  CHECK(plan.launches[1].name_expression == "k -Dblock_size_x=64 -Dblock_size_y=8 -Dtile_size_y=8 -Dnum_blocks=1");
  // The second launch's `parts` (value: num_blocks) is its own num_blocks.
  REQUIRE(plan.launches[1].args.size() == 3);
  CHECK(plan.launches[1].args[2].bits == 1);
  // Two sets of definitions: two programs, in order.
  const auto programs = programs_by_defines(kernel_names(plan));
  REQUIRE(programs.size() == 2);
  CHECK(programs[0][0] == plan.launches[0].name_expression);
  CHECK(programs_by_defines({"a<1>", "b<2>"}).size() == 1);
  const std::string k = kKernel;
  CHECK(parse_error(replace(k, "params: {num_blocks: 1}", "params: {num_block: 1}"))
            .find("'num_block' is not a parameter (did you mean 'num_blocks'?)") != std::string::npos);
}

TEST_CASE("an output compared by its total: partial sums split differently, the same sum") {
  CompareRule sum;
  sum.sum = true;
  sum.atol = 1e-5;
  const ArrayComparison ok = compare_arrays(floats({1, 2, 3, 0}), floats({6, 0, 0, 0}), sum);
  CHECK(ok.passed);
  CHECK(ok.total);
  CHECK(ok.text("partial") == "partial: the total of 4 elements 6 is within atol 1e-05 + rtol 1e-05 * |expected| of the "
                              "expected 6 (compare: sum)");
  const ArrayComparison bad = compare_arrays(floats({1, 2, 3, 1}), floats({6, 0, 0, 0}), sum);
  CHECK(!bad.passed);
  CHECK(bad.text("partial").find("partial: the total of 4 elements differs: 7 against the expected 6") != std::string::npos);
  // Element by element the same arrays differ.
  CHECK(!compare_arrays(floats({1, 2, 3, 0}), floats({6, 0, 0, 0}), CompareRule{}).passed);
  // Integers: 64-bit totals, exact.
  HostArray a(DType::int32, 2), b(DType::int32, 2);
  a.as<std::int32_t>()[0] = 2000000000, a.as<std::int32_t>()[1] = 2000000000;
  b.as<std::int32_t>()[0] = 0, b.as<std::int32_t>()[1] = 0;
  CompareRule exact;
  exact.sum = true;
  CHECK(!compare_arrays(a, b, exact).passed);
  b.as<std::int32_t>()[0] = 2000000000, b.as<std::int32_t>()[1] = 2000000000;
  CHECK(compare_arrays(a, b, exact).text("t") == "t: the total of 2 elements 4000000000 equals the expected 4000000000 (compare: sum)");
  // NaN totals match only NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(!compare_arrays(floats({nan, 1}), floats({1, 1}), sum).passed);
  CHECK(compare_arrays(floats({nan, 1}), floats({nan, 1}), sum).passed);
}

TEST_CASE("configs: named parameters together, kernel: and kernels: with declare:, constants' data, a metric objective") {
  TempDir dir;
  dir.write("kernel/k.cu", kKernel);
  HostArray lut(DType::int32, 1000);
  write_npy(dir.path() / "kernel" / "lut.npy", lut);
  dir.write("kernel/other.cu", replace(replace(kKernel, "GB/s", "Gelem/s"), "__constant__ float d_filter[25];", ""));
  const PluginRegistry plugins({plugin_dir()});
  const KernelLibrary kernels({dir.path()});
  REQUIRE(kernels.errors().empty());
  const fs::path path = dir.path() / "c.yaml";
  const auto run = [&](const std::string& text) { return parse_run_spec(text, path, plugins, kernels); };
  const auto error = [&](const std::string& text, bool tune) {
    try {
      if (tune) parse_tune_spec(text, path, plugins, kernels);
      else parse_run_spec(text, path, plugins, kernels);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };

  // Coupled parameters: 64 == 16 * 4 holds only with every named value at once.
  const std::string head = "family: kernel\nkernel: k\nsizes: {n: 1000}\n";
  const RunSpec named = run(head + "params: {block_size_x: 64, block_size_y: 16, tile_size_y: 4}\n");
  CHECK(named.params.at("block_size_y") == 16);
  CHECK(error(head + "params: {block_size_x: 64, block_size_y: 16, tile_size_y: 8}\n", false)
            .find("c.yaml:4:9: kernel k: k block_size_x=64 block_size_y=16 tile_size_y=8 num_blocks=16 breaks the "
                  "constraint 'block_size_x == block_size_y * tile_size_y'") != std::string::npos);
  CHECK(error(head + "params: {block_size_x: 48, block_size_y: 16}\n", false).find("c.yaml:4:24: kernel k: block_size_x = 48 is not allowed") !=
        std::string::npos);
  CHECK(error(head + "params: {block_size: 64}\n", false).find("c.yaml:4:10: kernel k has no parameter 'block_size'") !=
        std::string::npos);

  // The constants: d_lut's .npy beside the kernel (1000 int32), d_filter's data from the config.
  REQUIRE(named.constants);
  CHECK(named.constants->at("d_lut")->size() == 1000);
  const RunSpec seeded = run(head + "data:\n  d_filter: {seed: 12}\n");
  DataSpec twelve;
  twelve.seed = 12;
  CHECK(std::memcmp(seeded.constants->at("d_filter")->data(), generate(twelve, DType::float32, 25).data(), 100) == 0);
  CHECK(problem_of(seeded).constants == seeded.constants);
  CHECK(error("family: kernel\nkernel: k\nsizes: {n: 10}\n", false).find("the data of constant d_lut (10 int32") !=
        std::string::npos);

  // A tune config: kernels: [k] with declare: declares k; kernel: k with kernels: sweeps k, then the others.
  const std::string declare = "declare: {summary: redeclared}\n";
  const TuneSpec listed = parse_tune_spec("family: kernel\nkernels: [k]\nsizes: {n: 1000}\n" + declare, path, plugins, kernels);
  CHECK(listed.kernels == std::vector<std::string>{"k"});
  CHECK(listed.run.declared->summary == "redeclared");
  const TuneSpec both =
      parse_tune_spec("family: kernel\nkernel: k\nkernels: [other, k]\nsizes: {n: 1000}\n" + declare, path, plugins, kernels);
  CHECK(both.kernels == std::vector<std::string>{"k", "other"});
  CHECK(both.run.declared->summary == "redeclared");
  CHECK(error("family: kernel\nkernels: all\nsizes: {n: 1000}\n" + declare, true).find("kernels: all does not name") !=
        std::string::npos);
  CHECK(error(head + "kernels: [k]\n", false).find("'kernels' belongs to a tune config") != std::string::npos);

  // objective: a declared metric with its direction; the sweep saves no winner then.
  const std::string tune = "family: kernel\nkernels: [k]\nsizes: {n: 1000}\n";
  const TuneSpec metric = parse_tune_spec(tune + "objective: {metric: GB/s, higher_is_better: true}\n", path, plugins, kernels);
  REQUIRE(metric.metric_objective);
  CHECK(metric.metric_objective->expression == "n * 4 / seconds / 1e9");
  CHECK(!metric.save);
  const std::string unknown = error(tune + "objective: {metric: GFLOP/s, higher_is_better: true}\n", true);
  CHECK(unknown.find("c.yaml:4:21: 'GFLOP/s' is not a metric of the kernel") != std::string::npos);
  CHECK(unknown.find("its metrics: GB/s") != std::string::npos);
  CHECK(error(tune + "objective: {metric: GB/s}\n", true).find("needs higher_is_better") != std::string::npos);
  CHECK(error(tune + "save: true\nobjective: {metric: GB/s, higher_is_better: false}\n", true).find("saves no winner") !=
        std::string::npos);
}

TEST_CASE("a metric as the objective ranks by 1 / value when higher is better, by the value when lower is") {
  Evaluation fast, slow;
  for (Evaluation* e : {&fast, &slow}) {
    e->outcome.status = Status::ok;
    e->params = {{"b", 1}};
  }
  fast.time = Spread::of({1.0, 1.0, 2.0});
  slow.time = Spread::of({4.0, 4.0, 5.0});
  TuneOptions options;
  options.metric = [](const Evaluation& e, double ms) -> std::optional<double> {
    return static_cast<double>(e.params.at("b")) * 1000.0 / ms;  // per second: higher is better
  };
  const auto f = cost_of(fast, options), s = cost_of(slow, options);
  REQUIRE(f);
  REQUIRE(s);
  CHECK(f->median < s->median);
  CHECK(f->median == doctest::Approx(1.0 / 1000.0));
  CHECK(f->q1 <= f->median);
  CHECK(f->median <= f->q3);
  options.metric_higher_is_better = false;
  CHECK(cost_of(fast, options)->median > cost_of(slow, options)->median);
  // A metric it cannot evaluate (another kernel's parameters): not ranked.
  options.metric = [](const Evaluation&, double) -> std::optional<double> { return std::nullopt; };
  CHECK(!cost_of(fast, options));
  // Without a metric, the objective as before.
  CHECK(cost_of(fast, TuneOptions{})->median == fast.time.median);
}
