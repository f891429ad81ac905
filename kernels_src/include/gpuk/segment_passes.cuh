// A long segment's LSD radix sort spread over the GPU, one tile of BLOCK * ITEMS keys a ticket
// (segmented.cu's segmented_merge with LONG 1; docs/kernels/sort.md, "segmented.cu"): a
// histogram ticket per tile adds the tile's digit counts of every pass to its segment's table;
// then, pass after pass, a digit-pass ticket per tile ranks its keys by the pass's digit, finds
// the counts of that digit in the segment's earlier tiles by a decoupled look-back over them, and
// scatters to the segment's digit bases plus those counts. A ticket waits only on tickets taken
// before it (the segment's previous pass, its earlier tiles of this pass): no deadlock.
#pragma once
#include "gpuk/sort.cuh"

namespace gpuk {

template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int MATCH>
struct SegmentPasses {
  using K = typename S::K;
  using V = typename S::V;
  using Rank = BlockRank<BLOCK, ITEMS, RADIX_BITS, MATCH>;
  static constexpr int kRadix = 1 << RADIX_BITS;
  static constexpr int kPasses = S::template passes<RADIX_BITS>();
  static constexpr i64 kTile = static_cast<i64>(BLOCK) * ITEMS;
  static constexpr int kWindow = 8;  // look-back entries a thread reads at once

  // A look-back entry: a tag (2 * pass + 1 for a tile's count, 2 * pass + 2 for the count of the
  // segment's tiles up to this one) above the count. Zero, or an earlier pass's tag: not ready.
  static __device__ __forceinline__ u64 entry(int pass, bool inclusive, u32 count) {
    return (static_cast<u64>(2 * pass + 1 + (inclusive ? 1 : 0)) << 32) | count;
  }

  // Beside the shared memory of segmented_merge (smem: kTile * 8 bytes, then Rank::Shared).
  struct Extra {
    u32 counts[kRadix];  // the segment's counts of this pass's digits, then their bases
    u32 bases[kRadix];
    u32 offset[kRadix];  // output index in the segment of sorted tile position j: offset[d] + j
    u32 scan_tmp[(kRadix + 31) / 32];
  };

  // Every digit pass's counts of the tile's keys, added to the segment's table (kPasses * kRadix
  // words). Every thread of the block calls it.
  static __device__ __forceinline__ void histogram(const K* keys, i64 len, u32* table, unsigned char* smem) {
    u32* counts = reinterpret_cast<u32*>(smem);
    for (int x = threadIdx.x; x < kPasses * kRadix; x += BLOCK) counts[x] = 0;
    __syncthreads();
    for (i64 e = threadIdx.x; e < len; e += BLOCK) {
      const auto b = S::bits(keys[e]);
#pragma unroll
      for (int p = 0; p < kPasses; ++p)
        atomicAdd(counts + p * kRadix + (static_cast<u32>(b >> (p * RADIX_BITS)) & (kRadix - 1u)), 1u);
    }
    __syncthreads();
    for (int x = threadIdx.x; x < kPasses * kRadix; x += BLOCK)
      if (counts[x]) atomicAdd(table + x, counts[x]);
  }

