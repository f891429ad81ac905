// One process, 8 threads, one GPU, two ways: through the library API (what a multi-threaded
// application calls: each thread prepares named variants on an Engine of its own over one compile
// cache and runs them on its own stream), and through core's run() (below).
//
// run(): each thread compiles and runs its own variants (reduce, search,
// sort; two share each variant with another thread, so that the same cache entry is compiled and
// stored twice at once), each answer checked against the CPU reference, first into an empty
// compile cache and then from it. Each thread holds its own Device (the primary context made
// current on that thread), as a library user's thread would.
//
// It goes through core's own run(), which compiles side by side and measures one thread at a time
// (runner.hpp); tests/gpu/test_api_gpu.cpp has 8 threads calling the library API at once, each on
// its own stream.
// Without a GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include <cstring>
#include <numeric>
#include <random>

#include "config/config.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/search.hpp"
#include "gpuk/sort.hpp"
#include "helpers.hpp"
#include "run/runner.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

const char* kData = "data: {generator: uniform, low: 0, high: 100000, seed: 7}\n"
                    "warmup: 2\nrepeats: 5\ncpu_repeats: 1\n";

// 8 different variants of the three families; thread t runs variants t and (t + 1) % 8, so that
// every variant is compiled and run by two threads at once.
const std::vector<std::string> kConfigs = {
    "family: reduce\noperation: argmax\nabs: true\nkernel: onepass\nparams: {BLOCK: 256, UNROLL: 2}\n"
    "dtype: float32\nsize: 1000003\nbaseline: true\n",
    "family: reduce\noperation: sum\nkernel: block_partials\ndtype: int64\nsize: 500001\nbaseline: false\n",
    "family: reduce\noperation: min\nkernel: warp_shuffle\ndtype: float64\nsize: 300007\nbaseline: true\n",
    "family: search\noperation: find\nkernel: fast\ndtype: int32\nvalue_at: random\nsize: 1000003\nbaseline: true\n",
    "family: search\noperation: count\nkernel: coalesced_unrolled\nparams: {K: 4}\ndtype: float32\n"
    "value_at: middle\nsize: 200003\nbaseline: false\n",
    "family: sort\noperation: sort\nkernel: radix\ndtype: uint32\nsize: 200003\nbaseline: true\n",
    "family: sort\noperation: argsort\nkernel: radix\ndtype: int64\nsize: 50001\nbaseline: false\n",
    "family: sort\noperation: sort_pairs\nkernel: rank_bucket\nparams: {ITEMS: 4}\ndtype: float32\n"
    "order: descending\nsize: 4096\nbaseline: true\n",
};

struct Outcome {
  std::string config;
  bool passed = false;
  bool from_cache = false;
  std::string detail;  // the verification's words, or the error
};

// Every thread runs its variants once; returns every outcome.
std::vector<Outcome> run_in_threads(const Runtime& runtime) {
  constexpr int kThreads = 8;
  std::mutex mutex;
  std::vector<Outcome> outcomes;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (const std::size_t c : {static_cast<std::size_t>(t), static_cast<std::size_t>((t + 1) % kThreads)}) {
        Outcome o;
        o.config = kConfigs[c];
        try {
          Device device(0);
          const RunSpec spec = parse_run_spec(kConfigs[c] + kData, "thread.yaml", runtime.plugins(), runtime.kernels());
          const RunReport r = run(spec, {runtime}, device);
          o.passed = r.verified && r.verification.passed && (!r.baseline || r.baseline->note.empty() || !test::baselines_built());
          o.from_cache = r.from_cache;
          o.detail = r.verification.detail + (r.baseline ? " " + r.baseline->note : "");
        } catch (const std::exception& e) {
          o.detail = e.what();
        }
        const std::lock_guard lock(mutex);
        outcomes.push_back(std::move(o));
      }
    });
  for (auto& t : threads) t.join();
  return outcomes;
}


// --- Through the library API ----------------------------------------------------------------

template <class T> DeviceBuffer upload_of(const std::vector<T>& host, const Stream& stream) {
  DeviceBuffer d(std::max<std::size_t>(1, host.size() * sizeof(T)));
  d.upload(host.data(), host.size() * sizeof(T), stream);
  return d;
}

OperationSpec named(const std::string& family, const std::string& op, DType dtype, std::uint64_t n,
                    const std::string& kernel, std::map<std::string, std::int64_t> params,
                    std::map<std::string, std::string> options = {}) {
  OperationSpec s;
  s.family = family;
  s.operation = op;
  s.dtype = dtype;
  s.n = n;
  s.kernel = kernel;
  s.params = std::move(params);
  s.options = std::move(options);
  return s;
}

