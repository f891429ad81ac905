/* gpuk
family: search
operations: [lower_bound, upper_bound]
dtypes: [int32, uint32, int64, float32, float64]
summary: "lower_bound / upper_bound of needles in any order: one thread per needle (ITEMS each, their searches interleaved), binary search whose top CACHE levels are a table of 2^CACHE evenly spaced haystack keys in shared memory (gathered once per run by a first launch), the rest in global memory."
fixes: "not a write-up kernel: the levels every search shares come from shared memory instead of 2^CACHE scattered global loads per block"
params:
  BLOCK: {default: 256, values: [128, 256, 512]}
  ITEMS: {default: 4, values: [1, 2, 4, 8]}
  CACHE: {default: 10, values: [0, 6, 8, 10, 12]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: bounds_splitters
    grid: ceil_div(pow2(CACHE), BLOCK)
    block: BLOCK
  - entry: bounds_search
    grid: sm_count * BLOCKS_PER_SM
    block: BLOCK
scratch: pow2(CACHE)
*/

// The bounds contract (docs/kernels/search.md, "Bounds"; gpuk/search.cuh): out[i] is the first
// index whose element does not go before needles[i], in [0, n].
//
// The table: splitter j (j < S = 2^CACHE) is hay[j * n / S], gathered by the first launch into
// scratch; the searches from it are gpuk::bounds_from_table's. A block with no needle returns
// before loading the table, so a few needles do not pay for it in every block of the grid.
// bounds_gather.cu is the one-launch form (each block gathers its own table from the haystack).

#include "gpuk/search.cuh"

template <class B, int BLOCK, int ITEMS, int CACHE, int BLOCKS_PER_SM>
__global__ void __launch_bounds__(BLOCK)
bounds_splitters(const typename B::T* __restrict__ hay, gpuk::i64 n, const typename B::T* __restrict__ needles,
                 gpuk::i64 m, gpuk::i64* __restrict__ out, typename B::Bits* __restrict__ scratch) {
  const gpuk::i64 j = gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x;
  if (j < (gpuk::i64(1) << CACHE)) scratch[j] = B::bits(hay[(j * n) >> CACHE]);
}

template <class B, int BLOCK, int ITEMS, int CACHE, int BLOCKS_PER_SM>
__global__ void __launch_bounds__(BLOCK)
bounds_search(const typename B::T* __restrict__ hay, gpuk::i64 n, const typename B::T* __restrict__ needles,
              gpuk::i64 m, gpuk::i64* __restrict__ out, typename B::Bits* __restrict__ scratch) {
  constexpr int kSplitters = 1 << CACHE;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * ITEMS;
  __shared__ typename B::Bits table[kSplitters];
  if (gpuk::i64(blockIdx.x) * kTile >= m) return;  // the whole block: no barrier is left waiting
  for (int j = threadIdx.x; j < kSplitters; j += BLOCK) table[j] = scratch[j];  // the first launch's
  __syncthreads();
  gpuk::bounds_from_table<B, BLOCK, ITEMS, CACHE>(table, hay, n, needles, m, out);
}
