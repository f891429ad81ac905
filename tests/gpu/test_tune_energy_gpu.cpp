// The tuner beyond time, on the GPU: energy and power from NVML, the journal (a sweep run again
// measures nothing), repeats: auto, and the bayes strategy. Without a GPU this program prints
// why and exits 77 (skipped); without NVML the energy case says so and checks the message.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "config/config.hpp"
#include "helpers.hpp"
#include "run/runner.hpp"
#include "tune/measure/energy.hpp"
#include "tune/report/journal.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune/sweep_on_gpu.hpp"

using namespace gpuk;

namespace {

struct Gpu {
  Runtime runtime{test::runtime_options()};
  const PluginRegistry& plugins = runtime.plugins();
  const KernelLibrary& kernels = runtime.kernels();
  Device device{0};
  const CompileCache& cache = runtime.cache();
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

// 2^24 float32 argmax over onepass (unless `size` says otherwise): 8 variants, about 10 us to 30 us
// each. `timing` replaces the fixed repeats (a key given twice would be the first one's).
TuneSpec spec(const std::string& extra,
              const std::string& timing = "warmup: 2\nrepeats: 10\nrecheck: {top: 2, repeats: 10}\n",
              const std::string& size = "2^24") {
  return parse_tune_spec("family: reduce\noperation: argmax\ndtype: float32\nsize: " + size + "\nkernels: [onepass]\n"
                         "params: {BLOCK: [256, 512], UNROLL: [2, 4], BLOCKS_PER_SM: [2, 4], LOAD: [0], SPLIT: [0], WAVES: [1],\n"
                         "         FOLD: [1]}\n" +
                             timing + extra,
                         "t.yaml", gpu().plugins, gpu().kernels);
}

// A float32 argmax that takes about 60 us a call at this GPU's bandwidth (2^26 on an H100 or an
// H200): long enough that the microsecond between back-to-back kernels is under the 10% asked
// of energy per call against power x kernel time. From the device, not one model.
std::string energy_size() {
  const double elements = std::max(1.0, gpu().device.info().peak_bandwidth_gbs) * 1e9 * 60e-6 / 4;
  int k = 24;
  while (k < 28 && std::ldexp(1.0, k) < elements) ++k;
  return "2^" + std::to_string(k);
}

}  // namespace

TEST_CASE("objective energy: every variant gets energy per call, power and SM clock from NVML") {
  std::string why;
  const auto meter = open_energy_meter(pci_bus_id(0), &why);
  const TuneSpec t = spec("objective: energy\n", "warmup: 2\nrepeats: 10\nrecheck: {top: 2, repeats: 10}\n", energy_size());
  MESSAGE("argmax of " << t.run.size << " float32 on " << gpu().device.info().name);
  const Space space = Space::from_spec(t, gpu().kernels);
  if (!meter) {
    MESSAGE("no NVML energy counter here (" << why << "): checking the message only");
    CHECK_THROWS_WITH_AS(sweep_on_gpu(t, space, {gpu().runtime}, gpu().device, {}),
                         doctest::Contains("energy"), Error);
    return;
  }
  const TuneReport r = sweep_on_gpu(t, space, {gpu().runtime}, gpu().device, {});
  CHECK(r.objective == "energy");
  REQUIRE(r.result.winner());
  for (const auto& e : r.result.evaluations) {
    if (e.outcome.status != Status::ok) continue;
    CAPTURE(e.label);
    REQUIRE(e.energy.count > 0);
    const EnergySample& s = e.outcome.energy.front();
    CHECK(s.calls > 100);      // one call is far below a step of the counter
    CHECK(s.window_s >= 0.1);
    CHECK(s.watts > 20);
    CHECK(s.watts < 1500);
    CHECK(s.sm_mhz > 200);
    // Energy per call is power x the window's time per call: with the window fed back to back
    // by a thread of its own (issue 36), that is the kernel's time, so the figure is power x
    // kernel time within 10% on this bandwidth-bound kernel. (With one thread queuing and
    // reading, the GPU idled between batches: 1.9-2.8x on the H200, 2.0-2.25x on the H100.)
    const double expected = s.watts * e.time.median * 1e-3;
    MESSAGE(e.label << ": " << s.joules * 1e3 << " mJ per call, " << s.watts << " W x " << e.time.median
                    << " ms = " << expected * 1e3 << " mJ; " << s.calls << " calls in " << s.window_s << " s");
    CHECK(s.joules > expected * 0.9);
    CHECK(s.joules < expected * 1.1);
    if (s.joules > expected * 1.1 || s.joules < expected * 0.9)
      CHECK(r.timing.find("energy per call includes the GPU's time between calls") != std::string::npos);
  }
  // Ranked by energy: the rechecked leaders first, by their rechecked energy, then the rest by
  // their first measurement.
  for (std::size_t k = 1; k < r.result.ranking.size(); ++k) {
    const Evaluation& a = r.result.evaluations[r.result.ranking[k - 1]];
    const Evaluation& b = r.result.evaluations[r.result.ranking[k]];
    CAPTURE(b.label);
    CHECK((a.rechecked || !b.rechecked));
    if (a.rechecked == b.rechecked)
      CHECK(cost_of(a, TuneObjective::energy)->median <= cost_of(b, TuneObjective::energy)->median);
  }
}

TEST_CASE("the journal: a sweep run again measures nothing and reuses every variant; --fresh measures again") {
  const test::TempDir dir;
  const TuneSpec t = spec("");
  const Space space = Space::from_spec(t, gpu().kernels);
  SweepOptions o;
  o.journal_dir = dir.path();
  o.run_id = "first";
  const TuneReport a = sweep_on_gpu(t, space, {gpu().runtime}, gpu().device, o);
  const std::size_t measured = a.result.evaluations.size() - a.result.count(Status::pruned);
  CHECK(measured == 8);
  CHECK(a.result.reused == 0);
  REQUIRE_FALSE(a.journal.empty());
  o.run_id = "second";
  const TuneReport b = sweep_on_gpu(t, space, {gpu().runtime}, gpu().device, o);
  CHECK(b.result.reused == measured);
  REQUIRE(b.result.winner());
  CHECK(b.result.winner()->rechecked);  // the leaders are timed again: the recheck ranks
  o.run_id = "third";
  o.fresh = true;
  const TuneReport c = sweep_on_gpu(t, space, {gpu().runtime}, gpu().device, o);
  CHECK(c.result.reused == 0);
}

TEST_CASE("repeats: auto times each variant until its median is known, and the recheck does too") {
  const TuneSpec t =
      spec("", "warmup: 2\nrepeats: auto\nauto_repeats: {bound: 0.01, seconds: 0.5}\nrecheck: {top: 2, repeats: auto}\n");
  REQUIRE(t.auto_repeats);
  const Space space = Space::from_spec(t, gpu().kernels);
  const TuneReport r = sweep_on_gpu(t, space, {gpu().runtime}, gpu().device, {});
  REQUIRE(r.result.winner());
  for (const auto& e : r.result.evaluations) {
    if (e.outcome.status != Status::ok) continue;
    CAPTURE(e.label);
    CHECK(e.outcome.samples.size() >= 10);
    CHECK((e.outcome.auto_stop == "converged" || e.outcome.auto_stop == "time cap"));
  }
  CHECK_FALSE(r.result.winner()->recheck_stop.empty());
  CHECK(r.timing.find("confidence interval") != std::string::npos);
}

TEST_CASE("strategy bayes on the GPU stays within its budget and picks a verified variant") {
  const TuneSpec t = spec("strategy: bayes\nbudget: 4\n");
  const Space space = Space::from_spec(t, gpu().kernels);
  const TuneReport r = sweep_on_gpu(t, space, {gpu().runtime}, gpu().device, {});
  CHECK(r.strategy == "bayes");
  CHECK(r.result.evaluations.size() - r.result.count(Status::pruned) == 4);
  REQUIRE(r.result.winner());
  CHECK(r.result.winner()->outcome.status == Status::ok);
}
