/* gpuk
family: sort
operations: [topk]
summary: Top-k by radix select. Digit passes from the most significant digit histogram the keys that still share the k-th key's known top bits (one row's blocks add into its histogram; the last block to finish picks the digit of the k-th key), a row stops once its k are decided; then one pass counts the keys below and equal to the k-th's bits per part, and one writes the k in input order (ties by the lower index); a last launch sorts each row's k in shared memory when sorted.
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  ITEMS: {default: 8, values: [1, 2, 4, 8, 16]}
  RADIX_BITS: {default: 8, values: [8, 9, 10, 11]}
  HISTS: {default: 2, values: [1, 2, 4, 8]}
  WAVES: {default: 4, values: [1, 2, 4, 8, 16]}
  SORT_BLOCK: {default: 512, values: [256, 512, 1024]}
constraints:
  - HISTS <= BLOCK / 32
  - HISTS * pow2(RADIX_BITS) * 4 <= 65536
  - ITEMS * BLOCK / 32 <= BLOCK
launch:
  - entry: topk_histogram
    grid: min(ceil_div(n, BLOCK * ITEMS), sm_count * WAVES)
    block: BLOCK
    shared: HISTS * pow2(RADIX_BITS) * 4
    repeat: ceil_div(elem_bytes * 8, RADIX_BITS)
  - entry: topk_count
    grid: min(ceil_div(n, BLOCK * ITEMS), sm_count * WAVES)
    block: BLOCK
  - entry: topk_scatter
    grid: min(ceil_div(n, BLOCK * ITEMS), sm_count * WAVES)
    block: BLOCK
  - entry: topk_sort
    grid: sm_count * 2
    block: SORT_BLOCK
    shared: 4096 * (elem_bytes + 4)
scratch: 8 + pow2(RADIX_BITS) + 2 * sm_count * WAVES
*/

// Why it is shaped like this (docs/kernels/sort.md, "Top-k"):
// - The k smallest S::bits (the sort's order: descending flips the bits, so "smallest" is the k
//   largest keys then) are found digit by digit from the top: after pass p the row knows the top
//   bits of the k-th key and how many of the keys sharing them belong to the k (k_rem). Keys whose
//   top bits are below belong, keys above do not, whatever their lower bits. A row whose digit
//   bucket holds exactly k_rem keys is decided (`done`): its later passes read nothing.
// - One launch per pass: a row's parts add their shared-memory histograms into the row's
//   histogram in the scratch, and the last part to arrive (an atomic counter) picks the digit and
//   clears the histogram and the counter for the next pass and the next run.
// - Ties by the lower index, deterministic output: the keys equal to the k-th in the known bits
//   are taken in index order, and the k are written in input order by their ranks (a count
//   launch, then warp ballots and a block scan in the write), so no atomic decides where a key
//   goes. `sorted` then orders each row's k by (bits, index): the stable sort's first k.
// - Every launch of the first three has the same grid, so they split the rows alike (RowParts).
// - Scratch per row (the metadata's words, the launcher gives each row as many): TopKRow, the
//   histogram, two counts per part. Not a function of n: a library Operation plans each call's
//   n anew, and the rows' layout (the zeroed histograms and counters) must not move between calls.

#include "gpuk/topk.cuh"

using gpuk::i64;
using gpuk::u32;
using gpuk::u64;

