/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: Warp-level only (no shared memory, no __syncthreads). Each warp reduces its grid-stride slice with __shfl_xor_sync and writes one partial; the last warp to finish combines every warp's partial, again with shuffles. One launch.
fixes: The original's warpBroadcast returned float (indices past 2^24 were rounded), its `mask > >= 1` did not compile, ties went to the lowest lane instead of the lowest index, and the per-warp outputs were never combined; it also started max at 0, kept int indices and ignored NaN.
params:
  BLOCK: {default: 256, values: [64, 128, 256, 512, 1024]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: reduce_warp_shuffle
    grid: min(ceil_div(n, BLOCK), sm_count * BLOCKS_PER_SM)
    block: BLOCK
scratch: sm_count * BLOCKS_PER_SM * BLOCK / 32
*/

// Each warp shuffles whole candidates (value and 64-bit index) through R::warp_reduce, whose
// R::combine breaks ties by index and lets the first NaN win, so no ballot or broadcast of a
// "winning lane" is needed. Lane 0 of every warp writes partials[global warp], fences, and
// takes a ticket from atomicInc(counter, warps - 1); the warp that draws the last ticket reads
// all partials from L2 and writes out. atomicInc wraps the counter back to 0 on that last
// ticket, which leaves it zero for the next run.
// The last warp reads gridDim.x * BLOCK / 32 partials on its own, so this variant pays more at
// the end than one that first combines the warps of a block; the constraint keeps the grid to
// one wave of at most 2048 threads per multiprocessor. BLOCKS_PER_SM only shapes the grid.

#include "gpuk/reduce.cuh"

template <class R, int BLOCK, int BLOCKS_PER_SM>
__global__ void __launch_bounds__(BLOCK)
reduce_warp_shuffle(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out,
                    typename R::Acc* partials, unsigned int* counter) {
  static_assert(BLOCK % 32 == 0, "BLOCK must be whole warps");
  using Acc = typename R::Acc;
  constexpr unsigned kWarpsPerBlock = BLOCK / 32;
  const unsigned lane = threadIdx.x % 32;

  Acc acc = R::identity();
  const gpuk::i64 stride = gpuk::i64(gridDim.x) * BLOCK;
  for (gpuk::i64 i = gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += stride) {
    R::accumulate(acc, in[i], i);
  }
  acc = R::warp_reduce(acc);

  const unsigned warps = gridDim.x * kWarpsPerBlock;
  unsigned ticket = 0;
  if (lane == 0) {
    partials[blockIdx.x * kWarpsPerBlock + threadIdx.x / 32] = acc;
    __threadfence();  // the partial is visible device-wide before the ticket says it is there
    ticket = atomicInc(counter, warps - 1);
  }
  ticket = __shfl_sync(0xffffffffu, ticket, 0);
  if (ticket != warps - 1) return;

  __threadfence();
  acc = R::identity();
#pragma unroll 8
  for (unsigned p = lane; p < warps; p += 32) acc = R::combine(acc, gpuk::load_cg(partials + p));
  acc = R::warp_reduce(acc);
  if (lane == 0) *out = acc;
}
