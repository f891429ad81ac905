// CUB's DeviceRadixSort as the sort family's library baseline, timed in the same run as gpuk's
// kernels. Compiled by nvcc into the sort plugin (one file per key dtype, cub_baseline_*.cu, so
// that they build in parallel); this header needs no CUDA headers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpuk/dtype.hpp"

namespace gpuk::sort {

enum class CubValues { none, uint32, uint64 };

struct CubSortRun {
  std::string name;               // "cub::DeviceRadixSort::SortPairsDescending"
  std::vector<double> kernel_ms;  // one per timed repeat, timed by gpuk::time_device as gpuk's kernels are
  bool gated = false;             // timed behind a stream gate (device/timing.hpp)
  std::string error;              // non-empty when CUB could not run; kernel_ms is then empty
};

// Sorts n keys of `key_dtype` on their bits [begin_bit, end_bit) at device address d_keys_in (with values of `values` at
// d_values_in) on `stream` (a CUstream) in the calling thread's current context, `warmup` untimed
// then `repeats` timed times, and copies CUB's last answer to keys_out / values_out (host memory
// of n elements each; values_out unused without values). Temporary storage and the output
// buffers are allocated before the warm-up; only the sort itself is timed.
CubSortRun run_cub_sort(DType key_dtype, CubValues values, bool descending, int begin_bit, int end_bit, std::uint64_t d_keys_in,
                        std::uint64_t d_values_in, std::int64_t n, int warmup, int repeats, void* stream,
                        void* keys_out, void* values_out);

// One per key dtype (cub_baseline_<dtype>.cu); run_cub_sort dispatches to them.
#ifndef GPUK_NO_BASELINES
#define GPUK_CUB_SORT_DECLARE(T, NAME)                                                                    \
  CubSortRun run_cub_sort_##NAME(CubValues values, bool descending, int begin_bit, int end_bit, const T* keys_in, const void* values_in, \
                                 int n, int warmup, int repeats, void* stream, void* keys_out, void* values_out);
#else
inline CubSortRun no_cub_sort() {
  CubSortRun run;
  run.error = "this build has no library baselines (configured with GPUK_BASELINES=OFF)";
  return run;
}
#define GPUK_CUB_SORT_DECLARE(T, NAME)                                                                  \
  inline CubSortRun run_cub_sort_##NAME(CubValues, bool, int, int, const T*, const void*, int, int, int, void*, void*, \
                                        void*) {                                                        \
    return no_cub_sort();                                                                                \
  }
#endif
GPUK_CUB_SORT_DECLARE(std::uint32_t, uint32)
GPUK_CUB_SORT_DECLARE(std::int32_t, int32)
GPUK_CUB_SORT_DECLARE(float, float32)
GPUK_CUB_SORT_DECLARE(std::uint64_t, uint64)
GPUK_CUB_SORT_DECLARE(std::int64_t, int64)
GPUK_CUB_SORT_DECLARE(double, float64)
#undef GPUK_CUB_SORT_DECLARE

}  // namespace gpuk::sort
