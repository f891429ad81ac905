// The declared family's whole road without a GPU: `gpuk run`, `gpuk tune` and `variant: auto`
// of the tests' declared kernels as child processes on a driver whose device memory is host
// memory and whose launches do nothing (tests/api/fake_driver.cpp, GPUK_FAKE_HOST_MEMORY).
// Every step runs for real but the kernels' work: the declaration and config read, NVRTC with
// -D definitions, the plan in 2-D with each launch's arguments, the data of each argument
// uploaded, outputs poisoned and in-out arrays restored, the reference and baseline kernels, the
// comparison, the metrics, the sweep and its database entry. What the kernels compute is the GPU
// test's (tests/gpu/test_declared_gpu.cpp).
#include <doctest/doctest.h>

#include <fstream>

#include "declared/declared_cli.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

using test::declared_dir;
using test::has;

test::DeclaredScratch& scratch() { return test::declared_scratch(); }

// `gpuk ARGS` on the driver with host memory, its compile cache in the scratch.
using test::gpuk_cli;

}  // namespace

TEST_CASE("gpuk run of a 2-D kernel with -D parameters, its reference, baseline and metric") {
  const auto r = gpuk_cli("run " + (declared_dir() / "configs/scale2d.yaml").string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "kernel scale2d nx=1000 ny=300"));
  CHECK(has(r.output, "launch   scale2d -Dblock_size_x=64 -Dblock_size_y=2  grid 16x150  block 64x2"));
  CHECK(has(r.output, "baseline: kernel scale2d_naive"));
  CHECK(has(r.output, "metric      Gelem/s 30.00"));  // 300000 elements in the driver's 0.01 ms
  CHECK(has(r.output, "verify      PASS  out: 300000 elements within 0 ulps"));
}

TEST_CASE("gpuk run of kernels declared in the config alone, of two launches with scratch, of template parameters") {
  for (const char* config : {"axpy", "block_sum", "scale2d_wrong"}) {
    CAPTURE(config);
    const auto r = gpuk_cli("run " + (declared_dir() / "configs" / (std::string(config) + ".yaml")).string());
    CAPTURE(r.output);
    CHECK(r.status == 0);
    CHECK(has(r.output, "verify      PASS"));
  }
  const auto two = gpuk_cli("run " + (declared_dir() / "configs/block_sum.yaml").string());
  CHECK(has(two.output, "launch   partial_sums<256>  grid 3907  block 256"));
  CHECK(has(two.output, "launch   final_sum<256>  grid 1  block 256"));
}

TEST_CASE("gpuk tune of a declared kernel saves its winner, which a run without params then runs") {
  const fs::path config = scratch().dir / "tune.yaml";
  std::ofstream(config) << "family: kernel\nkernels: [scale2d]\nsizes: {nx: 1000, ny: 300}\n"
                           "reference: {kernel: scale2d_naive}\nparams:\n  block_size_x: [16, 64]\n"
                           "  block_size_y: [1, 8]\nstrategy: exhaustive\nwarmup: 1\nrepeats: 3\n"
                           "recheck: {top: 2, repeats: 3}\n";
  const auto t = gpuk_cli("tune " + config.string());
  CAPTURE(t.output);
  CHECK(t.status == 0);
  CHECK(has(t.output, "4 variants measured"));
  CHECK(has(t.output, "compile  4 variants in 4 NVRTC programs"));  // one program per -D variant
  CHECK(has(t.output, "saved    the best to"));
  const fs::path run = scratch().dir / "auto.yaml";
  std::ofstream(run) << "family: kernel\nkernel: scale2d\nsizes: {nx: 1000, ny: 300}\nvariant: auto\n"
                        "reference: {kernel: scale2d_naive}\nwarmup: 1\nrepeats: 3\n";
  const auto r = gpuk_cli("run " + run.string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "chosen   user tuning database"));
  // Other sizes are another problem: the entry is for nx=1000 ny=300 (the lookup allows a
  // nearby n, as for the three families, but the sizes are part of the key).
  const fs::path other = scratch().dir / "other.yaml";
  std::ofstream(other) << "family: kernel\nkernel: scale2d\nsizes: {nx: 300, ny: 1000}\nwarmup: 1\nrepeats: 3\n";
  const auto o = gpuk_cli("run " + other.string());
  CAPTURE(o.output);
  CHECK(o.status == 0);
  CHECK(!has(o.output, "chosen   user tuning database"));
  CHECK(has(o.output, "verify      skipped"));  // no reference: not verified, and it says so
}

TEST_CASE("a declared kernel's data line names every input array") {
  const auto r = gpuk_cli("run " + (declared_dir() / "configs/axpy.yaml").string());
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "data     y: uniform in [-1, 1), seed 3; x: normal (mean 0, stddev 1), seed 4"));
}

TEST_CASE("a declared kernel's tuning matrix: two shards, merged, exported, and variant: auto runs the winner") {
  test::check_declared_matrix(gpuk_cli);
}
