// bench_segmented_sort: gpuk's segmented sort (an Operation prepared by the Engine, the default
// kernel file segmented.cu at its defaults) against cub::DeviceSegmentedSort (StableSortKeys,
// StableSortPairs) on the same device keys and offsets in one process, both answers verified
// element by element against the CPU's std::stable_sort of each segment. float32 keys (uint32
// values for pairs), ascending: 2^20 keys in segments of 16, 256 and 4096 and in 4096 power-law
// segments (the plugin's Lomax lengths), and 2^26 keys in 64 segments. Prints the CCCL version
// and one markdown row per case. Built by tools/bench/bench_segmented_sort.sh, never by the
// project's build. Usage: bench_segmented_sort [CASE ...] (CASE: 16, 256, 4096, power, 64)
#include <cub/device/device_segmented_sort.cuh>
#include <cuda/std/__cccl/version.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpuk/gpuk.hpp"

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

namespace {

template <class F> double time_ms(F&& call, cudaStream_t stream, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) call();
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < repeats; ++i) {
    CHECK_CUDA(cudaEventRecord(a, stream));
    call();
    CHECK_CUDA(cudaEventRecord(b, stream));
    CHECK_CUDA(cudaEventSynchronize(b));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The plugin's power-law lengths (plugins/sort/host_segments.hpp's segment_offsets): the same
// Lomax weights from the same seed, so gpuk's configs and this bench sort the same segments.
std::vector<std::int64_t> offsets_for(const std::string& c, std::int64_t n, std::int64_t& segments) {
  std::vector<std::int64_t> off;
  if (c == "power") {
    segments = 4096;
    std::mt19937_64 rng(0x5e6);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<double> cum(segments + 1, 0.0);
    for (std::int64_t i = 0; i < segments; ++i) cum[i + 1] = cum[i] + (std::pow(1.0 - u(rng), -1.0 / 1.2) - 1.0);
    off.assign(segments + 1, 0);
    for (std::int64_t i = 1; i < segments; ++i)
      off[i] = std::max(off[i - 1], std::min(n, static_cast<std::int64_t>(cum[i] / cum[segments] * static_cast<double>(n))));
    off[segments] = n;
    return off;
  }
  segments = c == "64" ? 64 : n / std::stoll(c);
  for (std::int64_t i = 0; i <= segments; ++i) off.push_back(i * n / segments);
  return off;
}

