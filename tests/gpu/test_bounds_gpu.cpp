// lower_bound and upper_bound on the GPU through the library API (typed calls and prepared
// handles on the test's own buffers and stream), the four kernels (bounds_gather: few needles;
// bounds: more in any order; bounds_window: more, sorted; bounds_merge: sorted, as many as the keys;
// and bounds_window's SPLITS 1 and bounds_merge, named, with needles sorted, a few swapped and in no
// order), every dtype, against std::lower_bound / std::upper_bound in the
// sort family's order: n = 1, 2, odd n, past a wave of tiles; needles below and above every key,
// an all-equal haystack, duplicates, NaN, -0.0 and +0.0, negatives; zero needles; sorted and
// unsorted needles. Then the shipped configs and named shapes through `gpuk run`'s path, Thrust
// agreeing in the same run. Without a GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/search.hpp"
#include "helpers.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "search/bounds_reference.hpp"

using namespace gpuk;
using search::Needles;

namespace {

Engine& engine() {
  static Engine e;
  return e;
}

// Keys from a small range (ties common); floats also NaN, -0.0, +0.0 and infinities. `spread` 0:
// every key the same.
template <class T> T key(std::mt19937_64& rng, int spread) {
  if (spread == 0) return T(3);
  if constexpr (std::is_floating_point_v<T>) {
    switch (rng() % 16) {
      case 0: return (rng() % 2 ? 1 : -1) * std::numeric_limits<T>::quiet_NaN();
      case 1: return -T(0);
      case 2: return T(0);
      case 3: return (rng() % 2 ? 1 : -1) * std::numeric_limits<T>::infinity();
      default: return static_cast<T>(static_cast<int>(rng() % (2 * spread + 1)) - spread) / T(4);
    }
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int>(rng() % (2 * spread + 1)) - spread);
  } else {
    return static_cast<T>(rng() % (2 * spread + 1) + 1);
  }
}

// Needles: keys, values between them and beyond both ends (the type's least and greatest).
template <class T> std::vector<T> needles(std::mt19937_64& rng, std::uint64_t m, int spread) {
  std::vector<T> out(m);
  for (auto& q : out) {
    switch (rng() % 6) {
      case 0: q = std::numeric_limits<T>::lowest(); break;
      case 1: q = std::numeric_limits<T>::max(); break;
      case 2: q = key<T>(rng, spread + 2); break;
      default: q = key<T>(rng, spread);
    }
  }
  return out;
}

struct Tally {
  int calls = 0;
  std::vector<std::string> failures;
};

// Prepared once per dtype (every size bucket up to kMaxKeys compiled and loaded when made):
// lower and upper bound, for needles in any order and sorted.
constexpr std::uint64_t kMaxKeys = 1 << 20;
template <class T> struct Handles {
  search::PreparedBounds<T> lower, upper, lower_sorted, upper_sorted;
  explicit Handles(std::uint64_t max_needles)
      : lower(search::prepare_lower_bound<T>(engine(), kMaxKeys, max_needles)),
        upper(search::prepare_upper_bound<T>(engine(), kMaxKeys, max_needles)),
        lower_sorted(search::prepare_lower_bound<T>(engine(), kMaxKeys, max_needles, Needles::sorted)),
        upper_sorted(search::prepare_upper_bound<T>(engine(), kMaxKeys, max_needles, Needles::sorted)) {}
  search::PreparedBounds<T>& of(bool upper_, Needles order) {
    return order == Needles::sorted ? (upper_ ? upper_sorted : lower_sorted) : (upper_ ? upper : lower);
  }
};

