// The declared-kernel family without a GPU: declarations read from a metadata block, a YAML file
// beside the kernel and a config's declare: (every role and dtype, errors at their line and
// column), plans of 1-3 dimensions with each launch's arguments, and the comparison rules.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "config/config.hpp"
#include "data/compare_arrays.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "kernel/declaration.hpp"
#include "plugin/plugin.hpp"
#include "run/declared_run.hpp"

using namespace gpuk;
using namespace gpuk::test;
namespace fs = std::filesystem;

namespace {

const char* kDeclared = R"K(/* gpuk
family: kernel
summary: every role and dtype
sizes: [nx, ny]
params:
  BX: {default: 32, values: [16, 32]}
  BY: {default: 4, values: [2, 4]}
constraints:
  - BX * BY <= 1024
args:
  - {name: a, array: float32, length: nx * ny, role: in}
  - {name: b, array: float64, length: nx, role: inout}
  - {name: c, array: int32, length: ny, role: out}
  - {name: d, array: uint32, length: 1, role: out}
  - {name: e, array: int64, length: nx + ny, role: in}
  - {name: f, array: uint64, length: 2, role: inout}
  - {name: nx, scalar: int32, value: nx}
  - {name: wide, scalar: int64, value: nx * ny * BX}
  - {name: alpha, scalar: float32, value: 0.25}
  - {name: beta, scalar: float64, value: -1.5}
  - {name: u, scalar: uint32, value: BY}
scratch:
  - {name: partial, array: float32, length: "ceil_div(nx, BX)"}
launch:
  - entry: first
    grid: [ceil_div(nx, BX), ceil_div(ny, BY)]
    block: [BX, BY]
    shared_bytes: BX * BY * 4
  - entry: second
    grid: 1
    block: [BX, 1, 2]
    args: [partial, c, nx]
bytes: 3 * nx * ny
metrics:
  GFLOP/s: 2 * nx * ny / seconds / 1e9
*/
template <int BX, int BY> __global__ void first() {}
template <int BX, int BY> __global__ void second() {}
)K";

