// The non-exhaustive strategies (random, anneal, bayes) on a declared kernel's space, with the
// fake measurer (tests/tune/tune_helpers.hpp): the shipped stencil2d's tune config, whose
// constraints and launch plans need its named sizes.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "builtins.hpp"
#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune/tune_helpers.hpp"

using namespace gpuk;

namespace {

TuneSpec stencil_spec(const std::string& extra = "") {
  return parse_tune_spec(
      "family: kernel\nkernels: [stencil2d]\nsizes: {nx: 4099, ny: 4097}\nreference: {kernel: stencil2d_naive}\n"
      "params:\n  block_size_x: [16, 32, 64, 128, 256]\n  block_size_y: [1, 2, 4, 8, 16, 32]\n"
      "  tile_size_y: [1, 2, 4, 8, 16]\n" + extra,
      "t.yaml", test::plugins(), test::kernels());
}

// A smooth cost with its minimum at block_size_x=64 block_size_y=4 tile_size_y=8 (1.0 ms).
double cost(const std::map<std::string, std::int64_t>& p) {
  const auto d = [&](const char* name, double best) { return std::log2(static_cast<double>(p.at(name))) - best; };
  return 1.0 + 0.05 * (d("block_size_x", 6) * d("block_size_x", 6) + d("block_size_y", 2) * d("block_size_y", 2) +
                       d("tile_size_y", 3) * d("tile_size_y", 3));
}

struct Sweep {
  TuneResult result;
  std::vector<std::string> measured;
};

Sweep sweep(const TuneSpec& spec, TuneStrategy strategy, int budget, std::uint64_t seed) {
  const Space space = Space::from_spec(spec, test::kernels());
  test::FakeMeasurer m;
  m.sizes = spec.run.sizes;
  m.outcome = [](const std::map<std::string, std::int64_t>& p) {
    Outcome o;
    const double c = cost(p);
    o.samples = {c, c, c, c, c};
    return o;
  };
  TuneOptions o;
  o.strategy = strategy;
  o.evaluations = budget;
  o.seed = seed;
  o.recheck_top = 2;
  o.recheck_repeats = 5;
  Sweep s{tune(space, m, o), {}};
  s.measured = m.measured;
  return s;
}

}  // namespace

TEST_CASE("random, anneal and bayes on a declared kernel: within the budget, the constraints kept, reproducible") {
  const TuneSpec spec = stencil_spec();
  const Space space = Space::from_spec(spec, test::kernels());
  CHECK(space.size() == 150);
  for (const auto strategy : {TuneStrategy::random, TuneStrategy::anneal, TuneStrategy::bayes}) {
    CAPTURE(strategy_name(strategy));
    const Sweep a = sweep(spec, strategy, 40, 3);
    CHECK(a.measured.size() <= 40);
    CHECK(a.measured.size() >= 20);
    CHECK(std::set<std::string>(a.measured.begin(), a.measured.end()).size() == a.measured.size());  // none twice
    // Every measured point keeps the declaration's constraints (its shared-memory tile fits).
    for (const auto& e : a.result.evaluations) {
      if (e.outcome.status != Status::ok) continue;
      const auto& p = e.params;
      CHECK(p.at("block_size_x") * p.at("block_size_y") <= 1024);
      CHECK(p.at("block_size_x") * p.at("block_size_y") >= 32);
      CHECK((p.at("block_size_x") + 2) * (p.at("block_size_y") * p.at("tile_size_y") + 2) * 4 <= 48 * 1024);
    }
    REQUIRE(a.result.winner());
    CHECK(a.result.winner()->time.median <= 1.2);
    // The same seed, the same sweep; another seed, another.
    CHECK(sweep(spec, strategy, 40, 3).measured == a.measured);
    CHECK(sweep(spec, strategy, 40, 4).measured != a.measured);
  }
  // anneal and bayes find the optimum of the smooth space within their budget.
  CHECK(sweep(spec, TuneStrategy::anneal, 60, 1).result.winner()->label ==
        "stencil2d block_size_x=64 block_size_y=4 tile_size_y=8");
  CHECK(sweep(spec, TuneStrategy::bayes, 60, 1).result.winner()->label ==
        "stencil2d block_size_x=64 block_size_y=4 tile_size_y=8");
}

TEST_CASE("a declared kernel's tune config: strategy and budget, constraints that name its sizes") {
  const TuneSpec spec = stencil_spec("strategy: anneal\nbudget: 24\nseed: 5\nconstraints:\n  - block_size_x * 64 <= nx\n");
  CHECK(spec.strategy == TuneStrategy::anneal);
  CHECK(spec.budget_evaluations == 24);
  CHECK(spec.seed == 5);
  const Sweep s = sweep(spec, spec.strategy, *spec.budget_evaluations, spec.seed);
  CHECK(s.measured.size() <= 24);
  for (const auto& e : s.result.evaluations)
    if (e.outcome.status == Status::ok) CHECK(e.params.at("block_size_x") * 64 <= 4099);
  // A name that is neither a parameter nor a size is refused at its line.
  CHECK_THROWS_WITH_AS(stencil_spec("constraints:\n  - block_size_x <= nz\n"),
                       doctest::Contains("t.yaml:10:5: constraint 'block_size_x <= nz' names 'nz', which no kernel being tuned has and which "
                                         "is not one of its sizes"), ConfigError);
}
