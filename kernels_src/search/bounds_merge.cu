/* gpuk
family: search
operations: [lower_bound, upper_bound]
dtypes: [int32, uint32, int64, float32, float64]
summary: "lower_bound / upper_bound for sorted needles about as many as the keys, by merge path: a first launch splits the merge of keys and needles into tiles of BLOCK * ITEMS elements (the split of each tile's first diagonal, 16 lanes a diagonal, 17-way steps); each block of the second strides over tiles, loads its tile's keys and needles into shared memory with every load in flight at once (the next tile's loads issued before this tile is merged), merges ITEMS elements a thread from a merge-path search of its own diagonal, and writes the answers coalesced. Every answer is checked against the keys beside it, so needles in any order stay correct (then slowly: out-of-order answers search the haystack)."
fixes: "not a write-up kernel: bounds_window waits per tile on a needle load, two 32-way searches and a window load (a chain of dependent loads with little in flight), so dense sorted needles ran at a quarter of the memory's speed; here a tile waits only for loads issued a tile earlier"
params:
  BLOCK: {default: 256, values: [128, 256, 512]}
  ITEMS: {default: 15, values: [5, 7, 11, 15]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
  SPLITS: {default: 1, values: [1]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: bounds_merge_splits
    grid: ceil_div(sm_count * 2048, BLOCK)
    block: BLOCK
  - entry: bounds_merge
    grid: sm_count * BLOCKS_PER_SM
    block: BLOCK
    shared: (BLOCK * ITEMS + 2) * elem_bytes + BLOCK * ITEMS * 4
scratch: ceil_div(n, BLOCK * ITEMS)
*/

// The bounds contract (docs/kernels/search.md, "Bounds"). Merge the keys and the needles with key
// k before needle j exactly when B::before(key k, needle j): needle j's answer is the number of
// keys before it in that merge. With both sorted that merge exists, and cut into tiles of kTile
// elements each tile holds about as many keys as needles and needs no key outside it: the work
// and the shared memory of a tile are fixed whatever the needles' spread (bounds_window's windows
// are not). Ties, NaN (every NaN equal and last) and -0.0 < +0.0 come from B::bits and B::before
// alone, as in every bounds kernel.
//
// Scratch: split t (t in [0, tiles], tiles = ceil((n + m) / kTile)) is the number of keys among
// the merge's first min(t * kTile, n + m) elements. The slots are ceil(n / kTile) from `scratch:`
// and ceil(m / kTile) + 1 more from the launcher for SPLITS 1 (plugins/search/bounds.cpp: the
// metadata cannot see m), together at least tiles + 1. SPLITS has the one value: the tiles' splits
// always come from the first launch, so that a tile's own path has no search in global memory.
//
// Needles out of order: a tile is taken as a merge only when its splits are in order (its keys
// and needles each a range, together at most kTile); each answer the merge gives is then kept only
// when the key before it goes before the needle and the key at it does not (the tile stages one
// key beyond each end for that), which holds exactly for the right answer. Anything else searches
// the haystack. The tiles' needle ranges [j_t, j_t+1) run from 0 to m, so every needle is in one
// of them even when they overlap; a needle in two gets the same exact answer twice.

#include "gpuk/search.cuh"

