/* gpuk
family: sort
operations: [sort, sort_pairs, argsort]
summary: The write-up's rank sort with the comparisons cut down by buckets, for small arrays in one launch. Every block copies all n keys into shared memory grouped into 2^BUCKET_BITS buckets of equal key range (between the array's least and greatest key), then ranks its BLOCK * ITEMS elements, each counting only the smaller keys (and equal keys at lower indices) of its own bucket and adding the sizes of the buckets below it. About n / 2^BUCKET_BITS comparisons per element instead of n.
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  ITEMS: {default: 1, values: [1, 2, 4]}
  BUCKET_BITS: {default: 8, values: [6, 7, 8, 9, 10]}
constraints:
  - BLOCK >= pow2(BUCKET_BITS)
  - n <= 16384
launch:
  - entry: rank_bucket
    grid: ceil_div(n, BLOCK * ITEMS)
    block: BLOCK
    shared: n * (elem_bytes + 6) + 64 * elem_bytes + pow2(BUCKET_BITS) * 8 + 144
*/

// Why it is shaped like this:
// - rank_split spreads the n^2 comparisons of the plain rank sort over the GPU; at n = 4,096 they
//   are still 16.7 million and take most of its launch. Here an element only compares against
//   the keys that share its bucket: with 256 buckets, 16 keys on average for uniform keys.
// - Every block builds the same bucket table from the whole array (n keys, a few per thread,
//   read from L2 after the first block), because one launch has no grid-wide barrier; the
//   table costs O(n) per block, and the blocks only split the ranking.
// - Buckets cover [lo, hi], the array's least and greatest bits, split evenly by the high bits
//   of bits - lo: keys packed in a narrow range (small integers, floats near 1) spread over the
//   buckets as well as keys over the full range do. Equal keys share a bucket whatever the
//   split, so many repeats of a key load one bucket: up to n comparisons per element, the plain
//   rank sort's work (correct, and slow: use radix there). An array of one repeated key
//   (least == greatest) is already in order and is copied.
// - In its bucket a key has a slot from a shared atomic counter, in no particular order, so the
//   ranking compares indices for ties (the element counts equal keys at lower indices). Ranks
//   are distinct: the writes never collide, and the sort is stable.
//
// Measured on the H100 (docs/PERFORMANCE.md): 4,096 uint32 keys in 7.7 us, a tie with rank_split;
// 8,192 in 9.7 us and 16,384 in 13.7 us, where rank_split's n^2 comparisons take 15.5 and 46.7.
// Holding each thread's keys in registers (a fully unrolled load, no slot array) was tried and
// was no faster: 8.4 us at 4,096 with BLOCK 256, worse with bigger blocks.
//
// Shared memory: the bucketed bits (n Bits), their indices (n u32), each key's slot in its
// bucket (n u16), the bucket counts and starts (2^BUCKET_BITS u32 each), the scan's and the
// min/max reduction's words: at n = 16,384 8-byte keys, 226 KiB, within the H100's 227 KiB (gpuk
// opts in above 48 KiB; a device with less refuses the launch by its shared-memory limit).

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

}  // namespace

template <class S, int BLOCK, int ITEMS, int BUCKET_BITS>
__global__ void __launch_bounds__(BLOCK) rank_bucket(gpuk::SortArgs<S> a) {
  using Bits = typename S::Bits;
  constexpr int kBuckets = 1 << BUCKET_BITS, kWarps = BLOCK / 32;
  static_assert(BLOCK % 32 == 0 && BLOCK >= kBuckets, "BLOCK: a multiple of 32, at least 2^BUCKET_BITS");
  extern __shared__ __align__(16) unsigned char smem[];
  const int n = static_cast<int>(a.n);
  // Layout (8-byte Bits first, for alignment): bits[n], the min/max reduction's lo_part[32] and
  // hi_part[32], index[n], count and start (kBuckets each), the scan's 32 words, slot[n].
  Bits* bits = reinterpret_cast<Bits*>(smem);
  Bits* lo_part = bits + n;
  Bits* hi_part = lo_part + 32;
  gpuk::u32* index = reinterpret_cast<gpuk::u32*>(hi_part + 32);
  gpuk::u32* count = index + n;
  gpuk::u32* start = count + kBuckets;
  gpuk::u32* scan_tmp = start + kBuckets;
  unsigned short* slot = reinterpret_cast<unsigned short*>(scan_tmp + 32);  // a key's place in its bucket
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;

  // 1. The array's least and greatest bits (each thread a strided share), and cleared counts.
  if (t < kBuckets) count[t] = 0;
  Bits lo = ~Bits(0), hi = 0;
  for (int j = t; j < n; j += BLOCK) {
    const Bits b = S::bits(a.keys_in[j]);
    lo = b < lo ? b : lo;
    hi = b > hi ? b : hi;
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
  lo = lo_part[0];
  hi = hi_part[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) {
    lo = lo_part[w] < lo ? lo_part[w] : lo;
    hi = hi_part[w] > hi ? hi_part[w] : hi;
  }
  if (lo == hi) {
    // One key repeated n times: the input order is the stable order, so each block copies its
    // elements (instead of n comparisons each, all keys sharing one bucket).
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int i = blockIdx.x * BLOCK * ITEMS + k * BLOCK + t;
      if (i >= n) break;
      a.keys_out[i] = a.keys_in[i];
      if constexpr (S::kHasValues) a.values_out[i] = S::value_at(a.values_in, i);
    }
    return;
  }
  // bucket(b) = (b - lo) >> shift, below kBuckets for every b in [lo, hi].
  const int width = bit_width(static_cast<Bits>(hi - lo));
  const int shift = width > BUCKET_BITS ? width - BUCKET_BITS : 0;
  const auto bucket = [&](Bits b) { return static_cast<gpuk::u32>(static_cast<Bits>(b - lo) >> shift); };

  // 2. Count the buckets; each key keeps the slot its counter gave it.
  for (int j = t; j < n; j += BLOCK)
    slot[j] = static_cast<unsigned short>(atomicAdd(&count[bucket(S::bits(a.keys_in[j]))], 1u));
  __syncthreads();
  gpuk::block_exclusive_scan<BLOCK, kBuckets>(count, start, scan_tmp);

  // 3. The keys' bits and indices, grouped by bucket.
  for (int j = t; j < n; j += BLOCK) {
    const Bits b = S::bits(a.keys_in[j]);
    const gpuk::u32 p = start[bucket(b)] + slot[j];
    bits[p] = b;
    index[p] = static_cast<gpuk::u32>(j);
  }
  __syncthreads();

  // 4. Rank this block's elements within their buckets and write them there.
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = blockIdx.x * BLOCK * ITEMS + k * BLOCK + t;
    if (i >= n) break;
    const typename S::K key = a.keys_in[i];
    const Bits mine = S::bits(key);
    const gpuk::u32 d = bucket(mine);
    const int begin = static_cast<int>(start[d]), end = begin + static_cast<int>(count[d]);
    gpuk::u32 rank = static_cast<gpuk::u32>(begin);
    for (int j = begin; j < end; ++j) {
      const Bits other = bits[j];
      rank += (other < mine) | ((other == mine) & (index[j] < static_cast<gpuk::u32>(i)));
    }
    a.keys_out[rank] = key;
    if constexpr (S::kHasValues) a.values_out[rank] = S::value_at(a.values_in, i);
  }
}
