// Hostile inputs through the command line, without a GPU (docs/reliability.md, "Bounds on what
// gpuk reads"): a broken declaration beside a kernel never takes down a command about another
// file; values that reach a kernel are range-checked; `check` plans declared kernels at the
// config's sizes; the CLI's numbers and paths are checked with clear words and exit status 2.
#include <doctest/doctest.h>

#include <fstream>

#include "declared/declared_cli.hpp"
#include "helpers.hpp"

using namespace gpuk::test;
namespace fs = std::filesystem;

namespace {

struct HostileScratch {
  fs::path root = fs::temp_directory_path() / ("gpuk_hostile_" + std::to_string(fresh_seed()));
  HostileScratch() {
    fs::create_directories(root);
    fs::permissions(root, fs::perms::owner_all);
  }
  ~HostileScratch() { fs::remove_all(root); }
  // A kernel directory DIR/kernel with the files given; returns DIR.
  fs::path kernels(const std::string& dir, const std::map<std::string, std::string>& files) const {
    fs::create_directories(root / dir / "kernel");
    fs::permissions(root / dir, fs::perms::owner_all);
    fs::permissions(root / dir / "kernel", fs::perms::owner_all);
    for (const auto& [name, text] : files) std::ofstream(root / dir / "kernel" / name) << text;
    return root / dir;
  }
  fs::path file(const std::string& name, const std::string& text) const {
    std::ofstream(root / name) << text;
    return root / name;
  }
};

CommandResult run_gpuk(const std::string& args, const std::string& env = "") {
  return run_command(env + (env.empty() ? "" : " ") + "timeout -s KILL 60 " + std::string(GPUK_EXE) + " " + args);
}

std::string declaration(const std::string& n_value, const std::string& extra = "",
                        const std::string& grid = "\"ceil_div(n, 256)\"") {
  return "sizes: [n]\nargs:\n  - {name: y, array: float32, length: n, role: out}\n"
         "  - {name: x, array: float32, length: n, role: in}\n  - {name: n, scalar: int32, value: " +
         n_value + "}\nlaunch:\n  - {entry: scale, grid: " + grid + ", block: 256}\n" + extra;
}

std::string config(const std::string& kernel, const std::string& sizes, const std::string& extra = "") {
  return "family: kernel\nkernel: " + kernel + "\nsizes: " + sizes + "\n" + extra;
}

}  // namespace

TEST_CASE("a metric 20,000 deep beside a kernel: list, check and run of other configs go on") {
  const HostileScratch s;
  const std::string deep = "metrics:\n  deep: '" + std::string(20000, '(') + "1" + std::string(20000, ')') + "'\n";
  const fs::path dir = s.kernels("deep", {{"deep.cu", kScale}, {"deep.yaml", declaration("n", deep)}});
  const CommandResult list = run_gpuk("--kernels " + dir.string() + " list");
  CHECK(list.status == 0);
  CHECK(has(list.output, "Problems:"));
  CHECK(has(list.output, "deep.yaml:"));
  CHECK(has(list.output, "nested too deeply (more than 64 levels, kMaxExprDepth)"));
  CHECK(list.output.size() < 64 * 1024);
  const std::string argmax = (source_dir() / "configs" / "argmax.yaml").string();
  const CommandResult check = run_gpuk("--kernels " + dir.string() + " check " + argmax);
  CHECK(check.status == 0);
  CHECK(has(check.output, "all passed"));
  const CommandResult env = run_gpuk("check " + argmax, "GPUK_KERNELS=" + dir.string());
  CHECK(env.status == 0);
  // run gets past loading: it runs on a GPU, says there is none (status 5) elsewhere; never a signal.
  const CommandResult run = run_gpuk("--kernels " + dir.string() + " run " + argmax);
  CHECK((run.status == 0 || run.status == 5));
}

