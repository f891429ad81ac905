// The bayes strategy on synthetic cost functions (no GPU): it stays within its budget, never
// measures a point twice, is reproducible by seed, steers around failures, and finds a point
// within the noise of the optimum after measuring at most a quarter of the space.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

// Three parameters, 8 x 8 x 6 = 384 points, none pruned.
const char* kWide = R"(/* gpuk
family: reduce
operations: [max]
params:
  BLOCK: {default: 256, values: [32, 64, 128, 256, 512, 768, 1024, 2048]}
  UNROLL: {default: 2, values: [1, 2, 3, 4, 6, 8, 12, 16]}
  WAVES: {default: 2, values: [1, 2, 3, 4, 6, 8]}
launch:
  - entry: k
    grid: 1
    block: 1
*/
template <class R, int BLOCK, int UNROLL, int WAVES> __global__ void k() {}
)";

// A rugged bowl: a smooth optimum at BLOCK=512 UNROLL=6 WAVES=3, a ripple, and a cliff.
double rugged(const std::map<std::string, std::int64_t>& p) {
  const double b = std::log2(static_cast<double>(p.at("BLOCK"))) - 9;
  const double u = std::log2(static_cast<double>(p.at("UNROLL"))) - std::log2(6.0);
  const double w = static_cast<double>(p.at("WAVES")) - 3;
  double c = 1 + 0.08 * b * b + 0.12 * u * u + 0.03 * w * w + 0.02 * std::sin(3 * b + 2 * u);
  if (p.at("BLOCK") == 2048 && p.at("UNROLL") >= 8) c *= 3;  // register spills
  return c;
}

struct Synthetic : test::FakeMeasurer {
  explicit Synthetic(double (*f)(const std::map<std::string, std::int64_t>&), double noise = 0.002) {
    outcome = [f, noise](const std::map<std::string, std::int64_t>& p) {
      Outcome o;
      const double c = f(p);
      o.samples = {c * (1 + noise), c * (1 - noise), c, c * (1 + noise / 2), c * (1 - noise / 2)};
      return o;
    };
  }
};

// Evaluations until the best so far is within `tolerance` of the best of the space.
std::size_t evaluations_to_within(const TuneResult& r, double best, double tolerance) {
  double so_far = 1e300;
  std::size_t n = 0;
  for (const auto& e : r.evaluations) {
    if (e.outcome.status == Status::pruned) continue;
    ++n;
    if (e.outcome.status == Status::ok) so_far = std::min(so_far, Spread::of(e.outcome.samples).median);
    if (so_far <= best * (1 + tolerance)) return n;
  }
  return 1000000;
}

}  // namespace

TEST_CASE("bayes stays within its budget, measures no point twice, and is reproducible by seed") {
  const Space space = test::metadata_space({test::tune_kernel(kWide, "wide.cu")});
  const auto run = [&](std::uint64_t seed) {
    Synthetic m(rugged);
    TuneOptions o;
    o.strategy = TuneStrategy::bayes;
    o.evaluations = 30;
    o.seed = seed;
    o.recheck_top = 0;
    tune(space, m, o);
    return m.measured;
  };
  const auto a = run(1);
  CHECK(a.size() == 30);
  CHECK(std::set<std::string>(a.begin(), a.end()).size() == a.size());
  CHECK(run(1) == a);
  CHECK(run(2) != a);
}

