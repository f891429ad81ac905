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
  bool gated = false;                // timed behind a stream gate (device/timing.hpp), as gpuk's kernels are
  unsigned char result[32] = {};     // CUB's answer in gpuk's Acc layout (see docs/kernels/reduce.md; 16 bytes but argminmax's)
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

// The segmented baselines (cub_baseline_segmented.cu): cub::DeviceSegmentedReduce.
struct CubSegmentedRun {
  std::vector<double> kernel_ms;
  bool gated = false;
  // One answer per segment in gpuk's layout (16 bytes each, sum: 8), as CUB gave it: an empty
  // segment's index is CUB's (1), max and min carry index -1.
  std::vector<unsigned char> results;
  std::string error;
};

// Segment s is d_in[d_begin[s], d_end[s]) (int64 device arrays).
#ifndef GPUK_NO_BASELINES
CubSegmentedRun run_cub_segmented(DType dtype, Op op, bool abs, std::uint64_t d_in, std::uint64_t d_begin,
                                  std::uint64_t d_end, std::int64_t segments, int warmup, int repeats, void* stream);
// Channel c of interleaved data (pixels * channels elements): DeviceSegmentedReduce over channels
// segments of a strided view (element k of segment c is d_in[k * channels + c]).
CubSegmentedRun run_cub_channels(DType dtype, Op op, bool abs, std::uint64_t d_in, std::int64_t pixels,
                                 std::int64_t channels, int warmup, int repeats, void* stream);
#else
inline CubSegmentedRun run_cub_segmented(DType, Op, bool, std::uint64_t, std::uint64_t, std::uint64_t, std::int64_t,
                                         int, int, void*) {
  CubSegmentedRun run;
  run.error = "this build has no library baselines (configured with GPUK_BASELINES=OFF)";
  return run;
}
inline CubSegmentedRun run_cub_channels(DType, Op, bool, std::uint64_t, std::int64_t, std::int64_t, int, int, void*) {
  CubSegmentedRun run;
  run.error = "this build has no library baselines (configured with GPUK_BASELINES=OFF)";
  return run;
}
#endif

}  // namespace gpuk::reduce
