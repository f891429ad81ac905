// The sort family's top-k on the GPU, through the library API on device buffers: every key dtype,
// largest and smallest, sorted and in input order, one row and batches of rows, on the edge
// shapes (k = 1, k = n, n not a multiple of anything, all-equal keys, NaN, +-0.0, negatives) and
// on random keys of every bit, each answer checked element by element against the CPU reference
// (Sorter::topk_on_cpu, the first k of the stable sort), the outputs poisoned before each call.
// Also topk_radix's extreme parameters (11-bit digits, one histogram, one item, few blocks), and
// topk_rows named (one block per row): rows in its shared memory and rows read from global
// memory, at the family's parameters and at its corners.
// Without a GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "builtins.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/sort.hpp"
#include "helpers.hpp"
#include "sort/sorter.hpp"

using namespace gpuk;

namespace {

// The device's primary context made current on this thread first (the tests' own streams and
// buffers need it; the Engine makes it current only inside its calls), then the Engine.
Engine& engine() {
  static const Device device(0);
  static Engine e;
  return e;
}

const sort::Sorter& sorter() {
  const auto* s = interface_of<sort::Sorter>(test::plugins().get("sort"));
  REQUIRE(s != nullptr);
  return *s;
}

// ties: 31 small values (and for floats NaN, -NaN, +-0.0, +-inf): most keys tie. spread: about
// 2000 values, each a few times in a row of 4096 (ties at topk_rows's small-k threshold), a NaN
// or -NaN (floats), the type's max or min (integers) in about one key of 500.
enum class Data { random_bits, ties, all_equal, spread };

template <class K> std::vector<K> make_keys(std::size_t n, Data data, std::mt19937_64& rng) {
  std::vector<K> v(n);
  for (auto& x : v) {
    const std::uint64_t r = rng();
    if (data == Data::all_equal) {
      x = K(3);
    } else if (data == Data::random_bits) {
      if constexpr (std::is_floating_point_v<K>) {
        // Any finite pattern, either sign (no NaN: the ties data has them).
        using B = std::conditional_t<sizeof(K) == 4, std::uint32_t, std::uint64_t>;
        B b = static_cast<B>(r);
        std::memcpy(&x, &b, sizeof x);
        if (!std::isfinite(x)) x = K(r % 1000) - K(500);
      } else {
        std::memcpy(&x, &r, sizeof x);
      }
    } else if (data == Data::spread) {
      x = static_cast<K>(static_cast<std::int64_t>((r >> 10) % 2001) - 1000);
      if constexpr (std::is_floating_point_v<K>) {
        if (r % 1000 == 0) x = std::numeric_limits<K>::quiet_NaN();
        if (r % 1000 == 1) x = -std::numeric_limits<K>::quiet_NaN();
      } else {
        if (r % 1000 == 0) x = std::numeric_limits<K>::max();
        if (r % 1000 == 1) x = std::numeric_limits<K>::min();
      }
    } else if constexpr (std::is_floating_point_v<K>) {
      switch (r % 10) {
        case 0: x = std::numeric_limits<K>::quiet_NaN(); break;
        case 1: x = -std::numeric_limits<K>::quiet_NaN(); break;
        case 2: x = K(0); break;
        case 3: x = -K(0); break;
        case 4: x = std::numeric_limits<K>::infinity() * ((r >> 8) % 2 ? 1 : -1); break;
        default: x = static_cast<K>(static_cast<std::int64_t>((r >> 8) % 31) - 15);
      }
    } else {
      x = static_cast<K>(static_cast<std::int64_t>((r >> 8) % 31) - 15);  // negatives for signed keys
      if (r % 64 == 0) x = std::numeric_limits<K>::max();
      if (r % 64 == 1) x = std::numeric_limits<K>::min();
    }
  }
  return v;
}

struct Case {
  std::size_t n;
  std::uint64_t rows, k;
  Data data;
};

const char* data_name(Data d) {
  return d == Data::random_bits ? "random bits" : d == Data::ties ? "ties" : d == Data::spread ? "spread" : "all equal";
}

// A kernel file named with its parameters (the others at the metadata's defaults); no kernel:
// the default path (the family's choice).
struct Named {
  std::string kernel;
  std::map<std::string, std::int64_t> params;
};

// One call on the device against the CPU; the failure's words, or "".
template <class K>
std::string run_case(const Case& c, bool largest, bool sorted, const Named& named, std::mt19937_64& rng,
                     const Stream& stream) {
  const std::vector<K> keys = make_keys<K>(c.n, c.data, rng);
  HostArray host(dtype_of<K>(), c.n);
  std::memcpy(host.data(), keys.data(), c.n * sizeof(K));
  const sort::TopKOptions o{largest, sorted, c.rows};
  const auto want = sorter().topk_on_cpu(host, c.k, o);
  const std::uint64_t out = c.rows * c.k;
  DeviceBuffer d_keys(c.n * sizeof(K)), d_values(out * sizeof(K)), d_indices(out * 8);
  d_keys.upload(keys.data(), c.n * sizeof(K), stream);
  d_values.fill_bytes(0xA5, stream);
  d_indices.fill_bytes(0xA5, stream);
  if (named.kernel.empty()) {
    sort::topk(engine(), reinterpret_cast<const K*>(d_keys.get()), reinterpret_cast<K*>(d_values.get()),
               reinterpret_cast<std::int64_t*>(d_indices.get()), c.n, c.k, stream.get(), o);
  } else {
    OperationSpec spec = sort::detail::topk_spec(dtype_of<K>(), c.n, c.k, o);
    spec.kernel = named.kernel;
    spec.params = named.params;
    engine().launch(spec, {d_keys.get(), d_values.get(), d_indices.get()}, stream.get());
  }
  std::vector<K> values(out);
  std::vector<std::int64_t> indices(out);
  d_values.download(values.data(), out * sizeof(K), stream);
  d_indices.download(indices.data(), out * 8, stream);
  stream.synchronize();
  const auto wv = want.values.as<K>();
  const auto wi = want.indices.as<std::int64_t>();
  std::uint64_t wrong = 0, first = 0;
  for (std::uint64_t i = 0; i < out; ++i)
    if (indices[i] != wi[i] || std::memcmp(&values[i], &wv[i], sizeof(K)) != 0)
      if (wrong++ == 0) first = i;
  if (wrong == 0) return "";
  std::ostringstream s;
  s << dtype_name(dtype_of<K>()) << " n " << c.n << " rows " << c.rows << " k " << c.k << " " << data_name(c.data)
    << (largest ? " largest" : " smallest") << (sorted ? " sorted" : " unsorted")
    << (named.kernel.empty() ? "" : " (" + named.kernel + (named.params.empty() ? "" : ", its params named") + ")")
    << ": " << wrong << " of " << out << " wrong, the first at " << first
    << " (index " << indices[first] << ", expected " << wi[first] << ")";
  return s.str();
}

// Which orders a run takes: both, or one (a program of its own to compile each: the parameter
// corners take one order a dtype, the other paths both).
enum class Orders { both, largest, smallest };

template <class K> void run_dtype(const std::vector<Case>& cases, const Named& named = {}, Orders orders = Orders::both) {
  engine();  // first: the context the stream below needs
  const Stream stream;
  std::mt19937_64 rng(test::fresh_seed());
  for (const Case& c : cases)
    for (const bool largest : {true, false})
      for (const bool sorted : {true, false}) {
        if (sorted && c.k > sort::kTopKSortedMax) continue;
        if ((orders == Orders::largest && !largest) || (orders == Orders::smallest && largest)) continue;
        const std::string failure = run_case<K>(c, largest, sorted, named, rng, stream);
        CHECK_MESSAGE(failure.empty(), failure);
      }
}

// The family's choices: topk_radix with 8-bit digits (one row, or fewer than 64), topk_rows at
// ROW_KEYS 4096 (128 and 777 rows), and for rows of 2^18 keys or more topk_radix with 11-bit
// digits. Each is a program of its own to compile per dtype and order (most of this program's
// time), so the long rows run for one 32-bit and one 64-bit dtype.
std::vector<Case> edge_cases(bool long_rows) {
  std::vector<Case> cases = {
      {1, 1, 1, Data::ties},           {37, 1, 37, Data::ties},          {37, 1, 1, Data::all_equal},
      {1000, 1, 1000, Data::all_equal}, {4097, 1, 8, Data::ties},         {65539, 1, 1, Data::random_bits},
      {65539, 1, 4096, Data::ties},     {100003, 1, 100003, Data::random_bits},
      {128 * 4096, 128, 32, Data::random_bits}, {16 * 20011, 16, 256, Data::ties},
      {3 * 33335, 3, 1000, Data::all_equal},    {777 * 13, 777, 13, Data::ties},
      {5 * 3001, 5, 3001, Data::ties}};
  if (long_rows)
    cases.insert(cases.end(), {{1000003, 1, 1024, Data::ties}, {300007, 1, 5000, Data::random_bits},
                               {2 * 262147, 2, 4096, Data::ties}});
  return cases;
}

}  // namespace

