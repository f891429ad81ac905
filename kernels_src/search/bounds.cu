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
// The table: splitter j (j < S = 2^CACHE) is hay[j * n / S]. A needle's count c of splitters that
// go before it puts its answer in (index of splitter c-1, index of splitter c] (0 for c = 0, n
// for c = S): equal indices of splitters (n < S) cannot bracket c, as equal keys either both go
// before a needle or neither does. A block with no needle returns before loading the table, so a
// few needles do not pay for it in every block of the grid.

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
  using Bits = typename B::Bits;
  constexpr int kSplitters = 1 << CACHE;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * ITEMS;
  __shared__ Bits table[kSplitters];
  if (gpuk::i64(blockIdx.x) * kTile >= m) return;  // the whole block: no barrier is left waiting
  for (int j = threadIdx.x; j < kSplitters; j += BLOCK) table[j] = scratch[j];  // the first launch's
  __syncthreads();
  const auto in_table = [&](gpuk::i64 j) { return table[j]; };
  const auto in_hay = [&](gpuk::i64 j) { return B::bits(__ldg(hay + j)); };

  for (gpuk::i64 base = gpuk::i64(blockIdx.x) * kTile; base < m; base += gpuk::i64(gridDim.x) * kTile) {
    Bits q[ITEMS];
    gpuk::i64 lo[ITEMS], count[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const gpuk::i64 i = base + gpuk::i64(k) * BLOCK + threadIdx.x;
      q[k] = i < m ? B::bits(__ldg(needles + i)) : Bits(0);
      const gpuk::i64 c = gpuk::partition_point<B>(in_table, 0, kSplitters, q[k]);
      lo[k] = c == 0 ? 0 : (((c - 1) * n) >> CACHE) + 1;
      const gpuk::i64 hi = c == kSplitters ? n : (c * n) >> CACHE;
      count[k] = i < m ? hi - lo[k] : 0;
    }
    // The ITEMS searches step together, so their loads are in flight at once.
    for (;;) {
      bool more = false;
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        if (count[k] > 0) {
          const gpuk::i64 step = count[k] / 2;
          if (B::before(in_hay(lo[k] + step), q[k])) {
            lo[k] += step + 1;
            count[k] -= step + 1;
          } else {
            count[k] = step;
          }
          more = true;
        }
      }
      if (!more) break;
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const gpuk::i64 i = base + gpuk::i64(k) * BLOCK + threadIdx.x;
      if (i < m) out[i] = lo[k];
    }
  }
}