TEST_CASE("integers that reach a kernel are range-checked against their dtype by check") {
  const HostileScratch s;
  const fs::path dir = s.kernels("k", {{"wide.cu", kScale}, {"wide.yaml", declaration("n")},
                                       {"square.cu", kScale}, {"square.yaml", declaration("n * n")},
                                       {"pow.cu", kScale}, {"pow.yaml", declaration("pow2(40)")}});
  const auto check = [&](const std::string& name, const std::string& text) {
    return run_gpuk("--kernels " + dir.string() + " check " + s.file(name, text).string());
  };
  const CommandResult big = check("big.yaml", config("wide", "{n: 2147483648}"));
  CHECK(big.status == 2);
  CHECK(has(big.output, "value of n 'n' of wide"));
  CHECK(has(big.output, "is 2147483648, outside int32's range [-2147483648, 2147483647]"));
  const CommandResult bigger = check("bigger.yaml", config("wide", "{n: 8589934592}"));
  CHECK(bigger.status == 2);
  CHECK(has(bigger.output, "is 8589934592, outside int32's range"));
  const CommandResult square = check("square.yaml", config("square", "{n: 100000}"));
  CHECK(square.status == 2);
  CHECK(has(square.output, "value of n 'n * n' of square"));
  CHECK(has(square.output, "is 10000000000, outside int32's range"));
  const CommandResult pow = check("pow.yaml", config("pow", "{n: 1000}"));
  CHECK(pow.status == 2);
  CHECK(has(pow.output, "'pow2(40)'"));
  CHECK(has(pow.output, "is 1099511627776, outside int32's range"));
  const CommandResult fine = check("fine.yaml", config("wide", "{n: 2147483647}"));
  CHECK(fine.status == 0);
  // uint32 0 - 1, in a config's declare:
  std::string minus = declaration("n");
  minus.replace(minus.find("scalar: int32, value: n"), 23, "scalar: uint32, value: 0 - 1");
  std::string indented;
  for (std::size_t at = 0, next; at < minus.size(); at = next + 1) {
    next = minus.find('\n', at);
    indented += "  " + minus.substr(at, next - at) + "\n";
  }
  const CommandResult negative = check("negative.yaml", config("wide", "{n: 1000}", "declare:\n" + indented));
  CHECK(negative.status == 2);
  CHECK(has(negative.output, "negative.yaml:"));
  CHECK(has(negative.output, "value of n '0 - 1' of wide"));
  CHECK(has(negative.output, "is -1, outside uint32's range [0, 4294967295]"));
}

TEST_CASE("declared kernels are planned at the config's sizes: when: n > 4096 loads and runs at 8192") {
  const HostileScratch s;
  const std::string big = "sizes: [n]\nargs:\n  - {name: y, array: float32, length: n, role: out}\n"
                          "  - {name: x, array: float32, length: n, role: in}\n  - {name: n, scalar: int32, value: n}\n"
                          "launch:\n  - {entry: scale, grid: \"ceil_div(n, 256)\", block: 256, when: n > 4096}\n";
  const fs::path early = s.kernels("early", {{"big.cu", kScale}, {"big.yaml", declaration("n")}});
  const fs::path later = s.kernels("later", {{"big.cu", kScale}, {"big.yaml", big}});
  const fs::path cfg = s.file("big.yaml", config("big", "{n: 8192}"));
  const CommandResult list = run_gpuk("--kernels " + early.string() + " --kernels " + later.string() + " list");
  CHECK(!has(list.output, "can run"));
  const CommandResult ok = run_gpuk("--kernels " + early.string() + " --kernels " + later.string() + " check " + cfg.string());
  CHECK(ok.status == 0);
  CHECK(has(ok.output, later.string()));  // the later directory's file, not the earlier one's
  const CommandResult small = run_gpuk("--kernels " + later.string() + " check " + s.file("small.yaml", config("big", "{n: 100}")).string());
  CHECK(small.status == 2);
  CHECK(has(small.output, (later / "kernel" / "big.yaml").string() + ":7: no launch of big runs for n = 100 (every launch's 'when' is 0)"));
  // A later file that does not load shadows the earlier one all the same: its error, not the other file.
  const fs::path broken = s.kernels("broken", {{"big.cu", kScale}, {"big.yaml", big + "metrics:\n  m: (1\n"}});
  const CommandResult shadowed = run_gpuk("--kernels " + early.string() + " --kernels " + broken.string() + " check " + cfg.string());
  CHECK(shadowed.status == 2);
  CHECK(has(shadowed.output, "expected ')'"));
}

