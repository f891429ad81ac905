/* gpuk
family: sort
operations: [segmented_sort, segmented_sort_pairs]
summary: Segmented sort, stable, each segment [begin_offsets[s], end_offsets[s]) sorted on its own, in two launches over all segments (three with WARP 1). The block launch strides over the segments in rounds of consecutive ones, a block each. A segment of at most 32 keys is sorted by one warp (each lane ranks its key by (bits, index) against the others, broadcast by shuffles, and writes it there; WARP 1 leaves those to a launch of their own before, one warp a segment), one of at most BLOCK * ITEMS keys by a block radix sort in shared memory (8-bit digits ranked with warp ballots, on a tile of BLOCK, 4 * BLOCK or BLOCK * ITEMS keys by the length), and a longer one is listed, a tile an entry. The merge launch sorts the listed segments over the whole GPU, their tiles radix-sorted by any block, then merged pairwise pass after pass, each block merging one tile's worth of outputs of a pair of runs (merge-path split, the runs' keys through shared memory, coalesced stores), taken in ticket order and started once the runs it reads are complete. With LONG 1, long segments by LSD digit passes over the GPU instead (a histogram ticket per tile, then per pass a tile ranked in the block and scattered through a look-back over the segment's earlier tiles).
params:
  WARPS: {default: 8, values: [4, 8, 16]}
  BLOCK: {default: 128, values: [128, 256, 512]}
  ITEMS: {default: 8, values: [4, 8, 16]}
  MIN_BLOCKS: {default: 2, values: [1, 2, 3, 4]}
  LONG: {default: 0, values: [0, 1]}
  WARP: {default: 1, values: [0, 1]}
constraints:
  - BLOCK * ITEMS * 8 + (BLOCK / 32 + 2) * 1024 + 64 <= 232448
  - BLOCK * MIN_BLOCKS <= 2048
  - n < 4294967295
launch:
  - entry: segmented_warp
    grid: 1
    block: WARPS * 32
    when: WARP == 1
  - entry: segmented_block
    grid: sm_count * 4
    block: BLOCK
    shared: BLOCK * ITEMS * 8 + (BLOCK / 32 + 2) * 1024 + 64
  - entry: segmented_merge
    grid: sm_count * 4
    block: BLOCK
    shared: BLOCK * ITEMS * 8 + (BLOCK / 32 + 2) * 1024 + 64
scratch: 8 + 34 * 2 * ceil_div(n, BLOCK * ITEMS) + LONG * ceil_div(n, BLOCK * ITEMS) * (1024 + ceil_div(elem_bytes * 8, 7) * 256)
*/

// Why it is shaped like this (docs/kernels/sort.md, "Segmented sort"):
// - Bins by length, each launch skipping the others' segments: a fixed grid that strides over
//   the segments (segmented_block) or over work tickets (segmented_merge), so that 65,536 short
//   segments cost no block launches of their own. The block launch's warps sort the segments of
//   at most 32 keys (WARP 0): for 256 segments of 4,096 keys a launch less (0.0278 ms against
//   0.0299 on an H200). WARP 1 gives those a launch of their own, one warp each (segmented_warp):
//   for 65,536 segments of 16 keys, 0.0261 ms against 0.0362.
// - Stable by construction: the warp ranks by (S::bits(key), its index), a strict total order;
//   the radix sorts are stable LSD passes; a merge takes the left run's key on equal bits. NaNs
//   (all one bits in the total order) keep their own payloads and signs: keys move, not bits.
// - Segments longer than a tile (BLOCK * ITEMS keys) are listed by segmented_block (scratch), one
//   entry per tile. segmented_merge then runs (merge passes + 1) * entries tickets, pass-major:
//   pass 0 radix-sorts each tile, pass q merges runs of 2^(q-1) tiles into runs of 2^q, the
//   output of one tile per ticket. A ticket of pass q waits for the count of finished pass q - 1
//   tickets of its group of tiles; those tickets are smaller, so they are held by blocks already
//   running (the only waits are on earlier tickets: no deadlock, whatever the grid). The passes
//   ping-pong between keys_out (values_out) and the spare arrays, parity chosen per segment so
//   that its last pass lands in the outputs. Reads of data written during the launch bypass L1.
// - Scratch words (zero when bound, left zero by the last block of segmented_merge): [0] the
//   ticket counter, [1] the list's length, [2] the most merge passes of a listed segment, [3] the
//   blocks of segmented_merge finished; from [8] the list (u64: segment << 32 | tile, cap =
//   2 * ceil_div(n, tile) entries, more than the tiles of disjoint segments longer than a tile),
//   then 32 rows of cap counters (row q: pass q's finished tickets per group of 2^(q+1) tiles,
//   at the group's first entry), each segment zeroing its own before it is listed.