template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int HISTS, int WAVES, int SORT_BLOCK>
__global__ void __launch_bounds__(BLOCK) topk_histogram(gpuk::TopKArgs<S> a) {
  using Bits = typename S::Bits;
  constexpr int kBins = 1 << RADIX_BITS;
  constexpr int kPerThread = (kBins + BLOCK - 1) / BLOCK;
  extern __shared__ __align__(16) u32 hist[];  // HISTS copies of kBins counters
  __shared__ u32 tmp[BLOCK / 32];
  __shared__ int last;
  const int pass = a.pass;
  if (pass >= S::template passes<RADIX_BITS>()) return;  // a bit window narrower than the key
  if (a.k >= a.row_len) return;                          // every key is among the k: topk_scatter copies
  const int width = S::kSortBits - pass * RADIX_BITS < RADIX_BITS ? S::kSortBits - pass * RADIX_BITS : RADIX_BITS;
  const int shift = S::kSortBits - pass * RADIX_BITS - width;
  const u32 bits_done = static_cast<u32>(pass * RADIX_BITS);
  const u32 mask = (1u << width) - 1u;
  const gpuk::RowParts rp(a.rows, a.row_len, i64{BLOCK} * ITEMS);
  for (i64 w = blockIdx.x; w < rp.items(); w += gridDim.x) {
    const i64 row = rp.row(w);
    gpuk::TopKRow* st = gpuk::topk_row(a, row);
    Bits prefix = 0;
    u32 k_rem = static_cast<u32>(a.k);
    if (pass > 0) {
      if (st->done) continue;  // the same for every thread of the block
      prefix = static_cast<Bits>(st->prefix);
      k_rem = st->k_rem;
    }
    for (int i = threadIdx.x; i < HISTS * kBins; i += BLOCK) hist[i] = 0;
    __syncthreads();
    u32* mine = hist + ((threadIdx.x >> 5) % HISTS) * kBins;
    const typename S::K* keys = a.keys_in + row * a.row_len;
    const i64 end = rp.end(w);
    for (i64 base = rp.begin(w); base < end; base += i64{BLOCK} * ITEMS) {
      Bits b[ITEMS];
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 i = base + j * BLOCK + threadIdx.x;
        b[j] = i < end ? S::bits(keys[i]) : Bits(0);
      }
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 i = base + j * BLOCK + threadIdx.x;
        if (i < end && gpuk::top_bits<S>(b[j], bits_done) == prefix)
          atomicAdd(&mine[static_cast<u32>(b[j] >> shift) & mask], 1u);
      }
    }
    __syncthreads();
    u32* g = gpuk::topk_hist(a, row);
    for (int bin = threadIdx.x; bin <= static_cast<int>(mask); bin += BLOCK) {
      u32 c = 0;
#pragma unroll
      for (int h = 0; h < HISTS; ++h) c += hist[h * kBins + bin];
      if (c) atomicAdd(&g[bin], c);
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&st->arrived, 1u) == static_cast<u32>(rp.parts - 1);
    __syncthreads();
    if (last) {
      // The row's counts are complete: find the digit d of the k-th key, the bin where the
      // running count first reaches k_rem, and clear the bins for the next pass.
      __threadfence();
      u32 h[kPerThread];
      u32 sum = 0;
#pragma unroll
      for (int q = 0; q < kPerThread; ++q) {
        const int bin = threadIdx.x * kPerThread + q;
        h[q] = bin <= static_cast<int>(mask) ? *static_cast<volatile u32*>(&g[bin]) : 0u;
        sum += h[q];
      }
      u32 total;
      u32 before = gpuk::block_exclusive_sum<BLOCK>(sum, total, tmp);
#pragma unroll
      for (int q = 0; q < kPerThread; ++q) {
        const int bin = threadIdx.x * kPerThread + q;
        if (bin <= static_cast<int>(mask)) g[bin] = 0;
      }
      if (before < k_rem && k_rem <= before + sum) {
#pragma unroll
        for (int q = 0; q < kPerThread; ++q) {
          if (before < k_rem && k_rem <= before + h[q]) {
            const u32 left = k_rem - before;
            st->prefix = (static_cast<u64>(prefix) << width) | static_cast<u64>(threadIdx.x * kPerThread + q);
            st->bits_done = bits_done + static_cast<u32>(width);
            st->k_rem = left;
            st->done = h[q] == left || bits_done + width == S::kSortBits;
            break;
          }
          before += h[q];
        }
      }
      if (threadIdx.x == 0) st->arrived = 0;
    }
    __syncthreads();  // `hist` and `last` are used again by the block's next row
  }
}

