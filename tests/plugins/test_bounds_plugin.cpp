// lower_bound and upper_bound: their CPU reference (std::lower_bound / std::upper_bound in the sort
// family's order), the data a run draws, and their options and errors (no GPU).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "builtins.hpp"
#include "config/config.hpp"
#include "family_semantics.hpp"
#include "gpuk/error.hpp"
#include "run/prepare.hpp"
#include "search/bounds_reference.hpp"
#include "search/searcher.hpp"

using namespace gpuk;

namespace {

using test::array;
using test::kernels;
using test::plugins;
using test::searcher;

template <class T>
std::vector<std::int64_t> bounds(std::initializer_list<T> hay, std::initializer_list<T> needles, bool upper) {
  std::vector<std::int64_t> out(needles.size(), -7);
  searcher().bounds_on_cpu(array<T>(hay), array<T>(needles), upper, out.data());
  return out;
}
using V = std::vector<std::int64_t>;

using test::parse_run;
std::string bounds_error_of(const std::string& yaml) {
  try {
    const RunSpec spec = parse_run(yaml);
    searcher().template_args(problem_of(spec));
    searcher().make_launcher(problem_of(spec));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
const std::string kLower = "family: search\noperation: lower_bound\ndtype: float32\nsize: 1000\n";
// Keys enough that sorted needles up to 2^25 are fewer than an eighth of them: bounds_window's.
const std::string kLowerWide = "family: search\noperation: lower_bound\ndtype: float32\nsize: 2^28\n";

}  // namespace

TEST_CASE("lower_bound is the first key not below the needle, upper_bound the first key above it") {
  CHECK(bounds<std::int32_t>({1, 3, 3, 3, 7}, {0, 1, 3, 4, 7, 8}, false) == V{0, 0, 1, 4, 4, 5});
  CHECK(bounds<std::int32_t>({1, 3, 3, 3, 7}, {0, 1, 3, 4, 7, 8}, true) == V{0, 1, 4, 4, 5, 5});
  CHECK(bounds<std::uint32_t>({5, 5, 5}, {4, 5, 6}, false) == V{0, 0, 3});  // all equal
  CHECK(bounds<std::uint32_t>({5, 5, 5}, {4, 5, 6}, true) == V{0, 3, 3});
  CHECK(bounds<std::int64_t>({-9, -2, 0}, {-10, -2, -1}, false) == V{0, 1, 2});
  CHECK(bounds<std::int64_t>({(1LL << 60) + 1}, {1LL << 60, (1LL << 60) + 1}, true) == V{0, 1});  // n = 1, exact
  CHECK(bounds<std::int32_t>({1, 2}, {}, false).empty());  // zero needles
}

TEST_CASE("floats are ordered as the sort family orders them: -0.0 before +0.0, every NaN equal and last") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const auto hay = {-inf, -1.0f, -0.0f, 0.0f, 2.0f, inf, nan, -nan};
  CHECK(bounds<float>(hay, {-0.0f, 0.0f, nan, -nan, inf, -inf}, false) == V{2, 3, 6, 6, 5, 0});
  CHECK(bounds<float>(hay, {-0.0f, 0.0f, nan, -nan, inf, -inf}, true) == V{3, 4, 8, 8, 6, 1});
  CHECK(bounds<double>({-0.0, 0.0, std::nan("")}, {0.0, std::nan("")}, false) == V{1, 2});
  CHECK(search::ordered_bits(-0.0f) < search::ordered_bits(0.0f));
  CHECK(search::ordered_bits(inf) < search::ordered_bits(nan));
  CHECK(search::ordered_bits(nan) == search::ordered_bits(-nan));
}

TEST_CASE("bounds_on_cpu refuses unsorted keys and needles of another dtype") {
  std::vector<std::int64_t> out(1);
  CHECK_THROWS_WITH_AS(searcher().bounds_on_cpu(array<float>({0.0f, -0.0f}), array<float>({1.0f}), false, out.data()),
                       doctest::Contains("not sorted"), Error);
  CHECK_THROWS_WITH_AS(searcher().bounds_on_cpu(array<float>({0.0f}), array<double>({1.0}), false, out.data()),
                       doctest::Contains("float64 needles in float32 keys"), Error);
}

TEST_CASE("a run's needles: keys, keys moved up one step and values around them, sorted with needles: sorted") {
  std::vector<std::int32_t> hay(1000);
  for (int i = 0; i < 1000; ++i) hay[i] = i / 4;  // duplicates
  const auto a = search::make_needles<std::int32_t>(hay, 3001, 5, false);
  const auto b = search::make_needles<std::int32_t>(hay, 3001, 5, false);
  CHECK(a == b);  // a pure function of the seed
  int in = 0, below = 0, above = 0;
  for (auto q : a) {
    in += q >= 0 && q <= 249;
    below += q < 0;
    above += q > 249;
  }
  CHECK(in > 1800);
  CHECK(below > 100);
  CHECK(above > 100);
  const auto s = search::make_needles<std::int32_t>(hay, 3001, 5, true);
  CHECK(std::is_sorted(s.begin(), s.end()));
  std::vector<float> fh = {-1.0f, -0.0f, 0.0f, 0.5f};
  const auto f = search::make_needles<float>(fh, 999, 1, true);
  CHECK(search::is_ordered<float>(f));
}

TEST_CASE("the bounds' options: needle_count and needles pick the kernel (few: bounds_gather; more sorted: bounds_window, or bounds_merge from an eighth of the keys), the others are refused") {
  const RunSpec spec = parse_run(kLower + "needle_count: 5000\n");
  const Problem p = problem_of(spec);
  CHECK(searcher().template_args(p) == std::vector<std::string>{"gpuk::Bounds<float, gpuk::Side::Lower>"});
  const auto kernel_for = [](const std::string& options) {
    return searcher().choose_kernel(problem_of(parse_run(kLower + options)))->kernel;
  };
  CHECK(searcher().choose_kernel(p)->kernel == "bounds_gather");  // few needles: one launch, any order
  CHECK(kernel_for("needles: sorted\nneedle_count: 1000\n") == "bounds_gather");
  CHECK(kernel_for("needle_count: 65536\n") == "bounds_gather");
  CHECK(kernel_for("needle_count: 65537\n") == "bounds_gather");  // up to 2^18 in any order: 256 threads a block
  CHECK(kernel_for("needle_count: 262145\n") == "bounds");
  // sorted needles at least an eighth of the keys: by merge path
  CHECK(kernel_for("needles: sorted\nneedle_count: 1000000\n") == "bounds_merge");
  const auto wide_kernel_for = [](const std::string& options) {
    return searcher().choose_kernel(problem_of(parse_run(kLowerWide + options)))->kernel;
  };
  CHECK(wide_kernel_for("needles: sorted\nneedle_count: 1000000\n") == "bounds_window");
  CHECK(wide_kernel_for("needles: sorted\nneedle_count: 33554431\n") == "bounds_window");
  CHECK(wide_kernel_for("needles: sorted\nneedle_count: 33554432\n") == "bounds_merge");  // 2^28 / 8
  CHECK(wide_kernel_for("needle_count: 33554432\n") == "bounds");  // in any order: no merge
  const auto choice = [](const std::string& options) {
    return searcher().choose_kernel(problem_of(parse_run(kLowerWide + options)))->params;
  };
  CHECK(searcher().choose_kernel(problem_of(parse_run(kLower + "needles: sorted\nneedle_count: 1000000\n")))->params.empty());
  using Params = std::map<std::string, std::int64_t>;
  CHECK(choice("needle_count: 262144\n") == Params{{"BLOCK", 256}});
  // more needles: 8 blocks an SM (2^24 sorted needles in 2^24 keys: 0.2437 ms against 0.2731 at 4)
  CHECK(choice("needle_count: 1000000\n") == Params{{"ITEMS", 2}, {"BLOCKS_PER_SM", 8}});
  CHECK(choice("needles: sorted\nneedle_count: 8388608\n") == Params{{"BLOCKS_PER_SM", 8}});
  // more than 2^23 sorted needles: each tile's window from the splits of a first launch
  CHECK(choice("needles: sorted\nneedle_count: 8388609\n") == Params{{"BLOCKS_PER_SM", 8}, {"SPLITS", 1}});
  const auto launcher = searcher().make_launcher(p);
  const auto slots = launcher->arrays();
  REQUIRE(slots.size() == 3);
  CHECK(slots[1].bytes == 5000u * 4);
  CHECK(slots[2].bytes == 5000u * 8);
  CHECK(slots[2].output);
  CHECK(launcher->scalar()->dtype == DType::int64);
  CHECK(bounds_error_of(kLower + "needle_count: -1\n").find("needle_count: -1 is not a count") != std::string::npos);
  CHECK(bounds_error_of(kLower + "value: 0.5\n").find("value is not an option of lower_bound") != std::string::npos);
  CHECK(bounds_error_of(kLower + "value_at: first\n").find("value_at is not an option of lower_bound") != std::string::npos);
  CHECK(bounds_error_of(kLower + "needles: backwards\n").find("needles must be one of") != std::string::npos);
  const std::string find = "family: search\noperation: find\ndtype: int32\nsize: 10\n";
  CHECK(bounds_error_of(find + "needles: sorted\n").find("options of lower_bound and upper_bound, not of find") != std::string::npos);
  CHECK(bounds_error_of(find + "needle_count: 7\n").find("not of find") != std::string::npos);
  CHECK_FALSE(searcher().choose_kernel(problem_of(parse_run(find))).has_value());
}

TEST_CASE("bounds_window's SPLITS 1: a first launch, and a scratch slot for each tile of needles prepared for and one more") {
  const Problem p = problem_of(parse_run(kLower + "needles: sorted\nneedle_count: 1000001\n"));
  const auto launcher = searcher().make_launcher(p);
  const auto file = kernels().find("search", "bounds_window");
  LaunchLimits limits;
  limits.n = 1000;
  limits.sm_count = 132;
  limits.elem_bytes = 4;
  const auto plan = [&](const std::map<std::string, std::int64_t>& params) {
    return plan_launches(Variant(file, searcher().template_args(p), params), limits);
  };
  const LaunchPlan plain = plan({});
  REQUIRE(plain.launches.size() == 1);  // SPLITS 0: as before, one launch and no scratch of its own
  CHECK(launcher->scratch_bytes(plain) == 8);
  const LaunchPlan split = plan({{"SPLITS", 1}});
  REQUIRE(split.launches.size() == 2);
  CHECK(split.launches[0].name_expression.rfind("bounds_window_splits<", 0) == 0);
  CHECK(split.launches[0].grid == 132 * 2048 / 256);
  CHECK(launcher->scratch_bytes(split) == (977 + 1) * 8);  // ceil(1000001 / 1024) tiles of 256 x 4
  CHECK(launcher->scratch_bytes(plan({{"SPLITS", 1}, {"BLOCK", 128}, {"ITEMS", 1}})) == (7813 + 1) * 8);
  // the other bounds kernels keep their `scratch:` slots
  const LaunchPlan table = plan_launches(Variant(kernels().find("search", "bounds"), searcher().template_args(p), {}), limits);
  CHECK(launcher->scratch_bytes(table) == 1024 * 8);
  // no needles prepared for: the one split of the (never launched) last needle
  const auto none = searcher().make_launcher(problem_of(parse_run(kLower + "needles: sorted\nneedle_count: 0\n")));
  CHECK(none->scratch_bytes(split) == 8);
}

TEST_CASE("bounds_merge: a first launch, and scratch for a split at each tile of the merge of keys and needles, and one more") {
  const Problem p = problem_of(parse_run(kLower + "needles: sorted\nneedle_count: 1000001\n"));
  const auto launcher = searcher().make_launcher(p);
  const auto file = kernels().find("search", "bounds_merge");
  LaunchLimits limits;
  limits.n = 1000;
  limits.sm_count = 132;
  limits.elem_bytes = 8;
  const auto plan = [&](const std::map<std::string, std::int64_t>& params) {
    return plan_launches(Variant(file, searcher().template_args(p), params), limits);
  };
  const LaunchPlan merge = plan({});
  REQUIRE(merge.launches.size() == 2);
  CHECK(merge.launches[0].name_expression.rfind("bounds_merge_splits<", 0) == 0);
  CHECK(merge.launches[1].name_expression.rfind("bounds_merge<", 0) == 0);
  CHECK(merge.launches[1].grid == 132 * 4);
  CHECK(merge.launches[1].shared_bytes == (256 * 15 + 2) * 8 + 256 * 15 * 4);
  // ceil(1000 / 3840) for the keys, ceil(1000001 / 3840) + 1 for the needles: at least the
  // ceil(1001001 / 3840) + 1 = 262 splits of the merge
  CHECK(launcher->scratch_bytes(merge) == (1 + 261 + 1) * 8);
  CHECK(launcher->scratch_bytes(plan({{"BLOCK", 128}, {"ITEMS", 5}})) == (2 + 1563 + 1) * 8);
}

TEST_CASE("configs/lower_bound.yaml and configs/upper_bound_sorted.yaml read") {
  for (const char* name : {"lower_bound.yaml", "upper_bound_sorted.yaml"}) {
    CAPTURE(name);
    const RunSpec spec = load_run_spec(test::source_dir() / "configs" / name, plugins(), kernels());
    CHECK(spec.options.at("needle_count") == "1048576");
    CHECK_NOTHROW(searcher().template_args(problem_of(spec)));
  }
}