template <class T>
void check_case(std::uint64_t n, std::uint64_t m, int spread, bool sorted, std::mt19937_64& rng, const Stream& stream,
                Handles<T>& handles, Tally& tally) {
  std::vector<T> hay(n);
  for (auto& x : hay) x = key<T>(rng, spread);
  std::sort(hay.begin(), hay.end(), search::OrderedLess{});
  std::vector<T> q = needles<T>(rng, m, spread);
  if (sorted) std::sort(q.begin(), q.end(), search::OrderedLess{});
  DeviceBuffer d_hay(n * sizeof(T)), d_q(std::max<std::uint64_t>(1, m) * sizeof(T)), d_out(std::max<std::uint64_t>(1, m) * 8);
  d_hay.upload(hay.data(), n * sizeof(T), stream);
  if (m) d_q.upload(q.data(), m * sizeof(T), stream);
  const T* kh = reinterpret_cast<const T*>(d_hay.get());
  const T* kq = reinterpret_cast<const T*>(d_q.get());
  auto* out = reinterpret_cast<std::int64_t*>(d_out.get());
  for (const bool upper : {false, true}) {
    std::vector<std::int64_t> want(m), got(m, -7);
    search::bounds_range<T>(hay, q, upper, want.data(), 1);
    for (const Needles order : {Needles::unsorted, Needles::sorted}) {
      d_out.fill_bytes(0xA5, stream);
      if (++tally.calls % 2) {
        if (upper) search::upper_bound(engine(), kh, n, kq, m, out, stream.get(), order);
        else search::lower_bound(engine(), kh, n, kq, m, out, stream.get(), order);
      } else {
        handles.of(upper, order)(kh, n, kq, m, out, stream.get());
      }
      if (m) d_out.download(got.data(), m * 8, stream);
      stream.synchronize();
      for (std::uint64_t i = 0; i < m; ++i)
        if (got[i] != want[i]) {
          tally.failures.push_back(std::string(dtype_name(dtype_of<T>())) + (upper ? " upper" : " lower") +
                                   (order == Needles::sorted ? " (kernel for sorted needles)" : "") + " n=" +
                                   std::to_string(n) + " m=" + std::to_string(m) + (sorted ? " sorted" : "") +
                                   " spread " + std::to_string(spread) + ": needle " + std::to_string(i) + " (" +
                                   search::format_value(q[i]) + ") expected " + std::to_string(want[i]) + ", got " +
                                   std::to_string(got[i]));
          break;
        }
    }
  }
}

template <class T>
void check_dtype(const std::vector<std::uint64_t>& sizes, std::uint64_t wave, std::mt19937_64& rng, const Stream& s,
                 Tally& t) {
  Handles<T> handles(wave + 3);
  for (const std::uint64_t n : sizes)
    for (const std::uint64_t m : {std::uint64_t{1}, std::uint64_t{31}, std::uint64_t{4097}})
      for (const int spread : {0, 2, 1000})
        for (const bool sorted : {false, true}) check_case<T>(n, m, spread, sorted, rng, s, handles, t);
  // more needles than one wave of tiles (every block strides), in the most keys prepared for
  for (const bool sorted : {false, true}) check_case<T>(kMaxKeys, wave + 3, 1000, sorted, rng, s, handles, t);
}

// A kernel with a first launch's splits, named (whatever the family picks). bounds_window with
// SPLITS 1: a first launch finds the bound of each tile's first needle, and a tile takes its window
// from those splits when its needles are in order with the next tile's first. bounds_merge: a first
// launch splits the merge of keys and needles into tiles, each merged in shared memory, each answer
// checked against the keys beside it. Sorted needles (ties, NaN, beyond both ends; fewer than a
// tile, not a multiple of it, and more tiles than the first launch has warps or the grid blocks), a
// few of them swapped (some tiles' checks fail: bounds or answers searched), and needles in no
// order (every tile searches), in n = 1, 33 and 100003 keys.
// Which bounds a shape runs (each bound of each shape is its own program).
enum class Bounds { lower, upper, both };

