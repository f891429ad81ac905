// thrust::find and thrust::count as the library baseline, timed in the same run as gpuk's own
// kernels. Compiled by nvcc into the search plugin; this header needs no CUDA headers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpuk/dtype.hpp"
#include "gpuk/search_ops.hpp"

namespace gpuk::search {

struct ThrustRun {
  std::vector<float> kernel_ms;  // one per timed repeat: CUDA events around the Thrust call
  std::int64_t result = -1;      // find / any: the index or -1; count: the count
  std::string error;             // non-empty when Thrust could not run; kernel_ms is then empty
  std::string library;           // the CCCL it was built with: "CCCL 3.0.1" (the report's baseline line)
};

// Searches n elements of `dtype` at device address d_in (a CUdeviceptr) for the element at host
// address `value` (one element of `dtype`; for a range, lo there and hi 8 bytes on, as
// gpuk::Scalar holds two values) on `stream` (a CUstream), in the calling thread's
// current CUDA context. find and any call thrust::find (Thrust has no "any index" search),
// count calls thrust::count, find_if thrust::find_if with `x OP value` (`compare`). Each call is timed as a user makes it: Thrust allocates its
// temporary storage and waits for the answer inside the call.
#ifndef GPUK_NO_BASELINES
ThrustRun run_thrust_search(DType dtype, Mode mode, const void* value, std::uint64_t d_in, std::int64_t n, int warmup,
                            int repeats, void* stream, Compare compare = Compare::eq);
// lower_bound / upper_bound of m needles at d_needles in the n sorted keys at d_hay, with
// thrust::lower_bound / upper_bound (vectorised forms) ordered as the kernels order (NaN last and
// equal, -0.0 before +0.0); the m answers are copied to host_out (result is unused).
ThrustRun run_thrust_bounds(DType dtype, bool upper, std::uint64_t d_hay, std::int64_t n, std::uint64_t d_needles,
                            std::int64_t m, std::int64_t* host_out, int warmup, int repeats, void* stream);
#else
inline ThrustRun run_thrust_bounds(DType, bool, std::uint64_t, std::int64_t, std::uint64_t, std::int64_t,
                                   std::int64_t*, int, int, void*) {
  ThrustRun run;
  run.error = "this build has no library baselines (configured with GPUK_BASELINES=OFF)";
  return run;
}
inline ThrustRun run_thrust_search(DType, Mode, const void*, std::uint64_t, std::int64_t, int, int, void*,
                                   Compare = Compare::eq) {
  ThrustRun run;
  run.error = "this build has no library baselines (configured with GPUK_BASELINES=OFF)";
  return run;
}
#endif

}  // namespace gpuk::search
