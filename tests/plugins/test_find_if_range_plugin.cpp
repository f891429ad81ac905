// find_if over a range (compare: range, lo <= x < hi; closed_range, lo <= x <= hi): the CPU
// semantics, the configs' value / value_hi, and the kernel policy the plugin names (no GPU).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "builtins.hpp"
#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "run/prepare.hpp"
#include "search/searcher.hpp"

using namespace gpuk;

namespace {

using search::Compare;
using test::array;

const search::Searcher& range_searcher() {
  const auto* s = interface_of<search::Searcher>(test::plugins().get("search"));
  REQUIRE(s != nullptr);
  return *s;
}

template <class T> std::int64_t in_range(const HostArray& a, T lo, T hi, Compare c = Compare::range) {
  return range_searcher().find_if_on_cpu(a, search::Value::of(lo), c, search::Value::of(hi));
}

RunSpec parse_range(const std::string& yaml) {
  return parse_run_spec(yaml, "r.yaml", test::plugins(), test::kernels());
}

// The error a config gives, when it is read or when the plugin picks its range.
std::string range_error(const std::string& yaml) {
  try {
    const RunSpec spec = parse_range(yaml);
    const HostArray data = generate(spec.data, spec.dtype, spec.size);
    range_searcher().template_args(problem_of(spec));
    range_searcher().target(problem_of(spec), InputView::borrowed(data, spec.data.seed));
    range_searcher().range_hi(problem_of(spec), InputView::borrowed(data, spec.data.seed));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kRange = "family: search\noperation: find_if\ndtype: float32\nsize: 1000\n"
                           "data: {generator: uniform, low: -1, high: 1, seed: 3}\n";

}  // namespace

TEST_CASE("find_if over a range: the lowest index with lo <= x < hi (closed_range: <= hi), or -1") {
  const auto a = array<std::int32_t>({5, -3, 9, -3, 0, 7});
  CHECK(in_range<std::int32_t>(a, 5, 6) == 0);   // present at the start
  CHECK(in_range<std::int32_t>(a, -5, 0) == 1);  // negatives
  CHECK(in_range<std::int32_t>(a, 0, 1) == 4);
  CHECK(in_range<std::int32_t>(a, 7, 9) == 5);   // hi is outside: 9 is not in [7, 9)
  CHECK(in_range<std::int32_t>(a, 7, 9, Compare::closed_range) == 2);
  CHECK(in_range<std::int32_t>(a, 10, 100) == -1);
  CHECK(in_range<std::int32_t>(a, 1, 5) == -1);  // absent between elements
  // an empty range finds nothing: hi == lo (half-open), hi < lo (both)
  CHECK(in_range<std::int32_t>(a, 5, 5) == -1);
  CHECK(in_range<std::int32_t>(a, 5, 5, Compare::closed_range) == 0);  // [5, 5] holds 5
  CHECK(in_range<std::int32_t>(a, 9, -3) == -1);
  CHECK(in_range<std::int32_t>(a, 9, -3, Compare::closed_range) == -1);
  // hi at the dtype's largest: half-open leaves the largest out, closed takes it
  const std::int32_t max = std::numeric_limits<std::int32_t>::max();
  const std::int32_t min = std::numeric_limits<std::int32_t>::min();
  const auto edges = array<std::int32_t>({max, min, 3});
  CHECK(in_range<std::int32_t>(edges, 3, max) == 2);
  CHECK(in_range<std::int32_t>(edges, 3, max, Compare::closed_range) == 0);
  CHECK(in_range<std::int32_t>(edges, min, min + 1) == 1);
  const auto u = array<std::uint32_t>({4u, 0u, 0xFFFFFFFFu});
  CHECK(in_range<std::uint32_t>(u, 0u, 1u) == 1);
  CHECK(in_range<std::uint32_t>(u, 5u, 0xFFFFFFFFu) == -1);
  CHECK(in_range<std::uint32_t>(u, 5u, 0xFFFFFFFFu, Compare::closed_range) == 2);
  const std::int64_t big = (std::int64_t{1} << 53) + 1;  // exact above 2^53
  CHECK(in_range<std::int64_t>(array<std::int64_t>({big - 1, big, big + 1}), big, big + 1) == 1);
}

TEST_CASE("a NaN is in no range, a NaN bound makes the range empty, -0.0 equals +0.0") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto a = array<float>({nan, 2.0f, -0.0f, nan, 0.0f, -1.0f, inf});
  CHECK(in_range(a, -inf, inf) == 1);  // NaN skipped
  CHECK(in_range(a, -inf, inf, Compare::closed_range) == 1);
  CHECK(in_range(a, 0.0f, 1.0f) == 2);   // -0.0 >= +0.0
  CHECK(in_range(a, -1.0f, 0.0f) == 5);  // -0.0 < +0.0 is false: neither zero is in [-1, 0)
  CHECK(in_range(a, -1.0f, -0.0f, Compare::closed_range) == 2);
  CHECK(in_range(a, 3.0f, inf) == -1);   // +inf is not in [3, inf)
  CHECK(in_range(a, 3.0f, inf, Compare::closed_range) == 6);
  CHECK(in_range(a, nan, 1.0f) == -1);
  CHECK(in_range(a, -1.0f, nan) == -1);
  CHECK(in_range(a, nan, nan, Compare::closed_range) == -1);
  const auto d = array<double>({std::nan(""), -0.0, -2.5});
  CHECK(in_range(d, -0.0, 0.0) == -1);                      // [0, 0) is empty
  CHECK(in_range(d, 0.0, -0.0, Compare::closed_range) == 1);  // [0, 0] holds -0.0
  CHECK(in_range(d, -3.0, -2.5) == -1);
  CHECK(in_range(d, -3.0, -2.5, Compare::closed_range) == 2);
}

TEST_CASE("find_if range configs: value and value_hi, the policy names the range, value_at picks lo") {
  const RunSpec spec = parse_range(kRange + "compare: range\nvalue: -0.5\nvalue_hi: 0.25\n");
  CHECK(spec.option("compare") == "range");
  CHECK(range_searcher().template_args(problem_of(spec)) ==
        std::vector<std::string>{"gpuk::Search<float, gpuk::SearchOp::Find, gpuk::Compare::Range>"});
  const RunSpec closed = parse_range(kRange + "compare: closed_range\nvalue_at: middle\nvalue_hi: 1\n");
  CHECK(range_searcher().template_args(problem_of(closed)) ==
        std::vector<std::string>{"gpuk::Search<float, gpuk::SearchOp::Find, gpuk::Compare::ClosedRange>"});
  const HostArray data = generate(spec.data, spec.dtype, spec.size);
  const InputView view = InputView::borrowed(data, spec.data.seed);
  CHECK(range_searcher().target(problem_of(spec), view).as<float>() == -0.5f);
  CHECK(range_searcher().range_hi(problem_of(spec), view).as<float>() == 0.25f);
  CHECK(range_searcher().target(problem_of(closed), view).as<float>() == data.as<float>()[500]);
  CHECK(range_searcher().range_hi(problem_of(closed), view).as<float>() == 1.0f);
  // without value_hi a range problem is still one the API prepares (lo and hi come with each call);
  // a config's run needs it (below)
  const Problem api = make_problem(range_searcher(), "find_if", DType::float64, {{"compare", "closed_range"}}, 100);
  CHECK(range_searcher().template_args(api) ==
        std::vector<std::string>{"gpuk::Search<double, gpuk::SearchOp::Find, gpuk::Compare::ClosedRange>"});
  // the other comparisons leave value_hi out of their problems (and tuning keys)
  CHECK(parse_range(kRange + "compare: lt\nvalue: 0\n").options.count("value_hi") == 0);
  // value_at: absent picks a range that no element falls in
  for (const char* c : {"range", "closed_range"}) {
    CAPTURE(c);
    const RunSpec absent = parse_range(kRange + "compare: " + c + "\nvalue_at: absent\n");
    const search::Value lo = range_searcher().target(problem_of(absent), view);
    const search::Value hi = range_searcher().range_hi(problem_of(absent), view);
    const Compare op = std::string(c) == "range" ? Compare::range : Compare::closed_range;
    CHECK(lo.as<float>() <= hi.as<float>());
    CHECK(range_searcher().find_if_on_cpu(data, lo, op, hi) == -1);
  }
  const auto full = array<std::int32_t>({std::numeric_limits<std::int32_t>::max() - 1});
  const RunSpec ints = parse_range("family: search\noperation: find_if\ndtype: int32\nsize: 1\ncompare: range\n"
                                   "value_at: absent\n");
  const search::Value lo = range_searcher().target(problem_of(ints), InputView::borrowed(full, 1));
  const search::Value hi = range_searcher().range_hi(problem_of(ints), InputView::borrowed(full, 1));
  CHECK(lo.as<std::int32_t>() == std::numeric_limits<std::int32_t>::max());  // [max, max): empty, nothing in it
  CHECK(hi.as<std::int32_t>() == std::numeric_limits<std::int32_t>::max());
}

TEST_CASE("find_if range option errors: value_hi missing, misplaced, not in the dtype, with absent") {
  CHECK(range_error(kRange + "compare: range\nvalue: 0\n").find("compare: range needs value_hi") !=
        std::string::npos);
  CHECK(range_error(kRange + "compare: lt\nvalue: 0\nvalue_hi: 1\n")
            .find("value_hi is the upper bound of compare: range or closed_range") != std::string::npos);
  CHECK(range_error(kRange + "compare: range\nvalue: 0\nvalue_hi: 1e39\n").find("value_hi 1e39 is not a float32") !=
        std::string::npos);
  CHECK(range_error(kRange + "compare: closed_range\nvalue_at: absent\nvalue_hi: 1\n")
            .find("value_at: absent picks the whole range") != std::string::npos);
  CHECK(range_error(kRange + "compare: range\nvalue: 1\nvalue_hi: 0\n").empty());  // empty: finds nothing, allowed
  CHECK(range_error(kRange + "compare: range\nvalue: nan\nvalue_hi: 1\n").empty());
}

TEST_CASE("configs/find_if_range.yaml runs find_if over a range") {
  const RunSpec spec =
      load_run_spec(test::source_dir() / "configs/find_if_range.yaml", test::plugins(), test::kernels());
  CHECK(spec.operation == "find_if");
  CHECK(spec.option("compare") == "range");
  CHECK(spec.options.count("value_hi") == 1);
  CHECK_NOTHROW(range_searcher().template_args(problem_of(spec)));
  const HostArray data = generate(spec.data, spec.dtype, spec.size);
  const InputView view = InputView::borrowed(data, spec.data.seed);
  const search::Value lo = range_searcher().target(problem_of(spec), view);
  const search::Value hi = range_searcher().range_hi(problem_of(spec), view);
  const std::int64_t i = range_searcher().find_if_on_cpu(data, lo, Compare::range, hi);
  CHECK(i > 0);  // present, past the start: the early exit has work to skip
}