TEST_CASE("topk of 32-bit keys equals the CPU's first k of the stable sort on every edge shape") {
  run_dtype<float>(edge_cases(true));
  run_dtype<std::int32_t>(edge_cases(false));
  run_dtype<std::uint32_t>(edge_cases(false));
}

TEST_CASE("topk of 64-bit keys equals the CPU's first k of the stable sort on every edge shape") {
  run_dtype<double>(edge_cases(false));
  run_dtype<std::int64_t>(edge_cases(true));
  run_dtype<std::uint64_t>(edge_cases(false));
}

TEST_CASE("topk_radix's extreme parameters: 11-bit digits, one histogram, one item a thread, one wave") {
  const std::map<std::string, std::int64_t> params = {
      {"BLOCK", 128}, {"ITEMS", 1}, {"RADIX_BITS", 11}, {"HISTS", 1}, {"WAVES", 1}, {"SORT_BLOCK", 256}};
  const std::vector<Case> cases = {{1, 1, 1, Data::ties},
                                   {4097, 1, 4097, Data::ties},
                                   {300007, 1, 77, Data::random_bits},
                                   {256 * 1000, 256, 10, Data::ties}};
  run_dtype<float>(cases, {"topk_radix", params});
  const std::map<std::string, std::int64_t> wide = {
      {"BLOCK", 1024}, {"ITEMS", 16}, {"RADIX_BITS", 9}, {"HISTS", 8}, {"WAVES", 16}, {"SORT_BLOCK", 1024}};
  run_dtype<std::uint32_t>(cases, {"topk_radix", wide});
}