#include "gpuk/segment_passes.cuh"
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
  u32* words;                       // the scratch words above
  typename S::K* keys_spare;        // n keys: the merge passes' other buffer
  typename S::V* values_spare;      // n values (nullptr for keys only)
  i64 n;
  i64 segments;
};

constexpr int kListWord = 8;

// A load that bypasses L1 (ld.global.cg): data that other blocks wrote during this launch. The
// key and value types are all among __ldcg's (int, unsigned, long long, their unsigned, float,
// double).
template <class T> __device__ __forceinline__ T load_cg(const T* p) { return __ldcg(p); }

__device__ __forceinline__ u32 ceil_log2(u64 x) { return x <= 1 ? 0u : 64u - static_cast<u32>(__clzll(x - 1)); }

// The radix bits of a block radix sort with BLOCK threads (gpuk::BlockRank needs BLOCK >= 2^bits).
template <int BLOCK> constexpr int kRadixBits = BLOCK >= 256 ? 8 : 7;
// The block radix sorts' peer matching: CUB's MatchAny as inline PTX (gpuk::match_peers 0), fewer
// instructions a digit than match_digit's C++ ballots; the block sorts are bound by instruction
// issue (a block of 4,096 keys on an H200: 45% of cycles issue, 2 blocks an SM).
constexpr int kMatch = 0;

// LONG 1's digit passes (gpuk/segment_passes.cuh) and their scratch after the 32 counter rows: a
// look-back row of kRadix u64 entries per listed tile, then a table of every pass's digit counts
// per listed segment, at the half of its first entry's index (a listed segment has two tiles or
// more, so those halves differ).
template <class S, int BLOCK, int ITEMS>
using Passes = gpuk::SegmentPasses<S, BLOCK, ITEMS, kRadixBits<BLOCK>, kMatch>;
// (Templates on the passes, as the table's: instantiated only with LONG 1, so that NVRTC's check of
// a LONG 0 variant finds no unused function.)
template <class P> __device__ __forceinline__ u64* look_rows(u32* words, u64 cap) {
  return reinterpret_cast<u64*>(words + kListWord + 34 * cap);
}
template <class P> __device__ __forceinline__ u32* digit_table(u32* words, u64 cap, u64 base) {
  return words + kListWord + 34 * cap + 2 * cap * P::kRadix + (base / 2) * P::kPasses * P::kRadix;
}

