/* gpuk
family: sort
operations: [sort, sort_pairs, argsort]
summary: The write-up's rank sort with the comparisons cut down by buckets, for small arrays in one launch. Each of SPLIT blocks loads all n elements once into registers, counts them into 2^BUCKET_BITS buckets of equal key range (between the array's least and greatest key) with shared atomics, scans the counts and groups the keys by bucket in shared memory. It then ranks the buckets that start in its share of the positions. A key's rank is its bucket's start plus the number of smaller keys (and equal keys at lower indices) in its bucket. With about one bucket per key, that is one or two comparisons.
params:
  BLOCK: {default: 1024, values: [256, 512, 1024]}
  ITEMS: {default: 8, values: [1, 2, 4, 8, 16]}
  BUCKET_BITS: {default: 12, values: [8, 9, 10, 11, 12, 13, 14]}
  SPLIT: {default: 16, values: [1, 2, 4, 8, 16]}
  SHARE: {default: 1, values: [0, 1]}
constraints:
  - n <= BLOCK * ITEMS
  - n * elem_bytes <= 65536
  - pow2(BUCKET_BITS) >= BLOCK
  - pow2(BUCKET_BITS) <= 16 * BLOCK
launch:
  - entry: rank_bucket
    grid: SPLIT
    block: BLOCK
    shared: pow2(BUCKET_BITS) * 4 + 16 + n * 3 * elem_bytes + 64 * elem_bytes + 128 + 32
*/

// Why it is shaped like this:
// - At a few thousand keys a sort is latency, not work. A block reads every element once,
//   coalesced, into registers (hence n <= BLOCK * ITEMS); everything after that is in shared
//   memory, five barriers in all. The first rank_bucket instead had every block of
//   n / BLOCK read the whole array three times in strided loops, each thread waiting on each
//   load: 7.7 us at 4,096 keys on the H100, where this takes 6.1 (docs/PERFORMANCE.md).
// - Buckets: the high BUCKET_BITS bits of bits - lo, where [lo, hi] is the array's range. With
//   about as many buckets as keys, a uniform key shares its bucket with one other on average.
//   Keys packed in a narrow range spread as well as keys over the full range; equal keys share
//   a bucket, so many repeats of one value cost up to n comparisons per element (correct, slow:
//   use radix there). One repeated key (lo == hi) is copied.
// - SPLIT blocks: one block alone spent half its time ranking (H100, 4,096 keys, clock64 stamps,
//   tools/experiments/sort_small_block: loading and min/max to 600-870 cycles, counting 700,
//   scan 800, grouping 1,300, ranking 3,600), and the ranking is the phase blocks can share.
//   Every block builds the same buckets; each ranks the buckets that start in its SPLIT-th of
//   the positions. Buckets, not positions: a key's slot in its bucket comes from the block's own
//   shared atomics, so two blocks order a bucket differently, and a bucket split between them
//   would have some keys ranked twice and others never. With SHARE 1 a block groups only the
//   keys of its own buckets.
// - The ranking breaks ties by input index, packed below the bits (one load, one compare per
//   key: Packed), so ranks are distinct and the sort is stable.
// - It walks the grouped keys by position, so neighbouring threads write neighbouring outputs (a
//   bucket's keys land in one range), and a thread's positions step through their buckets
//   together, so that their loads overlap.
//
// Shared memory: the counters (2^BUCKET_BITS + 4 u32: counts, then starts, then the end), the
// grouped keys (n K) and their packed bits and indices (n Packed: 8 bytes for 4-byte keys, 16
// for 8-byte), the reductions' words: 208 KiB at 16,384 4-byte keys and 2^12 buckets (2^13
// does not fit the H100's 227 KiB). Values are read from global memory at the end, by index.

#include "gpuk/sort.cuh"

