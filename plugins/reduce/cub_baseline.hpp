// CUB's DeviceReduce as the library baseline, timed in the same run as gpuk's own kernels.
// Compiled by nvcc into the reduce plugin; this header needs no CUDA headers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpuk/dtype.hpp"
#include "gpuk/reduce_ops.hpp"

namespace gpuk::reduce {

struct CubRun {
  std::vector<double> kernel_ms;     // one per timed repeat: CUDA events around the CUB call(s)
  bool gated = false;                // timed behind a stream gate (run/timing.hpp), as gpuk's kernels are
  unsigned char result[16] = {};     // CUB's answer in gpuk's Acc layout (see docs/kernels/reduce.md)
  std::string error;                 // non-empty when CUB could not run; kernel_ms is then empty
};

// Reduces n elements of `dtype` at device address d_in (a CUdeviceptr) on `stream` (a CUstream),
// in the calling thread's current CUDA context. Temporary storage is allocated once, before the
// warm-up; only the reduction itself is timed.
#ifndef GPUK_NO_BASELINES
CubRun run_cub_reduce(DType dtype, Op op, bool abs, std::uint64_t d_in, std::int64_t n, int warmup,
                      int repeats, void* stream);
#else
inline CubRun run_cub_reduce(DType, Op, bool, std::uint64_t, std::int64_t, int, int, void*) {
  CubRun run;
  run.error = "this build has no library baselines (configured with GPUK_BASELINES=OFF)";
  return run;
}
#endif

}  // namespace gpuk::reduce
