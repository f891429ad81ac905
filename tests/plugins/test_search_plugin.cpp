// The Searcher's CPU semantics and its config options (no GPU).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>

#include "builtins.hpp"
#include "config/config.hpp"
#include "family_semantics.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "run/prepare.hpp"
#include "search/searcher.hpp"

using namespace gpuk;

namespace {

using test::plugins;
using test::kernels;
using test::array;
using test::searcher;

template <class T> std::int64_t cpu(const HostArray& a, T value, search::Mode mode) {
  return searcher().search_on_cpu(a, search::Value::of(value), mode);
}

using test::parse_run;

// The value a config searches for, on the data it generates.
search::Value target_of(const std::string& yaml) {
  const RunSpec spec = parse_run(yaml);
  const HostArray data = generate(spec.data, spec.dtype, spec.size);
  return searcher().target(problem_of(spec), InputView::borrowed(data, spec.data.seed));
}

// The error a config gives, whether when it is read or when the plugin checks its options.
std::string search_error_of(const std::string& yaml) {
  try {
    const RunSpec spec = parse_run(yaml);
    searcher().template_args(problem_of(spec));
    searcher().target(problem_of(spec), InputView::borrowed(generate(spec.data, spec.dtype, spec.size), spec.data.seed));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kPermutation =
    "family: search\noperation: find\ndtype: int32\nsize: 1000\ndata: {generator: permutation, seed: 9}\n";

}  // namespace

TEST_CASE("the search plugin loads and describes itself") {
  const FamilyPlugin& search = plugins().get("search");
  CHECK(search.operations() ==
        std::vector<std::string>{"find", "any", "count", "find_if", "lower_bound", "upper_bound"});
  CHECK(search.dtypes() ==
        std::vector<DType>{DType::int32, DType::uint32, DType::int64, DType::float32, DType::float64});
  CHECK(search.default_kernel() == "fast");
  std::vector<std::string> options;
  for (const auto& o : search.options()) options.push_back(o.name);
  CHECK(options ==
        std::vector<std::string>{"value", "value_at", "value_index", "compare", "value_hi", "needles", "needle_count"});
  for (std::size_t i = 3; i < options.size(); ++i)
    CHECK(search.options()[i].omitted_at_default);  // find, any and count keep their tuning keys
  CHECK(search.template_args(problem_of(parse_run(kPermutation))) == std::vector<std::string>{"gpuk::Search<int, gpuk::SearchOp::Find>"});
}

TEST_CASE("every search kernel file declares the five dtypes, the three operations (fast: and find_if; the bounds' files: lower_bound and upper_bound) and what it fixes") {
  const auto files = kernels().family("search");
  std::vector<std::string> names;
  for (const auto& f : files) {
    names.push_back(f->name);
    CAPTURE(f->name);
    const bool fast = f->name == "fast";
    CHECK(f->dtypes == searcher().dtypes());
    CHECK_FALSE(f->fixes.empty());
    if (f->name.rfind("bounds", 0) == 0) {
      CHECK(f->operations == std::vector<std::string>{"lower_bound", "upper_bound"});
      CHECK(searcher().all_template_args(*f).size() == 10u);
      continue;
    }
    CHECK(f->operations == (fast ? std::vector<std::string>{"find", "any", "count", "find_if"}
                                 : std::vector<std::string>{"find", "any", "count"}));
    CHECK(f->dtypes == searcher().dtypes());
    CHECK_FALSE(f->fixes.empty());
    CHECK(searcher().all_template_args(*f).size() == (fast ? 15u + 5u * 8u : 15u));
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"bounds", "bounds_gather", "bounds_merge", "bounds_window", "coalesced", "coalesced_unrolled", "fast", "per_element",
                                           "strided"});
}

TEST_CASE("the write-up's N-search variants take every K from 1 to 64") {
  for (const char* name : {"strided", "coalesced", "coalesced_unrolled"}) {
    CAPTURE(name);
    const auto file = kernels().find("search", name);
    REQUIRE(file->param("K") != nullptr);
    REQUIRE(file->param("BLOCK") != nullptr);
    std::vector<std::int64_t> k(64);
    for (int i = 0; i < 64; ++i) k[i] = i + 1;
    CHECK(file->param("K")->values == k);
  }
}

TEST_CASE("find returns the lowest matching index, any some matching index, count the matches") {
  const auto a = array<std::int32_t>({7, 3, 9, 3, 3, 1});
  CHECK(cpu(a, 3, search::Mode::find) == 1);
  const auto any = cpu(a, 3, search::Mode::any);
  CHECK((any == 1 || any == 3 || any == 4));
  CHECK(cpu(a, 3, search::Mode::count) == 3);
  CHECK(cpu(a, 7, search::Mode::find) == 0);
  CHECK(cpu(a, 1, search::Mode::find) == 5);
}

TEST_CASE("a value that is not there: find and any give -1, count 0") {
  const auto a = array<std::uint32_t>({1, 2, 3});
  CHECK(cpu(a, 4u, search::Mode::find) == -1);
  CHECK(cpu(a, 4u, search::Mode::any) == -1);
  CHECK(cpu(a, 4u, search::Mode::count) == 0);
}

TEST_CASE("floats compare with ==: NaN matches nothing, -0.0 matches 0.0") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto a = array<float>({nan, 1.5f, -0.0f, nan, 0.0f});
  CHECK(cpu(a, nan, search::Mode::find) == -1);
  CHECK(cpu(a, nan, search::Mode::any) == -1);
  CHECK(cpu(a, nan, search::Mode::count) == 0);
  CHECK(cpu(a, 0.0f, search::Mode::find) == 2);
  CHECK(cpu(a, -0.0f, search::Mode::find) == 2);
  CHECK(cpu(a, 0.0f, search::Mode::count) == 2);
  CHECK(cpu(a, 1.5f, search::Mode::find) == 1);
  const auto d = array<double>({1.0, -0.0, std::nan("")});
  CHECK(cpu(d, 0.0, search::Mode::find) == 1);
  CHECK(cpu(d, std::nan(""), search::Mode::count) == 0);
}