// Per part: how many keys have top bits below the row's prefix, and how many equal it.
template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int HISTS, int WAVES, int SORT_BLOCK>
__global__ void __launch_bounds__(BLOCK) topk_count(gpuk::TopKArgs<S> a) {
  using Bits = typename S::Bits;
  __shared__ u64 tmp[BLOCK / 32];
  if (a.k >= a.row_len) return;  // every key is among the k: topk_scatter copies
  const gpuk::RowParts rp(a.rows, a.row_len, i64{BLOCK} * ITEMS);
  for (i64 w = blockIdx.x; w < rp.items(); w += gridDim.x) {
    const i64 row = rp.row(w);
    const gpuk::TopKRow* st = gpuk::topk_row(a, row);
    const Bits prefix = static_cast<Bits>(st->prefix);
    const u32 bits_done = st->bits_done;
    const typename S::K* keys = a.keys_in + row * a.row_len;
    const i64 end = rp.end(w);
    u32 less = 0, equal = 0;
    for (i64 base = rp.begin(w); base < end; base += i64{BLOCK} * ITEMS) {
      Bits b[ITEMS];
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 i = base + j * BLOCK + threadIdx.x;
        b[j] = i < end ? S::bits(keys[i]) : Bits(0);
      }
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 i = base + j * BLOCK + threadIdx.x;
        const Bits top = gpuk::top_bits<S>(b[j], bits_done);
        less += i < end && top < prefix;
        equal += i < end && top == prefix;
      }
    }
    const u64 both = gpuk::block_sum<BLOCK>((static_cast<u64>(less) << 32) | equal, tmp);
    if (threadIdx.x == 0) {
      u32* counts = gpuk::topk_counts<S, RADIX_BITS>(a, row);
      counts[2 * rp.part(w)] = static_cast<u32>(both >> 32);
      counts[2 * rp.part(w) + 1] = static_cast<u32>(both);
    }
  }
}

// Writes the row's k in input order: a key below the prefix goes to (keys below before it) +
// min(keys equal before it, k_rem); a key equal to it, when fewer than k_rem equal keys come
// before it, to (keys below before it) + (keys equal before it).
template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int HISTS, int WAVES, int SORT_BLOCK>
__global__ void __launch_bounds__(BLOCK) topk_scatter(gpuk::TopKArgs<S> a) {
  using Bits = typename S::Bits;
  constexpr int kWarps = BLOCK / 32;
  __shared__ u64 tmp[kWarps];
  __shared__ u64 warp_counts[ITEMS * kWarps];  // (below << 32 | equal) of tile item j of warp w at j * kWarps + w
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const u32 lanes_below = (1u << lane) - 1u;
  const gpuk::RowParts rp(a.rows, a.row_len, i64{BLOCK} * ITEMS);
  if (a.k >= a.row_len) {
    // Every key is among the k, in input order: each part of each row copied (keys bit for bit,
    // indices in the row), block-striped, with no digit pass before it and no count.
    for (i64 w = blockIdx.x; w < rp.items(); w += gridDim.x) {
      const i64 row = rp.row(w), end = rp.end(w);
      const typename S::K* keys = a.keys_in + row * a.row_len;
      for (i64 base = rp.begin(w); base < end; base += i64{BLOCK} * ITEMS) {
        typename S::K key[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          const i64 i = base + j * BLOCK + threadIdx.x;
          if (i < end) key[j] = keys[i];
        }
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          const i64 i = base + j * BLOCK + threadIdx.x;
          if (i < end) {
            a.values_out[row * a.k + i] = key[j];
            a.indices_out[row * a.k + i] = i;
          }
        }
      }
    }
    return;
  }
  for (i64 w = blockIdx.x; w < rp.items(); w += gridDim.x) {
    const i64 row = rp.row(w);
    const gpuk::TopKRow* st = gpuk::topk_row(a, row);
    const Bits prefix = static_cast<Bits>(st->prefix);
    const u32 bits_done = st->bits_done;
    const u64 k_rem = st->k_rem;
    const u32* counts = gpuk::topk_counts<S, RADIX_BITS>(a, row);
    const i64 part = rp.part(w);
    u64 earlier = 0;  // (below << 32 | equal) of the row's earlier parts (each sum < 2^32)
    for (i64 q = threadIdx.x; q < part; q += BLOCK)
      earlier += (static_cast<u64>(counts[2 * q]) << 32) | counts[2 * q + 1];
    earlier = gpuk::block_sum<BLOCK>(earlier, tmp);
    u64 below_before = earlier >> 32, equal_before = earlier & 0xffffffffull;
    const typename S::K* keys = a.keys_in + row * a.row_len;
    typename S::K* values = a.values_out + row * a.k;
    i64* indices = a.indices_out + row * a.k;
    const i64 end = rp.end(w);
    for (i64 base = rp.begin(w); base < end; base += i64{BLOCK} * ITEMS) {
      typename S::K key[ITEMS];
      u32 below[ITEMS], equal[ITEMS];  // the warp's ballots
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 i = base + j * BLOCK + threadIdx.x;
        bool lt = false, eq = false;
        if (i < end) {
          key[j] = keys[i];
          const Bits top = gpuk::top_bits<S>(S::bits(key[j]), bits_done);
          lt = top < prefix;
          eq = top == prefix;
        }
        below[j] = __ballot_sync(0xffffffffu, lt);
        equal[j] = __ballot_sync(0xffffffffu, eq);
        if (lane == 0) warp_counts[j * kWarps + warp] = (static_cast<u64>(__popc(below[j])) << 32) | __popc(equal[j]);
      }
      __syncthreads();
      // Tile items in index order are (j, warp) in j-major order: one entry per thread.
      u64 total;
      const u64 mine = threadIdx.x < ITEMS * kWarps ? warp_counts[threadIdx.x] : 0ull;
      const u64 ex = gpuk::block_exclusive_sum<BLOCK>(mine, total, tmp);
      if (threadIdx.x < ITEMS * kWarps) warp_counts[threadIdx.x] = ex;
      __syncthreads();
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 i = base + j * BLOCK + threadIdx.x;
        const u64 at = warp_counts[j * kWarps + warp];
        const u64 lt_before = below_before + (at >> 32) + __popc(below[j] & lanes_below);
        const u64 eq_before = equal_before + (at & 0xffffffffull) + __popc(equal[j] & lanes_below);
        i64 pos = -1;
        if ((below[j] >> lane) & 1u) pos = static_cast<i64>(lt_before + (eq_before < k_rem ? eq_before : k_rem));
        else if (((equal[j] >> lane) & 1u) && eq_before < k_rem) pos = static_cast<i64>(lt_before + eq_before);
        if (pos >= 0) {
          values[pos] = key[j];
          indices[pos] = i;
        }
      }
      below_before += total >> 32;
      equal_before += total & 0xffffffffull;
      __syncthreads();  // warp_counts is written again by the next tile
    }
  }
}

