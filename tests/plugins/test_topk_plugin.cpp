// The sort family's top-k without a GPU: the CPU reference (which the GPU test verifies the
// kernels against) is the first k of the stable sort of each row, in configs its options are
// checked, and the typed API's specs and the kernels' leading template argument are as documented.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
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

using namespace gpuk;

namespace {

using test::array;
using test::kernels;
using test::plugins;
using test::sorter;

// The definition: the first k of the stable sort of each row (descending for the largest), the
// indices those keys had in the row; unsorted, the same indices in input order.
template <class K>
std::vector<std::int64_t> first_k_of_sort(const std::vector<K>& keys, std::uint64_t rows, std::uint64_t k,
                                          const sort::TopKOptions& o) {
  const std::uint64_t len = keys.size() / rows;
  std::vector<std::int64_t> out;
  for (std::uint64_t r = 0; r < rows; ++r) {
    HostArray row(dtype_of<K>(), len);
    std::copy(keys.begin() + static_cast<std::ptrdiff_t>(r * len), keys.begin() + static_cast<std::ptrdiff_t>((r + 1) * len),
              row.as<K>().begin());
    HostArray index(DType::uint32, len);
    std::iota(index.as<std::uint32_t>().begin(), index.as<std::uint32_t>().end(), 0u);
    sorter().sort_on_cpu(row, &index, sort::Options(o.largest ? sort::Order::descending : sort::Order::ascending, 0, -1,
                                                    o.floats));
    std::vector<std::int64_t> mine(index.as<std::uint32_t>().begin(), index.as<std::uint32_t>().begin() + k);
    if (!o.sorted) std::sort(mine.begin(), mine.end());
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

// Keys with ties, both zeros and NaNs (floats), negatives (signed), the extremes.
template <class K> std::vector<K> edge_keys(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> v(n);
  for (auto& x : v) {
    const std::uint64_t r = rng();
    if constexpr (std::is_floating_point_v<K>) {
      switch (r % 8) {
        case 0: x = std::numeric_limits<K>::quiet_NaN(); break;
        case 1: x = -std::numeric_limits<K>::quiet_NaN(); break;
        case 2: x = K(0); break;
        case 3: x = -K(0); break;
        case 4: x = std::numeric_limits<K>::infinity() * ((r >> 8) % 2 ? 1 : -1); break;
        default: x = static_cast<K>(static_cast<std::int64_t>((r >> 8) % 9) - 4);  // ties
      }
    } else {
      switch (r % 4) {
        case 0: x = std::numeric_limits<K>::min(); break;
        case 1: x = std::numeric_limits<K>::max(); break;
        default: x = static_cast<K>(static_cast<std::int64_t>((r >> 8) % 9) - 4);
      }
    }
  }
  return v;
}

template <class K> void check_against_sort(std::size_t n, std::uint64_t rows, std::uint64_t k, const sort::TopKOptions& o) {
  const std::vector<K> keys = edge_keys<K>(n, n * 31 + k);
  const auto want = first_k_of_sort(keys, rows, k, o);
  const auto got = sorter().topk_on_cpu(array(keys), k, o);
  REQUIRE(got.indices.size() == rows * k);
  const auto indices = got.indices.template as<std::int64_t>();
  const auto values = got.values.template as<K>();
  CHECK(std::vector<std::int64_t>(indices.begin(), indices.end()) == want);
  const std::uint64_t len = n / rows;
  for (std::uint64_t i = 0; i < rows * k; ++i)  // bit for bit: a NaN keeps its sign
    CHECK(std::memcmp(&values[i], &keys[(i / k) * len + indices[i]], sizeof(K)) == 0);
}

}  // namespace

TEST_CASE("topk's CPU reference is the first k of the stable sort of each row, every dtype and option") {
  for (const bool largest : {true, false})
    for (const bool sorted : {true, false})
      for (const auto& shape : std::vector<std::tuple<std::size_t, std::uint64_t, std::uint64_t>>{
               {1, 1, 1}, {37, 1, 1}, {37, 1, 37}, {37, 1, 5}, {1000, 8, 17}, {4097, 1, 300}, {60, 60, 1}}) {
        // Not a structured binding: CAPTURE's lambda cannot take one in clang 14.
        const std::size_t n = std::get<0>(shape);
        const std::uint64_t rows = std::get<1>(shape), k = std::get<2>(shape);
        CAPTURE(n);
        CAPTURE(k);
        const sort::TopKOptions o{largest, sorted, rows};
        check_against_sort<float>(n, rows, k, o);
        check_against_sort<double>(n, rows, k, o);
        check_against_sort<std::int32_t>(n, rows, k, o);
        check_against_sort<std::uint32_t>(n, rows, k, o);
        check_against_sort<std::int64_t>(n, rows, k, o);
        check_against_sort<std::uint64_t>(n, rows, k, o);
      }
  // CUB's float order too.
  check_against_sort<float>(500, 2, 40, sort::TopKOptions{true, true, 2, sort::FloatOrder::cub});
}

TEST_CASE("topk takes NaN as the largest key, -0.0 below +0.0, and ties by the lower index") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const HostArray keys = array(std::vector<float>{1.0f, nan, 0.0f, -0.0f, 1.0f, nan, -3.0f});
  const auto largest = sorter().topk_on_cpu(keys, 4, {});
  const auto li = largest.indices.as<std::int64_t>();
  CHECK(std::vector<std::int64_t>(li.begin(), li.end()) == std::vector<std::int64_t>{1, 5, 0, 4});
  const auto smallest = sorter().topk_on_cpu(keys, 3, sort::TopKOptions{false, true});
  const auto si = smallest.indices.as<std::int64_t>();
  CHECK(std::vector<std::int64_t>(si.begin(), si.end()) == std::vector<std::int64_t>{6, 3, 2});
  const auto unsorted = sorter().topk_on_cpu(keys, 4, sort::TopKOptions{true, false});
  const auto ui = unsorted.indices.as<std::int64_t>();
  CHECK(std::vector<std::int64_t>(ui.begin(), ui.end()) == std::vector<std::int64_t>{0, 1, 4, 5});
  // All keys equal: the first k, in order.
  const auto equal = sorter().topk_on_cpu(array(std::vector<std::int32_t>(9, 7)), 4, {});
  const auto ei = equal.indices.as<std::int64_t>();
  CHECK(std::vector<std::int64_t>(ei.begin(), ei.end()) == std::vector<std::int64_t>{0, 1, 2, 3});
}

TEST_CASE("topk refuses k above a row, rows that do not divide n, and sorted k above 4096") {
  const HostArray keys = array(std::vector<float>(10, 1.0f));
  CHECK_THROWS_WITH_AS(sorter().topk_on_cpu(keys, 11, {}), doctest::Contains("k (11) must be at most the row's length, 10"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(sorter().topk_on_cpu(keys, 1, sort::TopKOptions{true, true, 3}),
                       doctest::Contains("rows (3) must divide n (10)"), ConfigError);
  CHECK_THROWS_AS(sorter().topk_on_cpu(keys, 0, {}), ConfigError);
  const HostArray big = array(std::vector<std::uint32_t>(5000, 1u));
  CHECK_THROWS_WITH_AS(sorter().topk_on_cpu(big, 4097, {}), doctest::Contains("sorted topk takes k <= 4096"),
                       ConfigError);
  CHECK(sorter().topk_on_cpu(big, 4097, sort::TopKOptions{true, false}).indices.size() == 4097);
}

TEST_CASE("topk configs: k, rows and sorted are checked, left out at their defaults, and topk's alone") {
  // A config names the kernel: the family's default kernel file (radix) is a sort.
  const std::string base = "family: sort\noperation: topk\nkernel: topk_radix\ndtype: float32\nsize: 4096\n";
  const RunSpec plain = parse_run_spec(base, "c.yaml", plugins(), kernels());
  CHECK(plain.options.count("k") == 0);
  CHECK(plain.options.count("rows") == 0);
  CHECK(plain.options.count("sorted") == 0);
  const RunSpec batch = parse_run_spec(base + "order: descending\nk: 32\nrows: 16\nsorted: false\n", "c.yaml", plugins(),
                                       kernels());
  CHECK(batch.options.at("k") == "32");
  CHECK(batch.options.at("rows") == "16");
  CHECK(batch.options.at("sorted") == "false");
  CHECK(plugins().get("sort").template_args(problem_of(batch)) ==
        std::vector<std::string>{"gpuk::Sort<float, long long, true, gpuk::SortKind::TopK>"});
  const auto error = [&](const std::string& yaml) {
    try {
      parse_run_spec(yaml, "c.yaml", plugins(), kernels());
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error(base + "rows: 3\n").find("rows (3) must divide n (4096)") != std::string::npos);
  CHECK(error(base + "k: 5000\n").find("sorted topk takes k <= 4096") != std::string::npos);
  CHECK(error(base + "k: 0\n").find("k must be at least 1") != std::string::npos);
  CHECK(error(base + "k: many\n").find("k") != std::string::npos);
  CHECK(error("family: sort\noperation: sort\ndtype: float32\nsize: 10\nk: 4\n").find("options of topk, not of sort") !=
        std::string::npos);
  // No kernel named: the family's default (radix) does not implement topk, so the first file that
  // does, by name, is the fallback (core/src/kernel/default_kernel.hpp): topk_radix, which serves
  // any shape (topk_rows, one block per row, would take a single array with one block); the run
  // itself takes the family's choice below.
  CHECK(error("family: sort\noperation: topk\ndtype: float32\nsize: 10\n").empty());
  CHECK(parse_run_spec("family: sort\noperation: topk\ndtype: float32\nsize: 10\n", "c.yaml", plugins(), kernels()).kernel ==
        "topk_radix");
  // The library API's lookup: the family picks the radix select for topk at every size.
  const Problem p = problem_of(plain);
  const auto choice = plugins().get("sort").choose_kernel(p);
  REQUIRE(choice.has_value());
  CHECK(choice->kernel == "topk_radix");
  CHECK(choice->params.at("RADIX_BITS") == 8);  // rows under 2^18 keys
  Problem long_row = p;
  long_row.max_n = long_row.n = std::uint64_t{1} << 20;
  CHECK(plugins().get("sort").choose_kernel(long_row)->params.at("RADIX_BITS") == 11);
}

TEST_CASE("topk's choice: batches of 64 rows or more of at most 8192 keys take topk_rows, the rest topk_radix") {
  const auto choose = [](std::uint64_t rows, std::uint64_t row_len, std::uint64_t max_n = 0) {
    Problem p = make_problem(plugins().get("sort"), "topk", DType::float32,
                             {{"k", "8"}, {"rows", std::to_string(rows)}, {"sorted", "false"}}, rows * row_len);
    if (max_n) p.max_n = max_n;
    const auto choice = plugins().get("sort").choose_kernel(p);
    REQUIRE(choice.has_value());
    return *choice;
  };
  const KernelChoice batch = choose(1024, 4096);
  CHECK(batch.kernel == "topk_rows");
  CHECK(batch.params.at("ROW_KEYS") == 4096);  // its rows' shared memory alone
  CHECK(batch.params.at("BLOCK") == 128);
  CHECK(batch.why.find("one block per row") != std::string::npos);
  CHECK(choose(64, 8192).params.at("ROW_KEYS") == 8192);
  CHECK(choose(100, 4097).params.at("ROW_KEYS") == 8192);
  // A library Operation serves its size bucket: 1024 rows of 4096 keys (n = 2^22) up to n = 2^23 - 1.
  CHECK(choose(1024, 4096, (std::uint64_t{1} << 23) - 1).kernel == "topk_rows");
  CHECK(choose(64, 8192).kernel == "topk_rows");
  CHECK(choose(777, 13).kernel == "topk_rows");
  // Too few rows to fill the GPU, or rows longer than the block's shared memory holds.
  CHECK(choose(63, 4096).kernel == "topk_radix");
  CHECK(choose(1, 4096).kernel == "topk_radix");
  CHECK(choose(1024, 8193).kernel == "topk_radix");
  CHECK(choose(1024, 16384).kernel == "topk_radix");
  CHECK(choose(1024, 8192, (std::uint64_t{1} << 24) - 1).kernel == "topk_radix");
  const KernelChoice long_rows = choose(16, 1 << 20);
  CHECK(long_rows.kernel == "topk_radix");
  CHECK(long_rows.params.at("RADIX_BITS") == 11);
}

TEST_CASE("the typed API's topk spec: largest is the descending order, defaults left out") {
  const OperationSpec s = sort::detail::topk_spec(DType::float32, 100, 1, {});
  CHECK(s.operation == "topk");
  CHECK(s.options == std::map<std::string, std::string>{{"order", "descending"}});
  const OperationSpec b = sort::detail::topk_spec(DType::int32, 100, 8, sort::TopKOptions{false, false, 4});
  CHECK(b.options == std::map<std::string, std::string>{{"order", "ascending"}, {"k", "8"}, {"rows", "4"}, {"sorted", "false"}});
  const Problem p = make_problem(plugins().get("sort"), "topk", DType::int32, b.options, 100);
  CHECK(p.options.at("k") == "8");
}