// A block radix sort of `len` (<= BLOCK * ITEMS) keys (and values) from `in` to `out`, every
// thread of the block calling it; `smem` as block_radix_sort needs it. SMALLER: a segment that fits
// a smaller tile sorts on it (a block round's segments of any length); without, always on the
// full tile (the merge sort's tiles, all full but a segment's last: one instantiation, less to
// compile).
template <class S, int BLOCK, int ITEMS, bool SMALLER = true>
__device__ __forceinline__ void sort_tile(const typename S::K* keys_in, const typename S::V* values_in,
                                          typename S::K* keys_out, typename S::V* values_out, i64 len,
                                          unsigned char* smem) {
  gpuk::SortArgs<S> t{};
  t.keys_in = keys_in;
  t.keys_out = keys_out;
  t.values_in = values_in;
  t.values_out = values_out;
  t.n = len;
  t.passes = 1;
  __syncthreads();  // the block's previous use of smem is over
  // The smallest of three tiles that holds the segment: the ranking's work is per slot.
  if constexpr (SMALLER) {
    if (len <= BLOCK) {
      gpuk::block_radix_sort<S, BLOCK, 1, kRadixBits<BLOCK>, kMatch>(t, smem);
      return;
    }
    if (ITEMS > 4 && len <= 4 * BLOCK) {
      gpuk::block_radix_sort<S, BLOCK, (ITEMS > 4 ? 4 : ITEMS), kRadixBits<BLOCK>, kMatch>(t, smem);
      return;
    }
  }
  gpuk::block_radix_sort<S, BLOCK, ITEMS, kRadixBits<BLOCK>, kMatch>(t, smem);
}

}  // namespace

// A segment of at most 32 keys sorted by one warp (every lane calls it, len the same in all):
// lane i holds key i and counts the keys that go before it, (bits, index) in order, from len
// broadcasts (a shuffle each, len <= 32: fewer instructions than a 32-wide bitonic network's 15
// exchange steps of two shuffles), then writes its key (and value) at that rank.
template <class S>
__device__ __forceinline__ void warp_sort(const SegArgs<S>& a, i64 begin, int n, int lane) {
  using B = typename S::Bits;
  typename S::K key{};
  typename S::V value{};
  if (lane < n) {
    key = a.keys_in[begin + lane];
    if constexpr (S::kHasValues) value = a.values_in[begin + lane];
  }
  const B b = S::bits(key);
  u32 rank = 0;
#pragma unroll 4
  for (int j = 0; j < n; ++j) {
    const B o = __shfl_sync(0xffffffffu, b, j);
    rank += (o < b || (o == b && j < lane)) ? 1u : 0u;
  }
  if (lane < n) {
    a.keys_out[begin + rank] = key;
    if constexpr (S::kHasValues) a.values_out[begin + rank] = value;
  }
}

// WARP 1: one warp per segment of at most 32 keys, WARPS warps a block.
template <class S, int WARPS, int BLOCK, int ITEMS, int MIN_BLOCKS, int LONG, int WARP>
__global__ void __launch_bounds__(WARPS * 32) segmented_warp(SegArgs<S> a) {
  const i64 seg = static_cast<i64>(blockIdx.x) * WARPS + threadIdx.x / 32;
  if (seg >= a.segments) return;
  const i64 begin = a.begin_offsets[seg], len = a.end_offsets[seg] - begin;
  if (len <= 0 || len > 32) return;  // the whole warp leaves together
  warp_sort<S>(a, begin, static_cast<int>(len), threadIdx.x % 32);
}