template <class T>
void check_splits(const std::string& kernel, const std::map<std::string, std::int64_t>& shape, std::uint64_t tile,
                  std::uint64_t max_needles, std::mt19937_64& rng, const Stream& stream, Tally& tally,
                  Bounds bounds = Bounds::both) {
  constexpr std::uint64_t kKeys = 100003;
  enum class Order { sorted, swapped, unsorted };
  DeviceBuffer d_hay(kKeys * sizeof(T)), d_q(max_needles * sizeof(T)), d_out(max_needles * 8);
  const T* kh = reinterpret_cast<const T*>(d_hay.get());
  const T* kq = reinterpret_cast<const T*>(d_q.get());
  auto* out = reinterpret_cast<std::int64_t*>(d_out.get());
  for (const bool upper : {false, true}) {
    if ((upper && bounds == Bounds::lower) || (!upper && bounds == Bounds::upper)) continue;
    OperationSpec spec = search::detail::bounds_spec<T>(upper ? search::Mode::upper_bound : search::Mode::lower_bound,
                                                        kKeys, max_needles, Needles::sorted);
    spec.kernel = kernel;
    spec.params = shape;
    PreparedSizes op = engine().prepare_sizes(spec);
    int spread = 0;
    for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{33}, kKeys})
      for (const std::uint64_t m : {std::uint64_t{1}, std::uint64_t{37}, tile + 1, 3 * tile, max_needles})
        for (const Order order : {Order::sorted, Order::swapped, Order::unsorted}) {
          spread = spread == 1000 ? 0 : spread == 0 ? 2 : 1000;  // all keys equal, ties, few ties
          std::vector<T> hay(n);
          for (auto& x : hay) x = key<T>(rng, spread);
          std::sort(hay.begin(), hay.end(), search::OrderedLess{});
          std::vector<T> q = needles<T>(rng, m, spread);
          if (order != Order::unsorted) std::sort(q.begin(), q.end(), search::OrderedLess{});
          if (order == Order::swapped)
            for (std::uint64_t k = 0; k < 1 + m / 500; ++k) std::swap(q[rng() % m], q[rng() % m]);
          d_hay.upload(hay.data(), n * sizeof(T), stream);
          d_q.upload(q.data(), m * sizeof(T), stream);
          d_out.fill_bytes(0xA5, stream);
          const Scalar count = Scalar::of(static_cast<std::int64_t>(m));
          op.launch({kh, kq, out}, n, stream.get(), &count);
          std::vector<std::int64_t> want(m), got(m, -7);
          search::bounds_range<T>(hay, q, upper, want.data(), 1);
          d_out.download(got.data(), m * 8, stream);
          stream.synchronize();
          ++tally.calls;
          for (std::uint64_t i = 0; i < m; ++i)
            if (got[i] != want[i]) {
              const char* what[] = {"sorted", "a few swapped", "unsorted"};
              tally.failures.push_back(std::string(dtype_name(dtype_of<T>())) + (upper ? " upper" : " lower") +
                                       " " + kernel + " tile " + std::to_string(tile) + " n=" + std::to_string(n) +
                                       " m=" + std::to_string(m) + " " + what[static_cast<int>(order)] + " spread " +
                                       std::to_string(spread) + ": needle " + std::to_string(i) + " (" +
                                       search::format_value(q[i]) + ") expected " + std::to_string(want[i]) + ", got " +
                                       std::to_string(got[i]));
              break;
            }
        }
  }
}

template <class T>
void check_splits_dtype(bool smallest, bool largest, int sm_count, std::mt19937_64& rng, const Stream& stream,
                        Tally& tally) {
  // the default tile (256 x 4), both bounds; the smallest (128 x 1, WINDOW 1024) with more tiles
  // than the first launch's warps (sm_count * 2048 threads), and the largest (512 x 8), each for
  // the dtypes given and one bound (every shape and bound is a program to compile)
  check_splits<T>("bounds_window", {{"SPLITS", 1}}, 1024, 20011, rng, stream, tally);
  if (smallest)
    check_splits<T>("bounds_window", {{"SPLITS", 1}, {"BLOCK", 128}, {"ITEMS", 1}, {"WINDOW", 1024}}, 128,
                    static_cast<std::uint64_t>(sm_count) * 2048 / 32 * 128 + 4097, rng, stream, tally, Bounds::lower);
  if (largest)
    check_splits<T>("bounds_window", {{"SPLITS", 1}, {"BLOCK", 512}, {"ITEMS", 8}, {"BLOCKS_PER_SM", 2}}, 4096, 50021,
                    rng, stream, tally, Bounds::upper);
}

// Which of bounds_merge's tile shapes a dtype runs besides the default: each shape and dtype is a
// program to compile, so the shapes are dealt over the dtypes (both key widths for each).
struct MergeShapes {
  bool smallest, largest, odd;
};

template <class T>
void check_merge_dtype(MergeShapes shapes, int sm_count, std::mt19937_64& rng, const Stream& stream, Tally& tally) {
  // the default tile (256 x 15 elements of the merge); the smallest (128 x 5) with more tiles than
  // its grid has blocks (sm_count * 4, each block striding, the next tile's loads in flight); the
  // largest (512 x 15, one block an SM, dynamic shared memory past 48 KiB for 8-byte keys), 8
  // blocks an SM with 7 (odd counts: no tile is a power of two)
  check_splits<T>("bounds_merge", {}, 3840, 20011, rng, stream, tally);
  if (shapes.smallest)
    check_splits<T>("bounds_merge", {{"BLOCK", 128}, {"ITEMS", 5}}, 640,
                    static_cast<std::uint64_t>(sm_count) * 4 * 640 * 2 + 4097, rng, stream, tally, Bounds::upper);
  if (shapes.largest)
    check_splits<T>("bounds_merge", {{"BLOCK", 512}, {"ITEMS", 15}, {"BLOCKS_PER_SM", 1}}, 7680, 50021, rng, stream,
                    tally, Bounds::lower);
  if (shapes.odd)
    check_splits<T>("bounds_merge", {{"ITEMS", 7}, {"BLOCKS_PER_SM", 8}}, 1792, 30011, rng, stream, tally,
                    Bounds::lower);
}

}  // namespace

