// What the reduce family's CUB baselines share (cub_baseline.cu's DeviceReduce, cub_segmented.cuh's
// DeviceSegmentedReduce): the value an |x| reduction compares, the type a sum accumulates in, CUDA
// errors as exceptions, and the device buffers of one run.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

namespace gpuk::reduce::cub_common {

// |x| of a signed integer as its unsigned type (|INT_MIN| fits); floats and unsigned unchanged.
template <class T> struct MagnitudeOf { using type = T; };
template <> struct MagnitudeOf<std::int32_t> { using type = std::uint32_t; };
template <> struct MagnitudeOf<std::int64_t> { using type = std::uint64_t; };

// What a sum accumulates in (gpuk's Sum<T>): double for float, 64 bits for 32-bit integers.
template <class V> struct SumAccOf { using type = V; };
template <> struct SumAccOf<float> { using type = double; };
template <> struct SumAccOf<std::int32_t> { using type = std::int64_t; };
template <> struct SumAccOf<std::uint32_t> { using type = std::uint64_t; };

template <class T, bool ABS> using ValueOf = std::conditional_t<ABS, typename MagnitudeOf<T>::type, T>;

template <class T> struct Magnitude {
  using result_type = typename MagnitudeOf<T>::type;
  __host__ __device__ result_type operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return ::fabsf(x);
    } else if constexpr (std::is_same_v<T, double>) {
      return ::fabs(x);
    } else if constexpr (std::is_signed_v<T>) {
      return x < 0 ? result_type(0) - static_cast<result_type>(x) : static_cast<result_type>(x);
    } else {
      return x;
    }
  }
};

inline std::string cuda_message(const char* what, cudaError_t e) {
  std::string s = what;
  s += " failed: ";
  s += cudaGetErrorName(e);
  s += ": ";
  s += cudaGetErrorString(e);
  return s;
}

struct CudaFailure {
  std::string message;
};

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaFailure{cuda_message(what, e)};
}

// Owns the device buffers of one run. Its destructor waits for the stream (work may still be
// queued when an error cut the run short) before freeing; errors on that path are ignored, the
// first one is already reported.
struct Resources {
  cudaStream_t stream = nullptr;
  bool enqueued = false;
  void* d_out = nullptr;
  void* d_temp = nullptr;

  explicit Resources(cudaStream_t s) : stream(s) {}
  Resources(const Resources&) = delete;
  Resources& operator=(const Resources&) = delete;
  ~Resources() {
    if (enqueued) (void)cudaStreamSynchronize(stream);
    if (d_temp) (void)cudaFree(d_temp);
    if (d_out) (void)cudaFree(d_out);
  }
};

}  // namespace gpuk::reduce::cub_common
