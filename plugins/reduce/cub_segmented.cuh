// cub::DeviceSegmentedReduce for the segmented baselines (cub_baseline_segmented.cu,
// cub_baseline_channels.cu; see cub_baseline.hpp). Compiled by nvcc only.
//
// Max / Min / ArgMax / ArgMin on a raw pointer (CUB vectorises aligned native pointers), Sum from
// T* into the 64-bit accumulator gpuk uses (CUB accumulates in the output's type); with abs or a
// strided view, Reduce over a thrust::transform_iterator seeded as Max / Min / Sum seed
// (lowest(), max(), 0), and ArgMax / ArgMin over the same iterator. ArgMax / ArgMin write
// cub::KeyValuePair<int, V> (the index relative to the segment); the answers are rewritten in
// gpuk's layout on the host, after the timing.
#pragma once
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda/std/limits>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <type_traits>

#include "cub_baseline.hpp"
#include "cub_common.cuh"
#include "device/timing.hpp"

namespace gpuk::reduce::cub_segmented {

using namespace cub_common;

// x or |x| (in the magnitude type) of element k of the view.
template <class T, bool ABS> struct ValueAt {
  using V = ValueOf<T, ABS>;
  __host__ __device__ V operator()(T x) const {
    if constexpr (ABS) return Magnitude<T>{}(x);
    else return x;
  }
};
template <class T, bool ABS, class To> struct ValueAs {
  __host__ __device__ To operator()(T x) const { return static_cast<To>(ValueAt<T, ABS>{}(x)); }
};
// Element k of the channel-major view of interleaved data.
template <class T> struct Strided {
  const T* in;
  std::int64_t pixels, channels;
  __host__ __device__ T operator()(std::int64_t k) const { return in[(k % pixels) * channels + k / pixels]; }
};
struct Times {
  std::int64_t by;
  __host__ __device__ std::int64_t operator()(std::int64_t k) const { return k * by; }
};


// One CUB call over `items` (an iterator of T), segments given by begin/end iterators; with
// d_temp == nullptr only the size query.
template <class T, Op OP, bool ABS, class In, class B, class E>
cudaError_t cub_call(void* d_temp, size_t& bytes, In items, void* out, std::int64_t segments, B begin, E end,
                     cudaStream_t s) {
  using V = ValueOf<T, ABS>;
  if constexpr (OP == Op::sum) {
    using Acc = typename SumAccOf<V>::type;
    auto values = thrust::make_transform_iterator(items, ValueAs<T, ABS, Acc>{});
    if constexpr (!ABS && std::is_pointer_v<In>)
      return cub::DeviceSegmentedReduce::Sum(d_temp, bytes, items, static_cast<Acc*>(out), segments, begin, end, s);
    else
      return cub::DeviceSegmentedReduce::Reduce(d_temp, bytes, values, static_cast<Acc*>(out), segments, begin, end,
                                                ::cuda::std::plus<>{}, Acc{0}, s);
  } else if constexpr (OP == Op::max || OP == Op::min) {
    if constexpr (!ABS && std::is_pointer_v<In>) {
      if constexpr (OP == Op::max)
        return cub::DeviceSegmentedReduce::Max(d_temp, bytes, items, static_cast<V*>(out), segments, begin, end, s);
      else
        return cub::DeviceSegmentedReduce::Min(d_temp, bytes, items, static_cast<V*>(out), segments, begin, end, s);
    } else {
      auto values = thrust::make_transform_iterator(items, ValueAt<T, ABS>{});
      if constexpr (OP == Op::max)
        return cub::DeviceSegmentedReduce::Reduce(d_temp, bytes, values, static_cast<V*>(out), segments, begin, end,
                                                  ::cuda::maximum<>{}, ::cuda::std::numeric_limits<V>::lowest(), s);
      else
        return cub::DeviceSegmentedReduce::Reduce(d_temp, bytes, values, static_cast<V*>(out), segments, begin, end,
                                                  ::cuda::minimum<>{}, ::cuda::std::numeric_limits<V>::max(), s);
    }
  } else {
    using Pair = cub::KeyValuePair<int, V>;
    Pair* pairs = static_cast<Pair*>(out);
    if constexpr (!ABS && std::is_pointer_v<In>) {
      if constexpr (OP == Op::argmax)
        return cub::DeviceSegmentedReduce::ArgMax(d_temp, bytes, items, pairs, segments, begin, end, s);
      else
        return cub::DeviceSegmentedReduce::ArgMin(d_temp, bytes, items, pairs, segments, begin, end, s);
    } else {
      auto values = thrust::make_transform_iterator(items, ValueAt<T, ABS>{});
      if constexpr (OP == Op::argmax)
        return cub::DeviceSegmentedReduce::ArgMax(d_temp, bytes, values, pairs, segments, begin, end, s);
      else
        return cub::DeviceSegmentedReduce::ArgMin(d_temp, bytes, values, pairs, segments, begin, end, s);
    }
  }
}

template <class T, Op OP, bool ABS> constexpr std::size_t out_bytes() {
  using V = ValueOf<T, ABS>;
  if constexpr (OP == Op::sum) return sizeof(typename SumAccOf<V>::type);
  else if constexpr (OP == Op::max || OP == Op::min) return sizeof(V);
  else return sizeof(cub::KeyValuePair<int, V>);
}

template <class T, Op OP, bool ABS, class In, class B, class E>
void run_typed(CubSegmentedRun& run, In items, std::int64_t segments, B begin, E end, int warmup, int repeats,
               cudaStream_t stream) {
  using V = ValueOf<T, ABS>;
  const char* name = "cub::DeviceSegmentedReduce";
  Resources r(stream);
  size_t temp_bytes = 0;
  check(cub_call<T, OP, ABS>(nullptr, temp_bytes, items, nullptr, segments, begin, end, stream), name);
  check(cudaMalloc(&r.d_temp, temp_bytes > 0 ? temp_bytes : 16), "cudaMalloc");
  const std::size_t each = out_bytes<T, OP, ABS>();
  check(cudaMalloc(&r.d_out, each * static_cast<std::size_t>(segments)), "cudaMalloc");
  r.enqueued = true;
  const DeviceTiming timing = time_device(
      stream, warmup, repeats,
      [&] { check(cub_call<T, OP, ABS>(r.d_temp, temp_bytes, items, r.d_out, segments, begin, end, stream), name); },
      nullptr, name);
  std::vector<unsigned char> raw(each * static_cast<std::size_t>(segments));
  check(cudaMemcpyAsync(raw.data(), r.d_out, raw.size(), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  r.enqueued = false;
  run.kernel_ms.assign(timing.ms.begin(), timing.ms.end());
  run.gated = timing.gated;

  // gpuk's layout: {value; int64 index at byte 8} (16 bytes), or the sum (8 bytes).
  const std::size_t gpuk_each = OP == Op::sum ? 8 : 16;
  run.results.assign(gpuk_each * static_cast<std::size_t>(segments), 0);
  for (std::int64_t s = 0; s < segments; ++s) {
    unsigned char* dst = run.results.data() + gpuk_each * s;
    const unsigned char* src = raw.data() + each * s;
    if constexpr (OP == Op::sum) {
      std::memcpy(dst, src, each);
    } else if constexpr (OP == Op::max || OP == Op::min) {
      const std::int64_t none = -1;
      std::memcpy(dst, src, sizeof(V));
      std::memcpy(dst + 8, &none, 8);
    } else {
      cub::KeyValuePair<int, V> pair;
      std::memcpy(&pair, src, sizeof pair);
      const std::int64_t index = pair.key;
      std::memcpy(dst, &pair.value, sizeof(V));
      std::memcpy(dst + 8, &index, 8);
    }
  }
}

template <class T, bool ABS, class Run>
void by_op(Op op, Run&& run_op) {
  switch (op) {
    case Op::max: return run_op(std::integral_constant<Op, Op::max>{});
    case Op::min: return run_op(std::integral_constant<Op, Op::min>{});
    case Op::sum: return run_op(std::integral_constant<Op, Op::sum>{});
    case Op::argmax: return run_op(std::integral_constant<Op, Op::argmax>{});
    case Op::argmin: return run_op(std::integral_constant<Op, Op::argmin>{});
    case Op::argminmax: break;  // one contiguous array only: the plugin refuses it with segments or channels
  }
  throw CudaFailure{std::string("cub::DeviceSegmentedReduce has no ") + info(op).name};
}

template <class F> CubSegmentedRun guarded(F&& f) {
  CubSegmentedRun run;
  try {
    (void)cudaGetLastError();
    f(run);
  } catch (const CudaFailure& e) {
    run.error = e.message;
  } catch (const std::exception& e) {
    run.error = std::string("cub::DeviceSegmentedReduce: ") + e.what();
  }
  if (!run.error.empty()) {
    run.kernel_ms.clear();
    run.results.clear();
  }
  return run;
}

}  // namespace gpuk::reduce::cub_segmented
