// run_cub_sort: CUB's radix sort for a key dtype known at run time, dispatched to the file built
// for it (cub_baseline_<dtype>.cu).
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "cub_baseline.hpp"

namespace gpuk::sort {

CubSortRun run_cub_sort(DType key_dtype, CubValues values, bool descending, int begin_bit, int end_bit, std::uint64_t d_keys_in,
                        std::uint64_t d_values_in, std::int64_t n, int warmup, int repeats, void* stream,
                        void* keys_out, void* values_out) {
  if (n < 1 || n > std::numeric_limits<int>::max()) {
    CubSortRun run;
    run.error = "n = " + std::to_string(n) + " is outside CUB's 32-bit num_items";
    return run;
  }
  const void* vin = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(d_values_in));
  const int count = static_cast<int>(n);
  return visit_dtype(key_dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* kin = reinterpret_cast<const T*>(static_cast<std::uintptr_t>(d_keys_in));
    if constexpr (std::is_same_v<T, std::uint32_t>)
      return run_cub_sort_uint32(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else if constexpr (std::is_same_v<T, std::int32_t>)
      return run_cub_sort_int32(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else if constexpr (std::is_same_v<T, float>)
      return run_cub_sort_float32(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else if constexpr (std::is_same_v<T, std::uint64_t>)
      return run_cub_sort_uint64(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else if constexpr (std::is_same_v<T, std::int64_t>)
      return run_cub_sort_int64(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
    else
      return run_cub_sort_float64(values, descending, begin_bit, end_bit, kin, vin, count, warmup, repeats, stream, keys_out, values_out);
  });
}

}  // namespace gpuk::sort
