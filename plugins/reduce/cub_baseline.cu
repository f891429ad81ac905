// CUB's DeviceReduce as the library baseline (see cub_baseline.hpp).
//
// Per (dtype, op, abs) one CUB entry point is instantiated:
//   Max / Min          cub::DeviceReduce::Max / Min on the raw pointer; with abs,
//                      cub::DeviceReduce::TransformReduce(cuda::maximum<> / cuda::minimum<>, |x|) seeded with
//                      numeric_limits<V>::lowest() / max(), the same seeds Max / Min use.
//   Sum                cub::DeviceReduce::Sum from T* into an Acc* (CUB accumulates in the output type); with abs,
//                      TransformReduce(cuda::std::plus<>, x -> Acc(|x|), Acc{0}).
//   ArgMax / ArgMin    the CCCL 3 overload writing value and int64 index to separate outputs, on the raw pointer or
//                      on a thrust::transform_iterator yielding |x|.
//   ArgMinMax          ArgMin, then ArgMax, timed together: two passes over the data. CUB has no one-pass
//                      ArgMinMax in the toolkit's CCCL (3.0) nor in the newest on PyPI (3.5).
// The raw pointer is kept wherever CUB takes a transform functor, so that its vectorised loads stay enabled (CUB only
// vectorises when the input iterator is a native pointer).
//
// Sum / Max / Min take num_items as uint32 when n fits (CUB then uses 32-bit offsets, its fast path) and as int64
// otherwise; ArgMax / ArgMin always take int64 (CUB splits the input into int-sized partitions itself).
#include "cub_baseline.hpp"

#include <cub/device/device_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda/std/limits>
#include <cuda_runtime.h>
#include <thrust/iterator/transform_iterator.h>

#include "cub_common.cuh"
#include "device/timing.hpp"

#include <cmath>
#include <cstring>
#include <exception>
#include <type_traits>

namespace gpuk::reduce {
namespace {

// gpuk's value and accumulator types (they mirror kernels_src/include/gpuk/{common,reduce}.cuh),
// CUDA errors and the run's buffers: cub_common.cuh, shared with the segmented baselines.
using namespace cub_common;

// x -> Acc(|x|), for the abs sums.
template <class T, class Acc> struct MagnitudeTo {
  __host__ __device__ Acc operator()(T x) const { return static_cast<Acc>(Magnitude<T>{}(x)); }
};

// ---- one (dtype, op, abs) combination ---------------------------------------------------------------------------

// Calls CUB for one reduction; with d_temp == nullptr it only sets temp_bytes.
template <class T, Op OP, bool ABS, class NumItemsT>
cudaError_t cub_call(void* d_temp, size_t& temp_bytes, const T* in, unsigned char* out, NumItemsT n, cudaStream_t s) {
  using V = ValueOf<T, ABS>;
  if constexpr (OP == Op::sum) {
    using Acc = typename SumAccOf<V>::type;
    if constexpr (ABS) {
      return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, in, reinterpret_cast<Acc*>(out), n,
                                                ::cuda::std::plus<>{}, MagnitudeTo<T, Acc>{}, Acc{0}, s);
    } else {
      return cub::DeviceReduce::Sum(d_temp, temp_bytes, in, reinterpret_cast<Acc*>(out), n, s);
    }
  } else if constexpr (OP == Op::max || OP == Op::min) {
    if constexpr (ABS) {
      if constexpr (OP == Op::max) {
        return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, in, reinterpret_cast<V*>(out), n,
                                                  ::cuda::maximum<>{}, Magnitude<T>{},
                                                  ::cuda::std::numeric_limits<V>::lowest(), s);
      } else {
        return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, in, reinterpret_cast<V*>(out), n,
                                                  ::cuda::minimum<>{}, Magnitude<T>{},
                                                  ::cuda::std::numeric_limits<V>::max(), s);
      }
    } else if constexpr (OP == Op::max) {
      return cub::DeviceReduce::Max(d_temp, temp_bytes, in, reinterpret_cast<V*>(out), n, s);
    } else {
      return cub::DeviceReduce::Min(d_temp, temp_bytes, in, reinterpret_cast<V*>(out), n, s);
    }
  } else if constexpr (OP == Op::argminmax) {  // gpuk's MinMax: argmin's candidate, then argmax's at byte 16
    size_t lo_bytes = temp_bytes, hi_bytes = temp_bytes;
    cudaError_t e = cub_call<T, Op::argmin, ABS>(d_temp, lo_bytes, in, out, n, s);
    if (e == cudaSuccess) e = cub_call<T, Op::argmax, ABS>(d_temp, hi_bytes, in, out ? out + 16 : nullptr, n, s);
    if (d_temp == nullptr) temp_bytes = lo_bytes > hi_bytes ? lo_bytes : hi_bytes;
    return e;
  } else {  // ArgMax / ArgMin: value at offset 0, int64 index at offset 8 (gpuk's Candidate<V>)
    static_assert(std::is_same_v<NumItemsT, std::int64_t>);
    V* value_out = reinterpret_cast<V*>(out);
    ::cuda::std::int64_t* index_out = reinterpret_cast<::cuda::std::int64_t*>(out + 8);
    auto items = [&] {
      if constexpr (ABS) return thrust::make_transform_iterator(in, Magnitude<T>{});
      else return in;
    }();
    if constexpr (OP == Op::argmax) {
      return cub::DeviceReduce::ArgMax(d_temp, temp_bytes, items, value_out, index_out, n, s);
    } else {
      return cub::DeviceReduce::ArgMin(d_temp, temp_bytes, items, value_out, index_out, n, s);
    }
  }
}

