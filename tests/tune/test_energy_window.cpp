// What an energy-per-call figure covers (issue 27): NVML's counter is read over a window of
// back-to-back calls; where the window's time per call is not the kernel's time, the figure
// includes the GPU's time between calls, and the report says so with the figures.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "builtins.hpp"
#include "device/device.hpp"
#include "helpers.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

using test::h100_info;

// A sweep whose energy windows hold `stretch` times each variant's kernel time per call.
TuneReport report_with_windows(double stretch) {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;
  m.joules = [](const std::map<std::string, std::int64_t>&) { return 1e-3; };
  TuneOptions o;
  o.objective = TuneObjective::energy;
  TuneResult result = tune(space, m, o);
  for (auto& e : result.evaluations)
    for (auto& w : e.outcome.energy) w.window_s = stretch * e.time.median * 1e-3 * static_cast<double>(w.calls);
  const TuneSpec t = parse_tune_spec("family: reduce\noperation: max\ndtype: float32\nsize: 1000000\n"
                                     "kernels: [onepass]\nobjective: energy\n",
                                     "t.yaml", test::plugins(), test::kernels());
  return make_tune_report(t, o, std::move(result), h100_info(), 4000000, false, {});
}

}  // namespace

TEST_CASE("a report whose energy windows held more than the kernels' time says the figure includes the gaps") {
  const TuneReport gaps = report_with_windows(2.25);  // as measured on the H100
  CAPTURE(gaps.timing);
  CHECK(gaps.timing.find("the windows held 2.25x each variant's kernel time per call: energy per call includes the "
                         "GPU's time between calls") != std::string::npos);
  const TuneReport tight = report_with_windows(1.02);
  CAPTURE(tight.timing);
  CHECK(tight.timing.find("time between calls") == std::string::npos);
  const test::TempDir dir;
  write_tune_json(dir.path() / "t.json", gaps);
  std::ifstream in(dir.path() / "t.json");
  const auto j = nlohmann::json::parse(in);
  bool any = false;
  for (const auto& v : j["variants"])
    if (v["status"] == "ok") {
      const double per_call = v["energy"]["windows"][0]["window_ms_per_call"].get<double>();
      CHECK(per_call == doctest::Approx(2.25 * v["time"]["median_ms"].get<double>()).epsilon(0.01));
      any = true;
    }
  CHECK(any);
}
