// The cut of a sweep's slow variants (docs/tuning.md, "Variants far behind"): a verified variant
// whose first timed runs (kProbeRuns, the faster of them) already take more than `factor` times
// the fastest median the sweep has timed so far cannot be the sweep's winner, so those runs are
// its timing instead of the config's warm-ups and repeats. Its answer was verified as every
// variant's is; only its time is measured less precisely. No GPU here: the GPU measurer asks it.
#pragma once

namespace gpuk {

// What `gpuk tune` cuts at when time is the objective and no energy is asked for, and the runs
// of the probe (they are the variant's warm-ups when it is not cut).
inline constexpr double kCutFactor = 2;
inline constexpr int kProbeRuns = 2;

class TimingCut {
 public:
  // factor <= 0: nothing is cut.
  explicit TimingCut(double factor = 0) : factor_(factor) {}
  // Is a probe worth taking before the full timing? Only once there is a fastest median to
  // compare with.
  bool armed() const { return factor_ > 0 && fastest_ms_ > 0; }
  // Is a variant whose probe took `probe_ms` (the faster run) far enough behind to stop there?
  bool cuts(double probe_ms) const { return armed() && probe_ms > factor_ * fastest_ms_; }
  // A variant timed in full: its median may be the new fastest.
  void timed(double median_ms) {
    if (median_ms > 0 && (fastest_ms_ <= 0 || median_ms < fastest_ms_)) fastest_ms_ = median_ms;
  }
  double fastest_ms() const { return fastest_ms_; }
  double factor() const { return factor_; }

 private:
  double factor_;
  double fastest_ms_ = 0;
};

}  // namespace gpuk
