// The declared-kernel family on a GPU, through the command line (each run a child `gpuk` under
// `timeout`, so that a fault or a hang fails the case instead of the program): every shipped
// example config (configs/kernel_*.yaml) runs and verifies; the tests' own kernels show a 2-D
// kernel with -D parameters against its reference, an in-place kernel restored before every
// timed run, two launches with scratch and an exact integer answer, an off-by-one variant failed
// with its first bad index, and a sweep whose faulting and hanging variants are isolated while
// it finishes; a tuning matrix of a declared kernel in two shards, merged, exported and run from
// the export. Without a GPU it prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <fstream>
#include <regex>

#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "declared/declared_cli.hpp"
#include "declared/scale2d_call.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

using test::declared_dir;
using test::has;

test::DeclaredScratch& scratch() { return test::declared_scratch(); }

test::CommandResult gpuk_cli(const std::string& args, int limit = 60) { return test::declared_gpuk(args, "", limit); }

}  // namespace

TEST_CASE("every shipped example config runs on the GPU and verifies against its reference") {
  std::vector<fs::path> configs;
  for (const auto& entry : fs::directory_iterator(test::source_dir() / "configs")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("kernel_", 0) == 0 && entry.path().extension() == ".yaml") configs.push_back(entry.path());
  }
  std::sort(configs.begin(), configs.end());
  if (configs.empty()) MESSAGE("no configs/kernel_*.yaml yet: only the tests' own kernels run");
  for (const auto& config : configs) {
    CAPTURE(config);
    const auto r = gpuk_cli("run " + config.string());
    CAPTURE(r.output);
    CHECK(r.status == 0);
    CHECK(has(r.output, "verify      PASS"));
  }
}

TEST_CASE("a 2-D kernel with -D parameters, declared beside it, against its reference: metric and speed-up") {
  const auto r = gpuk_cli("run " + (declared_dir() / "configs/scale2d.yaml").string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "verify      PASS  out: 300000 elements within 0 ulps"));
  CHECK(has(r.output, "launch   scale2d -Dblock_size_x=64 -Dblock_size_y=2  grid 16x150  block 64x2"));
  CHECK(has(r.output, "metric      Gelem/s"));
  CHECK(has(r.output, "x over kernel scale2d_naive"));
}

TEST_CASE("an in-place kernel declared in the config alone is restored before every timed run") {
  // axpy adds into y: without the restore, the 7 runs before the check would have added 7 times.
  const auto r = gpuk_cli("run " + (declared_dir() / "configs/axpy.yaml").string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "verify      PASS"));
}

TEST_CASE("a launch whose when holds only past the load-time samples runs at the config's size; its metric is parsed once") {
  // Loading samples sizes 1 to 4096, where `when: n > 4096` leaves every launch out: the kernel
  // loads all the same, and the config's n = 8192 runs it (docs/reliability.md).
  std::ifstream in(declared_dir() / "configs/axpy.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("sizes: {n: 100000}"), 18, "sizes: {n: 8192}");
  const std::string launch = "block: block_size_x}";
  text.replace(text.find(launch), launch.size(), "block: block_size_x, when: n > 4096}\n  metrics:\n    GB/s: 12 * n / seconds / 1e9");
  const fs::path config = scratch().dir / "axpy_when.yaml";
  std::ofstream(config) << text;
  const auto r = gpuk_cli("run " + config.string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "verify      PASS"));
  CHECK(has(r.output, "metric      GB/s"));
}

TEST_CASE("two launches with a scratch array give an exact int64 sum") {
  const auto r = gpuk_cli("run " + (declared_dir() / "configs/block_sum.yaml").string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "verify      PASS  total: 1 elements equal"));
}