namespace {

constexpr int kGroup = 16;  // lanes a diagonal in the first launch: one wave of the GPU's threads
                            // holds the 2^25 / 3840 diagonals of 2^24 needles in 2^24 keys

// Split of diagonal d: the first i in [max(0, d - m), min(d, n)] such that key i does not go
// before needle d - 1 - i (or the range's end), by the kGroup lanes of `mask` with (kGroup + 1)-way
// steps: log17 of the range in dependent loads (two a lane, both in flight) instead of log2.
template <class B>
__device__ gpuk::i64 diagonal_split(const typename B::T* __restrict__ hay, gpuk::i64 n,
                                    const typename B::T* __restrict__ needles, gpuk::i64 m, gpuk::i64 d, unsigned mask,
                                    int lane) {
  gpuk::i64 lo = d - m > 0 ? d - m : 0, hi = d < n ? d : n;
  const auto takes_key = [&](gpuk::i64 i) {
    return B::before(B::bits(__ldg(hay + i)), B::bits(__ldg(needles + (d - 1 - i))));
  };
  while (hi - lo > kGroup) {
    const gpuk::i64 len = hi - lo;
    const gpuk::i64 p = lo + len * (lane + 1) / (kGroup + 1);  // strictly increasing over lanes, all < hi
    const int c = __popc(__ballot_sync(mask, takes_key(p)) & mask);  // a prefix when both are sorted
    const gpuk::i64 p_prev = __shfl_sync(mask, p, c == 0 ? 0 : c - 1, kGroup);
    const gpuk::i64 p_c = __shfl_sync(mask, p, c == kGroup ? kGroup - 1 : c, kGroup);
    if (c > 0) lo = p_prev + 1;
    if (c < kGroup) hi = p_c;
  }
  const gpuk::i64 p = lo + lane;
  return lo + __popc(__ballot_sync(mask, p < hi && takes_key(p)) & mask);
}

// A tile of the merge: keys [i0, i1) and needles [j0, j1); staged are the keys [kb, kb + keys)
// (one more at each end where there is one, for the answers' checks) then the needles.
struct Tile {
  gpuk::i64 i0, i1, j0, j1, kb;
  int keys, staged;  // keys staged, and keys + needles staged (0: nothing to stage)
  bool merged;       // splits in order: the tile is a merge of at most kTile elements
};

template <int kTile>
__device__ __forceinline__ Tile tile_of(gpuk::i64 t, gpuk::i64 split_lo, gpuk::i64 split_hi, gpuk::i64 n, gpuk::i64 total) {
  Tile s;
  const gpuk::i64 d0 = t * kTile, d1 = d0 + kTile < total ? d0 + kTile : total;
  s.i0 = split_lo;
  s.i1 = split_hi;
  s.j0 = d0 - split_lo;
  s.j1 = d1 - split_hi;
  s.merged = s.i0 <= s.i1 && s.j0 <= s.j1;
  s.kb = s.i0 > 0 ? s.i0 - 1 : 0;
  const gpuk::i64 ke = s.i1 < n ? s.i1 + 1 : n;
  s.keys = s.merged ? static_cast<int>(ke - s.kb) : 0;
  // a tile without needles has nothing to answer: its keys are not read
  s.staged = s.merged && s.j1 > s.j0 ? s.keys + static_cast<int>(s.j1 - s.j0) : 0;
  return s;
}

}  // namespace

template <class B, int BLOCK, int ITEMS, int BLOCKS_PER_SM, int SPLITS>
__global__ void __launch_bounds__(BLOCK)
bounds_merge_splits(const typename B::T* __restrict__ hay, gpuk::i64 n, const typename B::T* __restrict__ needles,
                    gpuk::i64 m, gpuk::i64* __restrict__ out, typename B::Bits* __restrict__ scratch) {
  static_assert(BLOCK % 32 == 0, "whole warps of whole groups");
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * ITEMS;
  constexpr int kGroups = BLOCK / kGroup;
  gpuk::i64* const split = reinterpret_cast<gpuk::i64*>(scratch);
  const gpuk::i64 total = n + m, tiles = (total + kTile - 1) / kTile;
  const int lane = threadIdx.x % kGroup;
  const unsigned mask = 0xffffu << (threadIdx.x % 32 / kGroup * kGroup);
  // a group a split, striding by the grid's groups (the grid cannot see m); t is the group's own,
  // so the two groups of a warp may leave the loop apart (every vote names its group's lanes)
  for (gpuk::i64 t = gpuk::i64(blockIdx.x) * kGroups + threadIdx.x / kGroup; t <= tiles;
       t += gpuk::i64(gridDim.x) * kGroups) {
    const gpuk::i64 d = t * kTile < total ? t * kTile : total;
    const gpuk::i64 at = diagonal_split<B>(hay, n, needles, m, d, mask, lane);
    if (lane == 0) split[t] = at;
  }
  (void)out;
}

