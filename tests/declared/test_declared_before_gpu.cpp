// A declared kernel prepared through the library API (Engine::prepare, and so Python's
// gpuk.Kernel) is planned at its sizes before any GPU is opened: without a GPU the caller gets
// the declaration's error (an integer scalar past its dtype, a `when` that holds at none of the
// sizes, sizes whose product is past 2^63 - 1), not "no GPU" (issue 45).
#include <doctest/doctest.h>

#include <fstream>

#include "declared/declared_cli.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "gpuk/gpuk.hpp"
#include "helpers.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

using test::kScale;

std::string defines_declaration(const std::string& value, const std::string& launch_extra = "", const std::string& params = "") {
  return "sizes: [n]\nparams_as: defines\n" + params +
         "args:\n  - {name: y, array: float32, length: n, role: out}\n"
         "  - {name: x, array: float32, length: n, role: in}\n  - {name: n, scalar: int32, value: " +
         value + "}\nlaunch:\n  - {entry: scale, grid: \"ceil_div(n, 256)\", block: 256" + launch_extra + "}\n";
}

struct Kernels {
  fs::path root = fs::temp_directory_path() / ("gpuk_before_gpu_" + std::to_string(test::fresh_seed()));
  Kernels() {
    fs::create_directories(root / "kernel");
    fs::permissions(root, fs::perms::owner_all);
    fs::permissions(root / "kernel", fs::perms::owner_all);
    const std::string knob = "params:\n  BLOCK: {default: 1024, values: [1, 1024]}\n";
    const std::map<std::string, std::string> sidecars = {
        {"wide", defines_declaration("n")},
        {"square", defines_declaration("n * n")},
        {"later", defines_declaration("n", ", when: n > 4096")},
        {"flat", "sizes: [nx, ny]\nargs:\n  - {name: y, array: float32, length: 1, role: out}\n"
                 "  - {name: x, array: float32, length: 1, role: in}\n  - {name: n, scalar: int32, value: 1}\n"
                 "launch:\n  - {entry: scale, grid: 1, block: 32}\n"},
        // n * BLOCK fits int32 for BLOCK = 1, not for the default 1024 at n = 2^22.
        {"knob", defines_declaration("n * BLOCK", "", knob)},
    };
    for (const auto& [name, text] : sidecars) {
      std::ofstream(root / "kernel" / (name + ".cu")) << kScale;
      std::ofstream(root / "kernel" / (name + ".yaml")) << text;
    }
  }
  ~Kernels() { fs::remove_all(root); }
};

OperationSpec declared(const std::string& kernel, std::map<std::string, std::int64_t> sizes) {
  OperationSpec s;
  s.family = "kernel";
  s.operation = kernel;
  s.sizes = std::move(sizes);
  return s;
}

bool no_gpu() { return device_count() == 0; }

}  // namespace

TEST_CASE("Engine::prepare of a declared kernel refuses what no GPU runs before it opens one") {
  const Kernels k;
  EngineOptions options;
  options.kernel_dirs = {k.root};
  const Engine engine(options);
  CHECK_THROWS_WITH_AS((void)engine.prepare(declared("wide", {{"n", std::int64_t{1} << 31}})),
                       doctest::Contains("wide.yaml:6:5: value of n 'n' of wide is 2147483648, outside int32's range "
                                         "[-2147483648, 2147483647]"),
                       ConfigError);
  CHECK_THROWS_WITH_AS((void)engine.prepare(declared("square", {{"n", 100000}})),
                       doctest::Contains("value of n 'n * n' of square is 10000000000, outside int32's range"), ConfigError);
  CHECK_THROWS_WITH_AS((void)engine.prepare(declared("later", {{"n", 100}})),
                       doctest::Contains("later.yaml:8: no launch of later runs for n = 100 (every launch's 'when' is 0)"),
                       ConfigError);
  CHECK_THROWS_WITH_AS((void)engine.prepare(declared("flat", {{"nx", std::int64_t{1} << 40}, {"ny", std::int64_t{1} << 40}})),
                       "kernel flat: the sizes' product (nx * ny) is past 2^63 - 1: no run can hold so many elements",
                       ConfigError);
  // A named variant is exactly what runs: refused before the GPU.
  OperationSpec named = declared("knob", {{"n", std::int64_t{1} << 22}});
  named.kernel = "knob";
  named.params = {{"BLOCK", 1024}};
  CHECK_THROWS_WITH_AS((void)engine.prepare(named), doctest::Contains("value of n 'n * BLOCK' of knob BLOCK=1024 is 4294967296"),
                       ConfigError);
  if (no_gpu()) {
    // What plans gets as far as the GPU.
    CHECK_THROWS_AS((void)engine.prepare(declared("wide", {{"n", 1000}})), NoDeviceError);
    CHECK_THROWS_AS((void)engine.prepare(declared("later", {{"n", 8192}})), NoDeviceError);
    named.params = {{"BLOCK", 1}};
    CHECK_THROWS_AS((void)engine.prepare(named), NoDeviceError);
    // The lookup may pick a tuned BLOCK = 1, which runs: only the GPU's lookup can say.
    CHECK_THROWS_AS((void)engine.prepare(declared("knob", {{"n", std::int64_t{1} << 22}})), NoDeviceError);
  }
}
