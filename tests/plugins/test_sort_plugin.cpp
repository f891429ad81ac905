// The sort plugin's semantics, options and errors, without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "builtins.hpp"
#include "config/config.hpp"
#include "family_semantics.hpp"
#include "gpuk/error.hpp"
#include "run/prepare.hpp"
#include "sort/sorter.hpp"

using namespace gpuk;

namespace {

using test::plugins;
using test::kernels;
using test::array;
using test::sorter;
using test::items;

template <class T> bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof a) == 0; }

using test::run_config_error;

LaunchPlan plan_for(const std::string& kernel, const std::string& leading, std::int64_t n, int elem_bytes,
                    const std::map<std::string, std::int64_t>& params = {}, int max_shared = 48 * 1024) {
  const Variant v(kernels().find("sort", kernel), {leading}, params);
  return plan_launches(v, {n, 132, elem_bytes, 1024, max_shared});
}

const std::string kU32Keys = "gpuk::Sort<unsigned int, gpuk::NoValue, false, gpuk::SortKind::Keys>";

}  // namespace

TEST_CASE("the sort plugin loads and describes itself") {
  const FamilyPlugin& sort = plugins().get("sort");
  CHECK(sort.operations() == std::vector<std::string>{"sort", "sort_pairs", "argsort", "topk", "segmented_sort",
                                                      "segmented_sort_pairs"});
  CHECK(sort.default_kernel() == "radix");
  CHECK(sort.dtypes().size() == 6);
  // order, values, begin_bit, end_bit, float_order; topk's k, rows, sorted; segments, segment_lengths
  REQUIRE(sort.options().size() == 10);
  CHECK(sort.options()[8].name == "segments");
  CHECK(sort.options()[9].name == "segment_lengths");
  for (std::size_t i = 8; i < 10; ++i) CHECK(sort.options()[i].omitted_at_default);
  CHECK(sort.options()[0].name == "order");
  CHECK(sort.options()[0].default_value == "ascending");
  CHECK(sort.options()[1].name == "values");
  CHECK(sort.options()[2].name == "begin_bit");
  CHECK(sort.options()[3].name == "end_bit");
  CHECK(sort.options()[4].name == "float_order");
  for (std::size_t i = 2; i < 5; ++i) CHECK(sort.options()[i].omitted_at_default);
  for (const char* kernel : {"rank_global", "rank_shared", "rank_split", "rank_bucket", "radix", "radix_block"})
    CHECK_NOTHROW(kernels().find("sort", kernel));
}

TEST_CASE("floats sort in IEEE total order: -0.0 before +0.0, every NaN last in input order") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float negative_nan = -nan;
  HostArray keys = array<float>({nan, 1.0f, +0.0f, -0.0f, -inf, negative_nan, inf, -1.0f});
  HostArray order = array<std::uint32_t>({0, 1, 2, 3, 4, 5, 6, 7});
  sorter().sort_on_cpu(keys, &order, sort::Order::ascending);
  const auto k = items<float>(keys);
  CHECK(k[0] == -inf);
  CHECK(k[1] == -1.0f);
  CHECK((k[2] == 0.0f && std::signbit(k[2])));
  CHECK((k[3] == 0.0f && !std::signbit(k[3])));
  CHECK(k[4] == 1.0f);
  CHECK(k[5] == inf);
  CHECK(std::isnan(k[6]));
  CHECK(std::isnan(k[7]));
  // The NaNs keep their input order and their bits (the positive one came first).
  CHECK(items<std::uint32_t>(order) == std::vector<std::uint32_t>{4, 7, 3, 2, 1, 6, 0, 5});
  CHECK(same_bits(k[6], nan));
  CHECK(same_bits(k[7], negative_nan));
}

TEST_CASE("descending is the reverse total order: NaN first, +0.0 before -0.0, ties still in input order") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostArray keys = array<double>({-0.0, 2.0, nan, 0.0, 2.0, -nan});
  HostArray order = array<std::uint64_t>({0, 1, 2, 3, 4, 5});
  sorter().sort_on_cpu(keys, &order, sort::Order::descending);
  CHECK(items<std::uint64_t>(order) == std::vector<std::uint64_t>{2, 5, 1, 4, 3, 0});
  const auto k = items<double>(keys);
  CHECK(!std::signbit(k[4]));
  CHECK(std::signbit(k[5]));
}