namespace {

// topk_rows's shapes: one row and many, rows of odd lengths (not a multiple of the block's tile),
// k = 1 and k = the row's length, all-equal keys, ties with NaN, -0.0 and infinities; rows that its
// shared memory holds (up to ROW_KEYS 4096 here) and longer ones, read from global memory in every
// pass (4097, 8192, 8209 and 20011 keys); more rows than the grid has blocks on a small GPU
// (3001). k = 1 (the block's min-reduction, the first of equal keys) and k = the row's length
// (the copy) take no digit pass: both on rows of ties, all-equal keys and random bits, short, odd
// and long. 2 <= k <= 32 with the row in shared memory takes the small-k path (a threshold from the
// threads' minima, the exact k among the candidates below it): k = 2, 8, 32 and 33 (the digit
// passes) on rows of 4093 and 4096 keys with ties at the threshold and NaN (spread); rows shorter
// than the block (threads with no key); and too many candidates for the block, where the digit
// passes go on over the row already loaded (all-equal keys, ties).
std::vector<Case> block_cases() {
  return {{1, 1, 1, Data::ties},
          {37, 1, 37, Data::ties},
          {1000, 1, 1000, Data::all_equal},
          {4097, 1, 8, Data::ties},
          {8192, 1, 4096, Data::random_bits},
          {64 * 4096, 64, 1, Data::random_bits},
          {200 * 4096, 200, 256, Data::random_bits},
          {70 * 4096, 70, 4096, Data::ties},
          {3001 * 129, 3001, 129, Data::all_equal},
          {777 * 13, 777, 13, Data::ties},
          {101 * 1999, 101, 77, Data::ties},
          {9 * 8192, 9, 8192, Data::all_equal},
          {5 * 8209, 5, 1000, Data::random_bits},
          {3 * 20011, 3, 20011, Data::ties},
          {2 * 20011, 2, 3, Data::all_equal},
          {129 * 1999, 129, 1, Data::ties},
          {3001 * 13, 3001, 1, Data::all_equal},
          {2 * 20011, 2, 1, Data::ties},
          {5 * 8209, 5, 8209, Data::random_bits},
          {20 * 4096, 20, 8, Data::spread},
          {16 * 4093, 16, 32, Data::spread},
          {16 * 4093, 16, 33, Data::spread},
          {16 * 4093, 16, 2, Data::random_bits},
          {9 * 3001, 9, 5, Data::all_equal},
          {20 * 2000, 20, 16, Data::ties},
          {300 * 100, 300, 32, Data::ties},
          {200 * 40, 200, 31, Data::spread}};
}

}  // namespace