// Variant `c` of 8 (reduce and search variants named, sorts by the lookup) on `engine`, checked
// against the host; what went wrong, or "".
std::string api_variant(Engine& engine, std::size_t c, std::uint64_t seed) {
  const Stream stream;
  std::mt19937_64 rng(seed + c);
  const auto read_best = [](const std::vector<std::byte>& bytes, auto& best) { std::memcpy(&best, bytes.data(), sizeof best); };
  switch (c) {
    case 0: case 5: {  // argmax of |x| (onepass 256 x 2), max of int32 (onepass 512 x 4)
      const std::uint64_t n = c == 0 ? 1000003 : 77777;
      if (c == 0) {
        std::vector<float> x(n);
        for (auto& v : x) v = std::uniform_real_distribution<float>(-1000, 1000)(rng);
        std::size_t best = 0;
        for (std::size_t i = 1; i < n; ++i) if (std::fabs(x[i]) > std::fabs(x[best])) best = i;
        Operation op = engine.prepare(named("reduce", "argmax", DType::float32, n, "onepass", {{"BLOCK", 256}, {"UNROLL", 2}}, {{"abs", "true"}}));
        const DeviceBuffer d = upload_of(x, stream);
        const CUdeviceptr arrays[] = {d.get(), 0};
        reduce::Best<float> got{};
        read_best(op.launch_and_read(arrays, n, stream.get()), got);
        return got.index == static_cast<std::int64_t>(best) ? "" : "argmax |x|: index " + std::to_string(got.index) + ", expected " + std::to_string(best);
      }
      std::vector<std::int32_t> x(n);
      for (auto& v : x) v = static_cast<std::int32_t>(rng());
      const std::int32_t want = *std::max_element(x.begin(), x.end());
      Operation op = engine.prepare(named("reduce", "max", DType::int32, n, "onepass", {{"BLOCK", 512}, {"UNROLL", 4}}));
      const DeviceBuffer d = upload_of(x, stream);
      const CUdeviceptr arrays[] = {d.get(), 0};
      reduce::Best<std::int32_t> got{};
      read_best(op.launch_and_read(arrays, n, stream.get()), got);
      return got.value == want ? "" : "max int32: " + std::to_string(got.value) + ", expected " + std::to_string(want);
    }
    case 1: {  // sum of int64 (block_partials)
      const std::uint64_t n = 500001;
      std::vector<std::int64_t> x(n);
      for (auto& v : x) v = static_cast<std::int64_t>(rng() % 2000001) - 1000000;
      const std::int64_t want = std::accumulate(x.begin(), x.end(), std::int64_t{0});
      Operation op = engine.prepare(named("reduce", "sum", DType::int64, n, "block_partials", {}));
      const DeviceBuffer d = upload_of(x, stream);
      const CUdeviceptr arrays[] = {d.get(), 0};
      std::int64_t got = 0;
      read_best(op.launch_and_read(arrays, n, stream.get()), got);
      return got == want ? "" : "sum int64: " + std::to_string(got) + ", expected " + std::to_string(want);
    }
    case 2: {  // min of float64 (warp_shuffle)
      const std::uint64_t n = 300007;
      std::vector<double> x(n);
      for (auto& v : x) v = std::uniform_real_distribution<double>(-1, 1)(rng);
      const double want = *std::min_element(x.begin(), x.end());
      Operation op = engine.prepare(named("reduce", "min", DType::float64, n, "warp_shuffle", {}));
      const DeviceBuffer d = upload_of(x, stream);
      const CUdeviceptr arrays[] = {d.get(), 0};
      reduce::Best<double> got{};
      read_best(op.launch_and_read(arrays, n, stream.get()), got);
      return got.value == want ? "" : "min float64: wrong value";
    }
    case 3: case 4: {  // find in int32 (fast), count in float32 (coalesced_unrolled K=4)
      const std::uint64_t n = c == 3 ? 1000003 : 200003;
      const bool find = c == 3;
      std::vector<std::int32_t> xi(find ? n : 0);
      std::vector<float> xf(find ? 0 : n);
      for (auto& v : xi) v = static_cast<std::int32_t>(rng() % 1000000);
      for (auto& v : xf) v = static_cast<float>(rng() % 1000);
      Operation op = find ? engine.prepare(named("search", "find", DType::int32, n, "fast", {}))
                          : engine.prepare(named("search", "count", DType::float32, n, "coalesced_unrolled", {{"K", 4}}));
      const DeviceBuffer d = find ? upload_of(xi, stream) : upload_of(xf, stream);
      const CUdeviceptr arrays[] = {d.get(), 0};
      std::int64_t want = 0;
      Scalar value;
      if (find) {
        const std::int32_t v = xi[rng() % n];
        want = std::find(xi.begin(), xi.end(), v) - xi.begin();
        value = Scalar::of(v);
      } else {
        const float v = xf[rng() % n];
        want = std::count(xf.begin(), xf.end(), v);
        value = Scalar::of(v);
      }
      std::int64_t got = -2;
      read_best(op.launch_and_read(arrays, n, stream.get(), &value), got);
      return got == want ? "" : std::string(find ? "find" : "count") + ": " + std::to_string(got) + ", expected " + std::to_string(want);
    }
    case 6: {  // sort of uint32 keys (the lookup's variant)
      const std::uint64_t n = 200003;
      std::vector<std::uint32_t> keys(n);
      for (auto& k : keys) k = static_cast<std::uint32_t>(rng());
      const DeviceBuffer d_in = upload_of(keys, stream), d_out(n * 4);
      sort::keys(engine, reinterpret_cast<const std::uint32_t*>(d_in.get()), reinterpret_cast<std::uint32_t*>(d_out.get()), n, stream.get());
      std::vector<std::uint32_t> got(n);
      d_out.download(got.data(), n * 4, stream);
      stream.synchronize();
      std::sort(keys.begin(), keys.end());
      return got == keys ? "" : "sort uint32: not the sorted keys";
    }
    default: {  // 4,096 float32 pairs, descending (the lookup's variant): stable
      const std::uint64_t n = 4096;
      std::vector<float> keys(n);
      std::vector<std::uint32_t> values(n);
      for (std::size_t i = 0; i < n; ++i) keys[i] = static_cast<float>(rng() % 100), values[i] = static_cast<std::uint32_t>(i);
      const DeviceBuffer d_k = upload_of(keys, stream), d_v = upload_of(values, stream), d_ko(n * 4), d_vo(n * 4);
      sort::pairs(engine, reinterpret_cast<const float*>(d_k.get()), reinterpret_cast<float*>(d_ko.get()),
                  reinterpret_cast<const std::uint32_t*>(d_v.get()), reinterpret_cast<std::uint32_t*>(d_vo.get()), n,
                  stream.get(), sort::Order::descending);
      std::vector<std::uint32_t> got(n), order(n);
      d_vo.download(got.data(), n * 4, stream);
      stream.synchronize();
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(), [&](auto i, auto j) { return keys[i] > keys[j]; });
      return got == order ? "" : "sort_pairs float32 descending: not the stable order";
    }
  }
}

}  // namespace