// A round of segmented_block: segments [first, first + per), per <= BLOCK,
// their lengths read in parallel. A segment of up to a tile is sorted here: by a warp when it has
// at most 32 keys (WARP 0; with WARP 1 segmented_warp took those), else by a block radix sort; a
// longer one is listed for segmented_merge, a tile an entry, its counters (and LONG's look-back
// rows and digit table) zeroed first. `mine` holds BLOCK segments: the block sorts from the front,
// the warp sorts from the back.
template <class S, int BLOCK, int ITEMS, int LONG, int WARP>
__device__ __forceinline__ void block_round(const SegArgs<S>& a, i64 first, i64 per, u64 cap, unsigned char* smem,
                                            i64* mine, u32* found, u32& listed_at) {
  constexpr i64 kTile = static_cast<i64>(BLOCK) * ITEMS;
  u64* list = reinterpret_cast<u64*>(a.words + kListWord);
  u32* counters = a.words + kListWord + 2 * cap;
  if (threadIdx.x < 2) found[threadIdx.x] = 0;
  __syncthreads();
  const i64 s = first + threadIdx.x;
  if (threadIdx.x < per && s < a.segments) {
    const i64 len = a.end_offsets[s] - a.begin_offsets[s];
    if (len > 32) mine[atomicAdd(&found[0], 1u)] = s;
    else if (WARP == 0 && len > 0) mine[BLOCK - 1 - atomicAdd(&found[1], 1u)] = s;
  }
  __syncthreads();
  const u32 count = found[0];
  if constexpr (WARP == 0) {
    const u32 shorts = found[1];
    for (u32 k = threadIdx.x / 32; k < shorts; k += BLOCK / 32) {
      const i64 seg = mine[BLOCK - 1 - k], begin = a.begin_offsets[seg];
      warp_sort<S>(a, begin, static_cast<int>(a.end_offsets[seg] - begin), threadIdx.x % 32);
    }
  }
  for (u32 k = 0; k < count; ++k) {
    const i64 seg = mine[k];
    const i64 begin = a.begin_offsets[seg], len = a.end_offsets[seg] - begin;
    if (len <= kTile) {
      sort_tile<S, BLOCK, ITEMS>(a.keys_in + begin, a.values_in ? a.values_in + begin : nullptr, a.keys_out + begin,
                                 a.values_out ? a.values_out + begin : nullptr, len, smem);
      continue;
    }
    const u64 tiles = static_cast<u64>((len + kTile - 1) / kTile);
    const u32 merges = ceil_log2(tiles);
    __syncthreads();  // every thread has read listed_at of the previous long segment
    if (threadIdx.x == 0) {
      listed_at = atomicAdd(a.words + 1, static_cast<u32>(tiles));
      atomicMax(a.words + 2, merges);
    }
    __syncthreads();
    const u64 base = listed_at;
    if (base + tiles > cap) continue;  // overlapping segments: the list is full; not sorted
    // The counter rows its tickets count in: the merge passes', or LONG's histogram and digit passes'.
    const u32 rows = LONG ? static_cast<u32>(Passes<S, BLOCK, ITEMS>::kPasses) : merges;
    for (u64 t = threadIdx.x; t < tiles; t += BLOCK) {
      list[base + t] = (static_cast<u64>(seg) << 32) | t;
      for (u32 q = 0; q < rows; ++q) counters[q * cap + base + t] = 0;
    }
    if constexpr (LONG != 0) {
      using P = Passes<S, BLOCK, ITEMS>;
      u64* look = look_rows<P>(a.words, cap) + base * P::kRadix;
      for (u64 x = threadIdx.x; x < tiles * P::kRadix; x += BLOCK) look[x] = 0;
      u32* table = digit_table<P>(a.words, cap, base);
      for (int x = threadIdx.x; x < P::kPasses * P::kRadix; x += BLOCK) table[x] = 0;
    }
  }
  __syncthreads();  // mine and found are read before the next round writes them
}

// LONG 1's ticket of pass q for a listed segment's tile: q = 0 counts the tile's digits of every
// pass into the segment's table; q >= 1, once every ticket of pass q - 1 of the segment is done,
// runs digit pass q - 1 on the tile. The passes ping-pong between the outputs and the spare
// arrays, the first reading the input, the last writing the outputs.
template <class S, int BLOCK, int ITEMS>
__device__ __forceinline__ void radix_ticket(const SegArgs<S>& a, i64 begin, i64 len, u64 tile, u64 tiles,
                                             u32 q, u64 base, u64 cap, u32* counters, unsigned char* smem) {
  using P = Passes<S, BLOCK, ITEMS>;
  using K = typename S::K;
  using V = typename S::V;
  __shared__ typename P::Extra extra;
  u32* table = digit_table<P>(a.words, cap, base);
  if (q == 0) {
    const i64 at = static_cast<i64>(tile) * P::kTile;
    P::histogram(a.keys_in + begin + at, min(P::kTile, len - at), table, smem);
    return;
  }
  if (threadIdx.x == 0) {
    const volatile u32* done = counters + (q - 1) * cap + base;
    while (*done < tiles) __nanosleep(64);
    __threadfence();
  }
  __syncthreads();
  const int pass = static_cast<int>(q) - 1;
  // Pass p writes the outputs when kPasses - 1 - p is even.
  const auto out_of = [&](int p) { return (P::kPasses - 1 - p) % 2 == 0; };
  K* kdst = (out_of(pass) ? a.keys_out : a.keys_spare) + begin;
  V* vdst = S::kHasValues ? (out_of(pass) ? a.values_out : a.values_spare) + begin : nullptr;
  const K* ksrc = (pass == 0 ? a.keys_in : out_of(pass - 1) ? a.keys_out : a.keys_spare) + begin;
  const V* vsrc = S::kHasValues ? (pass == 0 ? a.values_in : out_of(pass - 1) ? a.values_out : a.values_spare) + begin
                                : nullptr;
  P::pass_tile(ksrc, vsrc, kdst, vdst, len, tile, pass, table, look_rows<P>(a.words, cap) + base * P::kRadix, smem, extra);
}

