// A kernel file whose launches can never run, for any parameter values or problem size, fails
// loading (and so `gpuk check`) with the reason, instead of passing check and failing on a GPU.
#include <doctest/doctest.h>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "kernel/kernel_file.hpp"

using namespace gpuk;

namespace {

std::string launch_list_error_of(const std::string& launch, const std::string& extra = "") {
  try {
    KernelFile::parse("/* gpuk\nfamily: reduce\noperations: [max]\n" + extra + "launch:\n" + launch +
                          "*/\ntemplate <class R, int B> __global__ void mine() {}\n"
                          "template <class R, int B> __global__ void other() {}\n",
                      "k.cu");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kParams = "params:\n  B: {default: 256, values: [128, 256, 512]}\n";

}  // namespace

TEST_CASE("a launch that can never run fails loading, naming why") {
  const struct {
    const char* launch;
    const char* says;
  } cases[] = {
      {"  - {entry: mine, grid: n / 0, block: B}\n", "division by zero"},
      {"  - {entry: mine, grid: 1 + n % (B - B), block: B}\n", "modulo by zero"},
      {"  - {entry: mine, grid: pow2(70), block: B}\n", "out of range"},
      {"  - {entry: mine, grid: \"ceil_div(n, pow2(B))\", block: B}\n", "out of range"},
      {"  - {entry: mine, grid: 1, block: log2(0)}\n", "non-positive argument"},
      {"  - {entry: mine, grid: 1, block: B, repeat: 100000}\n", "between 1 and 65536"},
      {"  - {entry: mine, grid: 1, block: B, when: 0}\n  - {entry: other, grid: 1, block: B, when: n < 0}\n",
       "every launch's 'when' is 0"},
      {"  - {entry: mine, grid: 1, block: 2048}\n", "threads per block"},
      {"  - {entry: mine, grid: 1, block: B, shared: 1 << 30}\n", ""},  // not an operator: a syntax error
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.launch));
    const std::string e = launch_list_error_of(c.launch, kParams);
    CHECK_FALSE(e.empty());
    CHECK_MESSAGE(e.find(c.says) != std::string::npos, e);
    CHECK(e.find("k.cu:") != std::string::npos);
  }
}

TEST_CASE("launches that run for some parameter values or sizes load") {
  CHECK(launch_list_error_of("  - {entry: mine, grid: \"ceil_div(n, B)\", block: B}\n", kParams) == "");
  // Runs only for BLOCK 512, and only above 2^20.
  CHECK(launch_list_error_of("  - {entry: mine, grid: n / (B - 256), block: B, when: B > 256}\n"
                 "  - {entry: other, grid: n / 4096, block: 32, when: B <= 256}\n",
                 kParams)
            .empty());
  CHECK(launch_list_error_of("  - {entry: mine, grid: n / 1048576, block: 32}\n").empty());
  // A constraint that leaves out most samples leaves the others to decide.
  CHECK(launch_list_error_of("  - {entry: mine, grid: 1, block: B}\n", kParams + "constraints: [n <= B]\n").empty());
  CHECK(launch_list_error_of("  - {entry: mine, grid: 1, block: B, repeat: log2(n) + 1}\n", kParams).empty());
}

TEST_CASE("gpuk check fails a kernel file whose launch can never run, with status 2") {
  const test::TempDir dir;
  const auto file = dir.write("mine.cu", "/* gpuk\nfamily: reduce\noperations: [max]\nlaunch:\n"
                                         "  - {entry: mine, grid: 1, block: 32, when: 0}\n*/\n"
                                         "template <class R> __global__ void mine() {}\n");
  const auto r = test::run_command(std::string(GPUK_EXE) + " check " + file.string());
  CHECK(r.status == 2);
  CHECK(r.output.find("FAIL") != std::string::npos);
  CHECK(r.output.find("'when' is 0") != std::string::npos);
}
