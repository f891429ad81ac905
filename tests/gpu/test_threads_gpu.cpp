// One process, 8 threads, one GPU: each thread compiles and runs its own variants (reduce, search,
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

#include "gpuk/config.hpp"
#include "gpuk/runner.hpp"
#include "helpers.hpp"

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
std::vector<Outcome> run_in_threads(const PluginRegistry& plugins, const KernelLibrary& kernels,
                                    const CompileCache& cache) {
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
          const RunSpec spec = parse_run_spec(kConfigs[c] + kData, "thread.yaml", plugins, kernels);
          const RunReport r = run(spec, {plugins, kernels, &cache}, device);
          o.passed = r.verified && r.verification.passed && (!r.baseline || r.baseline->note.empty());
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

}  // namespace

TEST_CASE("8 threads compile and run different variants at once on one GPU; every answer verifies") {
  const test::TempDir dir;
  const CompileCache cache(dir.path() / "cache");  // empty: the threads' compiles race
  REQUIRE(cache.enabled());
  const PluginRegistry plugins{{test::plugin_dir()}};
  const KernelLibrary kernels{{test::kernels_dir()}};
  for (const bool warm : {false, true}) {
    CAPTURE(warm);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<Outcome> outcomes = run_in_threads(plugins, kernels, cache);
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
    MESSAGE((warm ? "from the cache: " : "into an empty cache: ") << outcomes.size() << " runs in 8 threads, "
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