TEST_CASE("int64 values above 2^53 are told apart exactly") {
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  const auto a = array<std::int64_t>({big - 1, big, big + 1});
  CHECK(cpu(a, big, search::Mode::find) == 1);
  CHECK(cpu(a, big, search::Mode::count) == 1);
  CHECK(cpu(a, big + 2, search::Mode::find) == -1);
  // and through the config: `value:` is parsed as an integer, not through a double
  const search::Value v = target_of(
      "family: search\noperation: find\ndtype: int64\nsize: 10\nvalue: 9007199254740993\ndata: {generator: permutation}\n");
  CHECK(v.dtype == DType::int64);
  CHECK(v.int_value == big);
  CHECK(target_of("family: search\noperation: find\ndtype: int64\nsize: 10\nvalue: -9223372036854775808\n").int_value ==
        std::numeric_limits<std::int64_t>::min());
}

TEST_CASE("large inputs: the OpenMP reference agrees with the sequential one, the lowest chunk's match wins") {
  HostArray a(DType::int32, 100000);
  auto s = a.as<std::int32_t>();
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::int32_t>(i % 1000);
  CHECK(cpu(a, 999, search::Mode::find) == 999);
  CHECK(cpu(a, 5, search::Mode::count) == 100);
  CHECK(cpu(a, 1000, search::Mode::find) == -1);
  s[99999] = 1000;
  CHECK(cpu(a, 1000, search::Mode::find) == 99999);
  CHECK(cpu(a, 1000, search::Mode::any) == 99999);
}

TEST_CASE("value: a literal, exact in the dtype") {
  CHECK(target_of(kPermutation + "value: 42\n").int_value == 42);
  CHECK(target_of(kPermutation + "value: 42.0\n").int_value == 42);
  CHECK(target_of(kPermutation + "value: -7\n").int_value == -7);
  const std::string f = "family: search\noperation: count\ndtype: float32\nsize: 100\n";
  CHECK(target_of(f + "value: 0.1\n").float_value == static_cast<double>(0.1f));  // rounded to float32 once
  CHECK(std::isnan(target_of(f + "value: nan\n").float_value));
  const search::Value negative_zero = target_of(f + "value: -0.0\n");
  CHECK(negative_zero.float_value == 0.0);
  CHECK(std::signbit(negative_zero.float_value));
  CHECK(target_of("family: search\noperation: find\ndtype: uint32\nsize: 10\nvalue: 4294967295\n").uint_value ==
        4294967295u);
}