std::string kernel_error_of(const std::string& source, const std::string& name = "k/kernel/k.cu") {
  try {
    KernelFile::parse(source, name);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A kernel directory of its own, with the files given.
struct Dir {
  fs::path root;
  explicit Dir(const std::map<std::string, std::string>& files) {
    root = fs::temp_directory_path() / ("gpuk_declared_" + std::to_string(fresh_seed()));
    fs::create_directories(root / "kernel");
    fs::permissions(root, fs::perms::owner_all);
    fs::permissions(root / "kernel", fs::perms::owner_all);
    for (const auto& [name, text] : files) std::ofstream(root / name) << text;
  }
  ~Dir() { fs::remove_all(root); }
};

LaunchLimits limits_for(std::int64_t nx, std::int64_t ny) {
  LaunchLimits l{nx * ny, 132, 4, 1024, 100 << 10};
  l.sizes = {{"nx", nx}, {"ny", ny}};
  return l;
}

}  // namespace

TEST_CASE("a declaration in the metadata block: sizes, every role and dtype, scratch, launches in 1-3 dimensions") {
  const auto file = std::make_shared<const KernelFile>(KernelFile::parse(kDeclared, "k/kernel/k.cu"));
  REQUIRE(file->declaration);
  const Declaration& d = *file->declaration;
  CHECK(file->family == "kernel");
  CHECK(file->params_as == ParamsAs::template_args);
  CHECK(d.sizes == std::vector<std::string>{"nx", "ny"});
  REQUIRE(d.args.size() == 11);
  CHECK(d.arrays().size() == 6);
  CHECK(d.args[0].role == ArgRole::in);
  CHECK(d.args[1].role == ArgRole::inout);
  CHECK(d.args[2].role == ArgRole::out);
  const DType dtypes[] = {DType::float32, DType::float64, DType::int32, DType::uint32, DType::int64, DType::uint64};
  for (int i = 0; i < 6; ++i) CHECK(d.args[i].dtype == dtypes[i]);
  CHECK(!d.args[6].array);
  CHECK(d.args[8].literal == 0.25);
  CHECK(d.metrics.size() == 1);
  CHECK(file->supports("anything"));  // a declared kernel is its own operation

  const Variant v(file, {}, {{"BX", 16}, {"BY", 2}});
  CHECK(v.name_expression(file->launches[0]) == "first<16, 2>");
  const LaunchPlan plan = plan_launches(v, limits_for(100, 30));
  REQUIRE(plan.launches.size() == 2);
  const ResolvedLaunch& l = plan.launches[0];
  CHECK(l.grid == 7);
  CHECK(l.grid_y == 15);
  CHECK(l.block == 16);
  CHECK(l.block_y == 2);
  CHECK(l.shared_bytes == 128);
  CHECK(plan.launches[1].block_z == 2);
  CHECK(plan.launches[1].threads() == 32);
  // Every argument by default, in order: arrays by index, values by their bytes.
  REQUIRE(l.args.size() == 11);
  CHECK(l.args[0].kind == LaunchArg::Kind::array);
  CHECK(l.args[5].index == 5);
  CHECK(l.args[6].kind == LaunchArg::Kind::value);
  CHECK(l.args[6].size == 4);
  CHECK(l.args[6].bits == 100);
  CHECK(l.args[7].bits == 100 * 30 * 16);
  float alpha;
  std::memcpy(&alpha, &l.args[8].bits, 4);
  CHECK(alpha == 0.25f);
  double beta;
  std::memcpy(&beta, &l.args[9].bits, 8);
  CHECK(beta == -1.5);
  CHECK(l.args[10].bits == 2);
  // The second launch's own list: scratch by offset, an array, a value.
  const auto& args = plan.launches[1].args;
  REQUIRE(args.size() == 3);
  CHECK(args[0].kind == LaunchArg::Kind::scratch);
  CHECK(args[0].bits == 0);
  CHECK(args[1].kind == LaunchArg::Kind::array);
  CHECK(args[1].index == 2);
  CHECK(plan.scratch_bytes == 256);  // 7 floats, rounded up to 256 bytes
}

TEST_CASE("params_as: defines passes every parameter as -D and looks the entry up by its plain name") {
  std::string text = replace(kDeclared, "sizes: [nx, ny]", "sizes: [nx, ny]\nparams_as: defines");
  const auto file = std::make_shared<const KernelFile>(KernelFile::parse(text, "k/kernel/k.cu"));
  CHECK(file->params_as == ParamsAs::defines);
  const Variant v(file, {}, {{"BX", 16}});
  CHECK(v.name_expression(file->launches[0]) == "first -DBX=16 -DBY=4");
}

TEST_CASE("declaration errors point at their file, line and column") {
  CHECK(kernel_error_of(replace(kDeclared, "role: out}", "role: output}")).find("k.cu:13:47: role must be in, out or inout, not 'output'") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "length: nx * ny, role: in", "length: nx * nz, role: in")).find("k.cu:11:44: length of a 'nx * nz' names 'nz'") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "array: float32, length: nx * ny", "array: float16, length: nx * ny")).find("k.cu:11:22: unknown dtype 'float16' (did you mean 'float32'?)") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "value: BY}", "value: BZ}")).find("k.cu:21:38: value of u 'BZ' names 'BZ'") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "args: [partial, c, nx]", "args: [partail, c, nx]")).find("k.cu:32:12: launch argument 'partail' is not declared (did you mean 'partial'?)") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "block: [BX, BY]", "block: [BX, BY, 1, 1]")).find("k.cu:27:12: block takes 1 to 3 expressions") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "entry: second", "entry: third")).find("k.cu:29:12: entry 'third' is not defined in k.cu") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "  - {name: nx, scalar: int32, value: nx}\n", "  - {name: nx, scalar: int32}\n")).find("k.cu:17:5: scalar nx needs a value") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "role: inout}", "role: inout, value: 1}")).find("k.cu:12:63: argument b is an array: it takes length and role, not value") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "sizes: [nx, ny]", "sizes: [nx, BX]")).find("k.cu:6:3: parameter name 'BX' is taken") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "GFLOP/s: 2 * nx * ny / seconds / 1e9", "GFLOP/s: 2 * nx * nz / seconds")).find("k.cu:35:21: metric 'GFLOP/s' '2 * nx * nz / seconds' names 'nz', which is not a size, a parameter or seconds") != std::string::npos);
  // A comma inside a flow mapping's expression ends the value: said so, where it happened.
  CHECK(kernel_error_of(replace(kDeclared, "length: \"ceil_div(nx, BX)\"", "length: ceil_div(nx, BX)")).find("k.cu:23:58: 'BX)' looks like the end of an expression cut at a comma") != std::string::npos);
  // A flow sequence's expressions are joined again: [ceil_div(nx, BX), ...] above is two dimensions.
  CHECK(kernel_error_of(replace(kDeclared, "grid: [ceil_div(nx, BX), ceil_div(ny, BY)]", "grid: [ceil_div(nx, BX), ceil_div(ny, BQ)]")).find("k.cu:26:30: grid 'ceil_div(ny, BQ)' names 'BQ'") != std::string::npos);
  CHECK(kernel_error_of(replace(kDeclared, "args:\n", "argz:\n")).find("k.cu:10:1: unknown key 'argz' in the declaration (did you mean 'args'?)") != std::string::npos);
}

