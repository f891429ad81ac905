// The tuning space: value lists, points, neighbours, pruning; tune configs and their errors.
#include <doctest/doctest.h>

#include <set>

#include "builtins.hpp"
#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "plugin/plugin.hpp"
#include "tune/matrix/matrix.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

using test::plugins;
using test::kernels;

std::string tune_error(const std::string& yaml) {
  try {
    parse_tune_spec(yaml, "t.yaml", plugins(), kernels());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kBase = "family: reduce\noperation: argmax\ndtype: float32\nsize: 1000\n";

}  // namespace

TEST_CASE("value lists use the metadata's grammar: a list, a value, values, range, pow2") {
  CHECK(parse_value_list("[4, 1, 2, 2]", "X") == std::vector<std::int64_t>{1, 2, 4});
  CHECK(parse_value_list("7", "X") == std::vector<std::int64_t>{7});
  CHECK(parse_value_list("{range: [1, 5]}", "X") == std::vector<std::int64_t>{1, 2, 3, 4, 5});
  CHECK(parse_value_list("{range: [0, 10, 5]}", "X") == std::vector<std::int64_t>{0, 5, 10});
  CHECK(parse_value_list("{pow2: [3, 40]}", "X") == std::vector<std::int64_t>{4, 8, 16, 32});
  CHECK(parse_value_list("{values: [100], pow2: [1, 2]}", "X") == std::vector<std::int64_t>{1, 2, 100});
  CHECK_THROWS_WITH_AS(parse_value_list("{range: [5, 1]}", "X"), doctest::Contains("low <= high"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_value_list("{pow2: [5, 7]}", "X"), doctest::Contains("no power of two"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_value_list("[]", "X"), doctest::Contains("empty"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_value_list("{step: 2}", "X"), doctest::Contains("unknown key 'step'"), ConfigError);
}

TEST_CASE("a space numbers its points file by file and maps them back") {
  const Space space = test::metadata_space({test::tune_kernel(), test::tune_kernel(test::kTuneKernel2, "o.cu")});
  CHECK(space.size() == 5 * 4 + 4);
  std::set<Candidate> seen;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const Candidate c = space.at(i);
    CHECK(space.index_of(c) == i);
    seen.insert(c);
  }
  CHECK(seen.size() == space.size());
  CHECK(space.label(space.at(0)) == "k BLOCK=64 UNROLL=1");
  CHECK(space.label(space.at(1)) == "k BLOCK=64 UNROLL=2");
  CHECK(space.label(space.at(20)) == "o BLOCK=32");
  CHECK(space.params(space.at(5)) == std::map<std::string, std::int64_t>{{"BLOCK", 128}, {"UNROLL", 2}});
  CHECK_THROWS(space.at(space.size()));
}

TEST_CASE("neighbours differ in one parameter by one step of its list") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const Candidate corner{0, {64, 1}};
  CHECK(space.neighbours(corner).size() == 2);
  const Candidate middle{0, {256, 2}};
  std::set<std::string> labels;
  for (const auto& n : space.neighbours(middle)) labels.insert(space.label(n));
  CHECK(labels == std::set<std::string>{"k BLOCK=128 UNROLL=2", "k BLOCK=512 UNROLL=2", "k BLOCK=256 UNROLL=1",
                                        "k BLOCK=256 UNROLL=4"});
}

TEST_CASE("pruning: metadata constraints, config constraints and device limits, each with its reason") {
  std::vector<TuneConstraint> constraints = {{Expr::parse("BLOCK >= 128"), 7}, {Expr::parse("K > 1"), 8}};
  const Space space = test::metadata_space({test::tune_kernel()}, constraints);
  const std::vector<std::string> args = {"gpuk::Reduce<float, gpuk::ReduceOp::Max, false>"};
  LaunchLimits limits{1 << 20, 132, 4, 1024, 48 * 1024};
  std::string why;

  LaunchPlan plan;
  CHECK_FALSE(space.prune({0, {256, 4}}, args, limits, &plan, &why));
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].block == 256);
  CHECK(plan.launches[0].grid == (1 << 20) / 1024);

  const auto metadata = space.prune({0, {1024, 8}}, args, limits, nullptr, &why);
  REQUIRE(metadata);
  CHECK(metadata->find("BLOCK * UNROLL <= 4096") != std::string::npos);
  CHECK(why == "constraint 'BLOCK * UNROLL <= 4096'");

  const auto config = space.prune({0, {64, 1}}, args, limits, nullptr, &why);
  REQUIRE(config);
  CHECK(config->find("the config's constraint 'BLOCK >= 128' (line 7)") != std::string::npos);
  CHECK(why == "constraint 'BLOCK >= 128'");
  // 'K > 1' names a parameter this file does not have: it does not bind it.

  limits.max_threads_per_block = 512;
  const auto device = space.prune({0, {1024, 2}}, args, limits, nullptr, &why);
  REQUIRE(device);
  CHECK(why == "more threads per block than the GPU allows");
}