TEST_CASE("a plan's error in the YAML beside the kernel names that YAML's line") {
  const HostileScratch s;
  const fs::path dir = s.kernels("k", {{"huge.cu", kScale}, {"huge.yaml", declaration("n", "", "pow2(31)")}});
  const CommandResult r = run_gpuk("--kernels " + dir.string() + " check " + s.file("c.yaml", config("huge", "{n: 1000}")).string());
  CHECK(r.status == 2);
  CHECK(has(r.output, "huge.yaml:7: grid 'pow2(31)'"));
}

TEST_CASE("family: reduce in a declaration does not make a reduce kernel") {
  const HostileScratch s;
  const fs::path dir = s.kernels("reduce", {{"argmax_declared.cu", kScale},
                                            {"argmax_declared.yaml", "family: reduce\n" + declaration("n")}});
  const fs::path cfg = s.file("c.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 1000\n"
                                        "kernel: argmax_declared\n");
  const CommandResult r = run_gpuk("--kernels " + dir.string() + " check " + cfg.string());
  CHECK(r.status == 2);
  CHECK(has(r.output, "argmax_declared is a declared kernel"));
  // gpuk list shows it as the problem it is, not among the reduce kernels.
  const CommandResult list = run_gpuk("--kernels " + dir.string() + " list");
  CHECK(list.status == 0);
  const std::size_t problems = list.output.find("Problems:");
  REQUIRE(problems != std::string::npos);
  CHECK(list.output.find("argmax_declared is a declared kernel", problems) != std::string::npos);
  CHECK(list.output.find("argmax_declared") > list.output.find("Problems:") - 1);
}

TEST_CASE("the command line's numbers, architectures and directories are checked") {
  const std::string argmax = (source_dir() / "configs" / "argmax.yaml").string();
  const CommandResult arch = run_gpuk("check --arch sm_99999999999999999999 " + argmax);
  CHECK(arch.status == 2);
  CHECK(has(arch.output, "'sm_99999999999999999999' is not a GPU architecture"));
  const CommandResult arch4 = run_gpuk("check --arch sm_1000 " + argmax);
  CHECK(arch4.status == 2);
  CHECK(has(arch4.output, "'sm_1000' is not a GPU architecture"));
  for (const char* repeats : {"1000001", "-3", "0", "1.5"}) {
    CAPTURE(repeats);
    const CommandResult r = run_gpuk(std::string("run --repeats ") + repeats + " " + argmax);
    CHECK(r.status == 2);
    CHECK(has(r.output, "must be an integer from 1 to 1000000"));
    CHECK(r.output.size() < 400);
  }
  const CommandResult seed = run_gpuk("tune --seed -1 " + argmax);
  CHECK(seed.status == 2);
  CHECK(has(seed.output, "must be an integer from 0 to 18446744073709551615, not '-1'"));
  // A GPU named twice is refused for its words, before the GPUs are counted (no GPU: not exit 5).
  const CommandResult twice = run_gpuk("run --devices 0,0 " + argmax);
  CHECK(twice.status == 2);
  CHECK(has(twice.output, "--devices 0,0 names a GPU more than once"));
  const CommandResult typo = run_gpuk("--kernal x list");
  CHECK(typo.status == 2);
  CHECK(has(typo.output, "unknown option '--kernal' (did you mean '--kernels'?)"));
  const HostileScratch s;
  const fs::path file = s.file("not_a_dir", "x");
  const CommandResult kernels = run_gpuk("--kernels " + file.string() + " list");
  CHECK(has(kernels.output, "not_a_dir: not a directory; --kernels and $GPUK_KERNELS name directories"));
  const CommandResult plugins = run_gpuk("--plugins " + (s.root / "nonexistent").string() + " list");
  CHECK(has(plugins.output, "nonexistent: plugin directory does not exist"));
}