namespace {

template <class T>
__device__ __forceinline__ int bit_width(T x) {
  if constexpr (sizeof(T) == 8) {
    return 64 - __clzll(static_cast<long long>(x));
  } else {
    return 32 - __clz(static_cast<int>(x));
  }
}

// A key's bits and its input index, ordered as the sort orders elements.
template <class Bits> struct Packed;
template <> struct Packed<gpuk::u32> {
  using T = gpuk::u64;
  static __device__ __forceinline__ T make(gpuk::u32 bits, gpuk::u32 index) { return (T(bits) << 32) | index; }
  static __device__ __forceinline__ gpuk::u32 bits(T p) { return static_cast<gpuk::u32>(p >> 32); }
  static __device__ __forceinline__ gpuk::u32 index(T p) { return static_cast<gpuk::u32>(p); }
  static __device__ __forceinline__ bool less(T a, T b) { return a < b; }
};
template <> struct Packed<gpuk::u64> {
  struct __align__(16) T {
    gpuk::u64 bits;
    gpuk::u32 index;
  };
  static __device__ __forceinline__ T make(gpuk::u64 bits, gpuk::u32 index) { return T{bits, index}; }
  static __device__ __forceinline__ gpuk::u64 bits(T p) { return p.bits; }
  static __device__ __forceinline__ gpuk::u32 index(T p) { return p.index; }
  static __device__ __forceinline__ bool less(T a, T b) {
    return a.bits < b.bits || (a.bits == b.bits && a.index < b.index);
  }
};

// Step 3: exclusive scan of the BLOCK * PER bucket counts in `start`, in place: a thread's PER
// contiguous counters, the warp's shuffle scan, then the totals of the warps before it
// (warp_total: 32 words). Ends with a barrier.
template <int BLOCK, int PER>
__device__ __forceinline__ void scan_counts(gpuk::u32* start, gpuk::u32* warp_total) {
  using gpuk::u32;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  u32 c[PER];
  if constexpr (PER % 4 == 0) {
#pragma unroll
    for (int v = 0; v < PER / 4; ++v) {
      const uint4 q = reinterpret_cast<const uint4*>(start + t * PER)[v];
      c[4 * v] = q.x, c[4 * v + 1] = q.y, c[4 * v + 2] = q.z, c[4 * v + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int v = 0; v < PER; ++v) c[v] = start[t * PER + v];
  }
  u32 mine = 0;
#pragma unroll
  for (int v = 0; v < PER; ++v) mine += c[v];
  u32 inclusive = mine;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const u32 y = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o) inclusive += y;
  }
  if (lane == 31) warp_total[warp] = inclusive;
  __syncthreads();
  u32 run = __reduce_add_sync(0xffffffffu, lane < warp ? warp_total[lane] : 0u) + inclusive - mine;
#pragma unroll
  for (int v = 0; v < PER; ++v) {
    const u32 count = c[v];
    c[v] = run;
    run += count;
  }
  if constexpr (PER % 4 == 0) {
#pragma unroll
    for (int v = 0; v < PER / 4; ++v)
      reinterpret_cast<uint4*>(start + t * PER)[v] = make_uint4(c[4 * v], c[4 * v + 1], c[4 * v + 2], c[4 * v + 3]);
  } else {
#pragma unroll
    for (int v = 0; v < PER; ++v) start[t * PER + v] = c[v];
  }
  __syncthreads();
}

// Step 5: rank positions [r0, r1) of the grouped keys: the element at grouped position q counts
// the elements before it in its bucket's order and goes to its bucket's start plus that count.
// A thread's RANKED positions (a round) walk their buckets in step. bucket(bits): a key's bucket.
template <class S, int BLOCK, int RANKED, class Bucket>
__device__ __forceinline__ void rank_grouped(const gpuk::SortArgs<S>& a,
                                             const typename Packed<typename S::Bits>::T* packed,
                                             const typename S::K* skey, const gpuk::u32* start, int r0, int r1,
                                             Bucket bucket) {
  using P = Packed<typename S::Bits>;
  using PT = typename P::T;
  using gpuk::u32;
  const int t = threadIdx.x;
  for (int base = r0; base < r1; base += BLOCK * RANKED) {
    PT me[RANKED];
    int begin[RANKED], len[RANKED], longest = 0;
#pragma unroll
    for (int k = 0; k < RANKED; ++k) {
      const int q = base + k * BLOCK + t;
      len[k] = 0;
      if (q < r1) {
        me[k] = packed[q];
        const u32 d = bucket(P::bits(me[k]));
        begin[k] = static_cast<int>(start[d]);
        len[k] = static_cast<int>(start[d + 1]) - begin[k];
        longest = max(longest, len[k]);
      }
    }
    u32 before[RANKED] = {};
    for (int s = 0; s < longest; ++s) {
#pragma unroll
      for (int k = 0; k < RANKED; ++k)
        if (s < len[k]) before[k] += P::less(packed[begin[k] + s], me[k]);
    }
#pragma unroll
    for (int k = 0; k < RANKED; ++k) {
      const int q = base + k * BLOCK + t;
      if (q < r1) {
        const u32 rank = static_cast<u32>(begin[k]) + before[k];
        a.keys_out[rank] = skey[q];
        if constexpr (S::kHasValues) a.values_out[rank] = S::value_at(a.values_in, P::index(me[k]));
      }
    }
  }
}

}  // namespace