template <class B, int BLOCK, int ITEMS, int BLOCKS_PER_SM, int SPLITS>
__global__ void __launch_bounds__(BLOCK)
bounds_merge(const typename B::T* __restrict__ hay, gpuk::i64 n, const typename B::T* __restrict__ needles,
             gpuk::i64 m, gpuk::i64* __restrict__ out, typename B::Bits* __restrict__ scratch) {
  using T = typename B::T;
  using Bits = typename B::Bits;
  static_assert(SPLITS == 1, "SPLITS: the splits come from the first launch");
  constexpr int kTile = BLOCK * ITEMS;
  constexpr int kSlots = ITEMS + 1;  // slot ITEMS: the staged elements past kTile (the two guard keys)
  extern __shared__ __align__(16) unsigned char smem[];
  Bits* const staged = reinterpret_cast<Bits*>(smem);              // kTile + 2
  int* const answer = reinterpret_cast<int*>(staged + kTile + 2);  // kTile: needle's answer - i0
  const gpuk::i64* const split = reinterpret_cast<const gpuk::i64*>(scratch);
  const gpuk::i64 total = n + m, tiles = (total + kTile - 1) / kTile, stride = gridDim.x;
  gpuk::i64 t = blockIdx.x;
  if (t >= tiles) return;  // the whole block: no barrier is left waiting

  T loaded[kSlots];
  // slot k of a thread is staged element k * BLOCK + threadIdx.x: a key, or past the keys a needle
  const auto load = [&](const Tile& s) {
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      const int e = k * BLOCK + threadIdx.x;
      if (e < s.staged) loaded[k] = __ldg(e < s.keys ? hay + (s.kb + e) : needles + (s.j0 + (e - s.keys)));
    }
  };
  const auto in_hay = [&](gpuk::i64 j) { return B::bits(__ldg(hay + j)); };

  Tile cur = tile_of<kTile>(t, __ldg(split + t), __ldg(split + t + 1), n, total);
  load(cur);
  gpuk::i64 next_lo = 0, next_hi = 0;  // the splits of the next tile, a tile ahead of its loads
  if (t + stride < tiles) {
    next_lo = __ldg(split + t + stride);
    next_hi = __ldg(split + t + stride + 1);
  }
  for (;;) {
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      const int e = k * BLOCK + threadIdx.x;
      if (e < cur.staged) staged[e] = B::bits(loaded[k]);
    }
    __syncthreads();
    // the next tile's loads (and the splits of the one after) in flight while this one merges
    const gpuk::i64 tn = t + stride;
    Tile nxt = cur;
    if (tn < tiles) {
      nxt = tile_of<kTile>(tn, next_lo, next_hi, n, total);
      load(nxt);
      if (tn + stride < tiles) {
        next_lo = __ldg(split + tn + stride);
        next_hi = __ldg(split + tn + stride + 1);
      }
    }
    if (cur.staged > 0) {
      const int nk = static_cast<int>(cur.i1 - cur.i0), nj = static_cast<int>(cur.j1 - cur.j0);
      const Bits* const keys = staged + (cur.i0 - cur.kb);  // key i0 (past the guard key, if any)
      const Bits* const nd = staged + cur.keys;
      const int count = nk + nj;
      // this thread's diagonal: the keys among the tile's first d elements, searched in shared memory
      const int d = threadIdx.x * ITEMS < count ? threadIdx.x * ITEMS : count;
      int lo = d - nj > 0 ? d - nj : 0, hi = d < nk ? d : nk;
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (B::before(keys[mid], nd[d - 1 - mid])) lo = mid + 1;
        else hi = mid;
      }
      int a = lo, b = d - lo;
      Bits kv = a < nk ? keys[a] : Bits(0), nv = b < nj ? nd[b] : Bits(0);
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        if (d + k < count) {
          if (b >= nj || (a < nk && B::before(kv, nv))) {
            if (++a < nk) kv = keys[a];
          } else {
            answer[b] = a;
            if (++b < nj) nv = nd[b];
          }
        }
      }
      __syncthreads();
      for (int j = threadIdx.x; j < nj; j += BLOCK) {
        const Bits q = nd[j];
        const int r = answer[j];
        gpuk::i64 at = cur.i0 + r;
        // exact when the key before goes before q and the key at does not (the staged guard keys
        // cover at = i0 and at = i1); sorted needles always pass
        bool exact = r >= 0 && r <= nk;
        if (exact)
          exact = (at == 0 || B::before(staged[at - 1 - cur.kb], q)) && (at == n || !B::before(staged[at - cur.kb], q));
        if (!exact) at = gpuk::partition_point<B>(in_hay, 0, n, q);
        out[cur.j0 + j] = at;
      }
    } else if (!cur.merged) {
      for (gpuk::i64 j = cur.j0 + threadIdx.x; j < cur.j1; j += BLOCK)
        out[j] = gpuk::partition_point<B>(in_hay, 0, n, B::bits(__ldg(needles + j)));
    }
    if (tn >= tiles) break;
    __syncthreads();  // staged and answer are rewritten by the next tile
    cur = nxt;
    t = tn;
  }
}