TEST_CASE("sorting is stable: equal keys keep their input order, ascending and descending") {
  HostArray keys = array<std::int32_t>({2, 1, 2, 1, 2});
  HostArray values = array<std::uint32_t>({10, 11, 12, 13, 14});
  sorter().sort_on_cpu(keys, &values, sort::Order::ascending);
  CHECK(items<std::int32_t>(keys) == std::vector<std::int32_t>{1, 1, 2, 2, 2});
  CHECK(items<std::uint32_t>(values) == std::vector<std::uint32_t>{11, 13, 10, 12, 14});

  HostArray keys2 = array<std::int32_t>({2, 1, 2, 1, 2});
  HostArray values2 = array<std::uint32_t>({10, 11, 12, 13, 14});
  sorter().sort_on_cpu(keys2, &values2, sort::Order::descending);
  CHECK(items<std::int32_t>(keys2) == std::vector<std::int32_t>{2, 2, 2, 1, 1});
  CHECK(items<std::uint32_t>(values2) == std::vector<std::uint32_t>{10, 12, 14, 11, 13});
}

TEST_CASE("signed and unsigned integers sort by value across the sign boundary") {
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  HostArray keys = array<std::int64_t>({0, hi, -1, lo, 1});
  sorter().sort_on_cpu(keys, nullptr, sort::Order::ascending);
  CHECK(items<std::int64_t>(keys) == std::vector<std::int64_t>{lo, -1, 0, 1, hi});
  HostArray u = array<std::uint32_t>({0x80000000u, 1u, 0xffffffffu, 0u});
  sorter().sort_on_cpu(u, nullptr, sort::Order::descending);
  CHECK(items<std::uint32_t>(u) == std::vector<std::uint32_t>{0xffffffffu, 0x80000000u, 1u, 0u});
}

TEST_CASE("argsort's values are the original indices: the stable permutation") {
  HostArray keys = array<float>({3.0f, -1.0f, 3.0f, 0.5f});
  HostArray index = array<std::uint32_t>({0, 1, 2, 3});
  sorter().sort_on_cpu(keys, &index, sort::Order::ascending);
  CHECK(items<std::uint32_t>(index) == std::vector<std::uint32_t>{1, 3, 0, 2});
}

TEST_CASE("values of another length are refused") {
  HostArray keys = array<std::uint32_t>({3, 1});
  HostArray values = array<std::uint32_t>({1});
  CHECK_THROWS_AS(sorter().sort_on_cpu(keys, &values, sort::Order::ascending), Error);
}

TEST_CASE("the plugin spells the sort policy: key type, value type, order, kind") {
  const RunSpec keys = parse_run_spec("family: sort\noperation: sort\ndtype: float64\nsize: 10\norder: descending\n",
                                      "c.yaml", plugins(), kernels());
  CHECK(plugins().get("sort").template_args(problem_of(keys)) ==
        std::vector<std::string>{"gpuk::Sort<double, gpuk::NoValue, true, gpuk::SortKind::Keys>"});
  const RunSpec pairs = parse_run_spec("family: sort\noperation: sort_pairs\ndtype: int32\nsize: 10\nvalues: uint64\n",
                                       "c.yaml", plugins(), kernels());
  CHECK(plugins().get("sort").template_args(problem_of(pairs)) ==
        std::vector<std::string>{"gpuk::Sort<int, unsigned long long, false, gpuk::SortKind::Pairs>"});
  const RunSpec arg = parse_run_spec("family: sort\noperation: argsort\ndtype: uint64\nsize: 10\n", "c.yaml",
                                     plugins(), kernels());
  CHECK(plugins().get("sort").template_args(problem_of(arg)) ==
        std::vector<std::string>{"gpuk::Sort<unsigned long long, unsigned int, false, gpuk::SortKind::Index>"});
  // Every operation and dtype of a file, both orders and both value dtypes among them, and a
  // keys-only sort with a bit window in CUB's order.
  const auto sets = plugins().get("sort").all_template_args(*kernels().find("sort", "radix"));
  CHECK(sets.size() == 6 * 7);
  CHECK(std::count_if(sets.begin(), sets.end(), [](const std::vector<std::string>& a) {
          return a[0].find("gpuk::SortKind::Keys, 3, ") != std::string::npos;
        }) == 6);
  CHECK(std::find(sets.begin(), sets.end(),
                  std::vector<std::string>{"gpuk::Sort<float, gpuk::NoValue, true, gpuk::SortKind::Keys, 3, 27, "
                                           "gpuk::FloatOrder::Cub>"}) != sets.end());
}

