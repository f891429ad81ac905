/* gpuk
family: search
operations: [lower_bound, upper_bound]
dtypes: [int32, uint32, int64, float32, float64]
summary: "lower_bound / upper_bound for sorted needles (needles: sorted): a block takes a tile of BLOCK * ITEMS needles, two warps find the bounds of the tile's least and greatest needle with 32-way searches, and when that window of the haystack holds at most WINDOW keys the block stages it in shared memory and searches it there; otherwise each needle searches the window in global memory. SPLITS 1: a first launch finds the bound of every tile's first needle (a warp each, all at once), and a tile whose least needle is its first and whose greatest is at most the next tile's first takes its window from there instead of searching. Correct for needles in any order (the tile's least and greatest, not its first and last), fast when they are sorted."
fixes: "not a write-up kernel: sorted needles read each haystack key about once, coalesced, instead of log2(n) scattered loads per needle"
params:
  BLOCK: {default: 256, values: [128, 256, 512]}
  ITEMS: {default: 4, values: [1, 2, 4, 8]}
  WINDOW: {default: 2048, values: [1024, 2048, 4096]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
  SPLITS: {default: 0, values: [0, 1]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: bounds_window_splits
    when: SPLITS == 1
    grid: ceil_div(sm_count * 2048, BLOCK)
    block: BLOCK
  - entry: bounds_window
    grid: sm_count * BLOCKS_PER_SM
    block: BLOCK
scratch: 0
*/

// The bounds contract (docs/kernels/search.md, "Bounds"). Every needle's answer lies between the
// answers of the tile's least and greatest needle (a bound is monotone in the needle), so the
// tile only ever looks at hay[a, b]: with sorted needles that window holds about n * tile / m
// keys, and the windows of successive tiles barely overlap.
//
// SPLITS 1: two dependent 32-way searches a tile, each a chain of global loads, are what a tile
// waits on; the first launch does them for every tile at once, a warp each. Split t (t in [0,
// tiles]) is the bound of needle min(t * tile, m - 1): of tile t's first needle, and for t =
// tiles of the last needle (not n: the last tile's window stays narrow). The scratch holds them,
// one 8-byte slot each, sized by the launcher (plugins/search/bounds.cpp: the needles' count is
// not the metadata's to see). Split t serves as a when the tile's least needle is its first, and
// split t + 1 as b when its greatest is at most needle min((t + 1) * tile, m - 1); each is checked
// on its own, and a warp whose check fails searches as SPLITS 0 does (needles in any order stay
// correct).

#include "gpuk/search.cuh"

namespace {

// The first index in [0, n) whose element does not go before q, or n: a 32-way search by one
// warp (33 parts per step, log33(n) dependent loads instead of log2(n)), answer in every lane.
template <class B> __device__ gpuk::i64 warp_partition_point(const typename B::T* hay, gpuk::i64 n, typename B::Bits q) {
  const int lane = threadIdx.x % 32;
  gpuk::i64 lo = 0, hi = n;
  while (hi - lo > 32) {
    const gpuk::i64 len = hi - lo;
    const gpuk::i64 p = lo + len * (lane + 1) / 33;  // strictly increasing over lanes, all < hi
    const unsigned before = __ballot_sync(0xffffffffu, B::before(B::bits(__ldg(hay + p)), q));
    const int c = __popc(before);  // the lanes before q are a prefix: the keys are sorted
    const gpuk::i64 p_prev = __shfl_sync(0xffffffffu, p, c == 0 ? 0 : c - 1);
    const gpuk::i64 p_c = __shfl_sync(0xffffffffu, p, c == 32 ? 31 : c);
    if (c > 0) lo = p_prev + 1;
    if (c < 32) hi = p_c;
  }
  const gpuk::i64 p = lo + lane;
  const bool b = p < hi && B::before(B::bits(__ldg(hay + p)), q);
  return lo + __popc(__ballot_sync(0xffffffffu, b));
}

// The needle whose bound is split t: tile t's first, or the last needle for t = tiles.
__device__ __forceinline__ gpuk::i64 split_needle(gpuk::i64 t, gpuk::i64 tile, gpuk::i64 m) {
  return t * tile < m ? t * tile : m - 1;
}

}  // namespace

template <class B, int BLOCK, int ITEMS, int WINDOW, int BLOCKS_PER_SM, int SPLITS>
__global__ void __launch_bounds__(BLOCK)
bounds_window_splits(const typename B::T* __restrict__ hay, gpuk::i64 n, const typename B::T* __restrict__ needles,
                     gpuk::i64 m, gpuk::i64* __restrict__ out, typename B::Bits* __restrict__ scratch) {
  constexpr int kWarps = BLOCK / 32;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * ITEMS;
  gpuk::i64* const split = reinterpret_cast<gpuk::i64*>(scratch);
  const gpuk::i64 tiles = (m + kTile - 1) / kTile;
  // a warp a split, striding by the grid's warps (the grid cannot see m)
  for (gpuk::i64 t = gpuk::i64(blockIdx.x) * kWarps + threadIdx.x / 32; t <= tiles; t += gpuk::i64(gridDim.x) * kWarps) {
    const gpuk::i64 at = warp_partition_point<B>(hay, n, B::bits(__ldg(needles + split_needle(t, kTile, m))));
    if (threadIdx.x % 32 == 0) split[t] = at;
  }
  (void)out;
}

