// What a sweep on the GPU derives from its TuneSpec (tune/measure/sweep_options.hpp).
#include "tune/measure/sweep_options.hpp"

#include <cstdlib>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"
#include "run/runner.hpp"
#include "tune/sweep/timing_cut.hpp"

namespace gpuk {

GpuMeasurerOptions gpu_measurer_options(const TuneSpec& t, const SweepOptions& sweep, bool flush) {
  GpuMeasurerOptions mo;
  mo.warmup = t.run.warmup;
  mo.repeats = t.run.repeats;
  mo.flush_l2 = flush;
  mo.threads = sweep.threads;
  mo.time_limit_s = sweep.time_limit_s;
  if (t.auto_repeats) mo.auto_repeats = AutoRepeats{t.auto_bound, t.auto_seconds};
  // Timing alone decides (no energy asked for): a variant 4x behind cannot win (docs/tuning.md,
  // "Variants far behind"). GPUK_NO_CUT=1 times every variant in full.
  if (t.objective == TuneObjective::time && !t.metric_objective && !t.energy && std::getenv("GPUK_NO_CUT") == nullptr)
    mo.cut_factor = kCutFactor;
  return mo;
}

TuneOptions tune_options(const TuneSpec& t, const SweepOptions& sweep) {
  TuneOptions options;
  options.strategy = t.strategy;
  options.objective = t.objective;
  if (t.metric_objective) {
    // The metric's expression of the sizes, the point's parameters and `seconds`.
    options.metric = [m = *t.metric_objective, sizes = t.run.sizes](const Evaluation& e, double ms) -> std::optional<double> {
      std::map<std::string, double> values = {{"seconds", ms * 1e-3}};
      for (const auto& [name, v] : sizes) values[name] = static_cast<double>(v);
      for (const auto& [name, v] : e.params) values[name] = static_cast<double>(v);
      try {
        return eval_metric(m.expression, values);
      } catch (const ConfigError&) {
        return std::nullopt;  // a kernel of the sweep without these parameters
      }
    };
    options.metric_higher_is_better = t.metric_objective->higher_is_better;
  }
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
