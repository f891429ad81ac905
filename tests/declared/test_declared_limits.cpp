// Hostile declarations without a GPU (docs/reliability.md, "Bounds on what gpuk reads"): metric
// expressions parsed once and bounded in depth and size, errors at the token's start folded into
// the YAML file's line and column, a parameter cap, loading linear in the file's size, and a
// broken file that fails alone.
#include <doctest/doctest.h>

#include <ctime>
#include <fstream>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "kernel/declaration.hpp"
#include "kernel/expr_bounds.hpp"
#include "kernel/metric_expr.hpp"

using namespace gpuk;
using namespace gpuk::test;
namespace fs = std::filesystem;

namespace {

std::string metric_error(const std::string& text, const std::map<std::string, double>& values = {{"n", 4}}) {
  try {
    (void)MetricExpr::parse(text).eval(values);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string nested(int depth) { return std::string(depth, '(') + "1" + std::string(depth, ')'); }

// A kernel directory of its own, with the files given.
struct LimitsDir {
  fs::path root = fs::temp_directory_path() / ("gpuk_limits_" + std::to_string(fresh_seed()));
  explicit LimitsDir(const std::map<std::string, std::string>& files) {
    fs::create_directories(root / "kernel");
    fs::permissions(root, fs::perms::owner_all);
    fs::permissions(root / "kernel", fs::perms::owner_all);
    for (const auto& [name, text] : files) std::ofstream(root / name) << text;
  }
  ~LimitsDir() { fs::remove_all(root); }
};

const char* kPlain = "extern \"C\" __global__ void scale(float* y, const float* x, int n) {}\n";

std::string sidecar(const std::string& params, const std::string& metrics) {
  return "sizes: [n]\nparams_as: defines\nparams:\n" + params +
         "args:\n  - {name: y, array: float32, length: n, role: out}\n"
         "  - {name: x, array: float32, length: n, role: in}\n  - {name: n, scalar: int32, value: n}\n"
         "launch:\n  - {entry: scale, grid: \"ceil_div(n, 256)\", block: 256}\n" +
         (metrics.empty() ? "" : "metrics:\n" + metrics);
}

// Processor time, not wall time: a shared test machine stretches the latter.
double seconds_since(std::clock_t t0) { return static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC; }

}  // namespace

TEST_CASE("a metric is parsed once and evaluated many times") {
  const MetricExpr m = MetricExpr::parse("2 * m * n * k / seconds / 1e9");
  CHECK(m.identifiers() == std::vector<std::string>{"m", "n", "k", "seconds"});
  CHECK(m.eval({{"m", 1024}, {"n", 1024}, {"k", 1024}, {"seconds", 1e-3}}) == doctest::Approx(2147.483648));
  CHECK(m.eval({{"m", 1}, {"n", 1}, {"k", 1}, {"seconds", 1}}) == 2e-9);
  CHECK(MetricExpr::parse("max(n, 3) + ceil_div(7, 2) - -min(1, 2) + .5 + 2.5e1").eval({{"n", 1}}) == 3 + 4 + 1 + 0.5 + 25);
  CHECK(MetricExpr::parse("1 - 2 - 3").eval({}) == -4);  // left to right
  CHECK(MetricExpr::parse("8 / 2 / 2").eval({}) == 2);
}

TEST_CASE("metric errors: at the token's start, arity, numbers without hex, inf or locale") {
  CHECK(metric_error("ceil_div(1, 2, 3)") == "column 1: ceil_div() takes 2 arguments, got 3");
  CHECK(metric_error("1 + ceil_div(n)") == "column 5: ceil_div() takes 2 arguments, got 1");
  CHECK(metric_error("min()") == "column 1: min() takes at least 1 argument, got 0");
  CHECK(metric_error("2 * floor(n)") == "column 5: unknown function 'floor' (known: min, max, ceil_div)");
  CHECK(metric_error("(1 + 2") == "column 7: expected ')'");
  CHECK(metric_error("1 +") == "column 4: unexpected end of expression");
  CHECK(metric_error("1 $ 2") == "column 3: unexpected '$'");
  CHECK(metric_error("") == "column 1: empty expression");
  CHECK(metric_error("1e999") == "column 1: number '1e999' out of range");
  CHECK(metric_error("0x10") == "column 2: unexpected 'x10'");
  CHECK(metric_error("inf").find("'inf' is not a size, a parameter or seconds") == 0);
  CHECK(metric_error("2 * q").find("'q' is not a size, a parameter or seconds") == 0);
  CHECK(metric_error("n / (n - 4)") == "division by zero in 'n / (n - 4)'");
  CHECK(metric_error("1 + ceil_div(n, 0)") == "division by zero in 'ceil_div(n, 0)' in metric '1 + ceil_div(n, 0)'");
  CHECK(metric_error("1e300 * 1e300").find("not finite") != std::string::npos);
}

TEST_CASE("metric nesting and size are bounded before recursion: 20,000 parentheses refused cleanly") {
  CHECK(MetricExpr::parse(nested(63)).eval({}) == 1);
  CHECK(metric_error(nested(64)) == "column 65: expression nested too deeply (more than 64 levels, kMaxExprDepth)");
  CHECK(metric_error(nested(20000)).find("nested too deeply") != std::string::npos);
  CHECK(metric_error(std::string(60000, '-') + "1").find("nested too deeply") != std::string::npos);
  std::string calls;
  for (int i = 0; i < 1000; ++i) calls += "max(";
  CHECK(metric_error(calls + "1").find("nested too deeply") != std::string::npos);
  CHECK(metric_error("1" + std::string(kMaxExprBytes, ' ')).find("longer than the limit of 65536 bytes") !=
        std::string::npos);
  // Flat chains are not nesting; a long one's error keeps its reason.
  std::string sum = "0";
  for (int i = 0; i < 20000; ++i) sum += "+1";
  CHECK(MetricExpr::parse(sum).eval({}) == 20000);
  const std::string e = metric_error(sum + "/0");
  CHECK(e.size() < 250);
  CHECK(e.find("division by zero in '1/0' in metric '0+1+1") == 0);
  CHECK(e.find("(40003 bytes)") != std::string::npos);
}

TEST_CASE("a metric 20,000 deep beside a kernel is that file's problem, not the directory's") {
  const std::string deep = "  deep: '" + nested(20000) + "'\n";
  LimitsDir dir({{"kernel/deep.cu", kPlain}, {"kernel/deep.yaml", sidecar("", deep)},
           {"kernel/good.cu", kPlain}, {"kernel/good.yaml", sidecar("", "  GB: n / seconds\n")}});
  const std::clock_t t0 = std::clock();
  const KernelLibrary kernels({dir.root});
  CHECK(seconds_since(t0) < 1.0);
  REQUIRE(kernels.errors().size() == 1);
  CHECK(kernels.errors()[0].find("deep.yaml:") != std::string::npos);
  CHECK(kernels.errors()[0].find("metric 'deep'") != std::string::npos);
  CHECK(kernels.errors()[0].find("nested too deeply (more than 64 levels, kMaxExprDepth)") != std::string::npos);
  CHECK(kernels.errors()[0].size() < 400);
  CHECK(kernels.find("kernel", "good")->declaration->metrics.size() == 1);
  CHECK_THROWS_WITH_AS(kernels.find("kernel", "deep"), doctest::Contains("nested too deeply"), ConfigError);
}

TEST_CASE("declaration expression errors name file:line:col once, at the token") {
  LimitsDir dir({{"kernel/k.cu", kPlain},
           {"kernel/k.yaml", sidecar("", "  GB: 2 * n / secs\n  X: ceil_div(n, 2, 3)\n")}});
  const KernelLibrary kernels({dir.root});
  REQUIRE(kernels.errors().size() == 1);
  CHECK(kernels.errors()[0].find("k.yaml:11:15: metric 'GB' '2 * n / secs' names 'secs', which is not a size, a "
                                 "parameter or seconds; it may use seconds, n") != std::string::npos);
  // Integer expressions alike: the column of the call, not of the value.
  std::string yaml = sidecar("", "");
  yaml.replace(yaml.find("\"ceil_div(n, 256)\""), 18, "\"1 + ceil_div(n, 256, 3)\"");
  LimitsDir dir2({{"kernel/k.cu", kPlain}, {"kernel/k.yaml", yaml}});
  const KernelLibrary kernels2({dir2.root});
  REQUIRE(kernels2.errors().size() == 1);
  CHECK(kernels2.errors()[0].find("k.yaml:9:31: grid '1 + ceil_div(n, 256, 3)': ceil_div() takes 2 arguments, got 3") !=
        std::string::npos);
}

TEST_CASE("a declaration has at most 64 parameters; loading is linear in the file's size") {
  const auto params = [](int count) {
    std::string out;
    for (int i = 0; i < count; ++i) out += "  p" + std::to_string(i) + ": {default: 1, values: [1, 2, 3, 4]}\n";
    return out;
  };
  {
    LimitsDir dir({{"kernel/k.cu", kPlain}, {"kernel/k.yaml", sidecar(params(64), "")}});
    const KernelLibrary kernels({dir.root});
    CHECK(kernels.errors().empty());
    CHECK(kernels.find("kernel", "k")->params.size() == 64);
  }
  for (const int count : {65, 1000, 8000}) {
    CAPTURE(count);
    LimitsDir dir({{"kernel/k.cu", kPlain}, {"kernel/k.yaml", sidecar(params(count), "")}, {"kernel/good.cu", kPlain},
             {"kernel/good.yaml", sidecar(params(2), "")}});
    const std::clock_t t0 = std::clock();
    const KernelLibrary kernels({dir.root});
    CHECK(seconds_since(t0) < 1.0);
    REQUIRE(kernels.errors().size() == 1);
    CHECK(kernels.errors()[0].find("k.yaml:4:3: params: " + std::to_string(count) +
                                   " of them; a kernel file or a declaration has at most 64") != std::string::npos);
    CHECK(kernels.find("kernel", "good")->params.size() == 2);
  }
  // A 40 KB expression: refused or parsed in well under a second.
  std::string sum = "n";
  for (int i = 0; i < 10000; ++i) sum += " + n";
  LimitsDir dir({{"kernel/k.cu", kPlain}, {"kernel/k.yaml", sidecar("", "  long: " + sum + "\n")}});
  const std::clock_t t0 = std::clock();
  const KernelLibrary kernels({dir.root});
  CHECK(seconds_since(t0) < 1.0);
  CHECK(kernels.errors().empty());
  CHECK(kernels.find("kernel", "k")->declaration->metrics[0].expression.eval({{"n", 1}, {"seconds", 1}}) == 10001);
}
