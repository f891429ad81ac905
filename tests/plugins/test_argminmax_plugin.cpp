// argminmax of the reduce family, without a GPU: the CPU reference against argmin and argmax
// apart (ties, NaN, -0.0, |x|, every dtype), the operation table, the result's layout and scratch,
// the refusals (segments, channels, reduce_on_cpu), its configs and its tune config.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "builtins.hpp"
#include "config/config.hpp"
#include "device/device.hpp"
#include "family_semantics.hpp"
#include "gpuk/error.hpp"
#include "reduce/reducer.hpp"
#include "run/choose.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "tune/matrix/matrix.hpp"
#include "tune/sweep/space.hpp"

using namespace gpuk;

namespace {

using test::array;
using test::kernels;
using test::plugins;
using test::reducer;
using test::parse_run;
using test::run_config_error;

const std::string kArgminmax = "family: reduce\noperation: argminmax\ndtype: float32\n";

bool same(const reduce::Answer& a, const reduce::Answer& b) {
  const bool nan = std::isnan(a.float_value) && std::isnan(b.float_value);
  return a.index == b.index && (nan || a.float_value == b.float_value) && a.int_value == b.int_value &&
         a.uint_value == b.uint_value;
}

template <class T, class From> HostArray host_of(const std::vector<From>& v) {
  HostArray a(dtype_of<T>(), v.size());
  for (std::size_t i = 0; i < v.size(); ++i) a.as<T>()[i] = static_cast<T>(v[i]);
  return a;
}

// The pair against argmin and argmax asked apart, on one input.
void check_apart(const HostArray& x, bool abs) {
  const auto pair = reducer().argminmax_on_cpu(x, abs);
  CHECK(same(pair.first, reducer().reduce_on_cpu(x, reduce::Op::argmin, abs)));
  CHECK(same(pair.second, reducer().reduce_on_cpu(x, reduce::Op::argmax, abs)));
}

}  // namespace

TEST_CASE("argminmax is argmin's answer then argmax's: the first of equal values") {
  const auto [lo, hi] = reducer().argminmax_on_cpu(array<float>({4, -1, 9, -1, 9, 2}), false);
  CHECK(lo.float_value == -1);
  CHECK(lo.index == 1);
  CHECK(hi.float_value == 9);
  CHECK(hi.index == 2);
  const auto one = reducer().argminmax_on_cpu(array<std::int32_t>({-7}), false);
  CHECK(one.first.index == 0);
  CHECK(one.second.index == 0);  // min and max at the same index
  const auto equal = reducer().argminmax_on_cpu(array<double>({0.5, 0.5, 0.5}), false);
  CHECK(equal.first.index == 0);
  CHECK(equal.second.index == 0);
}

TEST_CASE("argminmax: a NaN wins both, at the first NaN; -0.0 and +0.0 are equal") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto [lo, hi] = reducer().argminmax_on_cpu(array<float>({1, -5, nan, 9, nan}), false);
  CHECK(std::isnan(lo.float_value));
  CHECK(std::isnan(hi.float_value));
  CHECK(lo.index == 2);
  CHECK(hi.index == 2);
  const auto zeros = reducer().argminmax_on_cpu(array<float>({0.0f, -0.0f, 0.0f}), false);
  CHECK(zeros.first.index == 0);
  CHECK(zeros.second.index == 0);
  check_apart(array<float>({-0.0f, 0.0f, -0.0f}), false);
  check_apart(array<float>({nan, 1, nan}), true);
}

TEST_CASE("argminmax of |x|: |INT_MIN| is the largest magnitude, without overflow") {
  const std::int32_t int_min = std::numeric_limits<std::int32_t>::min();
  const auto [lo, hi] = reducer().argminmax_on_cpu(array<std::int32_t>({5, int_min, 0, -7, 0}), true);
  CHECK(lo.uint_value == 0);
  CHECK(lo.index == 2);
  CHECK(hi.uint_value == 2147483648u);
  CHECK(hi.index == 1);
}

