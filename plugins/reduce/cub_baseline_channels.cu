// cub::DeviceSegmentedReduce over `channels` segments of a strided view of interleaved data
// (element k of segment c is in[(k % pixels) * channels + k / pixels], begin/end offsets c *
// pixels): the one-call CUB answer to a per-channel reduction, the baseline of `channels: C` runs.
#include "cub_segmented.cuh"

namespace gpuk::reduce {

using namespace cub_segmented;

CubSegmentedRun run_cub_channels(DType dtype, Op op, bool abs, std::uint64_t d_in, std::int64_t pixels,
                                 std::int64_t channels, int warmup, int repeats, void* stream) {
  return guarded([&](CubSegmentedRun& run) {
    visit_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* in = reinterpret_cast<const T*>(static_cast<std::uintptr_t>(d_in));
      auto items = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                                   Strided<T>{in, pixels, channels});
      auto begin = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), Times{pixels});
      auto end = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(1), Times{pixels});
      const auto go = [&](auto abs_tag) {
        constexpr bool ABS = decltype(abs_tag)::value;
        by_op<T, ABS>(op, [&](auto op_tag) {
          run_typed<T, decltype(op_tag)::value, ABS>(run, items, channels, begin, end, warmup, repeats,
                                                     static_cast<cudaStream_t>(stream));
        });
      };
      if (abs) go(std::true_type{});
      else go(std::false_type{});
    });
  });
}

}  // namespace gpuk::reduce