// A ticket of the long segments' sort: the merge sort's (pass q = t / listed: a tile radix-sorted,
// or one tile's worth of a pairwise merge) or LONG's (a histogram or a digit pass of a tile).
template <class S, int BLOCK, int ITEMS, int LONG>
__device__ __forceinline__ void long_ticket(const SegArgs<S>& a, u64 t, u64 listed, u64 cap, unsigned char* smem) {
  using K = typename S::K;
  using V = typename S::V;
  constexpr i64 kTile = static_cast<i64>(BLOCK) * ITEMS;
  __shared__ unsigned long long bracket[2][2];  // per split: [lo, hi] around it
  const u64* list = reinterpret_cast<const u64*>(a.words + kListWord);
  u32* counters = a.words + kListWord + 2 * cap;
  const u32 q = static_cast<u32>(t / listed);
  const u64 i = t % listed, entry = list[i];
  const i64 seg = static_cast<i64>(entry >> 32);
  const u64 tile = entry & 0xffffffffu, base = i - tile;
  const i64 begin = a.begin_offsets[seg], len = a.end_offsets[seg] - begin;
  const u64 tiles = static_cast<u64>((len + kTile - 1) / kTile);
  const u32 merges = LONG ? static_cast<u32>(Passes<S, BLOCK, ITEMS>::kPasses) : ceil_log2(tiles);
  if (q > merges || base + tiles > listed) return;  // done; or a segment the list cut
  if constexpr (LONG != 0) {
    radix_ticket<S, BLOCK, ITEMS>(a, begin, len, tile, tiles, q, base, cap, counters, smem);
  } else {
    // Pass q writes the outputs when merges - q is even, the spare arrays when odd.
    const bool to_out = (merges - q) % 2 == 0;
    K* kdst = (to_out ? a.keys_out : a.keys_spare) + begin;
    V* vdst = S::kHasValues ? (to_out ? a.values_out : a.values_spare) + begin : nullptr;
    if (q == 0) {
      const i64 at = static_cast<i64>(tile) * kTile;
      sort_tile<S, BLOCK, ITEMS, false>(a.keys_in + begin + at, S::kHasValues ? a.values_in + begin + at : nullptr,
                                        kdst + at, S::kHasValues ? vdst + at : nullptr, min(kTile, len - at), smem);
    } else {
      // Wait for pass q - 1 of this ticket's group of 2^q tiles.
      const u64 group = tile & ~((u64{1} << q) - 1), in_group = min(u64{1} << q, tiles - group);
      if (threadIdx.x == 0) {
        const volatile u32* done = counters + (q - 1) * cap + base + group;
        while (*done < in_group) __nanosleep(64);
        __threadfence();
      }
      __syncthreads();
      const K* ksrc = (to_out ? a.keys_spare : a.keys_out) + begin;
      const V* vsrc = S::kHasValues ? (to_out ? a.values_spare : a.values_out) + begin : nullptr;
      const i64 run = static_cast<i64>(group) * kTile, w = static_cast<i64>(u64{1} << (q - 1)) * kTile;
      const i64 la = min(w, len - run), lb = max(i64(0), min(w, len - run - la));
      const K* ak = ksrc + run;
      const K* bk = ak + la;
      const i64 d0 = static_cast<i64>(tile) * kTile - run, d1 = min(d0 + kTile, la + lb);
      // Merge-path splits of the block's first and last output (A's keys among the first d
      // outputs), half the block searching each: every round samples the bracket at BLOCK / 2
      // points and keeps the two samples around the split, so a run of 2^20 keys takes 3 rounds
      // of one load latency instead of 20 dependent loads.
      constexpr i64 kHalf = BLOCK / 2;
      const int h = threadIdx.x / kHalf;
      const i64 lane = threadIdx.x % kHalf, d = h ? d1 : d0;
      if (threadIdx.x < 2) {
        const i64 dd = threadIdx.x ? d1 : d0;
        bracket[threadIdx.x][0] = static_cast<u64>(max(i64(0), dd - lb));
        bracket[threadIdx.x][1] = static_cast<u64>(min(dd, la));
      }
      __syncthreads();
      for (;;) {
        const i64 lo = static_cast<i64>(bracket[h][0]), hi = static_cast<i64>(bracket[h][1]);
        const bool done = bracket[0][0] >= bracket[0][1] && bracket[1][0] >= bracket[1][1];
        __syncthreads();
        if (done) break;
        const i64 range = hi - lo;
        if (range > 0 && (range > kHalf || lane < range)) {
          const i64 i = range > kHalf ? lo + range * lane / kHalf : lo + lane;
          // A[i] is among the first d outputs when it is not after B[d - 1 - i].
          if (!(S::bits(load_cg(bk + d - 1 - i)) < S::bits(load_cg(ak + i))))
            atomicMax(&bracket[h][0], static_cast<u64>(i + 1));
          else
            atomicMin(&bracket[h][1], static_cast<u64>(i));
        }
        __syncthreads();
      }
      const i64 a0 = static_cast<i64>(bracket[0][0]), na = static_cast<i64>(bracket[1][0]) - a0, b0 = d0 - a0,
                nb = (d1 - d0) - na;
      K* sk = reinterpret_cast<K*>(smem);
      for (i64 x = threadIdx.x; x < na + nb; x += BLOCK)
        sk[x] = x < na ? load_cg(ak + a0 + x) : load_cg(bk + b0 + x - na);
      __syncthreads();
      // This thread's ITEMS outputs, from a merge path in shared memory.
      const i64 k0 = static_cast<i64>(threadIdx.x) * ITEMS;
      K key[ITEMS];
      u32 from[ITEMS];  // the output's source, as an index into sk
      {
        const i64 kk = min(k0, na + nb);
        i64 lo = max(i64(0), kk - nb), hi = min(kk, na);
        while (lo < hi) {
          const i64 mid = (lo + hi) / 2;
          if (!(S::bits(sk[na + kk - 1 - mid]) < S::bits(sk[mid]))) lo = mid + 1;
          else hi = mid;
        }
        i64 ia = lo, ib = kk - lo;
#pragma unroll
        for (int o = 0; o < ITEMS; ++o) {
          const bool take_a = ib >= nb || (ia < na && !(S::bits(sk[na + ib]) < S::bits(sk[ia])));
          const i64 x = take_a ? ia : na + ib;
          from[o] = static_cast<u32>(x);
          key[o] = sk[min(x, na + nb - 1)];
          take_a ? ++ia : ++ib;
        }
      }
      __syncthreads();
#pragma unroll
      for (int o = 0; o < ITEMS; ++o)
        if (k0 + o < na + nb) sk[k0 + o] = key[o];
      __syncthreads();
      for (i64 x = threadIdx.x; x < na + nb; x += BLOCK) kdst[run + d0 + x] = sk[x];
      if constexpr (S::kHasValues) {
        V* sv = reinterpret_cast<V*>(smem);
        __syncthreads();
#pragma unroll
        for (int o = 0; o < ITEMS; ++o) {
          if (k0 + o >= na + nb) continue;
          const i64 x = from[o];
          sv[k0 + o] = load_cg(x < na ? vsrc + run + a0 + x : vsrc + run + la + b0 + (x - na));
        }
        __syncthreads();
        for (i64 x = threadIdx.x; x < na + nb; x += BLOCK) vdst[run + d0 + x] = sv[x];
      }
    }
  }
  // Count this ticket done for the next pass's group of 2^(q+1) tiles.
  __threadfence();
  __syncthreads();
  // (LONG: the segment's count of pass q's finished tickets, at its first entry.)
  const u64 group = LONG ? 0 : tile & ~((u64{2} << q) - 1);
  if (threadIdx.x == 0 && q < merges) atomicAdd(counters + q * cap + base + group, 1u);
}