TEST_CASE("argminmax equals argmin and argmax apart on random data with ties, every dtype, x and |x|") {
  std::mt19937_64 rng(44);
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{1000}}) {
    std::vector<std::int64_t> v(n);
    for (auto& x : v) x = static_cast<std::int64_t>(rng() % 7) - 3;  // seven values: ties everywhere
    for (bool abs : {false, true}) {
      CAPTURE(n);
      CAPTURE(abs);
      check_apart(host_of<std::int32_t>(v), abs);
      check_apart(host_of<std::int64_t>(v), abs);
      check_apart(host_of<std::uint32_t>(v), abs);
      check_apart(host_of<std::uint64_t>(v), abs);
      check_apart(host_of<float>(v), abs);
      check_apart(host_of<double>(v), abs);
    }
  }
}

TEST_CASE("argminmax of an empty array: index -1 for both") {
  const auto [lo, hi] = reducer().argminmax_on_cpu(HostArray(DType::float32, 0), false);
  CHECK(lo.index == -1);
  CHECK(hi.index == -1);
}

TEST_CASE("argminmax is one row of the operation table, named for the device policy and CUB's two calls") {
  const reduce::OpInfo& op = reduce::info(reduce::Op::argminmax);
  CHECK(std::string(op.name) == "argminmax");
  CHECK(std::string(op.device) == "gpuk::ReduceOp::ArgMinMax");
  CHECK(std::string(op.cub) == "cub::DeviceReduce::ArgMin + ArgMax");
  CHECK(op.pair);
  CHECK(op.index);
  for (const reduce::OpInfo& other : reduce::kOps) CHECK(other.pair == (other.op == reduce::Op::argminmax));
  const RunSpec spec = parse_run(kArgminmax + "abs: true\nsize: 1000\n");
  CHECK(plugins().get("reduce").template_args(problem_of(spec)) ==
        std::vector<std::string>{"gpuk::Reduce<float, gpuk::ReduceOp::ArgMinMax, true>"});
  // reduce_on_cpu answers one candidate: it refuses argminmax and names the call that answers two.
  CHECK_THROWS_WITH_AS(reducer().reduce_on_cpu(array<float>({1, 2}), reduce::Op::argminmax, false),
                       doctest::Contains("argminmax_on_cpu"), ConfigError);
}

TEST_CASE("argminmax's result is 32 bytes, argmin's candidate then argmax's; its partials 32 bytes each") {
  const RunSpec spec = parse_run(kArgminmax + "size: 100003\nkernel: onepass\n");
  const Problem problem = problem_of(spec);
  const FamilyPlugin& plugin = plugins().get("reduce");
  const auto launcher = plugin.make_launcher(problem);
  const auto slots = launcher->arrays();
  REQUIRE(slots.size() == 2);
  CHECK(slots[1].bytes == 32);
  CHECK(slots[1].type == "{float32 min; int64 min_index at byte 8; float32 max at byte 16; int64 max_index at byte 24}");
  const Variant v(kernels().find("reduce", "onepass"), plugin.template_args(problem), {});
  LaunchLimits limits;
  limits.n = 100003;
  limits.sm_count = 132;
  limits.elem_bytes = 4;
  const LaunchPlan plan = plan_launches(v, limits);
  CHECK(launcher->scratch_bytes(plan) == 256 + static_cast<std::uint64_t>(plan.scratch_slots) * 32);
}

TEST_CASE("argminmax reduces one contiguous array: segments and channels are refused with what to ask") {
  CHECK(run_config_error(kArgminmax + "size: 1000\nsegments: 10\n").find("argminmax reduces one contiguous array") !=
        std::string::npos);
  CHECK(run_config_error(kArgminmax + "size: 1700\nchannels: 17\n").find("ask argmin and argmax") != std::string::npos);
  CHECK(run_config_error(kArgminmax + "size: 1000\nkernel: block_atomic\n").find("block_atomic") != std::string::npos);
  CHECK(run_config_error(kArgminmax + "size: 1000\n").empty());
  CHECK(run_config_error(kArgminmax + "size: 1000\nkernel: single_thread\n").empty());
}