TEST_CASE("bayes finds the optimum of a rugged space within 1% after at most a quarter of it, for every seed") {
  const Space space = test::metadata_space({test::tune_kernel(kWide, "wide.cu")});
  double best = 1e300;
  for (std::uint64_t i = 0; i < space.size(); ++i) best = std::min(best, rugged(space.params(space.at(i))));
  const std::size_t quarter = space.size() / 4;  // 96
  std::size_t worst = 0, total = 0, random_total = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    Synthetic m(rugged);
    TuneOptions o;
    o.strategy = TuneStrategy::bayes;
    o.evaluations = static_cast<int>(quarter);
    o.seed = seed;
    const TuneResult r = tune(space, m, o);
    const std::size_t n = evaluations_to_within(r, best, 0.01);
    CHECK(n <= quarter);
    worst = std::max(worst, n);
    total += n;
    REQUIRE(r.winner());
    CHECK(r.winner()->time.median <= best * 1.01);

    Synthetic rm(rugged);
    o.strategy = TuneStrategy::random;
    o.evaluations = static_cast<int>(space.size());
    random_total += evaluations_to_within(tune(space, rm, o), best, 0.01);
  }
  MESSAGE("bayes: mean " << total / 8.0 << ", worst " << worst << " evaluations of " << space.size()
                         << "; random: mean " << random_total / 8.0);
  CHECK(total < random_total);  // the model beats chance
}

TEST_CASE("bayes steers around failures and works over several kernel files") {
  const Space space = test::metadata_space({test::tune_kernel(), test::tune_kernel(test::kTuneKernel2, "o.cu")});
  test::FakeMeasurer m;
  const auto smooth = m.outcome;
  m.outcome = [smooth](const std::map<std::string, std::int64_t>& p) {
    Outcome o = smooth(p);
    if (p.count("UNROLL") && p.at("UNROLL") == 8) {  // every UNROLL=8 gives a wrong answer
      o.status = Status::invalid;
      o.samples.clear();
    }
    return o;
  };
  TuneOptions o;
  o.strategy = TuneStrategy::bayes;
  o.evaluations = 12;
  o.seed = 5;
  const TuneResult r = tune(space, m, o);
  CHECK(m.measured.size() == 12);
  REQUIRE(r.winner());
  CHECK(r.winner()->outcome.status == Status::ok);
  bool other_file = false;
  for (const auto& label : m.measured) other_file = other_file || label.rfind("o ", 0) == 0;
  CHECK(other_file);  // each file's defaults start the walk
  // A budget larger than the space ends when every runnable point is measured.
  test::FakeMeasurer all;
  o.evaluations = 1000;
  const TuneResult full = tune(space, all, o);
  CHECK(all.measured.size() == full.evaluations.size() - full.count(Status::pruned));
  CHECK(full.winner()->label == "k BLOCK=256 UNROLL=4");
}

TEST_CASE("bayes over a large space (sampled candidates, a capped training set) stays quick and improves") {
  // 8 x 8 x 6 x 16 = 6,144 points: past the size scored point by point.
  const char* big = R"(/* gpuk
family: reduce
operations: [max]
params:
  BLOCK: {default: 256, values: [32, 64, 128, 256, 512, 768, 1024, 2048]}
  UNROLL: {default: 2, values: [1, 2, 3, 4, 6, 8, 12, 16]}
  WAVES: {default: 2, values: [1, 2, 3, 4, 6, 8]}
  PAD: {default: 0, range: [0, 15]}
launch:
  - entry: k
    grid: 1
    block: 1
*/
template <class R, int BLOCK, int UNROLL, int WAVES, int PAD> __global__ void k() {}
)";
  const Space space = test::metadata_space({test::tune_kernel(big, "big.cu")});
  REQUIRE(space.size() == 6144);
  Synthetic m([](const std::map<std::string, std::int64_t>& p) {
    return rugged(p) * (1 + 0.01 * std::abs(static_cast<double>(p.at("PAD")) - 5));
  });
  TuneOptions o;
  o.strategy = TuneStrategy::bayes;
  o.evaluations = 200;  // past the training cap of 160
  o.recheck_top = 0;
  const TuneResult r = tune(space, m, o);
  CHECK(m.measured.size() == 200);
  REQUIRE(r.winner());
  CHECK(r.winner()->time.median <= 1.01);  // the optimum is 1.0 (BLOCK=512 UNROLL=6 WAVES=3 PAD=5)
}