TEST_CASE("a plain kernel file is listed without a declaration; one beside it or a config's declare: declares it") {
  const std::string plain = "extern \"C\" __global__ void scale(float* y, const float* x, int n) {\n"
                            "  int i = blockIdx.x * block_size_x + threadIdx.x;\n  if (i < n) y[i] = 2 * x[i];\n}\n";
  const std::string sidecar = "sizes: [n]\nparams_as: defines\nparams:\n  block_size_x: {default: 128, values: [64, 128]}\n"
                              "args:\n  - {name: y, array: float32, length: n, role: out}\n"
                              "  - {name: x, array: float32, length: n, role: in}\n  - {name: n, scalar: int32, value: n}\n"
                              "launch:\n  - {entry: scale, grid: \"ceil_div(n, block_size_x)\", block: block_size_x}\n";
  Dir dir({{"kernel/plain.cu", plain}, {"kernel/side.cu", plain}, {"kernel/side.yaml", sidecar}});
  const KernelLibrary kernels({dir.root});
  CHECK(kernels.errors().empty());
  CHECK_THROWS_WITH_AS(kernels.find("kernel", "plain"), doctest::Contains("this one is plain CUDA"), ConfigError);
  const auto p = kernels.find_declarable("kernel", "plain");
  CHECK(p->plain);
  CHECK(p->family == "kernel");
  CHECK(!p->declaration);
  const auto s = kernels.find("kernel", "side");
  REQUIRE(s->declaration);
  CHECK(s->params_as == ParamsAs::defines);
  CHECK(s->family == "kernel");  // from its folder

  // The config's declare: over the file's own keys: here the sidecar's, with other values.
  const yaml::Source src{dir.root / "c.yaml", 0};
  const YAML::Node declare = src.parse("params:\n  block_size_x: {default: 64, values: [32, 64]}\n");
  const KernelFile redeclared = declare_kernel(*s, src, declare);
  CHECK(redeclared.param("block_size_x")->default_value == 64);
  CHECK(redeclared.declaration->args.size() == 3);
  // A wrong key in the config is the config's error, at its place.
  const YAML::Node bad = src.parse("\nlaunch:\n  - {entry: scale, grid: 1, blok: 1}\n");
  try {
    declare_kernel(*s, src, bad);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("c.yaml:3:29: unknown key 'blok' in a launch (did you mean 'block'?)") != std::string::npos);
  }
}

