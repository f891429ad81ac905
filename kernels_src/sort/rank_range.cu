/* gpuk
family: sort
operations: [sort, sort_pairs, argsort]
summary: The write-up's rank sort with buckets, for small arrays in one launch, the blocks splitting the buckets between them. The keys fall into 2^BUCKET_BITS buckets of equal key range (between the array's least and greatest key); block b owns the b-th share of the buckets. Every block reads all n keys, but gathers into shared memory only the keys of its own buckets and counts the keys below them; then each of those keys is ranked against its own bucket (smaller keys, equal keys at lower indices) and written at its rank.
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  ITEMS: {default: 1, values: [1, 2, 4]}
  BUCKET_BITS: {default: 8, values: [6, 7, 8, 9, 10]}
constraints:
  - BLOCK >= pow2(BUCKET_BITS)
  - ceil_div(n, BLOCK * ITEMS) <= pow2(BUCKET_BITS)
  - n <= 16384
launch:
  - entry: rank_range
    grid: ceil_div(n, BLOCK * ITEMS)
    block: BLOCK
    shared: n * (elem_bytes + 6) + 64 * elem_bytes + pow2(BUCKET_BITS) * 8 + 272
*/

// Why it is shaped like this (rank_bucket.cu is the same idea with the blocks splitting the
// elements instead of the buckets):
// - An element is compared only with the keys of its bucket: with 256 buckets and 4,096 uniform
//   keys, 16 on average, instead of the plain rank sort's n.
// - One launch has no grid-wide barrier, so every block reads the whole array (from L2 after the
//   first block). But where rank_bucket's blocks each bucket all n keys (a shared atomic, a
//   scatter and an index per key, in every block), here a block buckets only its own share,
//   about n / grid keys, and for the rest only counts those below its buckets. On the H100 at
//   4,096 keys, rank_bucket's counting and its scatter took about 1 us each of its 7.6 us.
// - Its keys sit in shared memory grouped by bucket, so consecutive threads rank keys of the
//   same bucket: they loop over the same range and read the same words (broadcasts).
// - Buckets cover [lo, hi], the array's least and greatest bits, split evenly by the high bits
//   of bits - lo, so keys packed in a narrow range spread over the buckets as well as keys over
//   the full range do. Equal keys share a bucket whatever the split: many repeats of a key load
//   one bucket, hence one block, with their n^2 / grid share of comparisons; an array of one
//   repeated key (lo == hi) is already sorted and is copied.
// - In its bucket a key has a slot from a shared atomic counter, in no particular order, so the
//   ranking compares indices for ties (the element counts equal keys at lower indices). Ranks
//   are distinct: the writes never collide, and the sort is stable.
//
// Shared memory: the gathered bits (n Bits at most: skewed data can put every key in one
// block), their indices (n u32), each key's slot in its bucket (n u16), the bucket counts and
// starts (2^BUCKET_BITS u32 each), the min/max reduction's 64 Bits, the scan's and the count
// reduction's 64 words and a flag: at n = 16,384 8-byte keys, 226 KiB, within the H100's 227
// KiB.

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
__global__ void __launch_bounds__(BLOCK) rank_range(gpuk::SortArgs<S> a) {
  using Bits = typename S::Bits;
  constexpr int kBuckets = 1 << BUCKET_BITS, kWarps = BLOCK / 32;
  static_assert(BLOCK % 32 == 0 && BLOCK >= kBuckets, "BLOCK: a multiple of 32, at least 2^BUCKET_BITS");
  extern __shared__ __align__(16) unsigned char smem[];
  const int n = static_cast<int>(a.n);
  // Layout (8-byte Bits first, for alignment): bits[n], lo_part[32], hi_part[32], index[n],
  // count and start (kBuckets each), scan_tmp[32], below_part[32], slot[n].
  Bits* bits = reinterpret_cast<Bits*>(smem);
  Bits* lo_part = bits + n;
  Bits* hi_part = lo_part + 32;
  gpuk::u32* index = reinterpret_cast<gpuk::u32*>(hi_part + 32);
  gpuk::u32* count = index + n;
  gpuk::u32* start = count + kBuckets;
  gpuk::u32* scan_tmp = start + kBuckets;
  gpuk::u32* below_part = scan_tmp + 32;
  unsigned short* slot = reinterpret_cast<unsigned short*>(below_part + 32);  // a key's place in its bucket
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
    // One key repeated n times: the input order is the stable order. Each block copies its share.
    const int end = min(n, static_cast<int>((blockIdx.x + 1) * BLOCK * ITEMS));
    for (int i = blockIdx.x * BLOCK * ITEMS + t; i < end; i += BLOCK) {
      a.keys_out[i] = a.keys_in[i];
      if constexpr (S::kHasValues) a.values_out[i] = S::value_at(a.values_in, i);
    }
    return;
  }
  // bucket(b) = (b - lo) >> shift, below kBuckets for every b in [lo, hi].
  const int width = bit_width(static_cast<Bits>(hi - lo));
  const int shift = width > BUCKET_BITS ? width - BUCKET_BITS : 0;
  const auto bucket = [&](Bits b) { return static_cast<gpuk::u32>(static_cast<Bits>(b - lo) >> shift); };
  // This block's buckets: [first, last), the blockIdx-th of gridDim.x near-equal shares.
  const gpuk::u32 first = static_cast<gpuk::u32>(gpuk::u64(blockIdx.x) * kBuckets / gridDim.x);
  const gpuk::u32 last = static_cast<gpuk::u32>(gpuk::u64(blockIdx.x + 1) * kBuckets / gridDim.x);

  // 2. Count this block's buckets (each of their keys keeps the slot its counter gave it) and
  //    the keys in the buckets below them.
  gpuk::u32 below = 0;
  for (int j = t; j < n; j += BLOCK) {
    const gpuk::u32 d = bucket(S::bits(a.keys_in[j]));
    if (d < first) {
      ++below;
    } else if (d < last) {
      slot[j] = static_cast<unsigned short>(atomicAdd(&count[d - first], 1u));
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) below += __shfl_xor_sync(0xffffffffu, below, o);
  if (lane == 0) below_part[warp] = below;
  __syncthreads();
  gpuk::block_exclusive_scan<BLOCK, kBuckets>(count, start, scan_tmp);  // ends with a barrier
  gpuk::u32 base = 0;  // keys in lower buckets, this block's first rank
#pragma unroll
  for (int w = 0; w < kWarps; ++w) base += below_part[w];
  const int gathered = static_cast<int>(start[kBuckets - 1] + count[kBuckets - 1]);

  // 3. This block's keys' bits and indices, grouped by bucket.
  for (int j = t; j < n; j += BLOCK) {
    const Bits b = S::bits(a.keys_in[j]);
    const gpuk::u32 d = bucket(b);
    if (d >= first && d < last) {
      const gpuk::u32 p = start[d - first] + slot[j];
      bits[p] = b;
      index[p] = static_cast<gpuk::u32>(j);
    }
  }
  __syncthreads();

  // 4. Rank each gathered key within its bucket and write it there.
  for (int p = t; p < gathered; p += BLOCK) {
    const Bits mine = bits[p];
    const gpuk::u32 i = index[p];
    const gpuk::u32 d = bucket(mine) - first;
    const int begin = static_cast<int>(start[d]), end = begin + static_cast<int>(count[d]);
    gpuk::u32 rank = base + static_cast<gpuk::u32>(begin);
    for (int q = begin; q < end; ++q) {
      const Bits other = bits[q];
      rank += (other < mine) | ((other == mine) & (index[q] < i));
    }
    a.keys_out[rank] = a.keys_in[i];
    if constexpr (S::kHasValues) a.values_out[rank] = S::value_at(a.values_in, i);
  }
}
