/* gpuk
family: sort
operations: [sort, sort_pairs, argsort]
summary: The write-up's rank sort in global memory. One thread per element counts the elements that come before it (smaller keys, and equal keys at lower indices) and writes its element to that position. O(n^2) work; the reference of intent, and fast below a few thousand keys only.
fixes: Only correct for unique keys (equal keys got the same rank and overwrote each other); ties now go to the lower index, which also makes it stable. The rank counter K[] was never zeroed, ranks were 32-bit, the array length had to be a multiple of the thread count, and a __syncthreads() was expected to order threads of different blocks.
params:
  BLOCK: {default: 256, values: [64, 128, 256, 512, 1024]}
constraints:
  - n <= 4194304
launch:
  - entry: rank_global
    grid: ceil_div(n, BLOCK)
    block: BLOCK
*/

// Thread i compares its key with every key j: it counts j when bits(j) < bits(i), or when the
// bits are equal and j < i. That count is i's position in the stable sorted order, distinct for
// every i, so no two threads write the same place and no barrier between threads is needed.
// A warp's threads read the same key j at the same time: one broadcast load, from L1 or L2.
// The constraint caps n at 2^22 (about 10^13 comparisons, seconds); the radix sorts scale.

#include "gpuk/sort.cuh"

template <class S, int BLOCK>
__global__ void __launch_bounds__(BLOCK) rank_global(gpuk::SortArgs<S> a) {
  const gpuk::i64 i = gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x;
  if (i >= a.n) return;
  const typename S::K key = a.keys_in[i];
  const typename S::Bits mine = S::bits(key);
  gpuk::i64 rank = 0;
#pragma unroll 8
  for (gpuk::i64 j = 0; j < a.n; ++j) {
    const typename S::Bits other = S::bits(__ldg(a.keys_in + j));
    rank += (other < mine) | ((other == mine) & (j < i));
  }
  a.keys_out[rank] = key;
  if constexpr (S::kHasValues) a.values_out[rank] = S::value_at(a.values_in, i);
}
