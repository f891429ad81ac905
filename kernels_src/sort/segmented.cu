/* gpuk
family: sort
operations: [segmented_sort, segmented_sort_pairs]
summary: Segmented sort, stable, each segment [begin_offsets[s], end_offsets[s]) sorted on its own. Segments binned by length in two launches over all segments. One warp each for segments of at most 32 keys (a bitonic sort of (bits, index) in registers by shuffles), one block each for the rest (a bitonic sort of up to BLOCK * ITEMS (bits, index) pairs in shared memory; a longer segment sorts its tiles so and merges them pairwise through the scratch, every thread merging ITEMS outputs found by a merge-path search, the last merge writing the keys and values).
params:
  WARPS: {default: 8, values: [4, 8, 16]}
  BLOCK: {default: 256, values: [128, 256, 512]}
  ITEMS: {default: 16, values: [4, 8, 16]}
constraints:
  - BLOCK * ITEMS * (elem_bytes + 4) <= 98304
launch:
  - entry: segmented_warp
    grid: 1
    block: WARPS * 32
  - entry: segmented_block
    grid: 1
    block: BLOCK
    shared: BLOCK * ITEMS * (elem_bytes + 4)
scratch: 0
*/

// Why it is shaped like this (docs/kernels/sort.md, "Segmented sort"):
// - Stable by construction: every key sorts by (S::bits(key), its index in the segment), a strict
//   total order, so neither the bitonic networks nor the merges need to be stable themselves.
// - Keys and values are gathered from the input by the sorted indices at the end, so NaNs (all
//   one bits in the total order) come out with their own payloads and signs.
// - The grids are the launcher's (plugins/sort/segmented_launcher.cpp): the warp launch covers the
//   segments WARPS a block, the block launch one block per segment; each skips the other's
//   segments. The launcher gives a block launch's scratch 2 * n (bits, index) pairs.

#include "gpuk/sort.cuh"

using gpuk::i64;
using gpuk::u32;
using gpuk::u64;

namespace {

// The host mirror is in plugins/sort/segmented_launcher.cpp (keep the layout in step).
template <class S> struct SegArgs {
  const typename S::K* keys_in;
  typename S::K* keys_out;
  const typename S::V* values_in;  // nullptr for keys only
  typename S::V* values_out;
  const i64* begin_offsets;
  const i64* end_offsets;
  void* scratch;  // 2 * n bits then 2 * n u32 indices (segments longer than a tile only)
  i64 n;
  i64 segments;
};

template <class B> __device__ __forceinline__ bool before(B ba, u32 ia, B bb, u32 ib) {
  return ba < bb || (ba == bb && ia < ib);
}

template <class S> __device__ __forceinline__ void emit(const SegArgs<S>& a, i64 begin, i64 at, u32 index) {
  a.keys_out[begin + at] = a.keys_in[begin + index];
  if constexpr (S::kHasValues) a.values_out[begin + at] = a.values_in[begin + index];
}

// Bitonic sort of p (a power of two, <= BLOCK * ITEMS) pairs in shared memory, ascending.
template <class B, int BLOCK> __device__ void block_bitonic(B* bits, u32* idx, int p) {
  for (int k = 2; k <= p; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int t = threadIdx.x; t < p / 2; t += BLOCK) {
        const int i = 2 * j * (t / j) + t % j, q = i + j;
        const bool up = (i & k) == 0;
        const B bi = bits[i], bq = bits[q];
        const u32 ii = idx[i], iq = idx[q];
        if (before(bq, iq, bi, ii) == up) {
          bits[i] = bq, bits[q] = bi;
          idx[i] = iq, idx[q] = ii;
        }
      }
      __syncthreads();
    }
  }
}

}  // namespace

// One warp per segment of at most 32 keys.
template <class S, int WARPS, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(WARPS * 32) segmented_warp(SegArgs<S> a) {
  using B = typename S::Bits;
  const i64 seg = static_cast<i64>(blockIdx.x) * WARPS + threadIdx.x / 32;
  if (seg >= a.segments) return;
  const i64 begin = a.begin_offsets[seg], len = a.end_offsets[seg] - begin;
  if (len <= 0 || len > 32) return;  // the whole warp leaves together
  const int lane = threadIdx.x % 32;
  B b = lane < len ? S::bits(a.keys_in[begin + lane]) : ~B(0);
  u32 ix = lane < len ? static_cast<u32>(lane) : 0xffffffffu;
#pragma unroll
  for (int k = 2; k <= 32; k <<= 1) {
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
      const B ob = __shfl_xor_sync(0xffffffffu, b, j);
      const u32 oi = __shfl_xor_sync(0xffffffffu, ix, j);
      const bool lower = (lane & j) == 0, up = (lane & k) == 0;
      // The lower lane of a pair keeps the smaller in an ascending run, the larger in a descending.
      const bool other_first = before(ob, oi, b, ix);
      if (lower == up ? other_first : !other_first) b = ob, ix = oi;
    }
  }
  if (lane < len) emit(a, begin, lane, ix);
}

