// cub::DeviceSegmentedReduce on segments given by int64 begin/end offsets: the baseline of
// `segments: N` runs (cub_segmented.cuh says how each operation is called).
#include "cub_segmented.cuh"

namespace gpuk::reduce {

using namespace cub_segmented;

CubSegmentedRun run_cub_segmented(DType dtype, Op op, bool abs, std::uint64_t d_in, std::uint64_t d_begin,
                                  std::uint64_t d_end, std::int64_t segments, int warmup, int repeats, void* stream) {
  return guarded([&](CubSegmentedRun& run) {
    const auto* begin = reinterpret_cast<const std::int64_t*>(static_cast<std::uintptr_t>(d_begin));
    const auto* end = reinterpret_cast<const std::int64_t*>(static_cast<std::uintptr_t>(d_end));
    visit_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* in = reinterpret_cast<const T*>(static_cast<std::uintptr_t>(d_in));
      const auto go = [&](auto abs_tag) {
        constexpr bool ABS = decltype(abs_tag)::value;
        by_op<T, ABS>(op, [&](auto op_tag) {
          run_typed<T, decltype(op_tag)::value, ABS>(run, in, segments, begin, end, warmup, repeats,
                                                     static_cast<cudaStream_t>(stream));
        });
      };
      if (abs) go(std::true_type{});
      else go(std::false_type{});
    });
  });
}

}  // namespace gpuk::reduce