// The baseline's own words: with abs, what CUB runs is a TransformReduce.
constexpr const char* cub_name(Op op, bool abs) {
  if (!abs || info(op).index) return info(op).cub;
  switch (op) {
    case Op::max: return "cub::DeviceReduce::TransformReduce(max)";
    case Op::min: return "cub::DeviceReduce::TransformReduce(min)";
    default: return "cub::DeviceReduce::TransformReduce(sum)";
  }
}

template <class T, Op OP, bool ABS, class NumItemsT>
void run_typed(CubRun& run, const T* in, NumItemsT n, int warmup, int repeats, cudaStream_t stream) {
  constexpr const char* kName = cub_name(OP, ABS);
  Resources r(stream);

  size_t temp_bytes = 0;
  check(cub_call<T, OP, ABS>(nullptr, temp_bytes, in, nullptr, n, stream), kName);
  // Never pass a null temp pointer to the real calls: CUB would take it for another size query.
  check(cudaMalloc(&r.d_temp, temp_bytes > 0 ? temp_bytes : 16), "cudaMalloc");
  check(cudaMalloc(&r.d_out, sizeof run.result), "cudaMalloc");
  unsigned char* out = static_cast<unsigned char*>(r.d_out);

  r.enqueued = true;
  // Bytes CUB does not write (the upper half of a Sum's 16 bytes, everything when n == 0) read back as zero.
  check(cudaMemsetAsync(out, 0, sizeof run.result, stream), "cudaMemsetAsync");
  // Timed exactly as gpuk's own variants are (device/timing.hpp), so the speed-up compares like with like.
  const DeviceTiming timing = time_device(
      stream, warmup, repeats, [&] { check(cub_call<T, OP, ABS>(r.d_temp, temp_bytes, in, out, n, stream), kName); },
      nullptr, kName);
  check(cudaMemcpyAsync(run.result, out, sizeof run.result, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  r.enqueued = false;
  run.kernel_ms.assign(timing.ms.begin(), timing.ms.end());
  run.gated = timing.gated;

  if constexpr (OP == Op::max || OP == Op::min) {
    const std::int64_t no_index = -1;  // CUB's Max / Min give no index
    std::memcpy(run.result + 8, &no_index, sizeof no_index);
  } else if constexpr (OP == Op::argmax || OP == Op::argmin || OP == Op::argminmax) {
    if (n == 0) {  // CUB writes nothing for an empty input
      const std::int64_t no_index = -1;
      std::memcpy(run.result + 8, &no_index, sizeof no_index);
      if (OP == Op::argminmax) std::memcpy(run.result + 24, &no_index, sizeof no_index);
    }
  }
}

template <class T, Op OP, bool ABS>
void run_op(CubRun& run, const T* in, std::int64_t n, int warmup, int repeats, cudaStream_t stream) {
  if constexpr (OP == Op::argmax || OP == Op::argmin || OP == Op::argminmax) {
    run_typed<T, OP, ABS>(run, in, n, warmup, repeats, stream);
  } else if (static_cast<std::uint64_t>(n) <= 0xffffffffull) {
    run_typed<T, OP, ABS>(run, in, static_cast<std::uint32_t>(n), warmup, repeats, stream);
  } else {
    run_typed<T, OP, ABS>(run, in, n, warmup, repeats, stream);
  }
}

template <class T, bool ABS>
void run_abs(CubRun& run, Op op, const T* in, std::int64_t n, int warmup, int repeats, cudaStream_t stream) {
  switch (op) {
    case Op::max: return run_op<T, Op::max, ABS>(run, in, n, warmup, repeats, stream);
    case Op::min: return run_op<T, Op::min, ABS>(run, in, n, warmup, repeats, stream);
    case Op::sum: return run_op<T, Op::sum, ABS>(run, in, n, warmup, repeats, stream);
    case Op::argmax: return run_op<T, Op::argmax, ABS>(run, in, n, warmup, repeats, stream);
    case Op::argmin: return run_op<T, Op::argmin, ABS>(run, in, n, warmup, repeats, stream);
    case Op::argminmax: return run_op<T, Op::argminmax, ABS>(run, in, n, warmup, repeats, stream);
  }
  run.error = std::string("unknown reduce op ") + info(op).name;
}

}  // namespace

CubRun run_cub_reduce(DType dtype, Op op, bool abs, std::uint64_t d_in, std::int64_t n, int warmup, int repeats,
                      void* stream) {
  CubRun run;
  try {
    if (n < 0) {
      run.error = "run_cub_reduce: negative element count " + std::to_string(n);
      return run;
    }
    warmup = warmup < 0 ? 0 : warmup;
    repeats = repeats < 0 ? 0 : repeats;
    if (warmup == 0 && repeats == 0) warmup = 1;  // still produce a result

    (void)cudaGetLastError();  // clear a stale (non-sticky) error so it is not blamed on CUB
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    visit_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* in = reinterpret_cast<const T*>(static_cast<std::uintptr_t>(d_in));
      if (abs) run_abs<T, true>(run, op, in, n, warmup, repeats, s);
      else run_abs<T, false>(run, op, in, n, warmup, repeats, s);
    });
  } catch (const CudaFailure& f) {
    run.error = f.message;
  } catch (const std::exception& e) {
    run.error = std::string("run_cub_reduce: ") + e.what();
  } catch (...) {
    run.error = "run_cub_reduce: unknown exception";
  }
  if (!run.error.empty()) {
    run.kernel_ms.clear();
    std::memset(run.result, 0, sizeof run.result);
  }
  return run;
}

}  // namespace gpuk::reduce