TEST_CASE("sort options are checked where they are written") {
  CHECK(run_config_error("family: sort\noperation: sort\nsize: 10\norder: sideways\n")
            .find("c.yaml:4:8: order must be one of") == 0);
  CHECK(run_config_error("family: sort\noperation: sort_pairs\nsize: 10\nvalues: float32\n")
            .find("c.yaml:4:9: values must be one of") == 0);
  CHECK(run_config_error("family: sort\noperation: shuffle\nsize: 10\n").find("shuffle") != std::string::npos);
  CHECK(run_config_error("family: sort\noperation: sort\nsize: 10\nabs: true\n").find("unknown key 'abs'") !=
        std::string::npos);
}

TEST_CASE("rank_shared refuses arrays that do not fit in shared memory, naming the limit") {
  CHECK_NOTHROW(plan_for("rank_shared", kU32Keys, 12288, 4, {}, 232448));  // 48 KiB + padding: opted in
  try {
    plan_for("rank_shared", kU32Keys, 12289, 4);
    FAIL("12,289 4-byte keys were accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("breaks the constraint 'n * elem_bytes <= 49152' for n = 12289") !=
          std::string::npos);
  }
  CHECK_THROWS_AS(plan_for("rank_shared", kU32Keys, 6145, 8), ConfigError);
  CHECK_THROWS_AS(plan_for("radix_block", kU32Keys, 4097, 4), ConfigError);
}

TEST_CASE("a radix tile above 48 KiB of shared memory plans up to the device's opt-in limit, not past it") {
  const std::map<std::string, std::int64_t> big = {{"BLOCK", 384}, {"ITEMS", 20}, {"MIN_BLOCKS", 2}};
  try {
    plan_for("radix", kU32Keys, 1 << 24, 4, big);
    FAIL("74,816 bytes of shared memory were planned against a 48 KiB limit");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("bytes; this GPU allows at most 49152") != std::string::npos);
  }
  const LaunchPlan plan = plan_for("radix", kU32Keys, 1 << 24, 4, big, 232448);  // an H100's opt-in limit
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[1].shared_bytes == 384 * 20 * 8 + (384 / 32 + 1) * 256 * 4 + 64);
  CHECK(plan.launches[1].shared_bytes > kSharedWithoutOptIn);
  CHECK_THROWS_AS(plan_for("radix", kU32Keys, 1 << 24, 4, {{"BLOCK", 512}, {"ITEMS", 24}, {"MIN_BLOCKS", 2}}, 100000),
                  ConfigError);
}

TEST_CASE("radix plans a histogram and one digit pass per RADIX_BITS of key, and its look-back scratch") {
  const LaunchPlan plan = plan_for("radix", kU32Keys, 1 << 24, 4, {}, 232448);  // an H100's shared memory
  // Above one tile the one-block launch is left out (its `when`), and radix_pass repeats once per
  // digit pass (its `repeat`): 32-bit keys in 8-bit digits, 4 passes.
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].name_expression.rfind("radix_histogram<", 0) == 0);
  CHECK(plan.launches[0].repeat == 1);
  CHECK(plan.launches[1].name_expression.rfind("radix_pass<", 0) == 0);
  CHECK(plan.launches[1].repeat == 4);
  const int tiles = ((1 << 24) + 7679) / 7680;  // one block per tile of 384 x 20 keys
  CHECK(plan.launches[1].grid == tiles);
  // counters, 4 passes' counts and bases, two look-back buffers of 64-bit entries (LB32 = 0)
  CHECK(plan.scratch_slots == 32 + 2 * 4 * 256 + 2 * 2 * tiles * 256);
  // 64-bit keys: 8 passes; 5-bit digits of 32-bit keys: 7.
  CHECK(plan_for("radix", "gpuk::Sort<double, gpuk::NoValue, false, gpuk::SortKind::Keys>", 1 << 24, 8, {}, 232448)
            .launches[1]
            .repeat == 8);
  CHECK(plan_for("radix", kU32Keys, 1 << 24, 4, {{"RADIX_BITS", 5}}, 232448).launches[1].repeat == 7);
  // One tile or less with SMALL = 1: the one-block launch alone; with SMALL = 0 the digit passes.
  const LaunchPlan small = plan_for("radix", kU32Keys, 384 * 20, 4, {}, 232448);
  REQUIRE(small.launches.size() == 1);
  CHECK(small.launches[0].name_expression.rfind("radix_small<", 0) == 0);
  CHECK(plan_for("radix", kU32Keys, 384 * 20 + 1, 4, {}, 232448).launches.size() == 2);
  CHECK(plan_for("radix", kU32Keys, 1000, 4, {{"SMALL", 0}}, 232448).launches.size() == 2);
  CHECK_NOTHROW(plan_for("radix", kU32Keys, (std::int64_t{1} << 31) + 17, 4, {}, 232448));
  CHECK_THROWS_AS(plan_for("radix", kU32Keys, std::int64_t{1} << 32, 4, {}, 232448), ConfigError);
  // 32-bit look-back entries hold a 30-bit count: below 2^30 elements only.
  CHECK_NOTHROW(plan_for("radix", kU32Keys, (std::int64_t{1} << 30) - 1, 4, {{"LB32", 1}}, 232448));
  try {
    plan_for("radix", kU32Keys, std::int64_t{1} << 30, 4, {{"LB32", 1}}, 232448);
    FAIL("2^30 keys were planned with 30-bit look-back counts");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("breaks the constraint 'LB32 == 0 || n < 1073741824' for n = 1073741824") !=
          std::string::npos);
  }
}