TEST_CASE("settings that would be silently unused are refused by check") {
  const HostileScratch s;
  const auto check = [&](const std::string& name, const std::string& text) {
    return run_gpuk("check " + s.file(name, text).string());
  };
  const CommandResult argsort =
      check("argsort.yaml", "family: sort\noperation: argsort\ndtype: float32\nsize: 1000\nvalues: uint64\n");
  CHECK(argsort.status == 2);
  CHECK(has(argsort.output, "values: uint64 is the dtype of sort_pairs' values; argsort's indices are uint32"));
  const CommandResult huge = check("huge.yaml", "family: search\noperation: find\ndtype: float32\nsize: 1000\nvalue: 1e39\n");
  CHECK(huge.status == 2);
  CHECK(has(huge.output, "value 1e39 is not a float32 value"));
  CHECK(check("inf.yaml", "family: search\noperation: find\ndtype: float32\nsize: 1000\nvalue: inf\n").status == 0);
  const CommandResult distinct = check("distinct.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 1000\n"
                                                        "data: {generator: uniform, distinct: 4}\n");
  CHECK(distinct.status == 2);
  CHECK(has(distinct.output, "distinct.yaml:5:38: 'distinct' is not used by the uniform generator (it uses low, high, range)"));
  const CommandResult mean = check("mean.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 1000\n"
                                                "data: {mean: 3}\n");
  CHECK(mean.status == 2);
  CHECK(has(mean.output, "'mean' is not used by the uniform generator"));
  // A declared kernel's data alike, and a negative stddev.
  const fs::path dir = s.kernels("k", {{"scale.cu", kScale}, {"scale.yaml", declaration("n")}});
  const auto declared = [&](const std::string& name, const std::string& data) {
    return run_gpuk("--kernels " + dir.string() + " check " +
                    s.file(name, config("scale", "{n: 1000}", "data:\n  x: " + data + "\n")).string());
  };
  const CommandResult stddev = declared("stddev.yaml", "{generator: normal, stddev: -1}");
  CHECK(stddev.status == 2);
  CHECK(has(stddev.output, "stddev must not be negative"));
  const CommandResult unused = declared("unused.yaml", "{generator: uniform, distinct: 3}");
  CHECK(unused.status == 2);
  CHECK(has(unused.output, "'distinct' is not used by the uniform generator"));
}

TEST_CASE("check refuses what every run refuses: bytes or a metric dividing by zero, sizes past 2^63") {
  const HostileScratch s;
  const fs::path dir = s.kernels("k", {{"scale.cu", kScale},
                                       {"scale.yaml", declaration("n", "bytes: n / (n - 1000)\nmetrics:\n  per: n / (n - 7)\n")},
                                       {"flat.cu", kScale},
                                       {"flat.yaml", "sizes: [nx, ny]\nargs:\n  - {name: y, array: float32, length: 1, role: out}\n"
                                                     "  - {name: x, array: float32, length: 1, role: in}\n"
                                                     "  - {name: n, scalar: int32, value: 1}\n"
                                                     "launch:\n  - {entry: scale, grid: 1, block: 32}\n"}});
  const auto check = [&](const std::string& name, const std::string& text) {
    return run_gpuk("--kernels " + dir.string() + " check " + s.file(name, text).string());
  };
  const CommandResult bytes = check("bytes.yaml", config("scale", "{n: 1000}"));
  CHECK(bytes.status == 2);
  CHECK(has(bytes.output, "bytes.yaml:3:8: bytes 'n / (n - 1000)' at these sizes: division by zero"));
  const CommandResult metric = check("metric.yaml", config("scale", "{n: 7}"));
  CHECK(metric.status == 2);
  CHECK(has(metric.output, "metric 'per' ("));
  CHECK(has(metric.output, "at these sizes: division by zero in 'n / (n - 7)'"));
  CHECK(check("fine.yaml", config("scale", "{n: 2000}")).status == 0);
  const CommandResult product = check("product.yaml", config("flat", "{nx: 2^40, ny: 2^40}"));
  CHECK(product.status == 2);
  CHECK(has(product.output, "the sizes' product is past 2^63 - 1"));
}

