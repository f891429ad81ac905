// Noise-aware timing (`repeats: auto`): time a kernel in batches until the median is known well
// enough, or a time cap is reached (docs/tuning.md, "Noise-aware timing").
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace gpuk {

struct AutoRepeats {
  double bound = 0.01;   // stop when the median's 95% CI half-width / median is at most this
  double seconds = 1.0;  // or when timing the variant took this long (wall clock)
  int min_runs = 10;     // never stop on fewer (the interval needs them)
  int max_runs = 100000;
  int batch = 10;        // runs asked for at a time
};

// The half-width of the distribution-free 95% confidence interval of the median of `samples`,
// relative to the median: the order statistics of ranks floor((n - 1.96 sqrt n) / 2) and
// ceil(1 + (n + 1.96 sqrt n) / 2) (1-based), half their distance over the median. Infinity for
// fewer than 6 samples (the interval is not defined) or a median of 0.
double median_ci_relative(std::vector<double> samples);

enum class AutoStop { more, converged, time_cap, run_cap };
const char* auto_stop_name(AutoStop s);  // "more", "converged", "time cap", "run cap"

// The stopping rule: what to do after `samples`, having timed for `elapsed_s`.
AutoStop auto_repeats_stop(const std::vector<double>& samples, double elapsed_s, const AutoRepeats& rule);

struct AutoTiming {
  std::vector<double> samples;
  AutoStop stop = AutoStop::more;
  double ci = 0;  // median_ci_relative of the samples
};

// Times in batches until the rule stops: `more(k)` returns k more samples (fewer ends it, as a
// run cap). `now` (seconds, monotonic) is the clock; the default is std::chrono::steady_clock.
AutoTiming time_until_stable(const std::function<std::vector<double>(int)>& more, const AutoRepeats& rule,
                             const std::function<double()>& now = {});

}  // namespace gpuk
