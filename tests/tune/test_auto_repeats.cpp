// Noise-aware timing (repeats: auto): the median's confidence interval, the stopping rule on
// synthetic samples, and the automatic recheck of the leaders in tune() (no GPU).
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "tune/sweep/auto_repeats.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

TEST_CASE("median_ci_relative: order statistics around the median, relative; undefined below 6 samples") {
  CHECK(std::isinf(median_ci_relative({1, 1, 1, 1, 1})));
  CHECK(median_ci_relative(std::vector<double>(20, 2.0)) == 0);
  // n = 10: ranks floor((10 - 6.2) / 2) = 1 and ceil(1 + 16.2 / 2) = 10, of 1..10 around a median
  // of 5.5: (10 - 1) / (2 * 5.5).
  std::vector<double> ten;
  for (int i = 10; i >= 1; --i) ten.push_back(i);
  CHECK(median_ci_relative(ten) == doctest::Approx(9.0 / 11.0));
  // n = 100 of 1..100: ranks 40 and 61 -> (61 - 40) / (2 * 50.5).
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  CHECK(median_ci_relative(hundred) == doctest::Approx(21.0 / 101.0));
}

TEST_CASE("the rule stops quiet samples soon, noisy ones later, and caps time and runs") {
  std::mt19937_64 rng(7);
  const auto source = [&](double noise) {
    return [&rng, noise](int k) {
      std::normal_distribution<double> d(1.0, noise);
      std::vector<double> s;
      for (int i = 0; i < k; ++i) s.push_back(d(rng));
      return s;
    };
  };
  double clock = 0;
  const auto fake_clock = [&] { return clock += 0.001; };  // 1 ms per look
  AutoRepeats rule;  // 1%, 1 s, batches of 10
  const AutoTiming quiet = time_until_stable(source(0.001), rule, fake_clock);
  CHECK(quiet.stop == AutoStop::converged);
  CHECK(quiet.samples.size() == 10);  // the least it takes
  CHECK(quiet.ci <= 0.01);

  const AutoTiming noisy = time_until_stable(source(0.05), rule, fake_clock);
  CHECK(noisy.stop == AutoStop::converged);
  CHECK(noisy.samples.size() > 50);  // a 5% spread needs many runs for a 1% interval
  CHECK(noisy.ci <= 0.01);
  // Fewer runs than it took would not have done.
  std::vector<double> fewer(noisy.samples.begin(), noisy.samples.end() - 10);
  CHECK(median_ci_relative(fewer) > 0.01);

  AutoRepeats capped = rule;
  capped.seconds = 0.005;  // five looks
  const AutoTiming timed_out = time_until_stable(source(0.3), capped, fake_clock);
  CHECK(timed_out.stop == AutoStop::time_cap);
  CHECK(timed_out.samples.size() == 50);

  AutoRepeats few = rule;
  few.max_runs = 25;
  const AutoTiming run_cap = time_until_stable(source(0.3), few, fake_clock);
  CHECK(run_cap.stop == AutoStop::run_cap);
  CHECK(run_cap.samples.size() == 25);
  CHECK(std::string(auto_stop_name(AutoStop::time_cap)) == "time cap");
}

TEST_CASE("the automatic recheck times each leader until its median is known, and says how many runs") {
  const Space space = test::metadata_space({test::tune_kernel()});
  struct Noisy : test::FakeMeasurer {
    std::mt19937_64 rng{3};
    std::vector<double> time(const Space& space, const Candidate& c, int repeats) override {
      ++timed;
      const double base = test::smooth_cost(space.params(c));
      // The winner is noisy (3%), the others quiet (0.1%).
      const double noise = space.label(c) == "k BLOCK=256 UNROLL=4" ? 0.03 : 0.001;
      std::normal_distribution<double> d(base, base * noise);
      std::vector<double> s;
      for (int i = 0; i < repeats; ++i) s.push_back(d(rng));
      return s;
    }
  } m;
  TuneOptions o;
  o.recheck_top = 3;
  o.recheck_auto = AutoRepeats{};
  const TuneResult r = tune(space, m, o);
  REQUIRE(r.winner());
  CHECK(r.winner()->label == "k BLOCK=256 UNROLL=4");
  std::size_t quiet_runs = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    const Evaluation& e = r.evaluations[r.ranking[k]];
    CAPTURE(e.label);
    CHECK(e.rechecked);
    CHECK(e.recheck_stop == "converged");
    if (k > 0) quiet_runs = std::max<std::size_t>(quiet_runs, e.time.count);
  }
  CHECK(quiet_runs == 20);                                          // two interleaved rounds of 10
  CHECK(r.evaluations[r.ranking[0]].time.count > 2 * quiet_runs);   // the noisy one took more
}