TEST_CASE("topk_rows equals the CPU's first k of the stable sort on every edge shape, every key dtype") {
  // The family's parameters (sort_plugin.cpp's choose_kernel with the rows in 4096 keys): the
  // programs the default path above compiled already. The metadata's defaults differ in BLOCK,
  // ROW_KEYS and MATCH, which the corners below take.
  const Named block{"topk_rows", {{"ROW_KEYS", 4096}, {"BLOCK", 128}, {"ITEMS", 8}, {"MATCH", 0}}};
  run_dtype<float>(block_cases(), block);
  run_dtype<double>(block_cases(), block);
  run_dtype<std::int32_t>(block_cases(), block);
  run_dtype<std::uint32_t>(block_cases(), block);
  run_dtype<std::int64_t>(block_cases(), block);
  run_dtype<std::uint64_t>(block_cases(), block);
}

TEST_CASE("topk_rows's parameter corners: small rows in shared memory, 11-bit and 5-bit digits, plain atomics") {
  // ROW_KEYS 1024 sends every row above 1024 keys to the global-memory path; one item a thread
  // and 128 threads: many tiles a row; 11-bit digits: 3 passes of 32-bit keys, the last 10 bits.
  // 1024 threads with 16 items, 5-bit digits and the ballot match (MATCH 1). One order a dtype
  // (each a program to compile): both orders of each key width between them. Small k in rows of
  // 1000 keys: the small-k path at 128 threads, and its fall-back to 11-bit digit passes.
  const Named narrow{"topk_rows",
                     {{"BLOCK", 128}, {"ITEMS", 1}, {"RADIX_BITS", 11}, {"ROW_KEYS", 1024}, {"WAVES", 1}, {"MATCH", 0}}};
  const std::vector<Case> cases = {{1, 1, 1, Data::ties},
                                   {1024 * 100, 100, 1024, Data::ties},
                                   {1025 * 100, 100, 7, Data::random_bits},
                                   {4097 * 70, 70, 4097, Data::all_equal},
                                   {3 * 33335, 3, 1000, Data::ties},
                                   {1999 * 65, 65, 1, Data::ties},
                                   {60 * 1000, 60, 20, Data::spread},
                                   {30 * 1000, 30, 9, Data::all_equal}};
  run_dtype<float>(cases, narrow, Orders::largest);
  run_dtype<std::uint64_t>(cases, narrow, Orders::smallest);
  const Named wide{"topk_rows", {{"BLOCK", 1024}, {"ITEMS", 16}, {"RADIX_BITS", 5}, {"ROW_KEYS", 16384}, {"WAVES", 16}}};
  run_dtype<std::int32_t>(cases, wide, Orders::smallest);
  run_dtype<double>(cases, wide, Orders::largest);
}

TEST_CASE("topk's default path takes topk_rows for a batch and topk_radix for one row") {
  engine();
  const sort::TopKOptions batch{true, false, 1024};
  const auto b = engine().prepare(sort::detail::topk_spec(DType::float32, 1024 * 4096, 8, batch));
  CHECK(b.variant().find("topk_rows") != std::string::npos);
  const auto one = engine().prepare(sort::detail::topk_spec(DType::float32, 1 << 20, 8, {}));
  CHECK(one.variant().find("topk_radix") != std::string::npos);
}