TEST_CASE("a run config of a declared kernel: sizes, data per argument, reference, compare and baseline") {
  const std::string plain = "extern \"C\" __global__ void scale(float* y, const float* x, int n) {}\n"
                            "extern \"C\" __global__ void naive(float* y, const float* x, int n) {}\n";
  const std::string decl = "sizes: [n]\nparams_as: defines\nparams:\n  B: {default: 128, values: [64, 128]}\n"
                           "args:\n  - {name: y, array: float32, length: n, role: out}\n"
                           "  - {name: x, array: float32, length: n, role: in}\n  - {name: n, scalar: int32, value: n}\n"
                           "launch:\n  - {entry: scale, grid: \"ceil_div(n, B)\", block: B}\n";
  const std::string naive_decl = "sizes: [n]\nargs:\n  - {name: y, array: float32, length: n, role: out}\n"
                                 "  - {name: x, array: float32, length: n, role: in}\n  - {name: n, scalar: int32, value: n}\n"
                                 "launch:\n  - {entry: naive, grid: n, block: 1}\n";
  Dir dir({{"kernel/scale.cu", plain}, {"kernel/scale.yaml", decl}, {"kernel/naive.cu", plain}, {"kernel/naive.yaml", naive_decl}});
  const PluginRegistry plugins({plugin_dir()});
  const KernelLibrary kernels({dir.root});
  const std::string config = "family: kernel\nkernel: scale\nsizes: {n: 1000}\nparams: {B: 64}\n"
                             "data:\n  x: {generator: normal, seed: 9}\nreference: {kernel: naive}\n"
                             "compare:\n  y: {ulps: 2}\nbaseline: naive\n";
  const RunSpec spec = parse_run_spec(config, dir.root / "c.yaml", plugins, kernels);
  CHECK(spec.kernel == "scale");
  CHECK(spec.sizes.at("n") == 1000);
  CHECK(spec.size == 1000);
  CHECK(spec.params.at("B") == 64);
  CHECK(spec.arg_data.at("x").generator == Generator::normal);
  CHECK(spec.arg_data.at("x").seed == 9);
  CHECK(spec.reference_kernel == "naive");
  CHECK(*spec.compare.at("y").ulps == 2);
  CHECK(spec.baseline_kernel == "naive");
  CHECK(spec.verify);
  CHECK(spec.options.at("n") == "1000");  // the sizes key the tuning database
  const Problem problem = problem_of(spec);
  CHECK(problem.sizes.at("n") == 1000);
  REQUIRE(problem.declaration);
  // The family's Launcher: the declared arrays, sized for the problem.
  const auto launcher = plugins.get("kernel").make_launcher(problem);
  const auto arrays = launcher->arrays();
  REQUIRE(arrays.size() == 2);
  CHECK(arrays[0].output);
  CHECK(!arrays[1].output);
  CHECK(arrays[1].bytes == 4000);

  const auto error = [&](const std::string& text) {
    try {
      parse_run_spec(text, dir.root / "c.yaml", plugins, kernels);
    } catch (const ConfigError& e) {
        return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error("family: kernel\nkernel: scale\nsizes: {m: 1000}\n").find("c.yaml:3:9: the kernel has no size 'm'") != std::string::npos);
  CHECK(error("family: kernel\nkernel: scale\nsizes: {n: 10}\ndata:\n  y: {seed: 1}\n").find("c.yaml:5:3: 'y' is not an input array of the kernel (did you mean 'x'?); its inputs: x") != std::string::npos);
  CHECK(error("family: kernel\nkernel: scale\nsizes: {n: 10}\ncompare:\n  y: {ulps: 1, atol: 1}\n").find("c.yaml:5:13: give ulps or atol/rtol, not both") != std::string::npos);
  CHECK(error("family: kernel\nkernel: scale\nsizes: {n: 10}\nverify: true\n").find("c.yaml:4:9: verify: true needs a reference") != std::string::npos);
  CHECK(error("family: kernel\nkernel: scale\nsizes: {n: 10}\nparams: {B: 32}\n").find("c.yaml:4:13: kernel scale: B = 32 is not allowed") != std::string::npos);
  // The library API's problem: every declared size, nothing else.
  const auto file = kernels.find("kernel", "scale");
  CHECK(make_declared_problem(plugins.get("kernel"), file, {{"n", 64}}).n == 64);
  CHECK_THROWS_WITH_AS(make_declared_problem(plugins.get("kernel"), file, {}), doctest::Contains("needs the size n"), ConfigError);
  CHECK_THROWS_WITH_AS(make_declared_problem(plugins.get("kernel"), file, {{"n", 4}, {"m", 4}}),
                       doctest::Contains("has no size 'm'"), ConfigError);
  // Without a reference the run is not verified, and says so.
  CHECK(!parse_run_spec("family: kernel\nkernel: scale\nsizes: {n: 10}\n", dir.root / "c.yaml", plugins, kernels).verify);
}

TEST_CASE("outputs are compared exactly for integers, by atol/rtol or ulps for floats, NaN where NaN") {
  const auto floats = [](std::vector<float> v) {
    HostArray a(DType::float32, v.size());
    std::memcpy(a.data(), v.data(), v.size() * 4);
    return a;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const HostArray want = floats({1.0f, 2.0f, nan, 0.0f});
  CHECK(compare_arrays(floats({1.0f, 2.0f, nan, 0.0f}), want, {}).passed);
  CHECK(!compare_arrays(floats({1.0f, 2.0f, 1.0f, 0.0f}), want, {}).passed);  // NaN expected
  CHECK(!compare_arrays(floats({nan, 2.0f, nan, 0.0f}), want, {}).passed);   // NaN not expected
  // Default: atol 1e-6 + rtol 1e-5 * |expected|.
  CHECK(compare_arrays(floats({1.000005f, 2.0f, nan, 0.0f}), want, {}).passed);
  const ArrayComparison off = compare_arrays(floats({1.0f, 2.5f, nan, 0.5f}), want, {});
  CHECK(!off.passed);
  CHECK(off.mismatches == 2);
  CHECK(off.first_bad == 1);
  CHECK(off.max_abs == doctest::Approx(0.5));
  CHECK(off.text("out") == "out: 2 of 4 differ (atol 1e-06 + rtol 1e-05 * |expected|); first at index 1 (got 2.5, expected 2); max abs error 0.5, max rel error inf");
  CompareRule loose;
  loose.atol = 0.6;
  CHECK(compare_arrays(floats({1.0f, 2.5f, nan, 0.5f}), want, loose).passed);
  CompareRule ulps;
  ulps.ulps = 1;
  CHECK(compare_arrays(floats({std::nextafter(1.0f, 2.0f), 2.0f, nan, 0.0f}), want, ulps).passed);
  CHECK(!compare_arrays(floats({std::nextafter(std::nextafter(1.0f, 2.0f), 2.0f), 2.0f, nan, 0.0f}), want, ulps).passed);
  CHECK(compare_arrays(floats({1.0f, 2.0f, nan, -0.0f}), want, ulps).passed);  // -0 and 0 are one ulp apart at most

  // A large array is compared in shares on several threads: the same counts, maxima and first
  // difference as one loop (10 million floats: shares of 16 MiB where the host has the threads).
  constexpr std::size_t big = 10'000'000;
  HostArray large(DType::float32, big), large_want(DType::float32, big);
  for (std::size_t i = 0; i < big; ++i) large.as<float>()[i] = large_want.as<float>()[i] = static_cast<float>(i % 1000);
  const ArrayComparison same = compare_arrays(large, large_want, {});
  CHECK(same.passed);
  CHECK(same.max_abs == 0);
  large.as<float>()[big - 3] = 5000.0f;      // in the last share
  large.as<float>()[big / 2 + 1] += 0.5f;  // in a middle one
  large.as<float>()[7] = nan;              // and the first
  const ArrayComparison spread = compare_arrays(large, large_want, {});
  CHECK(!spread.passed);
  CHECK(spread.mismatches == 3);
  CHECK(spread.first_bad == 7);
  CHECK(spread.got == "nan");
  CHECK(spread.max_abs == doctest::Approx(5000.0f - static_cast<float>((big - 3) % 1000)));

  HostArray ints(DType::int64, 3), other(DType::int64, 3);
  for (int i = 0; i < 3; ++i) ints.as<std::int64_t>()[i] = other.as<std::int64_t>()[i] = i * 1000000007ll;
  CHECK(compare_arrays(ints, other, {}).text("n").find("n: 3 elements equal") == 0);
  other.as<std::int64_t>()[2] += 1;
  const ArrayComparison exact = compare_arrays(ints, other, {});
  CHECK(!exact.passed);
  CHECK(exact.first_bad == 2);
  CHECK(exact.rule == "exact");
  CHECK_THROWS_AS(compare_arrays(ints, want, {}), Error);
}

TEST_CASE("a compare rule with its defaults filled in per dtype, as the host and the GPU apply it") {
  const ElementRule f = element_rule(DType::float32, {});
  CHECK_FALSE(f.exact);
  CHECK(f.atol == 1e-6);
  CHECK(f.rtol == 1e-5);
  CHECK_FALSE(f.ulps.has_value());
  CHECK(f.text == "atol 1e-06 + rtol 1e-05 * |expected|");
  const ElementRule i = element_rule(DType::int64, {});
  CHECK(i.exact);
  CHECK(i.atol == 0);
  CHECK(i.text == "exact");
  CompareRule ulps;
  ulps.ulps = 4;
  CHECK(element_rule(DType::float64, ulps).ulps == 4);
  CHECK(element_rule(DType::float64, ulps).text == "4 ulps");
  // ulps on integers: no units in the last place, so exact by its tolerance of 0, said as given.
  CHECK_FALSE(element_rule(DType::int32, ulps).exact);
  CHECK_FALSE(element_rule(DType::int32, ulps).ulps.has_value());
  CompareRule tolerance;
  tolerance.atol = 2;
  const ElementRule t = element_rule(DType::uint32, tolerance);
  CHECK_FALSE(t.exact);
  CHECK(t.atol == 2);
  CHECK(t.rtol == 0);
  // compare_arrays reports the same rule.
  HostArray a(DType::uint32, 1), b(DType::uint32, 1);
  a.as<std::uint32_t>()[0] = 3;
  b.as<std::uint32_t>()[0] = 1;
  CHECK(compare_arrays(a, b, tolerance).rule == t.text);
  CHECK(compare_arrays(a, b, tolerance).passed);
}

TEST_CASE("metrics are floating-point expressions of the sizes, the parameters and seconds") {
  CHECK(eval_metric("2 * m * n * k / seconds / 1e9", {{"m", 1024}, {"n", 1024}, {"k", 1024}, {"seconds", 1e-3}}) ==
        doctest::Approx(2147.483648));
  CHECK(eval_metric("max(a, 3) + ceil_div(7, 2)", {{"a", 1}}) == 3 + 4);
  CHECK_THROWS_WITH_AS(eval_metric("2 * q", {{"a", 1}}), doctest::Contains("'q' is not a size"), ConfigError);
  CHECK_THROWS_AS(eval_metric("(1 + 2", {}), ConfigError);
}

TEST_CASE("the report's data line names every input array's data, a file by its name") {
  test::TempDir dir;
  // B from a .npy file of its length (k * n = 6 float32), A generated, C the output.
  HostArray b(DType::float32, 6);
  write_npy(dir.path() / "b.npy", b);
  const fs::path config = dir.write("c.yaml", "family: kernel\nkernel: matmul\nsizes: {m: 4, n: 2, k: 3}\n"
                                              "data:\n  A: {generator: normal, seed: 5}\n  B: {npy: b.npy}\n");
  const PluginRegistry plugins({plugin_dir()});
  const KernelLibrary kernels({kernels_dir()});
  const RunSpec spec = load_run_spec(config, plugins, kernels);
  const DataSummary d = run_data_summary(spec);
  CHECK(d.array == "A");
  CHECK(d.generator == "normal");
  CHECK(d.seed == 5);
  REQUIRE(d.others.size() == 1);
  CHECK(d.others[0].array == "B");
  CHECK(d.others[0].generator == "file");
  CHECK(d.text() == "A: normal (mean 0, stddev 1), seed 5; B: file " + (dir.path() / "b.npy").string());
  // The three families' one input: no names.
  DataSummary plain = d;
  plain.array.clear();
  plain.others.clear();
  CHECK(plain.text() == "normal (mean 0, stddev 1), seed 5");
}