TEST_CASE("value_at picks an element of the data: first, last, middle, or at random from data.seed") {
  const RunSpec spec = parse_run(kPermutation);
  const HostArray data = generate(spec.data, spec.dtype, spec.size);
  const auto s = data.as<std::int32_t>();
  CHECK(target_of(kPermutation + "value_at: first\n").int_value == s[0]);
  CHECK(target_of(kPermutation + "value_at: last\n").int_value == s[999]);
  CHECK(target_of(kPermutation + "value_at: middle\n").int_value == s[500]);
  CHECK(target_of(kPermutation + "value_index: 123\n").int_value == s[123]);
  // random (the default): the same seed gives the same value; other seeds other positions
  const std::int64_t v = target_of(kPermutation).int_value;
  CHECK(target_of(kPermutation + "value_at: random\n").int_value == v);
  CHECK(cpu(data, static_cast<std::int32_t>(v), search::Mode::find) >= 0);
  std::set<std::int64_t> positions;
  for (int seed = 1; seed <= 20; ++seed) {
    const std::string yaml = "family: search\noperation: find\ndtype: int32\nsize: 1000\ndata: {generator: sorted, "
                             "low: 0, high: 999, seed: " + std::to_string(seed) + "}\n";
    const RunSpec sorted = parse_run(yaml);
    const HostArray d = generate(sorted.data, sorted.dtype, sorted.size);
    positions.insert(cpu(d, static_cast<std::int32_t>(target_of(yaml).int_value), search::Mode::find));
  }
  CHECK(positions.size() > 10);
}

TEST_CASE("value_at: absent gives a value that no element equals") {
  const RunSpec spec = parse_run(kPermutation);
  const HostArray data = generate(spec.data, spec.dtype, spec.size);
  const search::Value absent = target_of(kPermutation + "value_at: absent\n");
  CHECK(cpu(data, static_cast<std::int32_t>(absent.int_value), search::Mode::count) == 0);
  // and when the largest value is the dtype's largest, or both ends are taken
  const auto max = std::numeric_limits<std::int32_t>::max(), min = std::numeric_limits<std::int32_t>::min();
  HostArray ends(DType::int32, 4);
  std::int32_t values[] = {max, 5, min, 7};
  std::copy(values, values + 4, ends.as<std::int32_t>().begin());
  RunSpec four = parse_run("family: search\noperation: find\ndtype: int32\nsize: 4\nvalue_at: absent\n");
  const search::Value gap = searcher().target(problem_of(four), InputView::borrowed(ends, four.data.seed));
  CHECK(cpu(ends, static_cast<std::int32_t>(gap.int_value), search::Mode::count) == 0);
  // floats: NaN is never a match, but absent still gives a number; all-NaN data too
  RunSpec floats = parse_run("family: search\noperation: find\ndtype: float32\nsize: 3\nvalue_at: absent\n");
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const HostArray& d : {array<float>({1.0f, nan, 2.0f}), array<float>({inf, -inf, 0.0f}), array<float>({nan, nan, nan})}) {
    const search::Value v = searcher().target(problem_of(floats), InputView::borrowed(d, floats.data.seed));
    CHECK_FALSE(std::isnan(v.float_value));
    CHECK(cpu(d, static_cast<float>(v.float_value), search::Mode::count) == 0);
  }
}

TEST_CASE("search option errors name the problem") {
  CHECK(search_error_of(kPermutation + "value: 3.5\n").find("value 3.5 is not a int32 value") != std::string::npos);
  CHECK(search_error_of(kPermutation + "value: 3000000000\n").find("is not a int32 value") != std::string::npos);
  CHECK(search_error_of("family: search\noperation: find\ndtype: uint32\nsize: 10\nvalue: -1\n").find("not a uint32") !=
        std::string::npos);
  CHECK(search_error_of(kPermutation + "value: nan\n").find("not a int32") != std::string::npos);
  CHECK(search_error_of(kPermutation + "value: abc\n").find("value must be a number") != std::string::npos);
  CHECK(search_error_of(kPermutation + "value: 1\nvalue_index: 2\n").find("not both") != std::string::npos);
  CHECK(search_error_of(kPermutation + "value: 1\nvalue_at: absent\n").find("cannot be combined with value") != std::string::npos);
  CHECK(search_error_of(kPermutation + "value_index: 2\nvalue_at: last\n").find("cannot be combined with value_index") !=
        std::string::npos);
  CHECK(search_error_of(kPermutation + "value_index: 1000\n").find("outside the data (size 1000)") != std::string::npos);
  CHECK(search_error_of(kPermutation + "value_index: -1\n").find("outside the data") != std::string::npos);
  CHECK(search_error_of(kPermutation + "value_at: midle\n").find("value_at must be one of") != std::string::npos);
  CHECK(search_error_of(kPermutation + "value_at: midle\n").find("did you mean 'middle'") != std::string::npos);
  CHECK(search_error_of("family: search\noperation: findd\nsize: 10\n").find("did you mean 'find'") != std::string::npos);
  CHECK(search_error_of("family: search\noperation: find\ndtype: uint64\nsize: 10\n").find("uint64") !=
        std::string::npos);
  CHECK(search_error_of(kPermutation + "kernel: strided\nparams: {K: 65}\n").find("K") != std::string::npos);
  CHECK(search_error_of(kPermutation).empty());
}