TEST_CASE("bounds_window with SPLITS 1: every dtype, sorted needles from the splits, needles out of order searched") {
  const Device device(0);
  const Stream stream;
  std::mt19937_64 rng(test::fresh_seed());
  const int sm_count = device.info().sm_count;
  Tally tally;
  check_splits_dtype<std::int32_t>(true, false, sm_count, rng, stream, tally);
  check_splits_dtype<std::uint32_t>(false, true, sm_count, rng, stream, tally);
  check_splits_dtype<std::int64_t>(false, true, sm_count, rng, stream, tally);
  check_splits_dtype<float>(false, false, sm_count, rng, stream, tally);
  check_splits_dtype<double>(true, false, sm_count, rng, stream, tally);
  MESSAGE(tally.calls << " bounds_window SPLITS 1 calls, " << tally.failures.size() << " wrong");
  for (const auto& f : tally.failures) FAIL_CHECK(f);
  CHECK(tally.calls == (5 * 2 + 4) * 3 * 5 * 3);  // (shapes x bounds) run, n, m, orders
}

TEST_CASE("bounds_merge: every dtype, sorted needles merged, needles out of order caught by each answer's check") {
  const Device device(0);
  const Stream stream;
  std::mt19937_64 rng(test::fresh_seed());
  const int sm_count = device.info().sm_count;
  Tally tally;
  check_merge_dtype<std::int32_t>({true, false, false}, sm_count, rng, stream, tally);
  check_merge_dtype<std::uint32_t>({false, true, false}, sm_count, rng, stream, tally);
  check_merge_dtype<std::int64_t>({true, false, true}, sm_count, rng, stream, tally);
  check_merge_dtype<float>({true, false, true}, sm_count, rng, stream, tally);
  check_merge_dtype<double>({false, true, false}, sm_count, rng, stream, tally);
  MESSAGE(tally.calls << " bounds_merge calls, " << tally.failures.size() << " wrong");
  for (const auto& f : tally.failures) FAIL_CHECK(f);
  CHECK(tally.calls == (5 * 2 + 3 + 2 + 2) * 3 * 5 * 3);  // (shapes x bounds) run, n, m, orders
}

TEST_CASE("lower_bound and upper_bound: every dtype, both kernels, ties, NaN, -0.0, needles beyond both ends") {
  const Device device(0);
  const Stream stream;
  std::mt19937_64 rng(test::fresh_seed());
  const std::uint64_t wave = static_cast<std::uint64_t>(device.info().sm_count) * 4 * 256 * 4;  // bounds' default grid of tiles
  const std::vector<std::uint64_t> sizes = {1, 2, 33, 4097, 100003};
  Tally tally;
  check_dtype<std::int32_t>(sizes, wave, rng, stream, tally);
  check_dtype<std::uint32_t>(sizes, wave, rng, stream, tally);
  check_dtype<std::int64_t>(sizes, wave, rng, stream, tally);
  check_dtype<float>(sizes, wave, rng, stream, tally);
  check_dtype<double>(sizes, wave, rng, stream, tally);
  MESSAGE(tally.calls << " bounds calls, " << tally.failures.size() << " wrong");
  for (const auto& f : tally.failures) FAIL_CHECK(f);
  CHECK(tally.calls > 1000);
}

TEST_CASE("zero needles launch nothing and write nothing; more than prepared for is refused; no keys is refused") {
  const Device device(0);
  const Stream stream;
  DeviceBuffer d_hay(16), d_out(8);
  d_out.fill_bytes(0xA5, stream);
  const auto* kh = reinterpret_cast<const float*>(d_hay.get());
  auto* out = reinterpret_cast<std::int64_t*>(d_out.get());
  search::lower_bound(engine(), kh, 4, kh, 0, out, stream.get());
  auto h = search::prepare_upper_bound<float>(engine(), 4, 2);
  h(kh, 4, kh, 0, out, stream.get());
  std::uint64_t bits = 0;
  d_out.download(&bits, 8, stream);
  stream.synchronize();
  CHECK(bits == 0xA5A5A5A5A5A5A5A5ull);
  CHECK_THROWS_WITH_AS(h(kh, 4, kh, 3, out, stream.get()), doctest::Contains("prepared for up to 2 needles"), ConfigError);
  CHECK_THROWS_WITH_AS(search::lower_bound(engine(), kh, 0, kh, 1, out, stream.get()), doctest::Contains("in no keys"),
                       ConfigError);
}

