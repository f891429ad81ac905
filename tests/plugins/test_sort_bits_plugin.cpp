// The sort family's CUB-compatible options without a GPU: begin_bit / end_bit and the float order
// in the CPU reference (which the GPU tests verify the kernels against), in configs and in the
// typed API's specs, and the leading template argument they give the kernels.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "builtins.hpp"
#include "config/config.hpp"
#include "family_semantics.hpp"
#include "gpuk/error.hpp"
#include "gpuk/sort.hpp"
#include "plugin/problem.hpp"
#include "sort/sorter.hpp"
#include "tuning/tuning_db.hpp"

using namespace gpuk;

namespace {

using test::array;
using test::kernels;
using test::plugins;
using test::sorter;
using test::items;

// Keys sorted with their input positions as values: the positions say where each key went.
std::vector<std::uint32_t> order_of(const HostArray& input, const sort::Options& options) {
  HostArray keys(input.dtype(), input.size());
  std::memcpy(keys.data(), input.data(), input.bytes());
  std::vector<std::uint32_t> index(keys.size());
  std::iota(index.begin(), index.end(), 0u);
  HostArray values = array(index);
  sorter().sort_on_cpu(keys, &values, options);
  return items<std::uint32_t>(values);
}

using test::run_config_error;

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("float orders side by side: gpuk's total order and CUB's, ascending and descending") {
  //                                 0     1     2      3      4      5      6     7
  const HostArray keys = array<float>({kNan, 1.0f, +0.0f, -0.0f, -kInf, -kNan, kInf, -1.0f});
  // total: -0.0 before +0.0; both NaNs equal and last, in input order (first, descending).
  CHECK(order_of(keys, sort::Order::ascending) == std::vector<std::uint32_t>{4, 7, 3, 2, 1, 6, 0, 5});
  CHECK(order_of(keys, sort::Order::descending) == std::vector<std::uint32_t>{0, 5, 6, 1, 2, 3, 7, 4});
  // cub: +0.0 and -0.0 equal (input order, both ways); -NaN before -inf, +NaN after +inf.
  const sort::Options cub_up(sort::Order::ascending, 0, -1, sort::FloatOrder::cub);
  const sort::Options cub_down(sort::Order::descending, 0, -1, sort::FloatOrder::cub);
  CHECK(order_of(keys, cub_up) == std::vector<std::uint32_t>{5, 4, 7, 2, 3, 1, 6, 0});
  CHECK(order_of(keys, cub_down) == std::vector<std::uint32_t>{0, 6, 1, 2, 3, 7, 4, 5});
  // NaNs of one sign are ordered by their payload in CUB's order, equal in the total order.
  float small_nan, big_nan;
  const std::uint32_t small_bits = 0x7fc00001u, big_bits = 0x7fc00100u;
  std::memcpy(&small_nan, &small_bits, 4);
  std::memcpy(&big_nan, &big_bits, 4);
  const HostArray nans = array<float>({big_nan, small_nan});
  CHECK(order_of(nans, cub_up) == std::vector<std::uint32_t>{1, 0});
  CHECK(order_of(nans, sort::Order::ascending) == std::vector<std::uint32_t>{0, 1});
  // Integers order the same either way.
  const HostArray ints = array<std::int32_t>({5, -3, 0, -3, 7});
  CHECK(order_of(ints, cub_up) == order_of(ints, sort::Order::ascending));
}

TEST_CASE("begin_bit and end_bit: the sort is on those bits of the ordered key alone, stable") {
  std::mt19937 rng(7);
  std::vector<std::uint32_t> u(500);
  for (auto& x : u) x = rng();
  for (const auto& window : std::vector<std::pair<int, int>>{{0, 32}, {4, 8}, {0, 1}, {31, 32}, {3, 20}, {8, 32}}) {
    const int begin = window.first, end = window.second;
    CAPTURE(begin);
    CAPTURE(end);
    for (const auto order : {sort::Order::ascending, sort::Order::descending}) {
      // By hand: bits [begin, end) of the key (descending: of its complement), a stable sort.
      const auto field = [&](std::uint32_t k) {
        const std::uint64_t bits = order == sort::Order::descending ? ~k & 0xffffffffu : k;
        return (bits >> begin) & ((std::uint64_t{1} << (end - begin)) - 1);
      };
      std::vector<std::uint32_t> expected(u.size());
      std::iota(expected.begin(), expected.end(), 0u);
      std::stable_sort(expected.begin(), expected.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return field(u[a]) < field(u[b]); });
      CHECK(order_of(array(u), sort::Options(order, begin, end)) == expected);
    }
  }
  // Signed keys: the window is of the sign-flipped bits (bit 31 set for non-negatives).
  const HostArray ints = array<std::int32_t>({-1, 1, -2, 2});  // bits 7fffffff 80000001 7ffffffe 80000002
  CHECK(order_of(ints, sort::Options(sort::Order::ascending, 31, 32)) == std::vector<std::uint32_t>{0, 2, 1, 3});
  CHECK(order_of(ints, sort::Options(sort::Order::ascending, 0, 2)) == std::vector<std::uint32_t>{1, 2, 3, 0});
}

TEST_CASE("a bit window of floats follows CUB's zero rule in CUB's order and the total order's bits otherwise") {
  //                                 0     1      2      3
  const HostArray keys = array<float>({1.0f, -0.0f, -1.0f, +0.0f});
  // Descending on bits [0, 31): CUB maps +0.0 to -0.0's image (0x80000000 -> bits 0 in the window),
  // so both zeros come first, then -1.0 (0x3f800000), then 1.0 (0x407fffff).
  CHECK(order_of(keys, sort::Options(sort::Order::descending, 0, 31, sort::FloatOrder::cub)) ==
        std::vector<std::uint32_t>{1, 3, 2, 0});
  // The total order keeps the zeros apart: -0.0 -> 0, +0.0 -> 0x7fffffff.
  CHECK(order_of(keys, sort::Options(sort::Order::descending, 0, 31)) == std::vector<std::uint32_t>{1, 2, 0, 3});
}

