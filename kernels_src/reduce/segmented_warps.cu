/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: "Segmented (segments: N), for many short segments: one warp per segment, taken from a queue by a one-wave grid; coalesced 4- or 8-byte loads, UNROLL per lane in flight, one warp shuffle reduction per segment, no __syncthreads and no partials."
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  UNROLL: {default: 4, values: [1, 2, 4, 8]}
  BLOCKS_PER_SM: {default: 8, values: [2, 4, 8, 16]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: reduce_segmented_warps
    grid: sm_count * BLOCKS_PER_SM
    block: BLOCK
scratch: 0
*/

// The segmented contract of segmented_chunks.cu (docs/kernels/reduce.md, "Segments and
// channels"): (in, begin, end, segments, out, scratch, capacity), index relative to begin[s],
// an empty segment gets CUB's identity value and index -1. Only scratch's first two counters
// are used: the queue of segments and the warps' tickets (the last warp resets the queue).
//
// Why warps: a block per segment of 100 elements leaves 7 of 8 warps idle and pays a
// __syncthreads reduction per segment; a warp per segment keeps every lane loading. A lane sees
// its elements in increasing index order (lane, lane + 32, ...), as R::accumulate needs.

#include "gpuk/reduce.cuh"

template <class R, int BLOCK, int UNROLL, int BLOCKS_PER_SM>
__global__ void __launch_bounds__(BLOCK)
reduce_segmented_warps(const typename R::T* __restrict__ in, const gpuk::i64* __restrict__ begin,
                       const gpuk::i64* __restrict__ end, gpuk::i64 segments, typename R::Acc* out,
                       unsigned char* scratch, gpuk::i64 /*capacity*/) {
  using Acc = typename R::Acc;
  using T = typename R::T;
  unsigned* queue = reinterpret_cast<unsigned*>(scratch);
  unsigned* ticket = queue + 1;
  const int lane = threadIdx.x & 31;
  for (;;) {
    gpuk::i64 s = 0;
    if (lane == 0) s = atomicAdd(queue, 1u);
    s = __shfl_sync(0xffffffffu, s, 0);
    if (s >= segments) break;
    const gpuk::i64 b = begin[s], e = end[s];
    if (e <= b) {
      if (lane == 0) out[s] = gpuk::segment_empty<R>();
      continue;
    }
    Acc acc = R::identity();
    gpuk::i64 i = b + lane;
    for (; i + 32 * (UNROLL - 1) < e; i += 32 * UNROLL) {
      T x[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) x[u] = __ldg(in + i + 32 * u);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) R::accumulate(acc, x[u], i + 32 * u - b);
    }
    for (; i < e; i += 32) R::accumulate(acc, in[i], i - b);
    acc = R::warp_reduce(acc);
    if (lane == 0) out[s] = acc;
  }
  // Every warp has left the loop when the last one gets its ticket: it resets the queue.
  const unsigned warps = gridDim.x * (BLOCK / 32);
  if (lane == 0 && gpuk::ticket_acq_rel(ticket, warps - 1) == warps - 1) atomicExch(queue, 0u);
}
