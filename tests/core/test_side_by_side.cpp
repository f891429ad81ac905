// `gpuk run --devices`: one row per GPU, a slow one pointed out, a GPU that failed keeps its row.
#include <doctest/doctest.h>

#include <sstream>

#include "report/side_by_side.hpp"

using namespace gpuk;

namespace {

RunReport report(const std::string& gpu, double kernel_ms) {
  RunReport r;
  r.family = "reduce";
  r.operation = "argmax";
  r.dtype = "float32";
  r.size = 1 << 24;
  r.variant = "onepass BLOCK=512";
  r.gpu = gpu;
  r.kernel.median = kernel_ms;
  r.baseline = NamedStats{"cub::DeviceReduce::ArgMax", {}, ""};
  r.baseline->ms.median = 0.03;
  r.baseline->ms.count = 100;
  r.gbs = 2000;
  r.percent_of_peak = 60;
  r.verified = true;
  r.verification.passed = true;
  return r;
}

}  // namespace

TEST_CASE("run --devices: one row per GPU, the slow one named, a failed one keeps its row") {
  std::vector<DeviceRun> runs(3);
  runs[0].ordinal = 0;
  runs[0].report = report("NVIDIA H200", 0.025);
  runs[1].ordinal = 1;
  runs[1].report = report("NVIDIA H200", 0.0375);
  runs[2].ordinal = 2;
  runs[2].error = "variant onepass faulted: CUDA_ERROR_ILLEGAL_ADDRESS";
  std::ostringstream out;
  print_side_by_side(out, "configs/argmax.yaml", runs);
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.find("gpuk run configs/argmax.yaml on 3 GPUs") == 0);
  CHECK(text.find("reduce argmax  dtype float32  n 16777216") != std::string::npos);
  CHECK(text.find("  0   NVIDIA H200        0.0250") != std::string::npos);
  CHECK(text.find("1.20x") != std::string::npos);  // 0.03 / 0.025
  CHECK(text.find("PASS  (50% slower than the fastest)") != std::string::npos);
  CHECK(text.find("  2   variant onepass faulted") != std::string::npos);
  CHECK(text.find("baseline: cub::DeviceReduce::ArgMax") != std::string::npos);
}