  // Digit pass `pass` of tile `tile` (of `tiles`) of a segment of `len` keys: from `src` (the
  // segment's keys as the previous pass left them; the user's input in pass 0, read through L1)
  // to `dst`. `table`: the segment's digit counts; `look`: the segment's look-back rows, kRadix
  // entries a tile. Every thread of the block calls it.
  static __device__ __forceinline__ void pass_tile(const K* src, const V* vsrc, K* dst, V* vdst, i64 len, u64 tile,
                                                   int pass, const u32* table, u64* look, unsigned char* smem,
                                                   Extra& x) {
    typename Rank::Shared& rs = *reinterpret_cast<typename Rank::Shared*>(smem + kTile * 8);
    const i64 at = static_cast<i64>(tile) * kTile;
    const int valid = static_cast<int>(min(kTile, len - at));
    const int t = threadIdx.x;
    if (t < kRadix) x.counts[t] = __ldcg(table + pass * kRadix + t);
    K key[ITEMS];
    V value[ITEMS];
    u32 digit[ITEMS], rank[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int e = striped_index<ITEMS>(k);
      key[k] = K{};
      if (e < valid) {
        key[k] = pass == 0 ? src[at + e] : __ldcg(src + at + e);
        if constexpr (S::kHasValues) value[k] = pass == 0 ? vsrc[at + e] : __ldcg(vsrc + at + e);
      }
      // Past the segment: the largest digit, ranked after every key of the tile.
      digit[k] = e < valid ? S::template digit<RADIX_BITS>(key[k], pass) : kRadix - 1u;
    }
    block_exclusive_scan<BLOCK, kRadix>(x.counts, x.bases, x.scan_tmp);
    Rank::rank(digit, rank, rs);
    // The look-back: one thread a digit publishes the tile's count (of keys in the segment), sums
    // the earlier tiles' counts back to one that has its inclusive count, and publishes its own.
    if (t < kRadix) {
      const u32 mine = rs.count[t] - (t == kRadix - 1 ? static_cast<u32>(kTile - valid) : 0u);
      volatile u64* vlook = look;  // other blocks write it: every read goes to memory
      volatile u64* row = vlook + tile * kRadix;
      u32 before = 0;
      if (tile > 0) {
        row[t] = entry(pass, false, mine);
        // kWindow entries read at once, nearest first, summed up to the first inclusive one; a
        // window with an entry not ready is read again from there. A segment's tiles start a
        // pass together (when its previous pass ends), so the inclusive counts can be far back;
        // on an H200 this measured no faster than one entry a read (2^26 keys in 64 segments:
        // 2.97 ms against 2.87), the walk not being what a ticket waits on, and was kept.
        const u64 ready = 2 * pass + 1, inclusive = 2 * pass + 2;
        i64 j = static_cast<i64>(tile) - 1;
        for (bool found = false; !found;) {
          u64 e[kWindow];
#pragma unroll
          for (int w = 0; w < kWindow; ++w)
            e[w] = j - w >= 0 ? vlook[(j - w) * kRadix + t] : entry(pass, true, 0);  // before tile 0: none
          bool stop = false;
#pragma unroll
          for (int w = 0; w < kWindow; ++w) {
            if (stop || (e[w] >> 32) < ready) {
              stop = true;
              continue;
            }
            before += static_cast<u32>(e[w]);
            --j;
            if ((e[w] >> 32) == inclusive) found = stop = true;
          }
        }
      }
      row[t] = entry(pass, true, before + mine);
      x.offset[t] = x.bases[t] + before - rs.start[t];
    }
    // Values, then keys, to their tile ranks in shared memory; then out in tile order (each
    // digit's keys a run of consecutive outputs), the values read back first so that neither
    // the ranks nor a second array of output indices stay live beside them.
    V sorted_value[ITEMS];
    if constexpr (S::kHasValues) {
      V* sv = reinterpret_cast<V*>(smem);
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) sv[rank[k]] = value[k];
      __syncthreads();
#pragma unroll
      for (int k = 0; k < ITEMS; ++k)
        if (t + k * BLOCK < valid) sorted_value[k] = sv[t + k * BLOCK];
      __syncthreads();
    }
    K* sk = reinterpret_cast<K*>(smem);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) sk[rank[k]] = key[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int j = t + k * BLOCK;
      if (j < valid) {
        const K kk = sk[j];
        const u32 to = x.offset[S::template digit<RADIX_BITS>(kk, pass)] + j;
        dst[to] = kk;
        if constexpr (S::kHasValues) vdst[to] = sorted_value[k];
      }
    }
  }
};

}  // namespace gpuk
