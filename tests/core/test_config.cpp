#include <doctest/doctest.h>

#include "builtins.hpp"
#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

using namespace gpuk;

namespace {

using test::plugins;
using test::kernels;
using test::parse_run;
using test::run_config_error;

const std::string kAbsArgmax = "family: reduce\noperation: argmax\nabs: true\ndtype: float32\nsize: 1000\n";

}  // namespace

TEST_CASE("every config in configs/ is valid") {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "configs")) {
    if (entry.path().extension() != ".yaml") continue;
    // tune_*.yaml are gpuk tune configs, loaded by tests/tune/test_tune_config.cpp.
    if (entry.path().filename().string().rfind("tune_", 0) == 0) continue;
    ++count;
    CAPTURE(entry.path().string());
    CHECK_NOTHROW(load_run_spec(entry.path(), plugins(), kernels()));
  }
  CHECK(count >= 2);
}

TEST_CASE("configs/argmax.yaml is the write-up's setup") {
  const RunSpec spec = load_run_spec(test::source_dir() / "configs/argmax.yaml", plugins(), kernels());
  CHECK(spec.family == "reduce");
  CHECK(spec.operation == "argmax");
  CHECK(spec.option_bool("abs"));
  CHECK(spec.dtype == DType::float32);
  CHECK(spec.size == 250000);
  CHECK(spec.data.generator == Generator::uniform);
  CHECK(spec.data.low == -1.0);
  CHECK(spec.data.high == 1.0);
}

TEST_CASE("a config with no data settings leaves the range to the dtype: integers over their whole range") {
  const RunSpec spec = parse_run("family: reduce\noperation: max\ndtype: uint32\nsize: 1000\n");
  CHECK_FALSE(spec.data.low);
  CHECK_FALSE(spec.data.high);
  CHECK(uniform_range(spec.data, spec.dtype).high == 4294967295.0);
  CHECK(parse_run("family: reduce\noperation: max\ndtype: int32\nsize: 10\ndata: {high: 15}\n").data.high == 15.0);
}

TEST_CASE("integers read as a person writes them: 1_000, 2^20, 0x100, and 010 is ten") {
  CHECK(parse_run("family: reduce\noperation: max\nsize: 1_000\n").size == 1000);
  CHECK(parse_run("family: reduce\noperation: max\nsize: 2^20\n").size == (1u << 20));
  CHECK(parse_run("family: reduce\noperation: max\nsize: 0x100\n").size == 256);
  CHECK(parse_run("family: reduce\noperation: max\nsize: 010\n").size == 10);
}

TEST_CASE("defaults: the family's default kernel, its default options, 10 warm-ups, 100 repeats") {
  const RunSpec spec = parse_run("family: reduce\noperation: max\nsize: 10\n");
  CHECK(spec.kernel == "onepass");
  CHECK_FALSE(spec.option_bool("abs"));
  CHECK(spec.warmup == 10);
  CHECK(spec.repeats == 100);
  CHECK(spec.dtype == DType::float32);
}

TEST_CASE("an unknown key is refused at its line and column, with a suggestion") {
  const std::string e = run_config_error(kAbsArgmax + "sise: 3\n");
  CHECK(e.find("c.yaml:6:1: unknown key 'sise'") == 0);
  CHECK(e.find("did you mean 'size'") != std::string::npos);
  CHECK(run_config_error(kAbsArgmax + "data:\n  generater: uniform\n").find("c.yaml:7:3: unknown key 'generater'") == 0);
}