TEST_CASE("onesweep plans a histogram and one pass per key byte, one look-back buffer, and 8 bytes of exchange per element") {
  const LaunchPlan plan = plan_for("onesweep", kU32Keys, 1 << 24, 4, {}, 232448);
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].name_expression.rfind("onesweep_histogram<", 0) == 0);
  CHECK(plan.launches[1].name_expression.rfind("onesweep_pass<", 0) == 0);
  CHECK(plan.launches[1].repeat == 4);
  const std::int64_t tiles = ((1 << 24) + 384 * 16 - 1) / (384 * 16);
  CHECK(plan.launches[1].shared_bytes == std::uint32_t{384 * 16 * 8 + 13 * 1024 + 64});
  CHECK(plan.scratch_slots == 32 + 4 * 4 * 256 + 2 * tiles * 256);  // 64-bit entries, one buffer
  CHECK(plan_for("onesweep", kU32Keys, 1 << 24, 4, {{"LB32", 1}}, 232448).scratch_slots == 32 + 4 * 4 * 256 + tiles * 256);
  CHECK(plan_for("onesweep", "gpuk::Sort<double, gpuk::NoValue, false, gpuk::SortKind::Keys>", 1 << 24, 8, {}, 232448)
            .launches[1].repeat == 8);
  // 32-bit look-back entries hold a 29-bit count.
  CHECK_NOTHROW(plan_for("onesweep", kU32Keys, (1 << 29) - 1, 4, {{"LB32", 1}}, 232448));
  CHECK_THROWS_AS(plan_for("onesweep", kU32Keys, 1 << 29, 4, {{"LB32", 1}}, 232448), ConfigError);
  CHECK_NOTHROW(plan_for("onesweep", kU32Keys, 1 << 29, 4, {}, 232448));
}

TEST_CASE("the sort family's choice: rank_bucket, radix up to 2^19, onesweep from there where it was measured") {
  const auto choose = [](const std::string& op, DType dtype, std::uint64_t n) {
    Problem p;
    p.family = "sort";
    p.operation = op;
    p.dtype = dtype;
    p.options = {{"order", "ascending"}, {"values", "uint32"}};
    p.n = p.max_n = n;
    return plugins().get("sort").choose_kernel(p);
  };
  CHECK(choose("sort", DType::uint32, 4096)->kernel == "rank_bucket");
  CHECK(choose("sort", DType::uint32, 1 << 18)->kernel == "radix");
  auto c = choose("sort", DType::uint32, 1 << 19);
  CHECK(c->kernel == "onesweep");
  CHECK(c->params.at("ITEMS") == 20);
  CHECK(c->params.at("MIN_BLOCKS") == 3);
  CHECK(c->params.at("LB32") == 1);
  CHECK(choose("sort", DType::uint32, 1 << 29)->params.at("LB32") == 0);
  c = choose("sort", DType::float64, 1 << 24);
  CHECK(c->kernel == "onesweep");
  CHECK(c->params.at("ITEMS") == 12);
  c = choose("sort_pairs", DType::float32, 1 << 24);
  CHECK(c->kernel == "onesweep");
  CHECK(c->params.at("VLOAD") == 0);
  CHECK(choose("argsort", DType::uint32, 1 << 24)->params.at("VLOAD") == 0);
  for (int e : {19, 20, 24, 28}) {
    c = choose("argsort", DType::float32, std::uint64_t{1} << e);
    CHECK(c->params.at("VLOAD") == 2);
    CHECK(c->params.at("MIN_BLOCKS") == 3);
  }
  // 64-bit keys with values: nothing measured, radix's defaults.
  CHECK_FALSE(choose("sort_pairs", DType::int64, 1 << 24).has_value());
}

