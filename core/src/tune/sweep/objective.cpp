// The values a sweep ranks by: a point's status, the spread of its samples, the objective and
// its cost, and the names the configs and reports use for them.
#include <algorithm>
#include <cmath>

#include "tune/sweep/sweep.hpp"

namespace gpuk {

std::string_view status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::invalid: return "wrong answer";
    case Status::pruned: return "pruned";
    case Status::compile_error: return "compile error";
    case Status::launch_error: return "launch error";
    case Status::faulted: return "faulted";
    case Status::timed_out: return "time limit";
  }
  return "?";
}

Spread Spread::of(std::vector<double> samples) {
  Spread s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  // Linear interpolation between order statistics (NumPy's default).
  const auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(samples.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, samples.size() - 1);
    return samples[lo] + (pos - static_cast<double>(lo)) * (samples[hi] - samples[lo]);
  };
  s.median = quantile(0.5);
  s.q1 = quantile(0.25);
  s.q3 = quantile(0.75);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

bool needs_energy(TuneObjective o) { return o != TuneObjective::time; }

std::optional<Cost> cost_of(const Evaluation& e, TuneObjective objective) {
  if (e.outcome.status != Status::ok || e.time.count == 0) return std::nullopt;
  const Spread& t = e.time;
  if (objective == TuneObjective::time) return Cost{t.median, t.q1, t.q3};
  if (e.energy.count == 0) return std::nullopt;
  const Spread& j = e.energy;
  if (objective == TuneObjective::energy) return Cost{j.median, j.q1, j.q3};
  // Energy x delay, J x s: the quartiles multiply (both are positive).
  return Cost{j.median * t.median * 1e-3, j.q1 * t.q1 * 1e-3, j.q3 * t.q3 * 1e-3};
}

std::optional<Cost> cost_of(const Evaluation& e, const TuneOptions& options) {
  if (!options.metric) return cost_of(e, options.objective);
  if (e.outcome.status != Status::ok || e.time.count == 0) return std::nullopt;
  const auto cost = [&](double ms) -> std::optional<double> {
    const auto v = options.metric(e, ms);
    if (!v || !std::isfinite(*v)) return std::nullopt;
    if (options.metric_higher_is_better) return *v > 0 ? std::optional<double>(1.0 / *v) : std::nullopt;
    return *v;
  };
  const auto median = cost(e.time.median), q1 = cost(e.time.q1), q3 = cost(e.time.q3);
  if (!median || !q1 || !q3) return std::nullopt;
  return Cost{*median, std::min(*q1, *q3), std::max(*q1, *q3)};
}

double SweepTimes::other() const {
  return std::max(0.0, total - (start + data + reference + compile_wait + measure + verify + recheck + save + scratch + idle));
}

double gbs_of(std::uint64_t bytes, double ms) { return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) / 1e9 : 0; }

std::size_t TuneResult::count(Status s) const {
  return static_cast<std::size_t>(
      std::count_if(evaluations.begin(), evaluations.end(), [&](const Evaluation& e) { return e.outcome.status == s; }));
}

}  // namespace gpuk