// One block per segment of more than 32 keys.
template <class S, int WARPS, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) segmented_block(SegArgs<S> a) {
  using B = typename S::Bits;
  constexpr int kTile = BLOCK * ITEMS;
  extern __shared__ __align__(16) unsigned char smem[];
  B* bits = reinterpret_cast<B*>(smem);
  u32* idx = reinterpret_cast<u32*>(bits + kTile);
  const i64 seg = blockIdx.x;
  const i64 begin = a.begin_offsets[seg], len = a.end_offsets[seg] - begin;
  if (len <= 32) return;
  B* sbits[2] = {static_cast<B*>(a.scratch) + begin, static_cast<B*>(a.scratch) + a.n + begin};
  u32* sidx[2] = {reinterpret_cast<u32*>(static_cast<B*>(a.scratch) + 2 * a.n) + begin,
                  reinterpret_cast<u32*>(static_cast<B*>(a.scratch) + 2 * a.n) + a.n + begin};
  // Tiles sorted in shared memory: the whole segment, or each tile into scratch 0.
  for (i64 t0 = 0; t0 < len; t0 += kTile) {
    const int m = static_cast<int>(min(static_cast<i64>(kTile), len - t0));
    int p = 64;
    while (p < m) p <<= 1;
    for (int i = threadIdx.x; i < p; i += BLOCK) {
      bits[i] = i < m ? S::bits(a.keys_in[begin + t0 + i]) : ~B(0);
      idx[i] = i < m ? static_cast<u32>(t0 + i) : 0xffffffffu;
    }
    __syncthreads();
    block_bitonic<B, BLOCK>(bits, idx, p);
    for (int i = threadIdx.x; i < m; i += BLOCK) {
      if (len <= kTile) emit(a, begin, i, idx[i]);
      else sbits[0][t0 + i] = bits[i], sidx[0][t0 + i] = idx[i];
    }
    __syncthreads();
  }
  if (len <= kTile) return;
  // Pairwise merges of runs of width w, ping-ponging through the scratch; the last one emits.
  int from = 0;
  for (i64 w = kTile; w < len; w *= 2) {
    __syncthreads();  // the previous pass's writes, by other threads, are visible to the block
    const bool last = 2 * w >= len;
    const B* fb = sbits[from];
    const u32* fi = sidx[from];
    for (i64 o0 = static_cast<i64>(threadIdx.x) * ITEMS; o0 < len; o0 += static_cast<i64>(BLOCK) * ITEMS) {
      const i64 run = o0 / (2 * w) * (2 * w);  // the start of this output's pair of runs
      const i64 la = min(w, len - run), lb = min(w, len - run - la);
      const B* ab = fb + run;
      const u32* ai = fi + run;
      const B* bb = ab + la;
      const u32* bi = ai + la;
      const i64 d = o0 - run;
      // Merge path: i of A's keys among the first d outputs.
      i64 lo = max(i64(0), d - lb), hi = min(d, la);
      while (lo < hi) {
        const i64 mid = (lo + hi) / 2;
        if (before(ab[mid], ai[mid], bb[d - 1 - mid], bi[d - 1 - mid])) lo = mid + 1;
        else hi = mid;
      }
      i64 i = lo, j = d - lo;
      const i64 end = min(static_cast<i64>(ITEMS), la + lb - d);
      for (i64 o = 0; o < end; ++o) {
        const bool take_a = j >= lb || (i < la && before(ab[i], ai[i], bb[j], bi[j]));
        const B ob = take_a ? ab[i] : bb[j];
        const u32 oi = take_a ? ai[i] : bi[j];
        take_a ? ++i : ++j;
        if (last) emit(a, begin, run + d + o, oi);
        else sbits[1 - from][run + d + o] = ob, sidx[1 - from][run + d + o] = oi;
      }
    }
    from = 1 - from;
  }
}
