// Wall-clock seconds for the time breakdown of a sweep (SweepTimes).
#pragma once
#include <chrono>

namespace gpuk {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Adds the seconds from its construction to stop() (or its end) to `into`.
class Stopwatch {
 public:
  explicit Stopwatch(double& into) : into_(into), start_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() { stop(); }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    into_ += seconds_since(start_);
  }

 private:
  double& into_;
  std::chrono::steady_clock::time_point start_;
  bool stopped_ = false;
};

}  // namespace gpuk