TEST_CASE("the shipped configs and named shapes run, verified, and Thrust agrees in the same run") {
  const Runtime runtime(test::runtime_options());
  Device device(0);
  for (const char* name : {"lower_bound.yaml", "upper_bound_sorted.yaml"}) {
    CAPTURE(name);
    const RunSpec spec = load_run_spec(test::source_dir() / "configs" / name, runtime.plugins(), runtime.kernels());
    const RunReport r = run(spec, {runtime}, device);
    CHECK_MESSAGE(r.verification.passed, r.verification.detail);
    REQUIRE(r.baseline.has_value());
    if (test::baselines_built()) CHECK(r.baseline->name.find("(vectorised, CCCL ") != std::string::npos);
    if (test::baselines_built()) CHECK(r.baseline->ms.count > 0);
    if (test::baselines_built()) CHECK_MESSAGE(r.baseline->note.empty(), r.baseline->note);
  }
  // each kernel with each needle order, the table's extremes and the window's fallback (few needles
  // in many keys: windows wider than WINDOW), bounds_window striding over tiles
  const std::vector<std::string> shapes = {
      "kernel: bounds\nparams: {CACHE: 0, ITEMS: 1}\n",     "kernel: bounds\nparams: {CACHE: 12, ITEMS: 8, BLOCK: 512}\n",
      "kernel: bounds_window\nneedles: unsorted\n",         "kernel: bounds_window\nneedles: sorted\nneedle_count: 37\n",
      "kernel: bounds_window\nparams: {BLOCK: 128, ITEMS: 1, WINDOW: 1024}\nneedles: sorted\n",
      "kernel: bounds\nneedles: sorted\n",
      "kernel: bounds_gather\nparams: {CACHE: 0, ITEMS: 1}\n",
      "kernel: bounds_gather\nparams: {CACHE: 12, ITEMS: 8, BLOCK: 256}\nneedles: sorted\n",
      // many tiles a block (more than a wave of tiles)
      "kernel: bounds_window\nparams: {BLOCK: 128, ITEMS: 1}\nneedles: sorted\nneedle_count: 3000017\n",
      // SPLITS 1: sorted (more tiles than the first launch's warps), and unsorted (every tile searches)
      "kernel: bounds_window\nparams: {BLOCK: 128, ITEMS: 1, SPLITS: 1}\nneedles: sorted\nneedle_count: 3000017\n",
      "kernel: bounds_window\nparams: {SPLITS: 1, BLOCKS_PER_SM: 8}\nneedles: unsorted\n",
      // bounds_merge: sorted, with more tiles than one wave of the first launch's groups of 16
      // lanes (sm_count * 2048 / 16 diagonals) at its smallest tile; and unsorted (every answer
      // checked, the wrong ones searched)
      "kernel: bounds_merge\nneedles: sorted\nneedle_count: 3000017\n",
      "kernel: bounds_merge\nparams: {BLOCK: 128, ITEMS: 5}\nneedles: sorted\nneedle_count: " +
          std::to_string(static_cast<std::uint64_t>(device.info().sm_count) * 2048 / 16 * 640) + "\n",
      "kernel: bounds_merge\nneedles: unsorted\n"};
  for (const std::string& shape : shapes)
    for (const char* dtype : {"float64", "int32"}) {
      CAPTURE(shape);
      CAPTURE(dtype);
      const std::string yaml = "family: search\noperation: upper_bound\ndtype: " + std::string(dtype) +
                               "\nsize: 1000003\n" + shape +
                               (shape.find("needle_count") == std::string::npos ? "needle_count: 20011\n" : "") +
                               "data: {generator: uniform, low: -3000, high: 3000, seed: 3}\nrepeats: 3\n";
      const RunReport r = run(parse_run_spec(yaml, "bounds.yaml", runtime.plugins(), runtime.kernels()), {runtime}, device);
      CHECK_MESSAGE(r.verification.passed, r.verification.detail);
      REQUIRE(r.baseline.has_value());
      if (test::baselines_built()) CHECK_MESSAGE(r.baseline->note.empty(), r.baseline->note);
    }
}