TEST_CASE("a tune config: kernels, the space, constraints, strategy, budget, seed") {
  const TuneSpec t = parse_tune_spec(kBase +
                                         "kernels: [onepass]\nparams:\n  BLOCK: [256, 512]\n  UNROLL: {pow2: [2, 4]}\n"
                                         "constraints: [BLOCK * UNROLL <= 1024]\nstrategy: random\n"
                                         "budget: {evaluations: 7, seconds: 2.5}\nseed: 9\nrecheck: {top: 3, repeats: 40}\n"
                                         "flush_l2: true\nshow: 4\nsave: false\n",
                                     "t.yaml", plugins(), kernels());
  CHECK(t.kernels == std::vector<std::string>{"onepass"});
  CHECK(t.run.kernel == "onepass");
  CHECK(t.params.at("BLOCK") == std::vector<std::int64_t>{256, 512});
  CHECK(t.params.at("UNROLL") == std::vector<std::int64_t>{2, 4});
  REQUIRE(t.constraints.size() == 1);
  CHECK(t.constraints[0].line == 9);
  CHECK(t.strategy == TuneStrategy::random);
  CHECK(t.budget_evaluations == 7);
  CHECK(t.budget_seconds == 2.5);
  CHECK(t.seed == 9);
  CHECK(t.recheck_top == 3);
  CHECK(t.recheck_repeats == 40);
  CHECK(t.flush_l2 == FlushL2::on);
  CHECK(t.show == 4);
  CHECK_FALSE(t.save);
  CHECK(t.run.warmup == 5);
  CHECK(t.run.repeats == 30);

  const Space space = Space::from_spec(t, kernels());
  REQUIRE(space.files().size() == 1);
  // BLOCKS_PER_SM, LOAD, SPLIT, WAVES and FOLD keep their metadata values (4, 3, 2, 4, 3).
  CHECK(space.size() == 2 * 2 * 4 * 3 * 2 * 4 * 3);
}

TEST_CASE("kernels: all takes every kernel file of the family that implements the operation and dtype") {
  const TuneSpec t = parse_tune_spec(kBase + "kernels: all\n", "t.yaml", plugins(), kernels());
  CHECK(t.all_kernels);
  CHECK(t.kernels.size() >= 5);
  CHECK(std::find(t.kernels.begin(), t.kernels.end(), "onepass") != t.kernels.end());
  const TuneSpec one = parse_tune_spec(kBase, "t.yaml", plugins(), kernels());
  CHECK(one.kernels == std::vector<std::string>{"onepass"});  // the plugin's default kernel
}

TEST_CASE("a config can widen a parameter beyond the metadata's list; the space says so") {
  const TuneSpec t = parse_tune_spec(kBase + "kernel: vecmax_tree\nparams: {GRID: [4, 4096]}\n", "t.yaml", plugins(),
                                     kernels());
  const Space space = Space::from_spec(t, kernels());
  CHECK(space.files()[0].widened == std::vector<std::string>{"GRID=4096"});
  const std::vector<std::string> args = {"gpuk::Reduce<float, gpuk::ReduceOp::ArgMax, false>"};
  CHECK_FALSE(space.prune({0, {256, 4096}}, args, {1000, 132, 4, 1024, 48 * 1024}));
}

TEST_CASE("bad tune configs name the file, line and column") {
  CHECK(tune_error(kBase + "kernels: [onepas]\n").find("t.yaml:5:11: no reduce kernel named 'onepas'") !=
        std::string::npos);
  CHECK(tune_error(kBase + "kernels: [onepass]\nparams: {BLCK: [1]}\n")
            .find("t.yaml:6:10: no kernel being tuned has a parameter 'BLCK' (did you mean 'BLOCK'?)") !=
        std::string::npos);
  CHECK(tune_error(kBase + "strategy: anneel\n").find("t.yaml:5:11: unknown strategy 'anneel' (did you mean 'anneal'?)") !=
        std::string::npos);
  CHECK(tune_error(kBase + "constraints: [BLOCK <=]\n").find("t.yaml:5:15: constraint 'BLOCK <='") != std::string::npos);
  CHECK(tune_error(kBase + "constraints: [WARPS > 1]\n").find("names 'WARPS'") != std::string::npos);
  CHECK(tune_error(kBase + "budget: {evaluation: 3}\n").find("t.yaml:5:10: unknown key 'evaluation'") !=
        std::string::npos);
  CHECK(tune_error(kBase + "verify: false\n").find("t.yaml:5:1: unknown key 'verify' in the tune config") !=
        std::string::npos);
  CHECK(tune_error(kBase + "params: {BLOCK: {range: [9, 1]}}\n").find("t.yaml:5:25:") != std::string::npos);
}