TEST_CASE("configs/search.yaml is the write-up's setup; configs/search_large.yaml the 2^28 full scan") {
  const RunSpec small = load_run_spec(test::source_dir() / "configs/search.yaml", plugins(), kernels());
  CHECK(small.family == "search");
  CHECK(small.operation == "find");
  CHECK(small.dtype == DType::int32);
  CHECK(small.size == 500000);
  CHECK(small.data.generator == Generator::permutation);
  CHECK(small.option("value_at") == "random");
  CHECK_NOTHROW(searcher().template_args(problem_of(small)));
  const HostArray data = generate(small.data, small.dtype, small.size);
  const search::Value v = searcher().target(problem_of(small), InputView::borrowed(data, small.data.seed));
  CHECK(searcher().search_on_cpu(data, v, search::Mode::count) == 1);  // unique values
  CHECK(searcher().search_on_cpu(data, v, search::Mode::find) > 0);

  const RunSpec large = load_run_spec(test::source_dir() / "configs/search_large.yaml", plugins(), kernels());
  CHECK(large.family == "search");
  CHECK(large.dtype == DType::int32);
  CHECK(large.size == (std::uint64_t{1} << 28));
  CHECK(large.data.generator == Generator::permutation);
  CHECK(large.option("value_at") == "absent");
  CHECK_NOTHROW(searcher().template_args(problem_of(large)));
}

namespace {
template <class T> std::int64_t find_if(const HostArray& a, search::Compare c, T value) {
  return searcher().find_if_on_cpu(a, search::Value::of(value), c);
}
const std::string kFindIf = "family: search\noperation: find_if\ndtype: float32\nsize: 1000\n"
                            "data: {generator: uniform, low: -1, high: 1, seed: 3}\n";
}  // namespace

TEST_CASE("find_if returns the lowest index whose element meets x OP value, or -1") {
  using search::Compare;
  const auto a = array<std::int32_t>({5, -3, 9, -3, 0, 7});
  CHECK(find_if(a, Compare::eq, -3) == 1);
  CHECK(find_if(a, Compare::ne, 5) == 1);
  CHECK(find_if(a, Compare::lt, 0) == 1);
  CHECK(find_if(a, Compare::le, -3) == 1);
  CHECK(find_if(a, Compare::gt, 5) == 2);
  CHECK(find_if(a, Compare::ge, 7) == 2);
  CHECK(find_if(a, Compare::ge, 5) == 0);  // present at the start
  CHECK(find_if(a, Compare::gt, 9) == -1);
  CHECK(find_if(a, Compare::lt, -3) == -1);
  const auto one = array<std::uint32_t>({4u});
  CHECK(find_if(one, Compare::le, 4u) == 0);
  CHECK(find_if(one, Compare::lt, 4u) == -1);
  const std::int64_t big = (std::int64_t{1} << 53) + 1;  // exact above 2^53
  CHECK(find_if(array<std::int64_t>({big - 1, big, big + 1}), Compare::gt, big) == 2);
}