TEST_CASE("configs/argminmax.yaml and configs/tune_argminmax.yaml: the default path; onepass's 184 variants (FOLD 1 and 2) and one_block's 11 a cell") {
  const RunSpec spec = load_run_spec(test::source_dir() / "configs/argminmax.yaml", plugins(), kernels());
  CHECK(spec.operation == "argminmax");
  CHECK(spec.dtype == DType::float32);
  CHECK(spec.size == (std::uint64_t{1} << 24));
  CHECK(spec.pick == RunSpec::Pick::lookup);  // gpuk chooses, as a user gets it
  const TuneMatrix m = load_tune_matrix(test::source_dir() / "configs/tune_argminmax.yaml", plugins(), kernels());
  REQUIRE(m.cells.size() == 6);
  DeviceInfo h200;
  h200.name = "Test GPU";
  h200.cc_major = 9;
  h200.sm_count = 132;
  h200.max_threads_per_block = 1024;
  h200.max_shared_per_block_optin = 232448;
  for (const auto& cell : m.cells) {
    CAPTURE(cell.id);
    CHECK(cell.spec.run.operation == "argminmax");
    const Space space = Space::from_spec(cell.spec, kernels());
    const Problem problem = problem_of(cell.spec.run);
    const auto leading = plugins().get("reduce").template_args(problem);
    int runnable = 0;
    for (std::uint64_t i = 0; i < space.size(); ++i)
      runnable += space.prune(space.at(i), leading, launch_limits(problem, h200)) ? 0 : 1;
    CHECK(runnable == 92 * 2 + 11);
  }
}

TEST_CASE("a launch-bound size takes one_block (one block, one launch) without a tuned entry; larger n onepass") {
  DeviceInfo sm99;  // no shipped file covers it
  sm99.name = "Test GPU";
  sm99.cc_major = 9;
  sm99.cc_minor = 9;
  sm99.sm_count = 132;
  sm99.max_threads_per_block = 1024;
  sm99.max_shared_per_block_optin = 232448;
  const auto choose = [&](const std::string& yaml) {
    const RunSpec spec = parse_run(yaml);
    return choose_variant(problem_of(spec), variant_request(spec), plugins().get("reduce"), kernels(), sm99, {});
  };
  for (const char* op : {"max", "min", "sum", "argmax", "argmin", "argminmax"}) {
    CAPTURE(op);
    const std::string head = std::string("family: reduce\noperation: ") + op + "\ndtype: float32\n";
    Choice c = choose(head + "size: 4096\n");
    CHECK(c.source == Choice::Source::family);
    CHECK(c.file->name == "one_block");
    CHECK(c.why.find("for n <= 8192 (one block, one launch)") != std::string::npos);
    CHECK(choose(head + "size: 8193\n").file->name == "onepass");
    CHECK(choose(head + "size: 1\n").file->name == "one_block");
  }
  // one_block's single launch: grid 1 at any n.
  const RunSpec spec = parse_run(kArgminmax + "size: 8192\nkernel: one_block\n");
  const Variant v(kernels().find("reduce", "one_block"), plugins().get("reduce").template_args(problem_of(spec)), {});
  LaunchLimits limits;
  limits.n = 8192;
  limits.sm_count = 132;
  limits.elem_bytes = 4;
  const LaunchPlan plan = plan_launches(v, limits);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].grid == 1);
  CHECK(plan.launches[0].block == 512);
}

TEST_CASE("configs/tune_reduce_small.yaml: the five float32 operations at 2^12, onepass against one_block") {
  const TuneMatrix m = load_tune_matrix(test::source_dir() / "configs/tune_reduce_small.yaml", plugins(), kernels());
  REQUIRE(m.cells.size() == 5);
  DeviceInfo h200;
  h200.name = "Test GPU";
  h200.cc_major = 9;
  h200.sm_count = 132;
  h200.max_threads_per_block = 1024;
  h200.max_shared_per_block_optin = 232448;
  for (const auto& cell : m.cells) {
    CAPTURE(cell.id);
    CHECK(cell.spec.run.size == 4096);
    const Space space = Space::from_spec(cell.spec, kernels());
    const Problem problem = problem_of(cell.spec.run);
    const auto leading = plugins().get("reduce").template_args(problem);
    int onepass = 0, one_block = 0;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
      const Candidate c = space.at(i);
      if (space.prune(c, leading, launch_limits(problem, h200))) continue;
      (space.files()[c.file].file->name == "one_block" ? one_block : onepass) += 1;
    }
    CHECK(one_block == 15);  // 4 BLOCK x 4 UNROLL, less 128 x 1
    CHECK(onepass > 20);
  }
}
