/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: "Per channel (channels: C) of interleaved data (HWC: element i is pixel i / C of channel i % C): one launch reads the array once, coalesced, each thread keeping one channel (tiles are whole multiples of C wide); blocks combine their threads per channel in shared memory, the last block combines the blocks' partials. No transpose, one launch for every channel. C up to BLOCK."
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  ITEMS: {default: 8, values: [2, 4, 8, 16]}
  BLOCKS_PER_SM: {default: 2, values: [1, 2, 4, 8]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: reduce_per_channel
    grid: min(ceil_div(n, BLOCK * ITEMS), sm_count * BLOCKS_PER_SM)
    block: BLOCK
scratch: min(ceil_div(n, BLOCK * ITEMS), sm_count * BLOCKS_PER_SM)
*/

// The per-channel contract (docs/kernels/reduce.md, "Segments and channels"):
//   (in, n, channels, out, scratch)
// n is a multiple of channels (C); out[c] receives channel c's Acc, the index of argmax/argmin
// being the pixel (i / C), as a strided iterator over channel c would give it. `scratch`: 256
// bytes of counters (zero between runs), then gridDim.x * C partials (`scratch:` is the grid: the
// family multiplies it by C).
//
// Why this shape: the A = (BLOCK / C) * C first threads of a block read A consecutive elements
// per step, so thread t always meets channel t % C (a step is a multiple of C) and keeps one
// accumulator in registers; ITEMS steps are loaded before any is compared. A tile is A * ITEMS
// elements; blocks stride over tiles in order, so a thread's pixels increase (R::accumulate's
// lowest index). The block's A accumulators are combined per channel in shared memory (thread
// c folds column c), the blocks' partials by the block with the last ticket, all its threads
// loading partials at once.

#include "gpuk/reduce.cuh"

template <class R, int BLOCK, int ITEMS, int BLOCKS_PER_SM>
__global__ void __launch_bounds__(BLOCK)
reduce_per_channel(const typename R::T* __restrict__ in, gpuk::i64 n, gpuk::i64 channels, typename R::Acc* out,
                   unsigned char* scratch) {
  using Acc = typename R::Acc;
  using T = typename R::T;
  __shared__ Acc shared_acc[BLOCK];
  __shared__ bool is_last;
  unsigned* counter = reinterpret_cast<unsigned*>(scratch);
  Acc* partials = reinterpret_cast<Acc*>(scratch + 256);
  const int C = static_cast<int>(channels);
  const int per_step = BLOCK / C;  // pixels per step
  const int active = per_step * C;
  const int t = threadIdx.x;
  const gpuk::i64 tile = gpuk::i64(active) * ITEMS;
  const gpuk::i64 tiles = (n + tile - 1) / tile;

  Acc acc = R::identity();
  if (t < active) {
    const gpuk::i64 pixel0 = t / C;
    for (gpuk::i64 k = blockIdx.x; k < tiles; k += gridDim.x) {
      const gpuk::i64 start = k * tile + t;
      const gpuk::i64 pixel = k * (tile / C) + pixel0;
      if (start + gpuk::i64(active) * (ITEMS - 1) < n) {
        T x[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) x[j] = __ldg(in + start + gpuk::i64(j) * active);
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) R::accumulate(acc, x[j], pixel + gpuk::i64(j) * per_step);
      } else {
        for (int j = 0; j < ITEMS && start + gpuk::i64(j) * active < n; ++j)
          R::accumulate(acc, in[start + gpuk::i64(j) * active], pixel + gpuk::i64(j) * per_step);
      }
    }
  }
  shared_acc[t] = acc;
  __syncthreads();
  if (t < C) {
    for (int j = 1; j < per_step; ++j) acc = R::combine(acc, shared_acc[t + j * C]);
    if (gridDim.x == 1) {
      out[t] = acc;
    } else {
      partials[gpuk::i64(blockIdx.x) * C + t] = acc;
      __threadfence();
    }
  }
  if (gridDim.x == 1) return;
  __syncthreads();
  if (t == 0) is_last = gpuk::ticket_acq_rel(counter, gridDim.x - 1) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;

  // Thread 0's acquire, then the barrier, orders every thread's loads after all the partials.
  acc = R::identity();
  if (t < active) {  // four partials in flight per thread: the L2 round trips overlap
    for (unsigned b = t / C; b < gridDim.x; b += 4 * per_step) {
      Acc x[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const unsigned bk = b + k * per_step;
        x[k] = bk < gridDim.x ? gpuk::load_cg(partials + gpuk::i64(bk) * C + t % C) : R::identity();
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) acc = R::combine(acc, x[k]);
    }
  }
  __syncthreads();  // shared_acc's first use is over
  shared_acc[t] = acc;
  __syncthreads();
  if (t < C) {
    for (int j = 1; j < per_step; ++j) acc = R::combine(acc, shared_acc[t + j * C]);
    out[t] = acc;
  }
}