// Total order of float32 bits, NaN-free keys here: the plain comparison is the sort's order.
bool check(const char* who, const std::vector<float>& keys, const std::vector<std::uint32_t>& vals,
           const std::vector<std::int64_t>& off, const std::vector<float>& got, const std::vector<std::uint32_t>* got_v) {
  for (std::size_t s = 0; s + 1 < off.size(); ++s) {
    std::vector<std::uint32_t> idx(off[s + 1] - off[s]);
    std::iota(idx.begin(), idx.end(), 0u);
    const float* k = keys.data() + off[s];
    std::stable_sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) { return k[a] < k[b]; });
    for (std::size_t i = 0; i < idx.size(); ++i) {
      const std::int64_t at = off[s] + static_cast<std::int64_t>(i);
      if (std::memcmp(&got[at], &k[idx[i]], 4) != 0 || (got_v && (*got_v)[at] != vals[off[s] + idx[i]])) {
        std::printf("%s: WRONG at segment %zu element %zu\n", who, s, i);
        return false;
      }
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> cases = {"16", "256", "4096", "power", "64"};
  if (argc > 1) cases.assign(argv + 1, argv + argc);
  std::printf("CUB from CCCL %d.%d.%d (the toolkit's)\n\n", CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
  std::printf("| keys | segments | kind | gpuk ms | CUB ms | gpuk / CUB speed | verified |\n|---|---|---|---|---|---|---|\n");
  gpuk::Engine engine;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  bool all_ok = true;
  for (const std::string& c : cases) {
    const std::int64_t n = c == "64" ? (std::int64_t{1} << 26) : (std::int64_t{1} << 20);
    std::int64_t segments = 0;
    const auto off = offsets_for(c, n, segments);
    std::vector<float> keys(n);
    std::vector<std::uint32_t> vals(n);
    std::mt19937_64 rng(7);
    for (auto& k : keys) k = static_cast<float>(static_cast<std::int64_t>(rng() % 2000001) - 1000000) / 1024.0f;
    for (std::int64_t i = 0; i < n; ++i) vals[i] = static_cast<std::uint32_t>(i * 2654435761u);
    float *d_k, *d_ko;
    std::uint32_t *d_v, *d_vo;
    std::int64_t* d_off;
    CHECK_CUDA(cudaMalloc(&d_k, n * 4));
    CHECK_CUDA(cudaMalloc(&d_ko, n * 4));
    CHECK_CUDA(cudaMalloc(&d_v, n * 4));
    CHECK_CUDA(cudaMalloc(&d_vo, n * 4));
    CHECK_CUDA(cudaMalloc(&d_off, off.size() * 8));
    CHECK_CUDA(cudaMemcpy(d_k, keys.data(), n * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_v, vals.data(), n * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_off, off.data(), off.size() * 8, cudaMemcpyHostToDevice));
    for (const bool pairs : {false, true}) {
      gpuk::OperationSpec spec;
      spec.family = "sort";
      spec.operation = pairs ? "segmented_sort_pairs" : "segmented_sort";
      spec.dtype = gpuk::DType::float32;
      spec.n = static_cast<std::uint64_t>(n);
      spec.options = {{"segments", std::to_string(segments)}};
      if (pairs) spec.options["values"] = "uint32";
      gpuk::Operation op = engine.prepare(spec);
      const gpuk::Scalar count = gpuk::Scalar::of(segments);
      const auto gpuk_call = [&] {
        if (pairs)
          op.launch({d_k, d_ko, d_v, d_vo, d_off, d_off + 1}, n, stream, &count);
        else
          op.launch({d_k, d_ko, d_off, d_off + 1}, n, stream, &count);
      };
      std::vector<float> got(n);
      std::vector<std::uint32_t> got_v(n);
      const auto verify = [&](const char* who) {
        CHECK_CUDA(cudaMemset(d_ko, 0xA5, n * 4));
        CHECK_CUDA(cudaMemset(d_vo, 0xA5, n * 4));
        return who;
      };
      verify("gpuk");
      gpuk_call();
      CHECK_CUDA(cudaStreamSynchronize(stream));
      CHECK_CUDA(cudaMemcpy(got.data(), d_ko, n * 4, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(got_v.data(), d_vo, n * 4, cudaMemcpyDeviceToHost));
      const bool gpuk_ok = check("gpuk", keys, vals, off, got, pairs ? &got_v : nullptr);
      const double gpuk_ms = time_ms(gpuk_call, stream, 5, 50);
      std::size_t temp_bytes = 0;
      void* temp = nullptr;
      const auto cub_call = [&] {
        if (pairs)
          CHECK_CUDA(cub::DeviceSegmentedSort::StableSortPairs(temp, temp_bytes, d_k, d_ko, d_v, d_vo, n, segments, d_off,
                                                               d_off + 1, stream));
        else
          CHECK_CUDA(cub::DeviceSegmentedSort::StableSortKeys(temp, temp_bytes, d_k, d_ko, n, segments, d_off, d_off + 1,
                                                              stream));
      };
      cub_call();
      CHECK_CUDA(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 16)));
      verify("CUB");
      cub_call();
      CHECK_CUDA(cudaStreamSynchronize(stream));
      CHECK_CUDA(cudaMemcpy(got.data(), d_ko, n * 4, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(got_v.data(), d_vo, n * 4, cudaMemcpyDeviceToHost));
      const bool cub_ok = check("CUB", keys, vals, off, got, pairs ? &got_v : nullptr);
      const double cub_ms = time_ms(cub_call, stream, 5, 50);
      CHECK_CUDA(cudaFree(temp));
      all_ok = all_ok && gpuk_ok && cub_ok;
      std::printf("| 2^%d | %s%lld | %s | %.4f | %.4f | %.2fx | %s |\n", n == (1 << 20) ? 20 : 26,
                  c == "power" ? "power law, " : "", static_cast<long long>(segments), pairs ? "pairs" : "keys", gpuk_ms,
                  cub_ms, cub_ms / gpuk_ms, gpuk_ok && cub_ok ? "yes" : "NO");
      std::fflush(stdout);
    }
    cudaFree(d_k), cudaFree(d_ko), cudaFree(d_v), cudaFree(d_vo), cudaFree(d_off);
  }
  return all_ok ? 0 : 3;
}