TEST_CASE("a wrong variant fails with the output, its first bad index, the count and the largest errors") {
  const auto r = gpuk_cli("run " + (declared_dir() / "configs/scale2d_wrong.yaml").string());
  CAPTURE(r.output);
  CHECK(r.status == 3);
  // The last column of every row but the last reads the next row's first element.
  CHECK(has(r.output, "verify      FAIL  mismatch: out: "));
  CHECK(has(r.output, "first at index 999 "));
  CHECK(std::regex_search(r.output, std::regex("max abs error [0-9.e+-]+, max rel error")));
  const fs::path halo = test::source_dir() / "tests/data/configs/kernel_halo_bug.yaml";
  if (fs::exists(halo)) {
    const auto h = gpuk_cli("run " + halo.string());
    CAPTURE(h.output);
    CHECK(h.status == 3);
    CHECK(has(h.output, "first at index"));
  }
}

TEST_CASE("a sweep of a declared kernel: every variant verified, the winner saved, variant: auto runs it") {
  const fs::path config = scratch().dir / "tune_scale2d.yaml";
  std::ofstream(config) << "family: kernel\nkernels: [scale2d]\nsizes: {nx: 1000, ny: 300}\n"
                           "reference: {kernel: scale2d_naive}\nstrategy: exhaustive\nwarmup: 1\nrepeats: 5\n"
                           "recheck: {top: 2, repeats: 5}\n";
  const auto t = gpuk_cli("tune " + config.string(), 120);
  CAPTURE(t.output);
  CHECK(t.status == 0);
  const fs::path run = scratch().dir / "auto.yaml";
  std::ofstream(run) << "family: kernel\nkernel: scale2d\nsizes: {nx: 1000, ny: 300}\nvariant: auto\n"
                        "reference: {kernel: scale2d_naive}\nwarmup: 1\nrepeats: 3\n";
  const auto r = gpuk_cli("run " + run.string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "chosen   user tuning database"));
}

TEST_CASE("a declared kernel's tuning matrix on the GPU: two shards, merged, exported, variant: auto runs the winner") {
  test::check_declared_matrix([](const std::string& args) { return gpuk_cli(args, 120); });
}

TEST_CASE("faulting and hanging variants of a declared kernel are isolated; the sweep finishes") {
  const fs::path faulty = test::source_dir() / "tests/data/configs/tune_kernel_faulty.yaml";
  if (!fs::exists(faulty)) {
    MESSAGE("tests/data/configs/tune_kernel_faulty.yaml is not there: skipped");
    return;
  }
  const auto t = gpuk_cli("tune --time-limit 2 --no-save " + faulty.string(), 150);
  CAPTURE(t.output);
  CHECK(t.status != 137);  // finished, not killed
  CHECK(t.status == 0);
  CHECK(has(t.output, "faulted"));
  // A run of the hanging variant alone is abandoned after its time limit.
  const fs::path hang = test::source_dir() / "tests/data/configs/kernel_faulty_hang.yaml";
  if (fs::exists(hang)) {
    const auto h = gpuk_cli("run --time-limit 2 " + hang.string(), 60);
    CAPTURE(h.output);
    CHECK(h.status == 4);
  }
}

TEST_CASE("from C++: a declared kernel prepared for its sizes and launched on the caller's pointers and stream") {
  EngineOptions options;
  options.kernel_dirs = {declared_dir() / "kernels"};
  options.tuning = TuningPolicy::none();
  Engine engine(options);
  (void)engine.device();  // opens the device: its context is current for the Stream made next
  const Stream stream;
  test::Scale2dCall call(engine, 333, 77, {{"block_size_x", 16}, {"block_size_y", 8}}, stream);
  Operation& op = call.op;
  CHECK(op.max_n() == 333 * 77);
  REQUIRE(op.arrays().size() == 2);
  CHECK(op.arrays()[0].name == "out");
  CHECK(call.wrong == 0);
  CHECK_THROWS_AS(op.launch(call.arrays, op.max_n() - 1, stream.get()), ConfigError);  // it serves its sizes only
}
