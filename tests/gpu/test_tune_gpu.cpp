// A small real sweep on the GPU: bulk compile, verification, timing, failure bookkeeping.
// Without a GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include "config/config.hpp"
#include "helpers.hpp"
#include "run/runner.hpp"
#include "tune/sweep/sweep.hpp"

using namespace gpuk;

namespace {

struct Gpu {
  Runtime runtime{test::runtime_options()};
  const PluginRegistry& plugins = runtime.plugins();
  Device device{0};
  const CompileCache& cache = runtime.cache();
};

Gpu& gpu() {
  static Gpu g;
  return g;
}

// A reduce kernel file that gives a wrong answer for every variant, and does not compile for BLOCK=256.
const char* kBroken = R"(/* gpuk
family: reduce
operations: [max, argmax]
params:
  BLOCK: {default: 128, values: [128, 256]}
launch:
  - entry: broken
    grid: 1
    block: BLOCK
*/
#include "gpuk/reduce.cuh"
template <class R, int BLOCK>
__global__ void broken(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out,
                       typename R::Acc* partials, unsigned int* counter) {
  static_assert(BLOCK != 256, "BLOCK 256 is not supported");
  if (threadIdx.x == 0) *out = R::identity();
}
)";

}  // namespace

TEST_CASE("a small argmax sweep: every variant verified and timed, the best rechecked, bulk-compiled") {
  const test::TempDir dir;
  dir.write("kernels/reduce/broken.cu", kBroken);
  const Runtime runtime(test::runtime_options({dir.path() / "kernels"}));
  const KernelLibrary& kernels = runtime.kernels();
  const std::string yaml =
      "family: reduce\noperation: argmax\ndtype: float32\nsize: 1_000_003\n"
      "data: {generator: uniform, low: -1, high: 1, seed: 11}\n"
      "kernels: [onepass, block_partials, broken]\n"
      "params:\n  BLOCK: [128, 256]\n  UNROLL: [1, 4]\n  BLOCKS_PER_SM: [4]\n  GRID: [128]\n"
      "  LOAD: [0]\n  SPLIT: [0]\n  WAVES: [1]\n  FOLD: [1]\n"
      "warmup: 2\nrepeats: 5\nrecheck: {top: 3, repeats: 8}\n";
  const TuneSpec t = parse_tune_spec(yaml, dir.path() / "t.yaml", gpu().plugins, kernels);
  const Space space = Space::from_spec(t, kernels);
  Bench bench(t.run, gpu().plugins.get("reduce"), gpu().device);
  CompileStats stats;
  GpuMeasurerOptions mo;
  mo.warmup = t.run.warmup;
  mo.repeats = t.run.repeats;
  mo.flush_l2 = bench.input_fits_l2();
  mo.threads = 4;
  const auto measurer = make_gpu_measurer({runtime}, gpu().device, bench, mo, &stats);
  TuneOptions o;
  o.recheck_top = t.recheck_top;
  o.recheck_repeats = t.recheck_repeats;
  const TuneResult r = tune(space, *measurer, o);

  // onepass: 2 x 2 variants; block_partials: 2; broken: 2 (one does not compile, one gives a wrong answer).
  CHECK(r.stopped.empty());
  CHECK(r.count(Status::ok) == 4 + 2);
  CHECK(r.count(Status::compile_error) == 1);
  CHECK(r.count(Status::invalid) == 1);
  for (const auto& e : r.evaluations) {
    CAPTURE(e.label);
    CAPTURE(e.outcome.detail);
    if (e.label.rfind("broken", 0) == 0) {
      CHECK(e.outcome.status != Status::ok);
      if (e.label == "broken BLOCK=256") CHECK(e.outcome.detail.find("BLOCK 256 is not supported") != std::string::npos);
    } else {
      CHECK(e.outcome.status == Status::ok);
      CHECK(e.outcome.registers > 0);
      CHECK(e.time.median > 0);
      CHECK(e.time.min <= e.time.median);
    }
  }
  REQUIRE(r.winner());
  CHECK(r.winner()->rechecked);
  CHECK(r.winner()->time.count == 8);
  CHECK(r.winner()->label.rfind("broken", 0) != 0);
  CHECK(stats.programs >= 3);  // at least one per kernel file, plus the split of broken's program
  MESSAGE("best: " << r.winner()->label << " " << r.winner()->time.median << " ms; " << stats.programs
                   << " NVRTC programs, " << stats.from_cache << " from the cache");
  // Verification on the device: the first verified answer kept on the GPU; the variants whose
  // outputs are its bytes pass there, and broken's wrong answer (above: `wrong answer`) was
  // caught by the comparison and decided on the host.
  const auto notes = measurer->notes();
  REQUIRE(notes.size() == 1);
  CAPTURE(notes.front());
  CHECK(notes.front().rfind("verified on the GPU: ", 0) == 0);
  CHECK(notes.front().find("device comparison off") == std::string::npos);
  CHECK(notes.front().find("verified on the GPU: 0 ") == std::string::npos);
  // The measurer's share of the time: every part it keeps was spent, within the sweep's wall.
  CHECK(r.times.verify > 0);
  CHECK(r.times.measure > 0);
  CHECK(r.times.recheck > 0);
  CHECK(r.times.compile_sum > 0);
  CHECK(r.times.compile_wall > 0);
  CHECK(r.times.compile_wait + r.times.measure + r.times.verify + r.times.recheck <= r.times.total);

  // A second sweep of the same space is served by the compile cache.
  CompileStats again;
  const auto measurer2 = make_gpu_measurer({runtime}, gpu().device, bench, mo, &again);
  const TuneResult r2 = tune(space, *measurer2, o);
  CHECK(r2.count(Status::ok) == 6);
  CHECK(again.from_cache >= 2);
}

TEST_CASE("random and anneal sweeps on the GPU stay within their budgets and pick a verified variant") {
  const KernelLibrary& kernels = gpu().runtime.kernels();
  const std::string yaml =
      "family: reduce\noperation: max\ndtype: int32\nsize: 2^22\nkernels: [onepass]\n"
      "warmup: 1\nrepeats: 5\nrecheck: {top: 2, repeats: 4}\n";
  const TuneSpec t = parse_tune_spec(yaml, "t.yaml", gpu().plugins, kernels);
  const Space space = Space::from_spec(t, kernels);
  Bench bench(t.run, gpu().plugins.get("reduce"), gpu().device);
  GpuMeasurerOptions mo;
  mo.warmup = 1;
  mo.repeats = 5;
  mo.flush_l2 = true;
  for (TuneStrategy s : {TuneStrategy::random, TuneStrategy::anneal}) {
    const auto measurer = make_gpu_measurer({gpu().runtime}, gpu().device, bench, mo, nullptr);
    TuneOptions o;
    o.strategy = s;
    o.evaluations = 6;
    o.recheck_top = 2;
    o.recheck_repeats = 4;
    const TuneResult r = tune(space, *measurer, o);
    CHECK(r.evaluations.size() - r.count(Status::pruned) <= 6);
    CHECK(r.count(Status::ok) >= 1);
    REQUIRE(r.winner());
    CHECK(r.winner()->outcome.status == Status::ok);
  }
}
