// Noise-aware timing: the median's confidence interval and the rule that stops the repeats.
#include "tune/sweep/auto_repeats.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace gpuk {

double median_ci_relative(std::vector<double> samples) {
  const std::size_t n = samples.size();
  if (n < 6) return std::numeric_limits<double>::infinity();
  std::sort(samples.begin(), samples.end());
  const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  if (!(median > 0)) return std::numeric_limits<double>::infinity();
  const double root = 1.96 * std::sqrt(static_cast<double>(n));
  // 1-based ranks, clamped to the sample.
  const auto lo = static_cast<std::size_t>(std::max(1.0, std::floor((static_cast<double>(n) - root) / 2)));
  const auto hi = static_cast<std::size_t>(
      std::min(static_cast<double>(n), std::ceil(1 + (static_cast<double>(n) + root) / 2)));
  return (samples[hi - 1] - samples[lo - 1]) / (2 * median);
}

const char* auto_stop_name(AutoStop s) {
  switch (s) {
    case AutoStop::more: return "more";
    case AutoStop::converged: return "converged";
    case AutoStop::time_cap: return "time cap";
    case AutoStop::run_cap: return "run cap";
  }
  return "?";
}

AutoStop auto_repeats_stop(const std::vector<double>& samples, double elapsed_s, const AutoRepeats& rule) {
  const int n = static_cast<int>(samples.size());
  if (n >= std::max(rule.min_runs, 6) && median_ci_relative(samples) <= rule.bound) return AutoStop::converged;
  if (n >= rule.max_runs) return AutoStop::run_cap;
  if (elapsed_s >= rule.seconds) return AutoStop::time_cap;
  return AutoStop::more;
}

AutoTiming time_until_stable(const std::function<std::vector<double>(int)>& more, const AutoRepeats& rule,
                             const std::function<double()>& now) {
  const auto clock = [&] {
    if (now) return now();
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const double start = clock();
  AutoTiming t;
  for (;;) {
    const int want = std::max(1, std::min(rule.batch, rule.max_runs - static_cast<int>(t.samples.size())));
    const auto got = more(want);
    t.samples.insert(t.samples.end(), got.begin(), got.end());
    t.stop = auto_repeats_stop(t.samples, clock() - start, rule);
    if (t.stop == AutoStop::more && static_cast<int>(got.size()) < want) t.stop = AutoStop::run_cap;
    if (t.stop != AutoStop::more) break;
  }
  t.ci = median_ci_relative(t.samples);
  return t;
}

}  // namespace gpuk
