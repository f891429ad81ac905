/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: Two launches. GRID blocks reduce grid-stride slices (warp shuffles, then across warps) to one partial each; one block then combines the GRID partials.
fixes: The original strode by blockDim.x from blockIdx.x * blockDim.x, so block b read every element from b * blockDim.x on (the blocks' ranges overlapped and the work grew with the grid); it initialised the maxima to 0, kept int indices, wrote the index of whichever equal maximum raced last, ignored NaN, and left the per-block results for the host to finish.
params:
  BLOCK: {default: 256, values: [64, 128, 256, 512, 1024]}
  GRID: {default: 512, values: [32, 64, 128, 256, 512, 1024, 2048]}
launch:
  - entry: reduce_block_partials
    grid: GRID
    block: BLOCK
  - entry: reduce_block_partials_finish
    grid: 1
    block: BLOCK
scratch: GRID
*/

// The first launch strides by the whole grid (GRID * BLOCK elements), so the blocks' slices
// are disjoint and every element is read once. Each thread visits its elements in increasing
// index order (what R::accumulate needs), and gpuk::block_reduce combines with R::combine,
// which breaks ties by index, so the result does not depend on scheduling. Every one of the
// GRID blocks writes its partial, even one that saw no element (it writes R::identity()), so
// the second launch can read all GRID slots; the kernel boundary makes them visible.

#include "gpuk/reduce.cuh"

template <class R, int BLOCK, int GRID>
__global__ void __launch_bounds__(BLOCK)
reduce_block_partials(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* /*out*/,
                      typename R::Acc* partials, unsigned int* /*counter*/) {
  using Acc = typename R::Acc;
  __shared__ Acc scratch[BLOCK / 32];
  Acc acc = R::identity();
  for (gpuk::i64 i = gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += gpuk::i64(GRID) * BLOCK) {
    R::accumulate(acc, in[i], i);
  }
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

template <class R, int BLOCK, int GRID>
__global__ void __launch_bounds__(BLOCK)
reduce_block_partials_finish(const typename R::T* __restrict__ /*in*/, gpuk::i64 /*n*/,
                             typename R::Acc* out, typename R::Acc* partials,
                             unsigned int* /*counter*/) {
  using Acc = typename R::Acc;
  __shared__ Acc scratch[BLOCK / 32];
  Acc acc = R::identity();
  for (int p = threadIdx.x; p < GRID; p += BLOCK) acc = R::combine(acc, partials[p]);
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);
  if (threadIdx.x == 0) *out = acc;
}