// The block launch: a fixed grid striding over the segments, as many a round as spread them over
// the grid (at most BLOCK).
template <class S, int WARPS, int BLOCK, int ITEMS, int MIN_BLOCKS, int LONG, int WARP>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) segmented_block(SegArgs<S> a) {
  constexpr i64 kTile = static_cast<i64>(BLOCK) * ITEMS;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ u32 listed_at, found[2];
  __shared__ i64 mine[BLOCK];
  const u64 cap = 2 * static_cast<u64>((a.n + kTile - 1) / kTile);
  const i64 per = min(static_cast<i64>(BLOCK), (a.segments + gridDim.x - 1) / gridDim.x);
  for (i64 first = blockIdx.x * per; first < a.segments; first += static_cast<i64>(gridDim.x) * per)
    block_round<S, BLOCK, ITEMS, LONG, WARP>(a, first, per, cap, smem, mine, found, listed_at);
}

// The sort of the listed segments, the launch after the block launch: tickets taken in order,
// pass-major (the header says how). Every block of the grid runs until the tickets are spent. Its
// own launch, not tickets after the block rounds in one: the long segments' code alone keeps
// within the registers of 512 threads at 2 blocks an SM (one kernel with both spilled, and its
// digit passes took 3.3-3.9 ms for 2^26 keys in 64 segments on an H200 against 2.9-3.0).
template <class S, int WARPS, int BLOCK, int ITEMS, int MIN_BLOCKS, int LONG, int WARP>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) segmented_merge(SegArgs<S> a) {
  constexpr i64 kTile = static_cast<i64>(BLOCK) * ITEMS;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ u32 ticket;
  const u64 cap = 2 * static_cast<u64>((a.n + kTile - 1) / kTile);
  const u64 listed = min(static_cast<u64>(*const_cast<volatile u32*>(a.words + 1)), cap);
  // Nothing listed (segmented_block, the launch before, is over): every block leaves at once and
  // every word stays zero, with no atomics on the shared counters.
  if (listed == 0) return;
  // Passes after the first: the most merge passes of a listed segment, or LONG's digit passes.
  const u64 after = LONG ? static_cast<u64>(Passes<S, BLOCK, ITEMS>::kPasses)
                         : static_cast<u64>(*const_cast<volatile u32*>(a.words + 2));
  const u64 tickets = (after + 1) * listed;
  for (;;) {
    if (threadIdx.x == 0) ticket = atomicAdd(a.words, 1u);
    __syncthreads();
    const u64 t = ticket;
    __syncthreads();
    if (t >= tickets) break;
    long_ticket<S, BLOCK, ITEMS, LONG>(a, t, listed, cap, smem);
  }
  // The last block to finish leaves the words zero for the next call.
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(a.words + 3, 1u) == gridDim.x - 1) {
      a.words[0] = a.words[1] = a.words[2] = 0;
      __threadfence();
      a.words[3] = 0;
    }
  }
}
