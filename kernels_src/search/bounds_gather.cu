/* gpuk
family: search
operations: [lower_bound, upper_bound]
dtypes: [int32, uint32, int64, float32, float64]
summary: "lower_bound / upper_bound of needles in any order, in one launch: each block that has needles gathers its own table of 2^CACHE evenly spaced haystack keys into shared memory (its loads all in flight at once, served by L2 after the first blocks), then one thread per needle (ITEMS each, their searches interleaved) binary-searches from the table's bracket in global memory. For few needles, where bounds.cu's second launch costs more than the blocks' gathers."
fixes: "not a write-up kernel: no launch of its own for the table, so a few needles pay one launch and about log2(n) - CACHE dependent loads"
params:
  BLOCK: {default: 128, values: [64, 128, 256, 512]}
  ITEMS: {default: 1, values: [1, 2, 4, 8]}
  CACHE: {default: 10, values: [0, 6, 8, 10, 12]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: bounds_gather
    grid: sm_count * BLOCKS_PER_SM
    block: BLOCK
scratch: 0
*/

// The bounds contract (docs/kernels/search.md, "Bounds"; gpuk/search.cuh): out[i] is the first
// index whose element does not go before needles[i], in [0, n]. The table and the searches from it
// are gpuk::bounds_from_table's, as in bounds.cu; only where the table comes from differs. A block
// with no needle returns before gathering, so blocks past the needles cost only their start.

#include "gpuk/search.cuh"

template <class B, int BLOCK, int ITEMS, int CACHE, int BLOCKS_PER_SM>
__global__ void __launch_bounds__(BLOCK)
bounds_gather(const typename B::T* __restrict__ hay, gpuk::i64 n, const typename B::T* __restrict__ needles,
              gpuk::i64 m, gpuk::i64* __restrict__ out, typename B::Bits* __restrict__ scratch) {
  constexpr int kSplitters = 1 << CACHE;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * ITEMS;
  __shared__ typename B::Bits table[kSplitters];
  if (gpuk::i64(blockIdx.x) * kTile >= m || n <= 0) return;  // the whole block: no barrier is left waiting
  for (int j = threadIdx.x; j < kSplitters; j += BLOCK) table[j] = B::bits(__ldg(hay + ((gpuk::i64(j) * n) >> CACHE)));
  __syncthreads();
  gpuk::bounds_from_table<B, BLOCK, ITEMS, CACHE>(table, hay, n, needles, m, out);
  (void)scratch;
}