TEST_CASE("8 threads prepare and run variants through the library API at once, each on its own stream, into an empty "
          "compile cache and then from it; every answer is right") {
  const test::TempDir dir;
  const std::uint64_t seed = test::fresh_seed();
  for (const bool warm : {false, true}) {
    CAPTURE(warm);
    EngineOptions options;
    options.cache_dir = dir.path() / "cache";  // empty at first: the threads' compiles race
    Engine engine(options);
    std::mutex mutex;
    std::vector<std::string> failures;
    std::vector<std::thread> threads;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        const Device device(0);  // the primary context, current on this thread
        for (const std::size_t c : {t, (t + 1) % 8}) {
          std::string failure;
          try {
            failure = api_variant(engine, c, seed);
          } catch (const std::exception& e) {
            failure = e.what();
          }
          if (failure.empty()) continue;
          const std::lock_guard lock(mutex);
          failures.push_back("thread " + std::to_string(t) + ", variant " + std::to_string(c) + ": " + failure);
        }
      });
    for (auto& t : threads) t.join();
    for (const auto& f : failures) FAIL_CHECK(f);
    MESSAGE(std::string(warm ? "from the cache: " : "into an empty cache: ") << "16 calls in 8 threads, "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s");
  }
  int entries = 0;
  for (const auto& f : fs::directory_iterator(dir.path() / "cache")) {
    if (f.is_directory()) continue;
    CHECK(f.path().extension() == ".cubin");  // no temporary file left behind
    ++entries;
  }
  CHECK(entries >= 6);
}

TEST_CASE("8 threads compile and run different variants at once on one GPU; every answer verifies") {
  const test::TempDir dir;
  RuntimeOptions options = test::runtime_options();
  options.cache_dir = dir.path() / "cache";  // empty: the threads' compiles race
  const Runtime runtime(options);
  const CompileCache& cache = runtime.cache();
  REQUIRE(cache.enabled());
  for (const bool warm : {false, true}) {
    CAPTURE(warm);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<Outcome> outcomes = run_in_threads(runtime);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(outcomes.size() == 16);
    int cached = 0;
    for (const Outcome& o : outcomes) {
      CAPTURE(o.config);
      CAPTURE(o.detail);
      CHECK(o.passed);
      cached += o.from_cache;
    }
    // Warm, every variant comes from the cache; cold, each was compiled at least once.
    if (warm) CHECK(cached == 16);
    else CHECK(cached < 16);
    MESSAGE(std::string(warm ? "from the cache: " : "into an empty cache: ") << outcomes.size() << " runs in 8 threads, "
                                                                   << cached << " from the cache, " << seconds << " s");
  }
  // Every entry the threads stored is whole.
  int entries = 0;
  for (const auto& f : fs::directory_iterator(dir.path() / "cache")) {
    CHECK(f.path().extension() == ".cubin");  // no temporary file left behind
    if (f.path().extension() != ".cubin") continue;
    ++entries;
    CHECK(cache.load(f.path().stem().string()).has_value());
  }
  CHECK(entries >= 8);
}
