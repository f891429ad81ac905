/* gpuk
family: search
operations: [lower_bound, upper_bound]
dtypes: [int32, uint32, int64, float32, float64]
summary: "lower_bound / upper_bound for sorted needles (needles: sorted): a block takes a run of consecutive tiles of BLOCK * ITEMS needles; per tile two warps find the bounds of its least and greatest needle with 32-way searches (from the previous tile's bound, galloping, when the needles went up since), and when that window of the haystack holds at most WINDOW keys the block stages it in shared memory and searches it there; otherwise each needle searches the window in global memory. Correct for needles in any order (the tile's least and greatest, not its first and last), fast when they are sorted."
fixes: "not a write-up kernel: sorted needles read each haystack key about once, coalesced, instead of log2(n) scattered loads per needle"
params:
  BLOCK: {default: 256, values: [128, 256, 512]}
  ITEMS: {default: 4, values: [1, 2, 4, 8]}
  WINDOW: {default: 2048, values: [1024, 2048, 4096]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: bounds_window
    grid: sm_count * BLOCKS_PER_SM
    block: BLOCK
scratch: 0
*/

// The bounds contract (docs/kernels/search.md, "Bounds"). Every needle's answer lies between the
// answers of the tile's least and greatest needle (a bound is monotone in the needle), so the
// tile only ever looks at hay[a, b]: with sorted needles that window holds about n * tile / m
// keys, and the windows of successive tiles barely overlap.

#include "gpuk/search.cuh"

namespace {

// The first index in [lo, hi) whose element does not go before q, or hi: a 32-way search by one
// warp (33 parts per step, log33(hi - lo) dependent loads instead of log2), answer in every lane.
template <class B>
__device__ gpuk::i64 warp_partition_point(const typename B::T* hay, gpuk::i64 lo, gpuk::i64 hi, typename B::Bits q) {
  const int lane = threadIdx.x % 32;
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

// The same answer in [0, n) when it is known to be at least `from`: one round of 32 probes at
// from + (lane + 1) * step - 1 brackets it within `step` keys (a sorted run of needles lands just
// past the previous tile's answers), else the search goes on over what is left.
template <class B>
__device__ gpuk::i64 warp_gallop(const typename B::T* hay, gpuk::i64 from, gpuk::i64 n, gpuk::i64 step,
                                 typename B::Bits q) {
  const int lane = threadIdx.x % 32;
  const gpuk::i64 p = from + (lane + 1) * step - 1;
  const unsigned before = __ballot_sync(0xffffffffu, p < n && B::before(B::bits(__ldg(hay + p)), q));
  const int c = __popc(before);  // a prefix: past n nothing goes before
  const gpuk::i64 lo = from + c * step;
  return warp_partition_point<B>(hay, lo < n ? lo : n, c == 32 ? n : (lo + step < n ? lo + step : n), q);
}

}  // namespace

template <class B, int BLOCK, int ITEMS, int WINDOW, int BLOCKS_PER_SM>
__global__ void __launch_bounds__(BLOCK)
bounds_window(const typename B::T* __restrict__ hay, gpuk::i64 n, const typename B::T* __restrict__ needles,
              gpuk::i64 m, gpuk::i64* __restrict__ out, typename B::Bits* __restrict__ scratch) {
  using Bits = typename B::Bits;
  static_assert(BLOCK >= 64 && BLOCK % 32 == 0, "two warps find the window");
  constexpr int kWarps = BLOCK / 32;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * ITEMS;
  __shared__ Bits window[WINDOW];
  __shared__ Bits least[kWarps], greatest[kWarps];
  __shared__ gpuk::i64 bounds[2];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  __shared__ Bits top;  // the tile's greatest needle
  // A run of consecutive tiles per block, so that each tile's searches can start from the last one's.
  const gpuk::i64 tiles = (m + kTile - 1) / kTile, per = (tiles + gridDim.x - 1) / gridDim.x;
  const gpuk::i64 first = gpuk::i64(blockIdx.x) * per, last = first + per < tiles ? first + per : tiles;
  gpuk::i64 prev_a = 0, prev_b = -1;  // the previous tile's bounds (none: prev_b < 0)
  Bits prev_top = 0;
  // The tile's needles; the next tile's are loaded while this one is searched.
  Bits q[ITEMS], q_next[ITEMS];
  const auto load_tile = [&](gpuk::i64 base, Bits(&into)[ITEMS]) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const gpuk::i64 i = base + gpuk::i64(k) * BLOCK + threadIdx.x;
      into[k] = i < m ? B::bits(__ldg(needles + i)) : Bits(0);
    }
  };
  if (first < last) load_tile(first * kTile, q_next);
  for (gpuk::i64 base = first * kTile; base < last * kTile; base += kTile) {
    Bits lo_q = ~Bits(0), hi_q = 0;  // the thread's least and greatest needle (none: an empty range)
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const gpuk::i64 i = base + gpuk::i64(k) * BLOCK + threadIdx.x;
      q[k] = q_next[k];
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
    if (base + kTile < last * kTile) load_tile(base + kTile, q_next);
    if (warp < 2) {
      // every warp reads the same table; warp 0 takes the least needle, warp 1 the greatest
      Bits v = warp == 0 ? ~Bits(0) : Bits(0);
      for (int w = 0; w < kWarps; ++w) {
        const Bits x = warp == 0 ? least[w] : greatest[w];
        v = warp == 0 ? (x < v ? x : v) : (x > v ? x : v);
      }
      // A needle not below the previous tile's greatest has its answer at or past that one's
      // (bounds are monotone in the needle): gallop from there, in steps of 1/16 of the last window.
      gpuk::i64 at;
      if (prev_b >= 0 && v >= prev_top) {
        const gpuk::i64 w = (prev_b - prev_a) / 16 + 1;
        at = warp_gallop<B>(hay, prev_b, n, warp == 0 ? 32 : (w > 32 ? w : 32), v);
      } else {
        at = warp_partition_point<B>(hay, 0, n, v);
      }
      if (lane == 0) {
        bounds[warp] = at;
        if (warp == 1) top = v;
      }
    }
    __syncthreads();
    const gpuk::i64 a = bounds[0], b = bounds[1];  // a <= b: the tile has at least one needle
    prev_a = a;
    prev_b = b;
    prev_top = top;
    if (b - a <= WINDOW) {
      for (gpuk::i64 j = threadIdx.x; j < b - a; j += BLOCK) window[j] = B::bits(__ldg(hay + a + j));
      __syncthreads();
    }
    // The ITEMS searches step together (gpuk::partition_points), in the window or else in [a, b).
    gpuk::i64 lo[ITEMS], count[ITEMS];
    const bool staged = b - a <= WINDOW;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      lo[k] = staged ? 0 : a;
      count[k] = base + gpuk::i64(k) * BLOCK + threadIdx.x < m ? b - a : 0;
    }
    if (staged) gpuk::partition_points<B, ITEMS>([&](gpuk::i64 j) { return window[j]; }, lo, count, q);
    else gpuk::partition_points<B, ITEMS>([&](gpuk::i64 j) { return B::bits(__ldg(hay + j)); }, lo, count, q);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const gpuk::i64 i = base + gpuk::i64(k) * BLOCK + threadIdx.x;
      if (i < m) out[i] = (staged ? a : 0) + lo[k];
    }
    __syncthreads();  // the window, least, greatest and bounds are rewritten by the next tile
  }
  (void)scratch;
}