TEST_CASE("check refuses a reference that is the kernel itself, and a reference, a baseline or a sweep's kernel that takes other arrays") {
  const HostileScratch s;
  const std::string other = "sizes: [n]\nargs:\n  - {name: y, array: float64, length: n, role: out}\n"
                            "  - {name: x, array: float32, length: n, role: in}\n  - {name: n, scalar: int32, value: n}\n"
                            "launch:\n  - {entry: scale, grid: \"ceil_div(n, 256)\", block: 256}\n";
  const fs::path dir = s.kernels("k", {{"scale.cu", kScale}, {"scale.yaml", declaration("n")}, {"same.cu", kScale},
                                       {"same.yaml", declaration("n")}, {"other.cu", kScale}, {"other.yaml", other}});
  const auto check = [&](const std::string& name, const std::string& text) {
    return run_gpuk("--kernels " + dir.string() + " check " + s.file(name, text).string());
  };
  const CommandResult reference = check("reference.yaml", config("scale", "{n: 1000}", "reference: {kernel: other}\n"));
  CHECK(reference.status == 2);
  CHECK(has(reference.output, "reference.yaml:4:21: kernel other takes the arrays y float64[n], x float32[n], but this "
                              "config's kernel takes y float32[n], x float32[n]; a reference kernel takes the same arrays"));
  const CommandResult baseline = check("baseline.yaml", config("scale", "{n: 1000}", "baseline: other\n"));
  CHECK(baseline.status == 2);
  CHECK(has(baseline.output, "a baseline kernel takes the same arrays"));
  CHECK(check("fine.yaml", config("scale", "{n: 1000}", "reference: {kernel: same}\nbaseline: same\n")).status == 0);
  const CommandResult itself = check("itself.yaml", config("scale", "{n: 1000}", "reference: {kernel: scale}\n"));
  CHECK(itself.status == 2);
  CHECK(has(itself.output, "itself.yaml:4:21: kernel scale is the kernel this config checks: its own answer verifies nothing"));
  const CommandResult sweep = check("sweep.yaml", "family: kernel\nkernels: [scale, other]\nsizes: {n: 1000}\n");
  CHECK(sweep.status == 2);
  CHECK(has(sweep.output, "sweep.yaml:2:18: kernel other takes the arrays"));
  CHECK(has(sweep.output, "every kernel of a sweep takes the same arrays"));
}

TEST_CASE("a size past 64 bits is out of range at its line and column, with the largest integer said") {
  const HostileScratch s;
  const fs::path dir = s.kernels("k", {{"scale.cu", kScale}, {"scale.yaml", declaration("n")}});
  const fs::path cfg = s.file("big.yaml", config("scale", "{n: 2^63}"));
  const CommandResult r = run_gpuk("--kernels " + dir.string() + " check " + cfg.string());
  CHECK(r.status == 2);
  CHECK(has(r.output, cfg.string() + ":3:12: size n is out of range: '2^63' is past the largest integer, 2^63 - 1 "
                                     "(9223372036854775807)"));
  const fs::path reduce = s.file("reduce.yaml", "family: reduce\noperation: argmax\ndtype: float32\nsize: 2^64\n");
  const CommandResult plain = run_gpuk("check " + reduce.string());
  CHECK(plain.status == 2);
  CHECK(has(plain.output, reduce.string() + ":4:7: size is out of range: '2^64' is past the largest integer"));
}

