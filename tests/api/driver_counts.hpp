// What a library call asks of the driver and of malloc, counted: gpuk's driver table with every
// entry point a call could reach wrapped by a counter (the launch forwarded, or stubbed), and
// every malloc of the process (operator new's too) counted while counting is on. Used by
// tests/api/test_host_path.cpp (the counts, asserted) and tools/bench/bench_api_host.cpp (the launch
// stubbed, timed). Include it in one translation unit of a program: it defines malloc.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "device/device.hpp"

namespace gpuk::counts {

inline std::atomic<bool> counting_mallocs{false};
inline std::atomic<std::uint64_t> mallocs{0};
// Launches, context queries (cuCtxGetCurrent), opt-ins to more than 48 KiB of dynamic shared
// memory (cuFuncSetAttribute: a host-only call core makes before each such launch) and every
// other driver call, while installed.
inline std::atomic<std::uint64_t> launches{0}, context_queries{0}, opt_ins{0}, other{0};
inline std::atomic<unsigned> last_grid{0};  // the last launch's grid (x)
inline std::atomic<unsigned> recent_grids[3];  // the last three launches' grids (x), the newest last
inline DriverApi real;
inline bool stub_launches = false;

}  // namespace gpuk::counts

// AddressSanitizer owns malloc: GCC says so with __SANITIZE_ADDRESS__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define GPUK_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUK_UNDER_ASAN 1
#endif
#endif
#if !defined(GPUK_UNDER_ASAN)
// Forwarded to glibc's own allocator; operator new is not replaced, as NVRTC frees with its own
// delete. Under AddressSanitizer nothing is counted.
extern "C" void* __libc_malloc(std::size_t bytes);
extern "C" void* malloc(std::size_t bytes) {
  if (gpuk::counts::counting_mallocs.load(std::memory_order_relaxed))
    gpuk::counts::mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(bytes);
}
namespace gpuk::counts {
constexpr bool kMallocsCounted = true;
}
#else
namespace gpuk::counts {
constexpr bool kMallocsCounted = false;
}
#endif

namespace gpuk::counts {

namespace wrap {

inline CUresult CUDAAPI launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream s, void** args, void** extra) {
  launches.fetch_add(1, std::memory_order_relaxed);
  last_grid.store(gx, std::memory_order_relaxed);
  recent_grids[0].store(recent_grids[1].load(std::memory_order_relaxed), std::memory_order_relaxed);
  recent_grids[1].store(recent_grids[2].load(std::memory_order_relaxed), std::memory_order_relaxed);
  recent_grids[2].store(gx, std::memory_order_relaxed);
  return stub_launches ? CUDA_SUCCESS : real.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, args, extra);
}
inline CUresult CUDAAPI get_current(CUcontext* c) {
  context_queries.fetch_add(1, std::memory_order_relaxed);
  return real.cuCtxGetCurrent(c);
}
inline CUresult CUDAAPI set_current(CUcontext c) { ++other; return real.cuCtxSetCurrent(c); }
inline CUresult CUDAAPI stream_ctx(CUstream s, CUcontext* c) { ++other; return real.cuStreamGetCtx(s, c); }
inline CUresult CUDAAPI alloc(CUdeviceptr* p, size_t b) { ++other; return real.cuMemAlloc(p, b); }
inline CUresult CUDAAPI free(CUdeviceptr p) { ++other; return real.cuMemFree(p); }
inline CUresult CUDAAPI load(CUmodule* m, const void* image) { ++other; return real.cuModuleLoadData(m, image); }
inline CUresult CUDAAPI function(CUfunction* f, CUmodule m, const char* name) {
  ++other;
  return real.cuModuleGetFunction(f, m, name);
}
inline CUresult CUDAAPI stream_sync(CUstream s) { ++other; return real.cuStreamSynchronize(s); }
inline CUresult CUDAAPI ctx_sync() { ++other; return real.cuCtxSynchronize(); }
inline CUresult CUDAAPI memset(CUdeviceptr p, unsigned char v, size_t b, CUstream s) {
  ++other;
  return real.cuMemsetD8Async(p, v, b, s);
}
inline CUresult CUDAAPI copy(CUdeviceptr d, CUdeviceptr from, size_t b, CUstream s) {
  ++other;
  return real.cuMemcpyDtoDAsync(d, from, b, s);
}
inline CUresult CUDAAPI set_attribute(CUfunction f, CUfunction_attribute a, int v) {
  ++(a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? opt_ins : other);
  return real.cuFuncSetAttribute(f, a, v);
}

}  // namespace wrap

// gpuk's driver table counted (the launch stubbed when `stub`) while it lives; the counters and
// the malloc count start at zero, and mallocs are counted.
class CountedDriver {
 public:
  explicit CountedDriver(bool stub) {
    DriverApi& api = driver_for_tests();
    real = api;
    stub_launches = stub;
    api.cuLaunchKernel = wrap::launch;
    api.cuCtxGetCurrent = wrap::get_current;
    api.cuCtxSetCurrent = wrap::set_current;
    api.cuStreamGetCtx = wrap::stream_ctx;
    api.cuMemAlloc = wrap::alloc;
    api.cuMemFree = wrap::free;
    api.cuModuleLoadData = wrap::load;
    api.cuModuleGetFunction = wrap::function;
    api.cuStreamSynchronize = wrap::stream_sync;
    api.cuCtxSynchronize = wrap::ctx_sync;
    api.cuMemsetD8Async = wrap::memset;
    api.cuMemcpyDtoDAsync = wrap::copy;
    api.cuFuncSetAttribute = wrap::set_attribute;
    reset();
    counting_mallocs = true;
  }
  ~CountedDriver() {
    counting_mallocs = false;
    driver_for_tests() = real;
  }
  CountedDriver(const CountedDriver&) = delete;
  CountedDriver& operator=(const CountedDriver&) = delete;
  static void reset() { launches = context_queries = opt_ins = other = mallocs = 0; }
};

}  // namespace gpuk::counts
