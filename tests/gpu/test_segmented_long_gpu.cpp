// The segmented sort's long segments by digit passes (segmented.cu with LONG 1: a histogram
// ticket per tile, then a digit pass a ticket per tile with a look-back over the segment's
// earlier tiles), on the GPU through the Engine: keys and pairs, both orders, 7-bit digits (BLOCK
// 128) and 8-bit ones, on the edge shapes of segmented_sort_gpu.hpp (segments of a tile, a tile
// plus one, nine tiles and seven keys, all-equal keys, NaN, +-0.0, a power-law mix, one segment
// spanning everything), each answer checked key by key against the CPU reference, the outputs
// poisoned before each call. Also WARP 0, where segments of at most 32 keys are sorted by the
// warps of the tickets' launch instead of a launch of their own (the family's pick for long
// means). Without a GPU it exits 77 (skipped).
#include "segmented_sort_gpu.hpp"

using namespace gpuk;
using namespace gpuk::test::segmented_sort_gpu;

TEST_CASE("segmented sort, long segments by digit passes (LONG 1): keys and pairs on the edge shapes") {
  const Device device(0);
  const Stream stream;
  cases_for<float>(stream, false, {{"LONG", 1}});
  cases_for<std::int64_t>(stream, true, {{"LONG", 1}, {"BLOCK", 256}, {"ITEMS", 4}});
}

TEST_CASE("segmented sort in one launch (WARP 0): short segments by the tickets' warps, on the edge shapes") {
  const Device device(0);
  const Stream stream;
  cases_for<float>(stream, false, {{"WARP", 0}});
  cases_for<std::uint32_t>(stream, true, {{"WARP", 0}, {"LONG", 1}, {"BLOCK", 128}, {"ITEMS", 4}});
  cases_for<std::uint64_t>(stream, true, {{"WARP", 0}, {"BLOCK", 512}, {"ITEMS", 16}, {"MIN_BLOCKS", 1}});
}

TEST_CASE("segmented sort, long segments by digit passes: the family's tile (BLOCK 512, ITEMS 16)") {
  const Device device(0);
  const Stream stream;
  std::mt19937_64 rng(test::fresh_seed());
  const std::map<std::string, std::int64_t> params = {{"BLOCK", 512}, {"ITEMS", 16}, {"MIN_BLOCKS", 2}, {"LONG", 1}, {"WARP", 0}};
  const auto off = edge_offsets(512 * 16);
  const auto keys = make_keys<float>(static_cast<std::size_t>(off.back()), false, rng);
  CHECK(run<float, std::uint32_t>(params, false, false, keys, off, stream) == "");
  CHECK(run<float, std::uint64_t>(params, true, true, keys, off, stream) == "");
  const auto equal = make_keys<double>(static_cast<std::size_t>(off.back()), true, rng);
  CHECK(run<double, std::uint32_t>(params, true, false, equal, off, stream) == "");
}