TEST_CASE("a run config: naming a kernel, variant: auto / default, tuning:, and tune keys rejected with a pointer to gpuk tune") {
  // Naming nothing, or saying variant: auto: the lookup chooses; kernel holds the default kernel.
  const RunSpec auto_spec = parse_run_spec(kBase + "variant: auto\ntuning: db.json\n", "/x/c.yaml", plugins(), kernels());
  CHECK(auto_spec.pick == RunSpec::Pick::lookup);
  CHECK(auto_spec.kernel == "onepass");
  CHECK(auto_spec.tuning_file == std::filesystem::path("/x/db.json"));
  CHECK(parse_run_spec(kBase, "c.yaml", plugins(), kernels()).pick == RunSpec::Pick::lookup);
  CHECK(parse_run_spec(kBase + "tuning: db.json\n", "/x/c.yaml", plugins(), kernels()).tuning_file ==
        std::filesystem::path("/x/db.json"));
  // A kernel or parameters named: exactly that; variant: default: the metadata's defaults.
  CHECK(parse_run_spec(kBase + "kernel: onepass\n", "c.yaml", plugins(), kernels()).pick == RunSpec::Pick::named);
  CHECK(parse_run_spec(kBase + "params: {BLOCK: 512}\n", "c.yaml", plugins(), kernels()).pick == RunSpec::Pick::named);
  CHECK(parse_run_spec(kBase + "variant: default\n", "c.yaml", plugins(), kernels()).pick == RunSpec::Pick::defaults);
  CHECK_THROWS_WITH_AS(parse_run_spec(kBase + "variant: auto\nkernel: onepass\n", "c.yaml", plugins(), kernels()),
                       doctest::Contains("c.yaml:6:9: 'kernel' and 'variant: auto' do not go together"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_run_spec(kBase + "variant: best\n", "c.yaml", plugins(), kernels()),
                       doctest::Contains("c.yaml:5:10: variant must be 'auto'"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_run_spec(kBase + "kernel: onepass\ntuning: db.json\n", "c.yaml", plugins(), kernels()),
                       doctest::Contains("c.yaml:6:9: 'tuning' names the tuning file the lookup reads, but this config "
                                         "names its kernel"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_run_spec(kBase + "kernels: all\n", "c.yaml", plugins(), kernels()),
                       doctest::Contains("c.yaml:5:10: 'kernels' belongs to a tune config"), ConfigError);
}

TEST_CASE("every tune config in configs/ is valid (a family whose plugin is missing is skipped, with a message)") {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "configs")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".yaml" || name.rfind("tune_", 0) != 0) continue;
    if (is_tune_matrix_file(entry.path())) continue;  // tuning matrices: tests/tune/test_tune_matrix.cpp
    CAPTURE(name);
    if (name == "tune_search.yaml" && !plugins().find("search")) {
      MESSAGE("skipping configs/tune_search.yaml: the search plugin is not built here");
      continue;
    }
    ++count;
    TuneSpec t;
    REQUIRE_NOTHROW(t = load_tune_spec(entry.path(), plugins(), kernels()));
    const Space space = Space::from_spec(t, kernels());
    CHECK(space.size() > 0);
    for (const auto& f : space.files()) CHECK(f.widened.empty());
  }
  CHECK(count >= 2);
}

TEST_CASE("configs/tune_argmax.yaml: 32 points, 25 of them run (the performance target's sweep)") {
  const TuneSpec t = load_tune_spec(test::source_dir() / "configs/tune_argmax.yaml", plugins(), kernels());
  const Space space = Space::from_spec(t, kernels());
  CHECK(space.size() == 32);
  const LaunchLimits limits{std::int64_t{1} << 26, 132, 4, 1024, 48 * 1024};
  int runnable = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i)
    runnable += !space.prune(space.at(i), {"gpuk::Reduce<float, gpuk::ReduceOp::ArgMax, false>"}, limits);
  CHECK(runnable == 25);
  const TuneSpec v = load_tune_spec(test::source_dir() / "configs/tune_vecmax.yaml", plugins(), kernels());
  CHECK(v.run.size == 40960000);
  CHECK(v.kernels == std::vector<std::string>{"vecmax_tree"});
  CHECK(Space::from_spec(v, kernels()).size() == 6 * 9);
}