TEST_CASE("the sort configs are the issue's setups") {
  const RunSpec sort = load_run_spec(test::source_dir() / "configs/sort.yaml", plugins(), kernels());
  CHECK(sort.family == "sort");
  CHECK(sort.operation == "sort");
  CHECK(sort.kernel == "radix");
  CHECK(sort.dtype == DType::uint32);
  CHECK(sort.size == (1u << 24));
  CHECK(sort.option("order") == "ascending");
  const RunSpec pairs = load_run_spec(test::source_dir() / "configs/sort_pairs.yaml", plugins(), kernels());
  CHECK(pairs.operation == "sort_pairs");
  CHECK(pairs.option("values") == "uint32");
  CHECK(pairs.size == (1u << 24));
  const RunSpec rank = load_run_spec(test::source_dir() / "configs/ranksort.yaml", plugins(), kernels());
  CHECK(rank.kernel == "rank_shared");
  CHECK(rank.size == 1000);
  CHECK(rank.data.generator == Generator::permutation);
  // The write-up's keys are unique.
  const HostArray data = generate(rank.data, rank.dtype, rank.size);
  auto sorted = items<std::uint32_t>(data);
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
}

TEST_CASE("a sort's device arrays and scratch: keys and values in and out, and spare buffers for the digit passes") {
  const auto launcher = [](const std::string& yaml) {
    return plugins().get("sort").make_launcher(problem_of(parse_run_spec(yaml, "c.yaml", plugins(), kernels())));
  };
  const auto bytes = [](const std::vector<ArraySlot>& slots) {
    std::uint64_t sum = 0;
    for (const auto& a : slots) sum += a.bytes;
    return sum;
  };
  const auto names = [](const std::vector<ArraySlot>& slots) {
    std::vector<std::string> out;
    for (const auto& a : slots) out.push_back(a.name + (a.output ? " out" : " in") + " " + a.type);
    return out;
  };
  const auto keys = launcher("family: sort\noperation: sort\ndtype: uint64\nsize: 1000\n");
  CHECK(names(keys->arrays()) == std::vector<std::string>{"keys_in in uint64", "keys_out out uint64"});
  CHECK(bytes(keys->arrays()) == 2 * 8000);
  const auto pairs = launcher("family: sort\noperation: sort_pairs\ndtype: float32\nsize: 1000\nvalues: uint64\n");
  CHECK(names(pairs->arrays()) == std::vector<std::string>{"keys_in in float32", "keys_out out float32",
                                                            "values_in in uint64", "values_out out uint64"});
  CHECK(bytes(pairs->arrays()) == 2 * 4000 + 2 * 8000);
  // argsort: no values in; the indices out, uint32 below 2^32 elements
  const auto arg = launcher("family: sort\noperation: argsort\ndtype: int64\nsize: 1000\n");
  CHECK(names(arg->arrays()) == std::vector<std::string>{"keys_in in int64", "keys_out out int64", "indices_out out uint32"});
  // Scratch: the metadata's words, 256-byte aligned, and a spare copy of the keys and the values,
  // aligned too: the ping-pong buffers of the digit passes, and where an in-place sort of one
  // launch reads its input from.
  LaunchPlan once;
  once.launches.push_back({"k<>", 1, 1, 0, 1});
  once.scratch_slots = 10;
  CHECK(pairs->scratch_bytes(once) == 256 + 4096 + 8192);
  LaunchPlan passes = once;
  passes.launches[0].repeat = 4;
  CHECK(pairs->scratch_bytes(passes) == 256 + 4096 + 8192);
  CHECK(keys->scratch_bytes(passes) == 256 + 8192);
  // The other families: the input, a 16-byte (reduce) or 8-byte (search) result.
  const auto reduce = plugins().get("reduce").make_launcher(
      problem_of(parse_run_spec("family: reduce\noperation: sum\ndtype: float64\nsize: 1000\n", "c.yaml", plugins(), kernels())));
  CHECK(names(reduce->arrays()) == std::vector<std::string>{"input in float64", "result out float64"});
  CHECK(bytes(reduce->arrays()) == 8000 + 16);
  CHECK(reduce->arrays()[1].host_result);
}