TEST_CASE("wrong types and impossible values are refused where they are written") {
  CHECK(run_config_error("family: reduce\noperation: max\nsize: lots\n").find("c.yaml:3:7: size must be an integer") == 0);
  CHECK(run_config_error("family: reduce\noperation: max\nsize: 0\n").find("c.yaml:3:7: size must be at least 1") == 0);
  CHECK(run_config_error("family: reduce\noperation: max\nsize: 5\nabs: maybe\n").find("c.yaml:4:6: abs must be true or false") ==
        0);
  CHECK(run_config_error("family: reduce\noperation: maxx\nsize: 5\n").find("did you mean 'max'") != std::string::npos);
  CHECK(run_config_error("family: reduce\noperation: max\nsize: 5\ndtype: float16\n").find("c.yaml:4:8: unsupported dtype") == 0);
  CHECK(run_config_error("family: reduce\noperation: max\nsize: 5\nrepeats: 0\n").find("c.yaml:4:10:") == 0);
  CHECK(run_config_error("family: reduce\noperation: max\nsize: 5\ndtype: int32\ndata: {nan: {count: 1}}\n")
            .find("NaN injection needs a floating-point dtype") != std::string::npos);
  CHECK(run_config_error("family: reduce\noperation: max\nsize: 5\ndata: {nan: {at: [5]}}\n").find("outside the data") !=
        std::string::npos);
  CHECK(run_config_error("family: reduce\noperation: max\nsize: 5\ndata: {low: 2, high: 1}\n").find("low must not be above high") !=
        std::string::npos);
}

TEST_CASE("a missing field is named") {
  CHECK(run_config_error("family: reduce\nsize: 5\n").find("missing 'operation'") != std::string::npos);
  CHECK(run_config_error("operation: max\nsize: 5\n").find("missing 'family'") != std::string::npos);
  // A config of declared kernels lacks its sizes, not an operation.
  CHECK(run_config_error("family: kernel\nkernel: axpy\n") ==
        "c.yaml:1:1: missing 'sizes': a config of the kernel family gives its kernel's named sizes (sizes: {n: 1000}; "
        "docs/declared.md)");
}

TEST_CASE("a family without a plugin, and a kernel that does not exist, are refused with what exists") {
  const std::string family = run_config_error("family: reduse\noperation: max\nsize: 5\n");
  CHECK(family.find("c.yaml:1:9: no plugin for family 'reduse'") == 0);
  CHECK(family.find("did you mean 'reduce'") != std::string::npos);
  const std::string kernel = run_config_error("family: reduce\noperation: max\nsize: 5\nkernel: onepas\n");
  CHECK(kernel.find("c.yaml:4:9:") == 0);
  CHECK(kernel.find("did you mean 'onepass'") != std::string::npos);
}

TEST_CASE("a parameter value the kernel's metadata does not allow is refused at the value") {
  const std::string e = run_config_error(kAbsArgmax + "kernel: onepass\nparams:\n  BLOCK: 100\n");
  CHECK(e.find("c.yaml:8:10:") == 0);
  CHECK(e.find("is not allowed") != std::string::npos);
  const std::string unknown = run_config_error(kAbsArgmax + "kernel: onepass\nparams:\n  BLOCKS: 128\n");
  CHECK(unknown.find("c.yaml:8:3:") == 0);
  CHECK(unknown.find("has no parameter 'BLOCKS'") != std::string::npos);
}

TEST_CASE("sizes may be written as powers of two") {
  CHECK(parse_run("family: reduce\noperation: max\nsize: 2^20\n").size == (1u << 20));
  CHECK(parse_run("family: reduce\noperation: max\nsize: 1_000_000\n").size == 1000000);
}

TEST_CASE("an integer past 64 bits is out of range, with the largest integer said, never 'not an integer'") {
  const std::string head = "family: reduce\noperation: max\nsize: ";
  for (const char* size : {"2^63", "2^64", "2^1000", "3^40", "99999999999999999999"}) {
    CAPTURE(size);
    CHECK(run_config_error(head + size + "\n") == "c.yaml:3:7: size is out of range: '" + std::string(size) +
                                              "' is past the largest integer, 2^63 - 1 (9223372036854775807)");
  }
  CHECK(run_config_error(head + "-99999999999999999999\n").find("is below the smallest integer, -2^63 (-9223372036854775808)") !=
        std::string::npos);
  CHECK(run_config_error(head + "-3^41\n").find("is below the smallest integer") != std::string::npos);
  CHECK(parse_run(head + "2^62\n").size == (std::uint64_t{1} << 62));
  CHECK(parse_run(head + "1^1000000000000\n").size == 1);
  CHECK(run_config_error(head + "2^x\n").find("size must be an integer, not '2^x'") != std::string::npos);
  CHECK(run_config_error(head + "2^-1\n").find("size must be an integer, not '2^-1'") != std::string::npos);
}
