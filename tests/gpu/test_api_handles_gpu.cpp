// The library API's prepared handles as an application uses them, on the GPU: a handle's call
// allocates nothing, loads no module and waits for nothing (counted at the driver); prepared
// segmented and per-channel reductions over every segment count up to their max; calls captured
// in a CUDA graph and replayed on new data; a stream of another context refused with a clear
// error; the typed calls' scratch from the application's allocator; one Engine per GPU where two
// or more are lent (all alive at once, called in turn from one thread and at once from a thread
// each). Every answer is checked against the host. Without a GPU this program prints why and
// exits 77 (skipped).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/search.hpp"
#include "gpuk/sort.hpp"
#include "helpers.hpp"

using namespace gpuk;

namespace {

Engine& engine() {
  static Engine e;
  return e;
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) FAIL(what << ": " << cudaGetErrorString(e));
}

// Device memory of the application's own (cudaMalloc), freed when it goes.
template <class T> struct Array {
  T* ptr = nullptr;
  std::size_t n = 0;
  explicit Array(std::size_t count) : n(count) {
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<std::size_t>(1, n) * sizeof(T)), "cudaMalloc");
  }
  explicit Array(const std::vector<T>& host) : Array(host.size()) { upload(host); }
  ~Array() { cudaFree(ptr); }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  void upload(const std::vector<T>& host) {
    check_cuda(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<T> download(std::size_t count) const {
    std::vector<T> host(count);
    check_cuda(cudaMemcpy(host.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }
  void poison() { check_cuda(cudaMemset(ptr, 0xA5, std::max<std::size_t>(1, n) * sizeof(T)), "poison"); }
};

struct AppStream {
  cudaStream_t s = nullptr;
  AppStream() { check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~AppStream() { cudaStreamDestroy(s); }
  void sync() const { check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize"); }
};

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1000.0f, 1000.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// What gpuk asks of the driver while the counters are on: allocations, module loads and
// function lookups (what preparing does), and host waits. A handle's asynchronous call does none.
std::atomic<int> g_allocations{0}, g_loads{0}, g_waits{0};
DriverApi g_real;
CUresult CUDAAPI count_alloc(CUdeviceptr* p, size_t bytes) { ++g_allocations; return g_real.cuMemAlloc(p, bytes); }
CUresult CUDAAPI count_host_alloc(void** p, size_t bytes, unsigned flags) {
  ++g_allocations;
  return g_real.cuMemHostAlloc(p, bytes, flags);
}
CUresult CUDAAPI count_load(CUmodule* m, const void* image) { ++g_loads; return g_real.cuModuleLoadData(m, image); }
CUresult CUDAAPI count_function(CUfunction* f, CUmodule m, const char* name) {
  ++g_loads;
  return g_real.cuModuleGetFunction(f, m, name);
}
CUresult CUDAAPI count_stream_wait(CUstream s) { ++g_waits; return g_real.cuStreamSynchronize(s); }
CUresult CUDAAPI count_ctx_wait() { ++g_waits; return g_real.cuCtxSynchronize(); }
CUresult CUDAAPI count_event_wait(CUevent e) { ++g_waits; return g_real.cuEventSynchronize(e); }

struct DriverCounts {
  DriverCounts() {
    DriverApi& api = driver_for_tests();
    g_real = api;
    api.cuMemAlloc = count_alloc;
    api.cuMemHostAlloc = count_host_alloc;
    api.cuModuleLoadData = count_load;
    api.cuModuleGetFunction = count_function;
    api.cuStreamSynchronize = count_stream_wait;
    api.cuCtxSynchronize = count_ctx_wait;
    api.cuEventSynchronize = count_event_wait;
    g_allocations = g_loads = g_waits = 0;
  }
  ~DriverCounts() { driver_for_tests() = g_real; }
  DriverCounts(const DriverCounts&) = delete;
  DriverCounts& operator=(const DriverCounts&) = delete;
};

// The first index of the maximum of x[b, e); -1 when empty.
std::int64_t host_argmax(const std::vector<float>& x, std::int64_t b, std::int64_t e) {
  if (e <= b) return -1;
  return std::max_element(x.begin() + b, x.begin() + e) - (x.begin() + b);
}

// Offsets of `segments` segments over n elements: random cuts, some segments empty.
std::vector<std::int64_t> random_offsets(std::int64_t n, std::size_t segments, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> cuts(segments - 1);
  for (auto& c : cuts) c = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1));
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::int64_t> offsets = {0};
  offsets.insert(offsets.end(), cuts.begin(), cuts.end());
  offsets.push_back(n);
  return offsets;
}

}  // namespace

TEST_CASE("a prepared handle's call allocates nothing, loads nothing and waits for nothing (counted at the driver)") {
  const AppStream stream;
  const std::size_t max_n = 1 << 20;
  const auto x = random_floats(max_n, test::fresh_seed());
  const Array<float> d_x(x);
  Array<float> d_sorted(max_n);
  std::vector<std::uint32_t> values(max_n);
  std::iota(values.begin(), values.end(), 0u);
  const Array<std::uint32_t> d_values(values);
  Array<std::uint32_t> d_values_out(max_n);
  Array<reduce::Best<float>> d_best(1024);
  Array<double> d_sum(1024);
  Array<std::int64_t> d_index(1);
  const auto offsets = random_offsets(static_cast<std::int64_t>(max_n), 1000, 7);
  const Array<std::int64_t> d_offsets(offsets);

  // Made (and every size bucket prepared) before the counting starts.
  auto sorter = sort::prepare_pairs<float, std::uint32_t>(engine(), max_n);
  auto amax = reduce::prepare_argmax<float>(engine(), max_n);
  auto sum = reduce::prepare_sum<float>(engine(), max_n);
  auto find = search::prepare_find<float>(engine(), max_n);
  auto seg = reduce::prepare_segmented_argmax<float>(engine(), max_n, 1000);
  auto seg_sum = reduce::prepare_segmented_sum<float>(engine(), max_n, 1000);
  auto channels = reduce::prepare_per_channel_argmax<float>(engine(), max_n / 17, 17);
  MESSAGE("scratch_bytes: sort pairs " << sorter.scratch_bytes() << ", argmax " << amax.scratch_bytes()
          << ", segmented argmax " << seg.scratch_bytes() << ", per-channel argmax " << channels.scratch_bytes());
  int calls = 0;
  {
    const DriverCounts counts;
    for (const std::size_t n : {max_n, std::size_t{1000}, std::size_t{77777}, std::size_t{1}, max_n}) {
      sorter(d_x.ptr, d_sorted.ptr, d_values.ptr, d_values_out.ptr, n, stream.s);
      amax(d_x.ptr, d_best.ptr, n, stream.s);
      sum(d_x.ptr, d_sum.ptr, n, stream.s);
      find(d_x.ptr, d_index.ptr, n, x[n / 2], stream.s);
      calls += 4;
    }
    for (const std::size_t segments : {std::size_t{1000}, std::size_t{10}, std::size_t{999}, std::size_t{1}}) {
      seg(d_x.ptr, d_offsets.ptr, d_best.ptr, max_n, segments, stream.s);
      seg_sum(d_x.ptr, d_offsets.ptr, d_sum.ptr, max_n, segments, stream.s);
      calls += 2;
    }
    for (const std::size_t pixels : {max_n / 17, std::size_t{1}, std::size_t{3000}}) {
      channels(d_x.ptr, d_best.ptr, pixels, stream.s);
      ++calls;
    }
    CHECK(g_allocations == 0);
    CHECK(g_loads == 0);
    CHECK(g_waits == 0);
  }
  MESSAGE(calls << " asynchronous calls of 7 prepared handles: 0 allocations, 0 module loads or function "
                   "lookups, 0 host waits");
  stream.sync();
  // The last calls' answers.
  std::vector<float> want = x;
  std::stable_sort(want.begin(), want.end());
  CHECK(d_sorted.download(max_n) == want);
  const auto b = d_best.download(17);
  for (std::size_t c = 0; c < 17; ++c) {
    std::int64_t best = 0;
    for (std::int64_t p = 1; p < 3000; ++p)
      if (x[p * 17 + c] > x[best * 17 + c]) best = p;
    CAPTURE(c);
    CHECK(b[c].index == best);
  }
  // A prepare, for contrast, is counted: the counters see what they claim to see.
  {
    const DriverCounts counts;
    auto fresh = reduce::prepare_argmin<float>(engine(), 1000);
    CHECK(g_allocations > 0);
    CHECK(g_loads > 0);
  }
}

TEST_CASE("a prepared segmented argmax and sum: every segment count up to the max, n = 0, begin/end, caller's scratch") {
  const AppStream stream;
  const std::int64_t max_n = 3000017;
  const std::size_t max_segments = 1000;
  const auto x = random_floats(static_cast<std::size_t>(max_n), test::fresh_seed());
  const Array<float> d_x(x);
  Array<reduce::Best<float>> d_best(max_segments);
  Array<double> d_sum(max_segments);
  auto h = reduce::prepare_segmented_argmax<float>(engine(), static_cast<std::uint64_t>(max_n), max_segments);
  auto hs = reduce::prepare_segmented_sum<float>(engine(), static_cast<std::uint64_t>(max_n), max_segments,
                                                 Scratch::caller);
  CHECK(hs.held_bytes() == 0);
  Array<unsigned char> pool(hs.scratch_bytes());
  hs.use_scratch(pool.ptr, hs.scratch_bytes(), stream.s);
  // Counts up and down (the done-counters move with the count), long and short segments.
  int round = 0;
  for (const std::size_t segments : {std::size_t{1000}, std::size_t{3}, std::size_t{1000}, std::size_t{517},
                                     std::size_t{1}, std::size_t{999}, std::size_t{1000}}) {
    for (const std::int64_t n : {max_n, std::int64_t{100003}}) {
      CAPTURE(segments);
      CAPTURE(n);
      const auto offsets = random_offsets(n, segments, 100 + round++);
      const Array<std::int64_t> d_offsets(offsets);
      d_best.poison();
      d_sum.poison();
      h(d_x.ptr, d_offsets.ptr, d_best.ptr, static_cast<std::uint64_t>(n), segments, stream.s);
      hs(d_x.ptr, d_offsets.ptr, d_sum.ptr, static_cast<std::uint64_t>(n), segments, stream.s);
      stream.sync();
      const auto got = d_best.download(segments);
      const auto sums = d_sum.download(segments);
      int wrong = 0;
      for (std::size_t s = 0; s < segments; ++s) {
        const std::int64_t want = host_argmax(x, offsets[s], offsets[s + 1]);
        double want_sum = 0, abs_sum = 0;
        for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) want_sum += x[i], abs_sum += std::fabs(x[i]);
        const bool ok = got[s].index == want && (want < 0 || got[s].value == x[offsets[s] + want]) &&
                        std::fabs(sums[s] - want_sum) <= 1e-9 * (abs_sum + 1);
        if (!ok && wrong++ < 3)
          FAIL_CHECK("segment " << s << " [" << offsets[s] << ", " << offsets[s + 1] << "): index " << got[s].index
                                << " want " << want << ", sum " << sums[s] << " want " << want_sum);
      }
      CHECK(wrong == 0);
    }
  }
  // n = 0: its segments are all empty and still answered (index -1, sum 0).
  const std::vector<std::int64_t> empty = {0, 0, 0, 0};
  const Array<std::int64_t> d_empty(empty);
  d_best.poison();
  h(d_x.ptr, d_empty.ptr, d_best.ptr, 0, 3, stream.s);
  stream.sync();
  for (const auto& b : d_best.download(3)) CHECK(b.index == -1);
  // Separate begin and end arrays (overlapping segments).
  const std::vector<std::int64_t> begin = {0, 10, 500000}, end = {max_n, 20, 400000};
  const Array<std::int64_t> d_begin(begin), d_end(end);
  h(d_x.ptr, d_begin.ptr, d_end.ptr, d_best.ptr, static_cast<std::uint64_t>(max_n), 3, stream.s);
  stream.sync();
  const auto got = d_best.download(3);
  for (std::size_t s = 0; s < 3; ++s) CHECK(got[s].index == host_argmax(x, begin[s], end[s]));
  // More segments than prepared for, or more elements: refused before anything is enqueued.
  CHECK_THROWS_WITH_AS(h(d_x.ptr, d_begin.ptr, d_end.ptr, d_best.ptr, 10, 1001, stream.s),
                       "this segmented reduction was prepared for up to 1000 segments; 1001 need a handle prepared "
                       "for them",
                       ConfigError);
  CHECK_THROWS_AS(h(d_x.ptr, d_begin.ptr, d_end.ptr, d_best.ptr, static_cast<std::uint64_t>(max_n) + 1, 3, stream.s),
                  ConfigError);
}

TEST_CASE("a prepared per-channel argmax of a 480x640x17 image, and of fewer pixels") {
  const AppStream stream;
  const std::size_t channels = 17, max_pixels = 480 * 640;
  const auto x = random_floats(max_pixels * channels, test::fresh_seed());
  const Array<float> d_x(x);
  Array<reduce::Best<float>> d_best(channels);
  auto h = reduce::prepare_per_channel_argmax<float>(engine(), max_pixels, channels);
  CHECK(h.channels() == channels);
  CHECK(h.max_pixels() == max_pixels);
  for (const std::size_t pixels : {max_pixels, std::size_t{1}, std::size_t{255}, std::size_t{100000}, max_pixels}) {
    CAPTURE(pixels);
    d_best.poison();
    h(d_x.ptr, d_best.ptr, pixels, stream.s);
    stream.sync();
    const auto got = d_best.download(channels);
    for (std::size_t c = 0; c < channels; ++c) {
      std::size_t best = 0;
      for (std::size_t p = 1; p < pixels; ++p)
        if (x[p * channels + c] > x[best * channels + c]) best = p;
      CAPTURE(c);
      CHECK(got[c].index == static_cast<std::int64_t>(best));
      CHECK(got[c].value == x[best * channels + c]);
    }
  }
  CHECK_THROWS_AS(h(d_x.ptr, d_best.ptr, max_pixels + 1, stream.s), ConfigError);
  // On the host: the handle's answers and the typed call's, waited for.
  const std::size_t pixels = 4321;
  const std::vector<reduce::Best<float>> from_handle = h(d_x.ptr, pixels, stream.s);
  const std::vector<reduce::Best<float>> from_call = reduce::per_channel_argmax(engine(), d_x.ptr, pixels, channels,
                                                                                stream.s);
  REQUIRE(from_handle.size() == channels);
  REQUIRE(from_call.size() == channels);
  for (std::size_t c = 0; c < channels; ++c) {
    std::size_t best = 0;
    for (std::size_t p = 1; p < pixels; ++p)
      if (x[p * channels + c] > x[best * channels + c]) best = p;
    CAPTURE(c);
    CHECK(from_handle[c].index == static_cast<std::int64_t>(best));
    CHECK(from_call[c].index == static_cast<std::int64_t>(best));
    CHECK(from_call[c].value == x[best * channels + c]);
  }
}

TEST_CASE("graph capture: prepared handles' calls and a warmed typed call, captured once and replayed on new data") {
  const AppStream stream;
  const std::size_t n = 300007, segments = 100;
  auto x = random_floats(n, test::fresh_seed());
  Array<float> d_x(x);
  Array<float> d_sorted(n);
  Array<reduce::Best<float>> d_best(1), d_typed(1), d_seg(segments);
  const auto offsets = random_offsets(static_cast<std::int64_t>(n), segments, 3);
  const Array<std::int64_t> d_offsets(offsets);
  auto amax = reduce::prepare_argmax<float>(engine(), n);
  auto sorter = sort::prepare_keys<float>(engine(), n);
  auto seg = reduce::prepare_segmented_argmax<float>(engine(), n, segments);
  reduce::argmin(engine(), d_x.ptr, d_typed.ptr, n, stream.s);  // prepares the typed call's Operation
  stream.sync();

  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  amax(d_x.ptr, d_best.ptr, n, stream.s);
  sorter(d_x.ptr, d_sorted.ptr, n, stream.s);
  seg(d_x.ptr, d_offsets.ptr, d_seg.ptr, n, segments, stream.s);
  reduce::argmin(engine(), d_x.ptr, d_typed.ptr, n, stream.s);
  check_cuda(cudaStreamEndCapture(stream.s, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  for (int replay = 0; replay < 3; ++replay) {
    CAPTURE(replay);
    x = random_floats(n, test::fresh_seed() + replay);
    d_x.upload(x);
    d_best.poison();
    d_sorted.poison();
    d_seg.poison();
    d_typed.poison();
    check_cuda(cudaGraphLaunch(exec, stream.s), "cudaGraphLaunch");
    stream.sync();
    CHECK(d_best.download(1)[0].index == host_argmax(x, 0, static_cast<std::int64_t>(n)));
    CHECK(d_typed.download(1)[0].index == std::min_element(x.begin(), x.end()) - x.begin());
    std::vector<float> want = x;
    std::sort(want.begin(), want.end());
    CHECK(d_sorted.download(n) == want);
    const auto got = d_seg.download(segments);
    int wrong = 0;
    for (std::size_t s = 0; s < segments; ++s) wrong += got[s].index != host_argmax(x, offsets[s], offsets[s + 1]);
    CHECK(wrong == 0);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_CASE("the typed calls' scratch from the application's allocator: once per cached Operation, given back on release") {
  struct Pool {
    std::atomic<int> allocations{0}, frees{0};
    std::atomic<std::int64_t> outstanding{0};
  };
  const auto pool = std::make_shared<Pool>();
  EngineOptions options;
  options.scratch_allocator = ScratchAllocator{
      [pool](std::uint64_t bytes, CUstream) {
        void* p = nullptr;
        if (cudaMalloc(&p, bytes) != cudaSuccess) return CUdeviceptr{0};
        ++pool->allocations;
        pool->outstanding += static_cast<std::int64_t>(bytes);
        return reinterpret_cast<CUdeviceptr>(p);
      },
      [pool](CUdeviceptr p, std::uint64_t bytes) {
        cudaFree(reinterpret_cast<void*>(p));
        ++pool->frees;
        pool->outstanding -= static_cast<std::int64_t>(bytes);
      }};
  Engine e(options);
  (void)e.device_name();  // the GPU opened before the counting
  const AppStream stream;
  const std::size_t n = 500009;
  const auto x = random_floats(n, test::fresh_seed());
  const Array<float> d_x(x);
  Array<float> d_sorted(n);
  Array<reduce::Best<float>> d_best(1);
  {
    const DriverCounts counts;
    reduce::argmax(e, d_x.ptr, d_best.ptr, n, stream.s);
    sort::keys(e, d_x.ptr, d_sorted.ptr, n, stream.s);
    reduce::argmax(e, d_x.ptr, d_best.ptr, n, stream.s);  // cached: nothing asked for
    CHECK(g_allocations == 0);  // gpuk's own cuMemAlloc: none
  }
  CHECK(pool->allocations == 2);
  CHECK(e.cached_operations() == 2);
  CHECK(e.cached_bytes() >= static_cast<std::uint64_t>(pool->outstanding.load()));
  stream.sync();
  CHECK(d_best.download(1)[0].index == host_argmax(x, 0, static_cast<std::int64_t>(n)));
  std::vector<float> want = x;
  std::sort(want.begin(), want.end());
  CHECK(d_sorted.download(n) == want);
  MESSAGE("the allocator gave " << pool->outstanding.load() << " bytes of scratch to 2 cached Operations");
  e.release_cached();
  CHECK(pool->frees == 2);
  CHECK(pool->outstanding == 0);

  // An allocator that gives unaligned memory is refused, with what it gave.
  EngineOptions bad;
  bad.scratch_allocator = ScratchAllocator{[](std::uint64_t, CUstream) { return CUdeviceptr{0x1004}; },
                                           [](CUdeviceptr, std::uint64_t) {}};
  const Engine refused(bad);
  CHECK_THROWS_WITH_AS(reduce::argmax(refused, d_x.ptr, d_best.ptr, n, stream.s),
                       doctest::Contains("the scratch allocator gave memory that is not 256-byte aligned"),
                       ConfigError);
}

TEST_CASE("a stream of a context of cuCtxCreate is refused, before any launch, with what to do instead") {
  // cuCtxCreate and cuCtxDestroy from the driver itself (gpuk's table has no use for them); the
  // program links no libcuda, so that it starts, and skips, where there is none.
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  REQUIRE(cuda != nullptr);
  using Create = CUresult(CUDAAPI*)(CUcontext*, CUctxCreateParams*, unsigned, CUdevice);
  using Destroy = CUresult(CUDAAPI*)(CUcontext);
  const auto create = reinterpret_cast<Create>(dlsym(cuda, "cuCtxCreate_v4"));
  const auto destroy = reinterpret_cast<Destroy>(dlsym(cuda, "cuCtxDestroy_v2"));
  const bool found = create && destroy;
  REQUIRE(found);

  const AppStream primary_stream;  // the runtime's: device 0's primary context
  const std::size_t n = 100003;
  const auto x = random_floats(n, test::fresh_seed());
  const Array<float> d_x(x);
  Array<reduce::Best<float>> d_best(1);
  auto amax = reduce::prepare_argmax<float>(engine(), n);
  // Poisoned now, with the primary context current: the runtime's calls would run in whatever
  // context is current, and the one made below cannot reach this memory.
  d_best.poison();
  CUdevice device = 0;
  REQUIRE(driver().cuDeviceGet(&device, 0) == CUDA_SUCCESS);
  CUctxCreateParams params{};
  CUcontext own = nullptr;
  REQUIRE(create(&own, &params, 0, device) == CUDA_SUCCESS);  // pushed: current on this thread
  CUstream other = nullptr;
  REQUIRE(driver().cuStreamCreate(&other, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  CHECK_THROWS_WITH_AS(amax(d_x.ptr, d_best.ptr, n, other),
                       doctest::Contains("the stream belongs to another CUDA context; gpuk runs in device 0's primary "
                                         "context"),
                       ConfigError);
  // With that context current, a stream of the primary context still works: gpuk makes its own
  // context current (and leaves it so).
  amax(d_x.ptr, d_best.ptr, n, primary_stream.s);
  primary_stream.sync();
  CHECK(d_best.download(1)[0].index == host_argmax(x, 0, static_cast<std::int64_t>(n)));
  CUcontext current = nullptr;
  REQUIRE(driver().cuCtxGetCurrent(&current) == CUDA_SUCCESS);
  CHECK(current != own);
  REQUIRE(driver().cuCtxSetCurrent(own) == CUDA_SUCCESS);
  driver().cuStreamDestroy(other);
  REQUIRE(destroy(own) == CUDA_SUCCESS);
  REQUIRE(driver().cuCtxSetCurrent(current) == CUDA_SUCCESS);
}

namespace {

// One GPU's share of the several-GPUs case: its Engine, the application's stream and arrays on
// that GPU, and a prepared sort.
struct OnGpu {
  int device;
  Engine engine;
  std::vector<float> x;
  std::unique_ptr<AppStream> stream;
  std::unique_ptr<Array<float>> d_x, d_sorted;
  std::unique_ptr<Array<reduce::Best<float>>> d_best;
  std::optional<sort::PreparedKeys<float>> sorter;

  OnGpu(int d, std::size_t n) : device(d), engine(options_for(d)), x(random_floats(n, test::fresh_seed() + d)) {
    check_cuda(cudaSetDevice(d), "cudaSetDevice");  // the application's memory and stream, on GPU d
    stream = std::make_unique<AppStream>();
    d_x = std::make_unique<Array<float>>(x);
    d_sorted = std::make_unique<Array<float>>(n);
    d_best = std::make_unique<Array<reduce::Best<float>>>(1);
    sorter.emplace(sort::prepare_keys<float>(engine, n));
  }
  static EngineOptions options_for(int d) {
    EngineOptions o;
    o.device = d;
    return o;
  }
  void poison() {
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    d_sorted->poison();
    d_best->poison();
  }
  // Waits for this GPU's stream; the sort's and the argmax's answers against the host (as words:
  // empty when right, so that threads can report without doctest).
  std::string wrong() {
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    stream->sync();
    std::vector<float> want = x;
    std::sort(want.begin(), want.end());
    std::string words;
    if (d_sorted->download(x.size()) != want) words += "GPU " + std::to_string(device) + ": the sort differs; ";
    const std::int64_t best = host_argmax(x, 0, static_cast<std::int64_t>(x.size()));
    if (d_best->download(1)[0].index != best) words += "GPU " + std::to_string(device) + ": argmax differs; ";
    return words;
  }
  ~OnGpu() {
    cudaSetDevice(device);
    if (stream) stream->sync();
    sorter.reset();
    d_best.reset();
    d_sorted.reset();
    d_x.reset();
    stream.reset();
  }
};

}  // namespace

TEST_CASE("several GPUs: an Engine each, all alive at once, called in turn from one thread and from a thread each") {
  int gpus = 0;
  check_cuda(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
  if (gpus < 2) {
    MESSAGE("SKIPPED: this case needs two GPUs; this machine has " << gpus);
    return;
  }
  const int count = std::min(gpus, 4);
  const std::size_t n = 1000003;
  std::vector<std::unique_ptr<OnGpu>> on;
  for (int d = 0; d < count; ++d) on.push_back(std::make_unique<OnGpu>(d, n));
  for (int d = 0; d < count; ++d) CHECK(on[d]->engine.device().ordinal == d);

  // One thread, GPU after GPU, with no cudaSetDevice between them: each call makes its own GPU's
  // primary context current (and leaves it so: the runtime's current device follows it).
  for (auto& g : on) g->poison();
  for (auto& g : on) {
    (*g->sorter)(g->d_x->ptr, g->d_sorted->ptr, n, g->stream->s);
    reduce::argmax(g->engine, g->d_x->ptr, g->d_best->ptr, n, g->stream->s);
    int current = -1;
    check_cuda(cudaGetDevice(&current), "cudaGetDevice");
    CHECK(current == g->device);
  }
  for (auto& g : on) {
    const std::string words = g->wrong();
    CHECK_MESSAGE(words.empty(), words);
  }

  // A thread per GPU, at once, each starting with no context current; the host-returning argmax
  // too. New data first, so that nothing passes on the last answers.
  for (auto& g : on) {
    g->x = random_floats(n, test::fresh_seed() + 100 + g->device);
    check_cuda(cudaSetDevice(g->device), "cudaSetDevice");
    g->d_x->upload(g->x);
    g->poison();
  }
  std::vector<std::string> failures(on.size());
  std::vector<std::int64_t> host_answers(on.size(), -2);
  {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < on.size(); ++i)
      threads.emplace_back([&, i] {
        OnGpu& g = *on[i];
        try {
          for (int round = 0; round < 3; ++round) {
            (*g.sorter)(g.d_x->ptr, g.d_sorted->ptr, n, g.stream->s);
            reduce::argmax(g.engine, g.d_x->ptr, g.d_best->ptr, n, g.stream->s);
          }
          host_answers[i] = reduce::argmax(g.engine, g.d_x->ptr, n, g.stream->s).index;
          failures[i] = g.wrong();
        } catch (const std::exception& e) {
          failures[i] = "GPU " + std::to_string(g.device) + ": " + e.what();
        }
      });
    for (auto& t : threads) t.join();
  }
  for (std::size_t i = 0; i < on.size(); ++i) {
    CAPTURE(i);
    CHECK_MESSAGE(failures[i].empty(), failures[i]);
    CHECK(host_answers[i] == host_argmax(on[i]->x, 0, static_cast<std::int64_t>(n)));
  }
  std::string names;
  for (auto& g : on) names += " " + std::to_string(g->device) + " (" + g->engine.device_name() + ")";
  MESSAGE(count << " GPUs, an Engine each:" << names
                << ": a prepared sort and argmax (asynchronous and host-returning) right on every GPU, in turn "
                   "from one thread and at once from a thread each");

  // A GPU that does not exist: one sentence, when the Engine first needs the GPU.
  EngineOptions missing;
  missing.device = gpus;
  const Engine absent(missing);
  CHECK_THROWS_WITH_AS(absent.device_name(), doctest::Contains("does not exist"), NoDeviceError);
  on.clear();
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
}