TEST_CASE("check refuses a tune config or a matrix of declared kernels whose every point no GPU runs at its sizes") {
  const HostileScratch s;
  std::string later = declaration("n");
  later.replace(later.find("block: 256}"), 11, "block: 256, when: n > 4096}");
  const fs::path dir = s.kernels("k", {{"wide.cu", kScale}, {"wide.yaml", declaration("n")}, {"later.cu", kScale},
                                       {"later.yaml", later}, {"ref.cu", kScale}, {"ref.yaml", declaration("1")}});
  const auto check = [&](const std::string& name, const std::string& text) {
    return run_gpuk("--kernels " + dir.string() + " check " + s.file(name, text).string());
  };
  const CommandResult tune = check("tune.yaml", "family: kernel\nkernels: [wide]\nsizes: {n: 2147483648}\n");
  CHECK(tune.status == 2);
  CHECK(has(tune.output, "tune.yaml: no point of the space can run on "));
  CHECK(has(tune.output, "value of n 'n' of wide is 2147483648, outside int32's range"));
  CHECK(check("fine.yaml", "family: kernel\nkernels: [wide]\nsizes: {n: 2147483647}\n").status == 0);
  const CommandResult matrix = check("matrix.yaml", "family: kernel\noperations:\n  - operation: later\n"
                                                    "    sizes: [{n: 100}]\n    reference: {kernel: ref}\n");
  CHECK(matrix.status == 2);
  CHECK(has(matrix.output, "matrix.yaml: no point of the space can run on "));
  CHECK(has(matrix.output, "no launch of later runs for n = 100 (every launch's 'when' is 0)"));
  CHECK(check("runs.yaml", "family: kernel\noperations:\n  - operation: later\n    sizes: [{n: 8192}]\n"
                           "    reference: {kernel: ref}\n").status == 0);
  // A config of the kernel family without sizes: lacks those, not an operation.
  const CommandResult nosizes = check("nosizes.yaml", "family: kernel\nkernel: wide\n");
  CHECK(nosizes.status == 2);
  CHECK(has(nosizes.output, "nosizes.yaml:1:1: missing 'sizes': a config of the kernel family gives its kernel's named sizes"));
}

TEST_CASE("run and tune refuse what no GPU runs at the config's sizes before they open one") {
  const HostileScratch s;
  const fs::path dir = s.kernels("k", {{"wide.cu", kScale}, {"wide.yaml", declaration("n")}});
  const fs::path run_cfg = s.file("run.yaml", config("wide", "{n: 2147483648}"));
  const fs::path tune_cfg = s.file("tune.yaml", "family: kernel\nkernels: [wide]\nsizes: {n: 2147483648}\n");
  // With a GPU or without: the config's error (exit 2), never "no GPU" (exit 5).
  const CommandResult run = run_gpuk("--kernels " + dir.string() + " run " + run_cfg.string());
  CHECK(run.status == 2);
  CHECK(has(run.output, "value of n 'n' of wide is 2147483648, outside int32's range"));
  const CommandResult devices = run_gpuk("--kernels " + dir.string() + " run --devices all " + run_cfg.string());
  CHECK(devices.status == 2);
  CHECK(has(devices.output, "value of n 'n' of wide is 2147483648"));
  const CommandResult tune = run_gpuk("--kernels " + dir.string() + " tune " + tune_cfg.string());
  CHECK(tune.status == 2);
  CHECK(has(tune.output, tune_cfg.string() + ": no point of the space can run on any GPU: "));
  CHECK(has(tune.output, "value of n 'n' of wide is 2147483648"));
}

TEST_CASE("an integer expression that overflows or divides by zero names the YAML entry where it is written") {
  const HostileScratch s;
  const fs::path dir = s.kernels("k", {{"ov.cu", kScale}, {"ov.yaml", declaration("n * n * n")},
                                       {"pw.cu", kScale}, {"pw.yaml", declaration("pow2(63)")}});
  const fs::path kernel = dir / "kernel";
  const CommandResult ov = run_gpuk("--kernels " + dir.string() + " check " + s.file("ov.yaml", config("ov", "{n: 3000000}")).string());
  CHECK(ov.status == 2);
  CHECK(has(ov.output, (kernel / "ov.yaml").string() + ":5:5: value of n 'n * n * n' of ov: overflow in 'n * n * n'"));
  // Wrong at every size: the file fails to load, and a config naming it gets that error, not "no kernel named 'pw'".
  const CommandResult pw = run_gpuk("--kernels " + dir.string() + " check " + s.file("pw.yaml", config("pw", "{n: 10}")).string());
  CHECK(pw.status == 2);
  CHECK(has(pw.output, (kernel / "pw.yaml").string() + ":5:5: value of n 'pow2(63)' of pw: argument out of range [0, 62]"));
  CHECK(!has(pw.output, "no kernel kernel named"));
}
