// thrust::find / find_if / count as the library baseline (see thrust_baseline.hpp).
#include "thrust_baseline.hpp"

#include <cuda_runtime.h>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/binary_search.h>
#include <thrust/find.h>

#include <cstring>
#include <exception>


namespace gpuk::search {
namespace {

struct CudaFailure {
  std::string message;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw CudaFailure{std::string(what) + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e)};
}

// Owns the events of one run; waits for the stream before destroying them.
struct Events {
  cudaStream_t stream;
  std::vector<cudaEvent_t> events;
  explicit Events(cudaStream_t s) : stream(s) {}
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    (void)cudaStreamSynchronize(stream);
    for (cudaEvent_t e : events) (void)cudaEventDestroy(e);
  }
};

// find_if's predicate: `x OP value`, the comparison chosen at run time (one instantiation).
template <class T> struct Meets {
  Compare compare;
  T value, hi;  // hi: a range's upper bound
  __device__ bool operator()(T x) const { return search::compare(compare, x, value, hi); }
};

template <class T>
std::int64_t thrust_call(Mode op, const T* in, std::int64_t n, T value, T hi, cudaStream_t stream, Compare compare) {
  const auto policy = thrust::cuda::par.on(stream);
  if (op == Mode::count) return static_cast<std::int64_t>(thrust::count(policy, in, in + n, value));
  const T* it = op == Mode::find_if ? thrust::find_if(policy, in, in + n, Meets<T>{compare, value, hi})
                                    : thrust::find(policy, in, in + n, value);
  const std::int64_t index = it - in;
  return index == n ? -1 : index;
}

template <class T>
void run_typed(ThrustRun& run, Mode op, const T* in, std::int64_t n, T value, T hi, int warmup, int repeats,
               cudaStream_t stream, Compare compare) {
  Events ev(stream);
  ev.events.reserve(2 * static_cast<size_t>(repeats));
  for (int i = 0; i < 2 * repeats; ++i) {
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), "cudaEventCreate");
    ev.events.push_back(e);
  }
  for (int i = 0; i < warmup; ++i) run.result = thrust_call(op, in, n, value, hi, stream, compare);
  for (int i = 0; i < repeats; ++i) {
    check(cudaEventRecord(ev.events[2 * i], stream), "cudaEventRecord");
    run.result = thrust_call(op, in, n, value, hi, stream, compare);
    check(cudaEventRecord(ev.events[2 * i + 1], stream), "cudaEventRecord");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  run.kernel_ms.reserve(static_cast<size_t>(repeats));
  for (int i = 0; i < repeats; ++i) {
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, ev.events[2 * i], ev.events[2 * i + 1]), "cudaEventElapsedTime");
    run.kernel_ms.push_back(ms);
  }
}

}  // namespace

ThrustRun run_thrust_search(DType dtype, Mode op, const void* value, std::uint64_t d_in, std::int64_t n, int warmup,
                            int repeats, void* stream, Compare compare) {
  ThrustRun run;
  run.library = "CCCL " + std::to_string(CCCL_MAJOR_VERSION) + "." + std::to_string(CCCL_MINOR_VERSION) + "." +
                std::to_string(CCCL_PATCH_VERSION);
  try {
    if (n < 0) {
      run.error = "run_thrust_search: negative element count " + std::to_string(n);
      return run;
    }
    warmup = warmup < 0 ? 0 : warmup;
    repeats = repeats < 0 ? 0 : repeats;
    if (warmup == 0 && repeats == 0) warmup = 1;  // still produce a result
    (void)cudaGetLastError();                    // a stale (non-sticky) error is not Thrust's
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    visit_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      T v, hi{};
      std::memcpy(&v, value, sizeof v);
      if (info(compare).two_values) std::memcpy(&hi, static_cast<const unsigned char*>(value) + 8, sizeof hi);
      const T* in = reinterpret_cast<const T*>(static_cast<std::uintptr_t>(d_in));
      run_typed<T>(run, op, in, n, v, hi, warmup, repeats, s, compare);
    });
  } catch (const CudaFailure& f) {
    run.error = f.message;
  } catch (const std::exception& e) {
    run.error = std::string("Thrust: ") + e.what();
  } catch (...) {
    run.error = "run_thrust_search: unknown exception";
  }
  if (!run.error.empty()) run.kernel_ms.clear();
  return run;
}

ThrustRun run_thrust_bounds(DType dtype, bool upper, std::uint64_t d_hay, std::int64_t n, std::uint64_t d_needles,
                            std::int64_t m, std::int64_t* host_out, int warmup, int repeats, void* stream) {
  ThrustRun run;
  run.library = "CCCL " + std::to_string(CCCL_MAJOR_VERSION) + "." + std::to_string(CCCL_MINOR_VERSION) + "." +
                std::to_string(CCCL_PATCH_VERSION);
  std::int64_t* d_out = nullptr;
  try {
    if (n < 1 || m < 0) {
      run.error = "run_thrust_bounds: " + std::to_string(n) + " keys, " + std::to_string(m) + " needles";
      return run;
    }
    warmup = warmup < 0 ? 0 : warmup;
    repeats = repeats < 0 ? 0 : repeats;
    if (warmup == 0 && repeats == 0) warmup = 1;
    (void)cudaGetLastError();
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    check(cudaMalloc(&d_out, static_cast<size_t>(m > 0 ? m : 1) * 8), "cudaMalloc");
    visit_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* hay = reinterpret_cast<const T*>(static_cast<std::uintptr_t>(d_hay));
      const T* q = reinterpret_cast<const T*>(static_cast<std::uintptr_t>(d_needles));
      const auto call = [&] {
        const auto policy = thrust::cuda::par.on(s);
        if (upper) thrust::upper_bound(policy, hay, hay + n, q, q + m, d_out, OrderedLess{});
        else thrust::lower_bound(policy, hay, hay + n, q, q + m, d_out, OrderedLess{});
      };
      Events ev(s);
      for (int i = 0; i < 2 * repeats; ++i) {
        cudaEvent_t e = nullptr;
        check(cudaEventCreate(&e), "cudaEventCreate");
        ev.events.push_back(e);
      }
      for (int i = 0; i < warmup; ++i) call();
      for (int i = 0; i < repeats; ++i) {
        check(cudaEventRecord(ev.events[2 * i], s), "cudaEventRecord");
        call();
        check(cudaEventRecord(ev.events[2 * i + 1], s), "cudaEventRecord");
      }
      check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
      for (int i = 0; i < repeats; ++i) {
        float ms = 0.0f;
        check(cudaEventElapsedTime(&ms, ev.events[2 * i], ev.events[2 * i + 1]), "cudaEventElapsedTime");
        run.kernel_ms.push_back(ms);
      }
      if (m > 0) check(cudaMemcpy(host_out, d_out, static_cast<size_t>(m) * 8, cudaMemcpyDeviceToHost), "cudaMemcpy");
    });
  } catch (const CudaFailure& f) {
    run.error = f.message;
  } catch (const std::exception& e) {
    run.error = std::string("Thrust: ") + e.what();
  } catch (...) {
    run.error = "run_thrust_bounds: unknown exception";
  }
  if (d_out) (void)cudaFree(d_out);
  if (!run.error.empty()) run.kernel_ms.clear();
  return run;
}

}  // namespace gpuk::search