// sorted: each row's k (at most 4096: the plugin refuses more) ordered by (bits, index) in shared
// memory by a bitonic sort, the keys read again from the input by their index.
template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int HISTS, int WAVES, int SORT_BLOCK>
__global__ void __launch_bounds__(SORT_BLOCK) topk_sort(gpuk::TopKArgs<S> a) {
  using Bits = typename S::Bits;
  constexpr int kMax = 4096;
  if (!a.sorted || a.k == 1) return;  // one key is in order (the launcher skips both cases)
  extern __shared__ __align__(16) unsigned char smem[];
  Bits* bits = reinterpret_cast<Bits*>(smem);
  u32* index = reinterpret_cast<u32*>(smem + kMax * sizeof(Bits));
  const int k = static_cast<int>(a.k);
  int m = 1;
  while (m < k) m <<= 1;
  for (i64 row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const typename S::K* keys = a.keys_in + row * a.row_len;
    for (int i = threadIdx.x; i < m; i += SORT_BLOCK) {
      if (i < k) {
        const i64 at = a.indices_out[row * a.k + i];
        bits[i] = S::bits(keys[at]);
        index[i] = static_cast<u32>(at);
      } else {
        bits[i] = static_cast<Bits>(~Bits(0));
        index[i] = 0xffffffffu;  // after every real index (row_len < 2^32 - 1)
      }
    }
    __syncthreads();
    for (int size = 2; size <= m; size <<= 1) {
      for (int stride = size >> 1; stride > 0; stride >>= 1) {
        for (int t = threadIdx.x; t < m / 2; t += SORT_BLOCK) {
          const int lo = 2 * t - (t & (stride - 1)), hi = lo + stride;
          const bool up = (lo & size) == 0;
          const bool greater = bits[lo] > bits[hi] || (bits[lo] == bits[hi] && index[lo] > index[hi]);
          if (greater == up) {
            const Bits b = bits[lo];
            bits[lo] = bits[hi];
            bits[hi] = b;
            const u32 x = index[lo];
            index[lo] = index[hi];
            index[hi] = x;
          }
        }
        __syncthreads();
      }
    }
    for (int i = threadIdx.x; i < k; i += SORT_BLOCK) {
      a.indices_out[row * a.k + i] = index[i];
      a.values_out[row * a.k + i] = keys[index[i]];
    }
    __syncthreads();  // the next row overwrites the shared arrays
  }
}