TEST_CASE("find_if on floats compares as C++ does: NaN meets only !=, -0.0 equals +0.0") {
  using search::Compare;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto a = array<float>({nan, 2.0f, -0.0f, nan, 0.0f, -1.0f});
  CHECK(find_if(a, Compare::lt, 0.0f) == 5);   // NaN < 0 is false, -0.0 < 0 is false
  CHECK(find_if(a, Compare::le, 0.0f) == 2);   // -0.0 <= +0.0
  CHECK(find_if(a, Compare::ge, 0.0f) == 1);
  CHECK(find_if(a, Compare::eq, 0.0f) == 2);
  CHECK(find_if(a, Compare::ne, 2.0f) == 0);   // NaN != 2 is true
  CHECK(find_if(a, Compare::ne, nan) == 0);    // x != NaN is true for every x
  for (Compare c : {Compare::eq, Compare::lt, Compare::le, Compare::gt, Compare::ge}) CHECK(find_if(a, c, nan) == -1);
  const auto d = array<double>({std::nan(""), -0.0});
  CHECK(find_if(d, Compare::ge, 0.0) == 1);
  CHECK(find_if(d, Compare::gt, -0.0) == -1);
}

TEST_CASE("find_if configs: compare, its default and absent values for each comparison") {
  const RunSpec spec = parse_run(kFindIf + "compare: lt\n");
  CHECK(spec.option("compare") == "lt");
  CHECK(searcher().template_args(problem_of(spec)) ==
        std::vector<std::string>{"gpuk::Search<float, gpuk::SearchOp::Find, gpuk::Compare::Lt>"});
  // eq is the default and leaves the problem's options (and tuning key) alone
  const RunSpec eq = parse_run(kFindIf);
  CHECK(eq.options.count("compare") == 0);
  CHECK(searcher().template_args(problem_of(eq)) ==
        std::vector<std::string>{"gpuk::Search<float, gpuk::SearchOp::Find, gpuk::Compare::Eq>"});
  CHECK(searcher().template_args(problem_of(parse_run(kPermutation))) ==
        std::vector<std::string>{"gpuk::Search<int, gpuk::SearchOp::Find>"});
  const HostArray data = generate(spec.data, spec.dtype, spec.size);
  for (const char* c : {"eq", "lt", "le", "gt", "ge"}) {
    CAPTURE(c);
    const RunSpec absent = parse_run(kFindIf + "compare: " + c + "\nvalue_at: absent\n");
    const search::Value v = searcher().target(problem_of(absent), InputView::borrowed(data, absent.data.seed));
    for (const search::CompareInfo& info : search::kCompares)
      if (std::string(info.name) == c) CHECK(searcher().find_if_on_cpu(data, v, info.op) == -1);
  }
  // present: value_at middle with ge on sorted data finds the first element equal to the middle one
  const std::string sorted = "family: search\noperation: find_if\ndtype: int32\nsize: 1001\ncompare: ge\n"
                             "data: {generator: sorted, low: 0, high: 100000, seed: 4}\nvalue_at: middle\n";
  const RunSpec s = parse_run(sorted);
  const HostArray d = generate(s.data, s.dtype, s.size);
  const search::Value m = target_of(sorted);
  const std::int64_t i = searcher().find_if_on_cpu(d, m, search::Compare::ge);
  CHECK(i <= 500);
  CHECK(d.as<std::int32_t>()[static_cast<std::size_t>(i)] == d.as<std::int32_t>()[500]);
}

TEST_CASE("find_if option errors: an unknown comparison, compare on find, absent that cannot be") {
  CHECK(search_error_of(kFindIf + "compare: lessthan\n").find("compare must be one of") != std::string::npos);
  CHECK(search_error_of(kPermutation + "compare: lt\n").find("compare: lt is find_if's option; find matches with ==") !=
        std::string::npos);
  CHECK(search_error_of(kFindIf + "compare: ne\nvalue_at: absent\n").find("every value meets compare: ne") != std::string::npos);
  CHECK(search_error_of(kFindIf + "compare: ge\nvalue: 0.5\n").empty());
  const std::string ints = "family: search\noperation: find_if\ndtype: int32\nsize: 3\ncompare: le\nvalue_at: absent\n";
  RunSpec spec = parse_run(ints);
  const auto low = array<std::int32_t>({3, std::numeric_limits<std::int32_t>::min(), 9});
  CHECK_THROWS_WITH_AS(searcher().target(problem_of(spec), InputView::borrowed(low, spec.data.seed)),
                       doctest::Contains("every value meets compare: le"), ConfigError);
}

TEST_CASE("configs/find_if.yaml runs find_if with a comparison") {
  const RunSpec spec = load_run_spec(test::source_dir() / "configs/find_if.yaml", plugins(), kernels());
  CHECK(spec.operation == "find_if");
  CHECK(spec.options.count("compare") == 1);
  CHECK_NOTHROW(searcher().template_args(problem_of(spec)));
}