TEST_CASE("sort_on_cpu refuses a bit window outside the key") {
  HostArray keys = array<std::uint32_t>({1, 2});
  CHECK_THROWS_AS(sorter().sort_on_cpu(keys, nullptr, sort::Options(sort::Order::ascending, 0, 33)), ConfigError);
  CHECK_THROWS_AS(sorter().sort_on_cpu(keys, nullptr, sort::Options(sort::Order::ascending, 5, 5)), ConfigError);
  HostArray wide = array<std::uint64_t>({1, 2});
  CHECK_NOTHROW(sorter().sort_on_cpu(wide, nullptr, sort::Options(sort::Order::ascending, 40, 64)));
}

TEST_CASE("configs take begin_bit, end_bit and float_order, checked, and leave them out at their defaults") {
  const std::string base = "family: sort\noperation: sort\ndtype: float32\nsize: 1000\n";
  const RunSpec plain = parse_run_spec(base, "c.yaml", plugins(), kernels());
  CHECK(plain.options.count("begin_bit") == 0);
  CHECK(plain.options.count("end_bit") == 0);
  CHECK(plain.options.count("float_order") == 0);
  // The tuning key of a plain sort is what the shipped tuning file was written with.
  CHECK(options_key(plain.options) == "order=ascending values=uint32");
  const RunSpec zero = parse_run_spec(base + "begin_bit: 0\nfloat_order: total\n", "c.yaml", plugins(), kernels());
  CHECK(zero.options == plain.options);

  const RunSpec windowed =
      parse_run_spec(base + "begin_bit: 4\nend_bit: 20\nfloat_order: cub\n", "c.yaml", plugins(), kernels());
  CHECK(windowed.options.at("begin_bit") == "4");
  CHECK(windowed.options.at("end_bit") == "20");
  CHECK(windowed.options.at("float_order") == "cub");
  CHECK(plugins().get("sort").template_args(problem_of(windowed)) ==
        std::vector<std::string>{"gpuk::Sort<float, gpuk::NoValue, false, gpuk::SortKind::Keys, 4, 20, gpuk::FloatOrder::Cub>"});
  CHECK(plugins().get("sort").template_args(problem_of(plain)) ==
        std::vector<std::string>{"gpuk::Sort<float, gpuk::NoValue, false, gpuk::SortKind::Keys>"});
  // CUB's order of integer keys is their one order: the kernel is the same.
  const RunSpec ints = parse_run_spec("family: sort\noperation: sort\ndtype: int64\nsize: 10\nfloat_order: cub\nend_bit: 40\n",
                                      "c.yaml", plugins(), kernels());
  CHECK(plugins().get("sort").template_args(problem_of(ints)) ==
        std::vector<std::string>{"gpuk::Sort<long long, gpuk::NoValue, false, gpuk::SortKind::Keys, 0, 40, gpuk::FloatOrder::Total>"});

  CHECK(run_config_error(base + "begin_bit: 32\n").find("begin_bit must be at least 0 and less than 32 (float32 keys have 32 bits), not 32") !=
        std::string::npos);
  CHECK(run_config_error(base + "begin_bit: 8\nend_bit: 8\n").find("end_bit must be greater than begin_bit (8)") !=
        std::string::npos);
  CHECK(run_config_error(base + "end_bit: 33\n").find("at most 32") != std::string::npos);
  CHECK(run_config_error(base + "end_bit: many\n").find("end_bit") != std::string::npos);
  CHECK(run_config_error(base + "float_order: cubb\n").find("did you mean 'cub'") != std::string::npos);
  CHECK(run_config_error("family: sort\noperation: sort\ndtype: uint64\nsize: 10\nbegin_bit: 40\nend_bit: 64\n").empty());
}

TEST_CASE("the typed API's specs: sort::Options, an Order where Options go, defaults left out") {
  using sort::Op;
  const auto plain = sort::detail::spec(Op::sort, DType::float32, 10, sort::Order::descending);
  CHECK(plain.options == std::map<std::string, std::string>{{"order", "descending"}});
  // end_bit at the key's width and CUB's order of integers are the defaults: one cached Operation.
  CHECK(sort::detail::spec(Op::sort, DType::float32, 10, sort::Options(sort::Order::descending, 0, 32)).options ==
        plain.options);
  CHECK(sort::detail::spec(Op::sort, DType::int32, 10, sort::Options(sort::Order::ascending, 0, -1, sort::FloatOrder::cub))
            .options == std::map<std::string, std::string>{{"order", "ascending"}});
  const auto window = sort::detail::spec(Op::sort_pairs, DType::float64, 10,
                                         sort::Options(sort::Order::ascending, 3, 40, sort::FloatOrder::cub), "uint32");
  CHECK(window.options == std::map<std::string, std::string>{{"order", "ascending"},
                                                             {"begin_bit", "3"},
                                                             {"end_bit", "40"},
                                                             {"float_order", "cub"},
                                                             {"values", "uint32"}});
  // And the plugin reads them back as a config would.
  const Problem p = make_problem(plugins().get("sort"), "sort_pairs", DType::float64, window.options, 10);
  CHECK(p.options.at("begin_bit") == "3");
  CHECK_THROWS_AS(make_problem(plugins().get("sort"), "sort", DType::float32, {{"end_bit", "40"}}, 10), ConfigError);
}
