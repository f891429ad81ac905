// The body shared by cub_baseline_<dtype>.cu: CUB's DeviceRadixSort for one key type, keys only
// or with uint32 / uint64 values, ascending or descending, timed like gpuk's kernels
// (gpuk::time_device: warm-up, then repeats behind a stream gate between CUDA events).
#pragma once
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "cub_baseline.hpp"
#include "device/timing.hpp"

namespace gpuk::sort::detail {

struct CudaFailure {
  std::string message;
};

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaFailure{std::string(what) + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e)};
}

// Owns the buffers and events of one run; waits for the stream before freeing.
struct Resources {
  cudaStream_t stream = nullptr;
  bool enqueued = false;
  void* d_temp = nullptr;
  void* d_keys_out = nullptr;
  void* d_values_out = nullptr;
  explicit Resources(cudaStream_t s) : stream(s) {}
  Resources(const Resources&) = delete;
  Resources& operator=(const Resources&) = delete;
  ~Resources() {
    if (enqueued) (void)cudaStreamSynchronize(stream);
    if (d_temp) (void)cudaFree(d_temp);
    if (d_keys_out) (void)cudaFree(d_keys_out);
    if (d_values_out) (void)cudaFree(d_values_out);
  }
};

template <class K, class V, bool DESC>
cudaError_t cub_call(void* d_temp, size_t& bytes, const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                     int n, int begin_bit, int end_bit, cudaStream_t s) {
  if constexpr (std::is_same_v<V, void>) {
    if constexpr (DESC) return cub::DeviceRadixSort::SortKeysDescending(d_temp, bytes, keys_in, keys_out, n, begin_bit, end_bit, s);
    else return cub::DeviceRadixSort::SortKeys(d_temp, bytes, keys_in, keys_out, n, begin_bit, end_bit, s);
  } else {
    if constexpr (DESC)
      return cub::DeviceRadixSort::SortPairsDescending(d_temp, bytes, keys_in, keys_out, values_in, values_out, n, begin_bit,
                                                       end_bit, s);
    else
      return cub::DeviceRadixSort::SortPairs(d_temp, bytes, keys_in, keys_out, values_in, values_out, n, begin_bit,
                                             end_bit, s);
  }
}

template <class K, class V, bool DESC>
void run_typed(CubSortRun& run, const K* keys_in, const void* values_in_raw, int n, int begin_bit, int end_bit,
               int warmup, int repeats, cudaStream_t stream, void* keys_host, void* values_host) {
  using VS = std::conditional_t<std::is_same_v<V, void>, unsigned char, V>;  // a sizeable stand-in
  const V* values_in = static_cast<const V*>(values_in_raw);
  Resources r(stream);
  check(cudaMalloc(&r.d_keys_out, sizeof(K) * size_t(n)), "cudaMalloc");
  if constexpr (!std::is_same_v<V, void>) check(cudaMalloc(&r.d_values_out, sizeof(VS) * size_t(n)), "cudaMalloc");
  K* keys_out = static_cast<K*>(r.d_keys_out);
  V* values_out = static_cast<V*>(r.d_values_out);
  size_t bytes = 0;
  check(cub_call<K, V, DESC>(nullptr, bytes, keys_in, keys_out, values_in, values_out, n, begin_bit, end_bit, stream), run.name.c_str());
  check(cudaMalloc(&r.d_temp, bytes > 0 ? bytes : 16), "cudaMalloc");
  r.enqueued = true;
  // Timed exactly as gpuk's own variants are (device/timing.hpp: repeats queued behind a stream
  // gate, so the events measure device time), so the speed-up compares like with like.
  const DeviceTiming timing = time_device(
      stream, warmup, repeats,
      [&] {
        check(cub_call<K, V, DESC>(r.d_temp, bytes, keys_in, keys_out, values_in, values_out, n, begin_bit, end_bit, stream),
              run.name.c_str());
      },
      nullptr, run.name);
  check(cudaMemcpyAsync(keys_host, keys_out, sizeof(K) * size_t(n), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  if constexpr (!std::is_same_v<V, void>)
    check(cudaMemcpyAsync(values_host, values_out, sizeof(VS) * size_t(n), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  r.enqueued = false;
  run.kernel_ms.assign(timing.ms.begin(), timing.ms.end());
  run.gated = timing.gated;
}

template <class K>
CubSortRun run_for_key(CubValues values, bool descending, int begin_bit, int end_bit, const K* keys_in,
                       const void* values_in, int n, int warmup, int repeats, void* stream, void* keys_out,
                       void* values_out) {
  CubSortRun run;
  run.name = std::string("cub::DeviceRadixSort::") + (values == CubValues::none ? "SortKeys" : "SortPairs") +
             (descending ? "Descending" : "");
  try {
    (void)cudaGetLastError();
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (warmup == 0 && repeats == 0) warmup = 1;
    switch (values) {
      case CubValues::none:
        if (descending) run_typed<K, void, true>(run, keys_in, values_in, n, begin_bit, end_bit, warmup, repeats, s, keys_out, values_out);
        else run_typed<K, void, false>(run, keys_in, values_in, n, begin_bit, end_bit, warmup, repeats, s, keys_out, values_out);
        break;
      case CubValues::uint32:
        if (descending) run_typed<K, std::uint32_t, true>(run, keys_in, values_in, n, begin_bit, end_bit, warmup, repeats, s, keys_out, values_out);
        else run_typed<K, std::uint32_t, false>(run, keys_in, values_in, n, begin_bit, end_bit, warmup, repeats, s, keys_out, values_out);
        break;
      case CubValues::uint64:
        if (descending) run_typed<K, std::uint64_t, true>(run, keys_in, values_in, n, begin_bit, end_bit, warmup, repeats, s, keys_out, values_out);
        else run_typed<K, std::uint64_t, false>(run, keys_in, values_in, n, begin_bit, end_bit, warmup, repeats, s, keys_out, values_out);
        break;
    }
  } catch (const CudaFailure& f) {
    run.error = f.message;
  } catch (const std::exception& e) {
    run.error = e.what();
  }
  if (!run.error.empty()) run.kernel_ms.clear();
  return run;
}

}  // namespace gpuk::sort::detail

#define GPUK_CUB_SORT_DEFINE(T, NAME)                                                                          \
  namespace gpuk::sort {                                                                                       \
  CubSortRun run_cub_sort_##NAME(CubValues values, bool descending, int begin_bit, int end_bit, const T* keys_in,  \
                                 const void* values_in, int n,                                                 \
                                 int warmup, int repeats, void* stream, void* keys_out, void* values_out) {    \
    return detail::run_for_key<T>(values, descending, begin_bit, end_bit, keys_in, values_in, n, warmup, repeats,  \
                                  stream, keys_out,                                                             \
                                  values_out);                                                                 \
  }                                                                                                            \
  }
