/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: The VecMax write-up. GRID blocks reduce grid-stride slices, then halve a shared-memory array (ib /= 2, a barrier per step) to one partial per block; a second launch of one block does the same over the GRID partials (the write-up finished on the CPU).
fixes: The original started each thread at RAND_MIN (not a standard macro; where defined it is 0, wrong for all-negative data), had no index (an int one would overflow past 2^31), no NaN or tie rule, and silently needed a power-of-two block (now a constraint).
params:
  BLOCK: {default: 256, values: [32, 64, 128, 256, 512, 1024]}
  GRID: {default: 512, values: [4, 16, 32, 64, 128, 256, 512, 1024, 2048]}
constraints:
  - BLOCK <= 1024 && 1024 % BLOCK == 0
launch:
  - entry: reduce_vecmax_tree
    grid: GRID
    block: BLOCK
  - entry: reduce_vecmax_tree_finish
    grid: 1
    block: BLOCK
scratch: GRID
*/

// The tree halves the live part of cache[] each step, so BLOCK must be a power of two (the
// constraint says so: the divisors of 1024 are exactly the powers of two up to 1024). Each step
// reads cache[t + ib] and writes cache[t] for t < ib, disjoint halves, and the barrier after it
// makes the step's writes visible to the next. The loop bounds are compile-time constants, so
// every thread reaches every barrier. R::combine breaks ties by index and lets the first NaN
// win, so the tree's pairing does not change argmax/argmin results. Every one of the GRID
// blocks writes its partial (R::identity() if it saw no element), so the second launch can read
// all GRID slots.

#include "gpuk/reduce.cuh"

// Every thread returns the block's combined accumulator (cache[0] after the last barrier).
template <class R, int BLOCK>
__device__ __forceinline__ typename R::Acc tree_reduce(typename R::Acc acc, typename R::Acc* cache) {
  static_assert(BLOCK > 0 && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0,
                "BLOCK must be a power of two, at most 1024");
  cache[threadIdx.x] = acc;
  __syncthreads();
#pragma unroll
  for (int ib = BLOCK / 2; ib != 0; ib /= 2) {
    if (threadIdx.x < ib) cache[threadIdx.x] = R::combine(cache[threadIdx.x], cache[threadIdx.x + ib]);
    __syncthreads();
  }
  return cache[0];
}

template <class R, int BLOCK, int GRID>
__global__ void __launch_bounds__(BLOCK)
reduce_vecmax_tree(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* /*out*/,
                   typename R::Acc* partials, unsigned int* /*counter*/) {
  using Acc = typename R::Acc;
  __shared__ Acc cache[BLOCK];
  Acc acc = R::identity();
  for (gpuk::i64 i = gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += gpuk::i64(GRID) * BLOCK) {
    R::accumulate(acc, in[i], i);
  }
  acc = tree_reduce<R, BLOCK>(acc, cache);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

template <class R, int BLOCK, int GRID>
__global__ void __launch_bounds__(BLOCK)
reduce_vecmax_tree_finish(const typename R::T* __restrict__ /*in*/, gpuk::i64 /*n*/,
                          typename R::Acc* out, typename R::Acc* partials,
                          unsigned int* /*counter*/) {
  using Acc = typename R::Acc;
  __shared__ Acc cache[BLOCK];
  Acc acc = R::identity();
  for (int p = threadIdx.x; p < GRID; p += BLOCK) acc = R::combine(acc, partials[p]);
  acc = tree_reduce<R, BLOCK>(acc, cache);
  if (threadIdx.x == 0) *out = acc;
}