template <class B, int BLOCK, int ITEMS, int WINDOW, int BLOCKS_PER_SM, int SPLITS>
__global__ void __launch_bounds__(BLOCK)
bounds_window(const typename B::T* __restrict__ hay, gpuk::i64 n, const typename B::T* __restrict__ needles,
              gpuk::i64 m, gpuk::i64* __restrict__ out, typename B::Bits* __restrict__ scratch) {
  using Bits = typename B::Bits;
  static_assert(BLOCK >= 64 && BLOCK % 32 == 0, "two warps find the window");
  static_assert(SPLITS == 0 || SPLITS == 1, "SPLITS: 0 or 1");
  constexpr int kWarps = BLOCK / 32;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * ITEMS;
  __shared__ Bits window[WINDOW];
  __shared__ Bits least[kWarps], greatest[kWarps];
  __shared__ gpuk::i64 bounds[2];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  for (gpuk::i64 base = gpuk::i64(blockIdx.x) * kTile; base < m; base += gpuk::i64(gridDim.x) * kTile) {
    // SPLITS 1: warp 0 loads the tile's first needle and split t, warp 1 the needle after the tile
    // (or the last) and split t + 1, in flight with the tile's needles
    [[maybe_unused]] Bits edge = 0;
    [[maybe_unused]] gpuk::i64 from_split = 0;
    if constexpr (SPLITS == 1) {
      if (warp < 2) {
        const gpuk::i64 t = base / kTile + warp;
        edge = B::bits(__ldg(needles + split_needle(t, kTile, m)));
        from_split = __ldg(reinterpret_cast<const gpuk::i64*>(scratch) + t);
      }
    }
    Bits q[ITEMS];
    Bits lo_q = ~Bits(0), hi_q = 0;  // the thread's least and greatest needle (none: an empty range)
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const gpuk::i64 i = base + gpuk::i64(k) * BLOCK + threadIdx.x;
      q[k] = i < m ? B::bits(__ldg(needles + i)) : Bits(0);
      if (i < m) {
        lo_q = q[k] < lo_q ? q[k] : lo_q;
        hi_q = q[k] > hi_q ? q[k] : hi_q;
      }
    }
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) {
      const Bits a = __shfl_xor_sync(0xffffffffu, lo_q, mask), b = __shfl_xor_sync(0xffffffffu, hi_q, mask);
      lo_q = a < lo_q ? a : lo_q;
      hi_q = b > hi_q ? b : hi_q;
    }
    if (lane == 0) {
      least[warp] = lo_q;
      greatest[warp] = hi_q;
    }
    __syncthreads();
    if (warp < 2) {
      // every warp reads the same table; warp 0 takes the least needle, warp 1 the greatest
      Bits v = warp == 0 ? ~Bits(0) : Bits(0);
      for (int w = 0; w < kWarps; ++w) {
        const Bits x = warp == 0 ? least[w] : greatest[w];
        v = warp == 0 ? (x < v ? x : v) : (x > v ? x : v);
      }
      gpuk::i64 at;
      if constexpr (SPLITS == 1) {
        // the split bounds the tile's answers when its needle bounds the tile's needles (the
        // same in every lane: the warp searches or not as one)
        const bool bounds_tile = warp == 0 ? edge <= v : v <= edge;
        at = bounds_tile ? from_split : warp_partition_point<B>(hay, n, v);
      } else {
        at = warp_partition_point<B>(hay, n, v);
      }
      if (lane == 0) bounds[warp] = at;
    }
    __syncthreads();
    const gpuk::i64 a = bounds[0], b = bounds[1];  // a <= b: the tile has at least one needle
    if (b - a <= WINDOW) {
      for (gpuk::i64 j = threadIdx.x; j < b - a; j += BLOCK) window[j] = B::bits(__ldg(hay + a + j));
      __syncthreads();
      const auto in_window = [&](gpuk::i64 j) { return window[j]; };
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const gpuk::i64 i = base + gpuk::i64(k) * BLOCK + threadIdx.x;
        if (i < m) out[i] = a + gpuk::partition_point<B>(in_window, 0, b - a, q[k]);
      }
    } else {
      const auto in_hay = [&](gpuk::i64 j) { return B::bits(__ldg(hay + j)); };
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const gpuk::i64 i = base + gpuk::i64(k) * BLOCK + threadIdx.x;
        if (i < m) out[i] = gpuk::partition_point<B>(in_hay, a, b, q[k]);
      }
    }
    __syncthreads();  // the window, least, greatest and bounds are rewritten by the next tile
  }
  (void)scratch;
}
