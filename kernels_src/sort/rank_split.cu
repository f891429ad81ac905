/* gpuk
family: sort
operations: [sort, sort_pairs, argsort]
summary: The write-up's rank sort spread over the whole GPU in one launch. A block ranks 32 * ITEMS elements; its warps split the other keys between them (each warp counts over every (BLOCK/32)-th chunk of 128 keys, staged in shared memory and read as broadcasts), the block adds the warps' counts, and each element is written at its rank. O(n^2) comparisons, but spread over n / (32 * ITEMS) blocks of BLOCK threads, so small arrays (a few thousand keys) sort in one short launch.
params:
  BLOCK: {default: 512, values: [128, 256, 512, 1024]}
  ITEMS: {default: 1, values: [1, 2, 4]}
constraints:
  - n <= 1048576
launch:
  - entry: rank_split
    grid: ceil_div(n, 32 * ITEMS)
    block: BLOCK
*/

// Why it is shaped like this:
// - rank_global gives each element one thread, so at n = 4096 the whole sort is 128 warps, one
//   per SM, each doing 4096 dependent compare-adds: the GPU is nearly idle. Here an element's
//   count is split over the BLOCK / 32 warps of its block, so the same n^2 comparisons run on
//   every scheduler of every SM.
// - Lane l of every warp holds the block's elements l, l + 32, ... (ITEMS of them) in registers;
//   a warp stages 128 other keys (their sort bits) in its own slice of shared memory and every
//   lane reads each staged key as a broadcast, comparing it with all its ITEMS elements.
// - Ties: element i counts key j if bits(j) < bits(i), or bits equal and j < i. A chunk wholly
//   before the block's elements counts bits(j) <= bits(i), one wholly after counts
//   bits(j) < bits(i); only the chunks that overlap the block's own elements compare indices.
//   Every rank is distinct, so the scattered writes never collide and the sort is stable.
// - The last chunk is padded with the largest bits: it lies after every element (or overlaps
//   them, where the index test is false), so a pad is never counted.
// - The warps' counts meet in shared memory; warp w adds up elements w, w + BLOCK/32, ... with one
//   warp-wide add (a lane per warp's count) and the owning lane writes key and value out.

#include "gpuk/sort.cuh"

template <class S, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) rank_split(gpuk::SortArgs<S> a) {
  using Bits = typename S::Bits;
  constexpr int kWarps = BLOCK / 32, kChunk = 128, kPer = kChunk / 32, kElems = 32 * ITEMS;
  static_assert(BLOCK % 32 == 0 && kWarps <= 32, "BLOCK: a multiple of 32, at most 1024");
  __shared__ __align__(16) Bits staged[kWarps][kChunk];
  __shared__ gpuk::u32 partial[kWarps][kElems];

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const gpuk::i64 n = a.n, first = gpuk::i64(blockIdx.x) * kElems;
  Bits mine[ITEMS];
  gpuk::u32 count[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const gpuk::i64 i = first + k * 32 + lane;
    mine[k] = i < n ? S::bits(a.keys_in[i]) : Bits(0);
    count[k] = 0;
  }

  const gpuk::i64 chunks = gpuk::ceil_div(n, kChunk);
  Bits* slice = staged[warp];
  for (gpuk::i64 c = warp; c < chunks; c += kWarps) {
    const gpuk::i64 c0 = c * kChunk;
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const gpuk::i64 j = c0 + e * 32 + lane;
      slice[e * 32 + lane] = j < n ? S::bits(a.keys_in[j]) : static_cast<Bits>(~Bits(0));
    }
    __syncwarp();
    if (c0 + kChunk <= first) {  // every j before every element: equal bits count
#pragma unroll 16
      for (int j = 0; j < kChunk; ++j) {
        const Bits other = slice[j];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) count[k] += other <= mine[k];
      }
    } else if (c0 >= first + kElems) {  // every j after every element: only smaller bits count
#pragma unroll 16
      for (int j = 0; j < kChunk; ++j) {
        const Bits other = slice[j];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) count[k] += other < mine[k];
      }
    } else {  // the chunk overlaps the block's elements: ties go to the lower index
      for (int j = 0; j < kChunk; ++j) {
        const Bits other = slice[j];
        const gpuk::i64 jj = c0 + j;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
          const gpuk::i64 i = first + k * 32 + lane;
          count[k] += (other < mine[k]) | ((other == mine[k]) & (jj < i));
        }
      }
    }
    __syncwarp();  // every lane has read the slice before it is restaged
  }

#pragma unroll
  for (int k = 0; k < ITEMS; ++k) partial[warp][k * 32 + lane] = count[k];
  __syncthreads();
  for (int e = warp; e < kElems; e += kWarps) {
    const gpuk::u32 mine_part = lane < kWarps ? partial[lane][e] : 0u;
#if __CUDA_ARCH__ >= 800
    const gpuk::u32 rank = __reduce_add_sync(0xffffffffu, mine_part);
#else
    gpuk::u32 rank = mine_part;
    for (int o = 16; o > 0; o /= 2) rank += __shfl_xor_sync(0xffffffffu, rank, o);
#endif
    const gpuk::i64 i = first + e;
    if (lane == 0 && i < n) {
      a.keys_out[rank] = a.keys_in[i];
      if constexpr (S::kHasValues) a.values_out[rank] = S::value_at(a.values_in, i);
    }
  }
}
