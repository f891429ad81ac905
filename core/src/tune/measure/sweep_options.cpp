// What a sweep on the GPU derives from its TuneSpec (tune/measure/sweep_options.hpp).
#include "tune/measure/sweep_options.hpp"

#include "device/device.hpp"
#include "run/runner.hpp"

namespace gpuk {

GpuMeasurerOptions gpu_measurer_options(const TuneSpec& t, const SweepOptions& sweep, bool flush) {
  GpuMeasurerOptions mo;
  mo.warmup = t.run.warmup;
  mo.repeats = t.run.repeats;
  mo.flush_l2 = flush;
  mo.threads = sweep.threads;
  mo.time_limit_s = sweep.time_limit_s;
  if (t.auto_repeats) mo.auto_repeats = AutoRepeats{t.auto_bound, t.auto_seconds};
  return mo;
}

TuneOptions tune_options(const TuneSpec& t, const SweepOptions& sweep) {
  TuneOptions options;
  options.strategy = t.strategy;
  options.objective = t.objective;
  options.evaluations = t.budget_evaluations;
  options.seconds = t.budget_seconds;
  options.seed = t.seed;
  options.recheck_top = t.recheck_top;
  options.recheck_repeats = t.recheck_repeats > 0 ? t.recheck_repeats : 2 * t.run.repeats;
  if (t.recheck_auto) options.recheck_auto = AutoRepeats{t.auto_bound, t.auto_seconds};
  options.prior = sweep.prior;
  options.progress = sweep.progress;
  return options;
}

bool flushes_l2(const TuneSpec& t, const DeviceInfo& device) {
  return t.flush_l2 == FlushL2::on || (t.flush_l2 == FlushL2::automatic && input_fits_l2(t.run, device));
}

}  // namespace gpuk
