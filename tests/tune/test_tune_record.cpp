// What a sweep records, built in core (not the CLI): the report's words on how it was timed, and
// the winner's tuning database entry (no GPU: a fake measurer sweeps).
#include <doctest/doctest.h>

#include "builtins.hpp"
#include "config/config.hpp"
#include "device/device.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

DeviceInfo h100_without_sm_count() {
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.l2_bytes = 50 * 1024 * 1024;
  d.peak_bandwidth_gbs = 3352;
  return d;
}

TuneSpec spec(std::uint64_t size) {
  return parse_tune_spec("family: reduce\noperation: max\ndtype: float32\nsize: " + std::to_string(size) +
                             "\nkernels: [onepass]\nwarmup: 3\nrepeats: 7\nrecheck: {top: 2, repeats: 9}\n",
                         "t.yaml", test::plugins(), test::kernels());
}

}  // namespace

TEST_CASE("a sweep's report says how it was timed; its winner becomes a database entry") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer measurer;
  TuneOptions options;
  options.recheck_top = 2;
  options.recheck_repeats = 9;
  const TuneSpec t = spec(1000);
  CompileStats stats;
  stats.programs = 3;
  const TuneReport r = make_tune_report(t, options, tune(space, measurer, options), h100_without_sm_count(), 4000, true, stats);
  CHECK(r.config == "t.yaml");
  CHECK(r.family == "reduce");
  CHECK(r.arch == "sm_90");
  CHECK(r.strategy == "exhaustive");
  CHECK(r.compile.programs == 3);
  CHECK(r.timing == "CUDA events; per variant 1 verified run, 3 warm-ups, median of 7 timed runs; the best 2 re-timed 9 "
                    "times more, interleaved; L2 (50 MiB) flushed by writing 100 MiB before each timed run (input "
                    "0.00 MiB)");
  CHECK(make_tune_report(spec(1 << 26), options, {}, h100_without_sm_count(), 0, false, stats).timing.find(
            "no L2 flush needed: the input (256 MiB) is over twice the L2 (50 MiB)") != std::string::npos);

  const auto e = winner_entry(r, space);
  REQUIRE(e.has_value());
  CHECK(e->key.gpu == "NVIDIA H100 80GB HBM3");
  CHECK(e->key.family == "reduce");
  CHECK(e->key.options == "abs=false");
  CHECK(e->key.bucket == 9);
  CHECK(e->kernel == "k");
  CHECK(e->params == std::map<std::string, std::int64_t>{{"BLOCK", 256}, {"UNROLL", 4}});
  CHECK(e->size == 1000);
  CHECK(e->gbs > 0);
  CHECK(e->evaluated == static_cast<int>(r.result.evaluations.size() - r.result.count(Status::pruned)));
  CHECK_FALSE(e->tuned_at.empty());

  // A sweep cut short by the GPU, or without a winner, records nothing.
  TuneReport cut = r;
  cut.result.aborted = true;
  CHECK_FALSE(winner_entry(cut, space).has_value());
  CHECK_FALSE(winner_entry(make_tune_report(t, options, {}, h100_without_sm_count(), 0, false, stats), space).has_value());
}