template <class S, int BLOCK, int ITEMS, int BUCKET_BITS, int SPLIT, int SHARE>
__global__ void __launch_bounds__(BLOCK, 1) rank_bucket(gpuk::SortArgs<S> a) {
  using K = typename S::K;
  using Bits = typename S::Bits;
  using P = Packed<Bits>;
  using PT = typename P::T;
  using gpuk::u32;
  constexpr int kBuckets = 1 << BUCKET_BITS, kWarps = BLOCK / 32;
  constexpr int kPer = kBuckets / BLOCK;                // counters a thread scans, contiguous
  constexpr int kRanked = (ITEMS + SPLIT - 1) / SPLIT;  // positions a thread ranks, at most
  static_assert(BLOCK % 32 == 0 && kPer >= 1 && kPer <= 16 && kBuckets % BLOCK == 0,
                "BLOCK <= 2^BUCKET_BITS <= 16 * BLOCK");
  extern __shared__ __align__(16) unsigned char smem[];
  const int n = static_cast<int>(a.n);
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  // Layout, each part aligned to its type: start[kBuckets + 4] (u32, 16-byte aligned for the vector
  // scan), packed[n] (PT), lo_part[32] and hi_part[32] (Bits), keys[n] (K), warp_total[32] (u32).
  u32* start = reinterpret_cast<u32*>(smem);
  PT* packed = reinterpret_cast<PT*>(smem + (kBuckets + 4) * 4);
  Bits* lo_part = reinterpret_cast<Bits*>(packed + n);
  Bits* hi_part = lo_part + 32;
  K* skey = reinterpret_cast<K*>(hi_part + 32);
  u32* warp_total = reinterpret_cast<u32*>(skey + n + (n & 1));

  // 1. Clear the counters; each thread loads its elements (striped: item k is element
  //    k * BLOCK + t) and the block finds the least and greatest bits.
#pragma unroll
  for (int c = 0; c < kPer; ++c) start[c * BLOCK + t] = 0;
  if (t == 0) start[kBuckets] = static_cast<u32>(n);
  K key[ITEMS];
  Bits lo = ~Bits(0), hi = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = k * BLOCK + t;
    if (i < n) {
      key[k] = a.keys_in[i];
      const Bits b = S::bits(key[k]);
      lo = b < lo ? b : lo;
      hi = b > hi ? b : hi;
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const Bits l = __shfl_xor_sync(0xffffffffu, lo, o), h = __shfl_xor_sync(0xffffffffu, hi, o);
    lo = l < lo ? l : lo;
    hi = h > hi ? h : hi;
  }
  if (lane == 0) {
    lo_part[warp] = lo;
    hi_part[warp] = hi;
  }
  __syncthreads();
  lo = lane < kWarps ? lo_part[lane] : ~Bits(0);
  hi = lane < kWarps ? hi_part[lane] : Bits(0);
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const Bits l = __shfl_xor_sync(0xffffffffu, lo, o), h = __shfl_xor_sync(0xffffffffu, hi, o);
    lo = l < lo ? l : lo;
    hi = h > hi ? h : hi;
  }
  if (lo == hi) {
    // One key repeated n times: input order is the stable order; block 0 copies.
    if (blockIdx.x != 0) return;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int i = k * BLOCK + t;
      if (i < n) {
        a.keys_out[i] = key[k];
        if constexpr (S::kHasValues) a.values_out[i] = S::value_at(a.values_in, i);
      }
    }
    return;
  }
  // bucket(b) = (b - lo) >> shift, below kBuckets for every b in [lo, hi].
  const int width = bit_width(static_cast<Bits>(hi - lo));
  const int shift = width > BUCKET_BITS ? width - BUCKET_BITS : 0;
  const auto bucket = [&](Bits b) { return static_cast<u32>(static_cast<Bits>(b - lo) >> shift); };

  // 2. Count the buckets; each element keeps the slot its counter gave it.
  u32 slot[ITEMS], home[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    if (k * BLOCK + t < n) {
      home[k] = bucket(S::bits(key[k]));
      slot[k] = atomicAdd(&start[home[k]], 1u);
    }
  }
  __syncthreads();

  // 3. Exclusive scan of the counts, in place (scan_counts).
  scan_counts<BLOCK, kPer>(start, warp_total);

  // 4. Group the keys (and their packed bits and indices) by bucket. Each block ranks the buckets
  //    that start in its share [q0, q1) of the positions (not positions: blocks order a bucket's
  //    keys differently, by their own atomics), so with SHARE 1 it groups only their keys, which
  //    cover [r0, r1): the keys at q0 and q1 tell where, from their bucket (the same in all blocks).
  const int chunk = (n + SPLIT - 1) / SPLIT;
  const int q0 = min(n, static_cast<int>(blockIdx.x) * chunk), q1 = min(n, q0 + chunk);
  int* edge = reinterpret_cast<int*>(warp_total);  // r0, r1 (the scan's words are read by now)
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = k * BLOCK + t;
    if (i < n) {
      const int first = static_cast<int>(start[home[k]]), at = first + static_cast<int>(slot[k]);
      if (SHARE == 0 || SPLIT == 1 || (first >= q0 && first < q1)) {
        skey[at] = key[k];
        packed[at] = P::make(S::bits(key[k]), static_cast<u32>(i));
      }
      if (SPLIT > 1 && (at == q0 || at == q1)) {
        const int end = static_cast<int>(start[home[k] + 1]);
        edge[at == q0 ? 0 : 1] = first == at ? at : end;  // q0 != q1 here: q0 == q1 only at n
      }
    }
  }
  __syncthreads();

  // 5. Rank positions [r0, r1) (rank_grouped).
  const int r0 = SPLIT == 1 || q0 == n ? q0 : edge[0];
  const int r1 = SPLIT == 1 || q1 == n ? q1 : edge[1];
  rank_grouped<S, BLOCK, kRanked>(a, packed, skey, start, r0, r1, bucket);
}
