/* gpuk
family: sort
operations: [sort, sort_pairs, argsort]
summary: EXPERIMENT radix_lb (docs/PERFORMANCE.md, What moved the radix sort in the fourth session). The third session's radix.cu (commit acdc0a9) with a look-back that polls only the newest entry while it is unpublished.
params:
  BLOCK: {default: 512, values: [128, 256, 384, 512]}
  ITEMS: {default: 12, values: [4, 6, 8, 10, 12, 14, 16, 18, 20, 24]}
  RADIX_BITS: {default: 8, values: [4, 5, 6, 7, 8]}
  SMALL: {default: 1, values: [0, 1]}
  MIN_BLOCKS: {default: 2, values: [1, 2, 3, 4]}
constraints:
  - BLOCK >= pow2(RADIX_BITS)
  - BLOCK * MIN_BLOCKS <= 2048
  - n < 4294967296
launch:
  - entry: radix_small
    grid: 1
    block: BLOCK
    shared: BLOCK * ITEMS * 8 + (BLOCK / 32 + 5) * pow2(RADIX_BITS) * 4 + 128
  - entry: radix_histogram
    grid: min(ceil_div(n, BLOCK * ITEMS), sm_count * 4)
    block: BLOCK
  - entry: radix_pass
    grid: ceil_div(n, BLOCK * ITEMS)
    block: BLOCK
    shared: BLOCK * ITEMS * 8 + (BLOCK / 32 + 6) * pow2(RADIX_BITS) * 4 + 128
scratch: 32 + ceil_div(elem_bytes * 8, RADIX_BITS) * pow2(RADIX_BITS) + 4 * ceil_div(n, BLOCK * ITEMS) * pow2(RADIX_BITS)
*/

// How the host runs it (plugins/sort): n <= BLOCK * ITEMS with SMALL = 1: radix_small alone.
// Otherwise radix_histogram once, then radix_pass once per digit pass (pass = 0, 1, ...),
// reading the previous pass's output and writing the other buffer, so that the last pass lands
// in keys_out / values_out and the input is never written.
//
// MIN_BLOCKS is radix_pass's __launch_bounds__ minimum of resident blocks per SM: it caps the
// registers (4 blocks of 256 threads: 64 each) so that more tiles are in flight while others
// wait on their look-back. On the H100, 2^28 uint32 keys at BLOCK 256, ITEMS 16 took 15.5 ms
// with 1 (the compiler's free choice), 9.7 ms with 2 and 7.8 ms with 4.
//
// The defaults (512 x 12, MIN_BLOCKS 2) are the best compromise of `gpuk tune` on the H100
// between keys (2^28: 8.10 ms, best 7.74) and pairs (2^26: 3.08 ms, best 2.72): the best for keys
// spills registers once values are loaded too. configs/sort.yaml and sort_pairs.yaml carry each
// operation's best (docs/PERFORMANCE.md). These figures are from the 32-bit look-back entries
// (below); with the 64-bit ones the defaults take 8.33 and 3.11 ms.
//
// Scratch (u32 words, zero when bound; each run leaves it as it found it, except look-back
// entries, which are cleared before they are used):
//   [0, 16)   tile counter of pass p: blocks take tiles in the order they start (atomicAdd), so a
//             block only ever waits on tiles already held by running blocks (no deadlock)
//   [16, 32)  done counter of pass p (atomicInc wraps it back to 0)
//   [32, 32 + P * R)                 the global digit histogram of each pass (P passes, R digits)
//   then 2 look-back buffers of tiles * R 64-bit entries: pass p uses buffer p % 2. The
//   histogram launch clears buffer 0; pass p clears its own tile's entries of buffer
//   (p + 1) % 2 for pass p + 1.
// A look-back entry is a flag (bits 32-33: 0 not ready, 1 this tile's count, 2 inclusive prefix)
// and a 32-bit count in one 64-bit word, so the flag and the count are read together. Offsets
// are 32-bit: n < 2^32. (32-bit entries with a 30-bit count, n < 2^30, were 2.6% faster at 2^28
// keys on the H100, 7.83 against 8.04 ms; using them only below 2^30 did not win that back,
// 8.06 ms, probably because the look-back holds 16 words of registers either way.)
//
// Passes clear after themselves: the last block of pass p to finish (done ticket) zeroes the
// pass's histogram and tile counter. Every block reads the histogram before taking its ticket.

#include "gpuk/sort.cuh"

namespace {

constexpr gpuk::u64 kAggregate = 1ull << 32, kInclusive = 2ull << 32;

template <class S, int BLOCK, int ITEMS, int RADIX_BITS>
struct Onesweep {
  static constexpr int kTile = BLOCK * ITEMS;
  static constexpr int kRadix = 1 << RADIX_BITS;
  static constexpr int kPasses = S::template passes<RADIX_BITS>();
  static __device__ __forceinline__ gpuk::u32* histogram(gpuk::u32* scratch) { return scratch + 32; }
  // 64-bit entries; 32 + kPasses * kRadix is even (kRadix >= 16), so they are 8-byte aligned.
  static __device__ __forceinline__ gpuk::u64* lookback(gpuk::u32* scratch, gpuk::i64 tiles, int buffer) {
    return reinterpret_cast<gpuk::u64*>(scratch + 32 + kPasses * kRadix) + buffer * tiles * kRadix;
  }
};

}  // namespace

template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int SMALL, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK, 1) radix_small(gpuk::SortArgs<S> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  gpuk::block_radix_sort<S, BLOCK, ITEMS, RADIX_BITS>(a, smem);
}

template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int SMALL, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK) radix_histogram(gpuk::SortArgs<S> a) {
  using O = Onesweep<S, BLOCK, ITEMS, RADIX_BITS>;
  using K = typename S::K;
  constexpr int kRadix = O::kRadix, kPasses = O::kPasses;
  __shared__ gpuk::u32 counts[kPasses * kRadix];
  for (int i = threadIdx.x; i < kPasses * kRadix; i += BLOCK) counts[i] = 0;

  const gpuk::i64 n = a.n;
  const gpuk::i64 tiles = gpuk::ceil_div(n, O::kTile);
  const gpuk::i64 first = gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x, stride = gpuk::i64(gridDim.x) * BLOCK;
  gpuk::u64* lookback0 = O::lookback(a.scratch, tiles, 0);
  for (gpuk::i64 i = first; i < tiles * kRadix; i += stride) lookback0[i] = 0;
  __syncthreads();

  const auto count = [&](K key) {
    const typename S::Bits b = S::bits(key);
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
      atomicAdd(&counts[p * kRadix + (static_cast<gpuk::u32>(b >> (p * RADIX_BITS)) & (kRadix - 1))], 1u);
  };
  // 16-byte loads, four in flight per thread, then the elements past the last whole vector.
  constexpr int kVec = gpuk::Vec16<K>::kCount;
  const gpuk::i64 vectors = n / kVec;
  gpuk::i64 v = first;
  for (; v + 3 * stride < vectors; v += 4 * stride) {
    gpuk::Vec16<K> x[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) x[u] = gpuk::load_vec16(a.keys_in + (v + u * stride) * kVec);
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int e = 0; e < kVec; ++e) count(x[u].v[e]);
  }
  for (; v < vectors; v += stride) {
    const gpuk::Vec16<K> x = gpuk::load_vec16(a.keys_in + v * kVec);
#pragma unroll
    for (int e = 0; e < kVec; ++e) count(x.v[e]);
  }
  if (blockIdx.x == 0)
    for (gpuk::i64 i = vectors * kVec + threadIdx.x; i < n; i += BLOCK) count(a.keys_in[i]);
  __syncthreads();
  gpuk::u32* histogram = O::histogram(a.scratch);
  for (int i = threadIdx.x; i < kPasses * kRadix; i += BLOCK)
    if (counts[i]) atomicAdd(&histogram[i], counts[i]);
}

template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int SMALL, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) radix_pass(gpuk::SortArgs<S> a) {
  using O = Onesweep<S, BLOCK, ITEMS, RADIX_BITS>;
  using K = typename S::K;
  using V = typename S::V;
  using Rank = gpuk::BlockRank<BLOCK, ITEMS, RADIX_BITS>;
  constexpr int kTile = O::kTile, kRadix = O::kRadix;
  struct PassShared {
    gpuk::u32 histogram[kRadix];  // this pass's global digit counts
    gpuk::u32 base[kRadix];       // their exclusive scan: where each digit starts in the output
    gpuk::u32 offset[kRadix];     // output index of tile position i with digit d: offset[d] + i
    gpuk::u32 tile_count[kRadix]; // this tile's digit counts, counted before the ranking
    gpuk::u32 scan_tmp[8];
    gpuk::u32 tile;
    gpuk::u32 last;
  };
  extern __shared__ __align__(16) unsigned char smem[];
  typename Rank::Shared& rs = *reinterpret_cast<typename Rank::Shared*>(smem + kTile * 8);
  PassShared& ps = *reinterpret_cast<PassShared*>(smem + kTile * 8 + sizeof(typename Rank::Shared));

  const int t = threadIdx.x, pass = a.pass;
  const gpuk::i64 n = a.n, tiles = gpuk::ceil_div(n, kTile);
  gpuk::u32* counters = a.scratch;
  gpuk::u32* histogram = O::histogram(a.scratch) + pass * kRadix;
  gpuk::u64* lookback = O::lookback(a.scratch, tiles, pass & 1);

  if (t == 0) ps.tile = atomicAdd(&counters[pass], 1u);
  if (t < kRadix) {
    ps.histogram[t] = __ldcg(histogram + t);
    ps.tile_count[t] = 0;
  }
  __syncthreads();
  const gpuk::u32 tile = ps.tile;
  const gpuk::i64 tile_begin = gpuk::i64(tile) * kTile;
  const int valid = static_cast<int>(n - tile_begin < kTile ? n - tile_begin : kTile);

  // Keys, warp-striped; positions past n take the largest digit and sort behind the real keys.
  K key[ITEMS];
  gpuk::u32 digit[ITEMS], rank[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int e = gpuk::striped_index<ITEMS>(k);
    key[k] = K{};
    digit[k] = kRadix - 1;
    if (e < valid) {
      key[k] = a.keys_in[tile_begin + e];
      digit[k] = S::template digit<RADIX_BITS>(key[k], pass);
    }
  }
  // Values are loaded now, not after the ranking, so that their latency overlaps it.
  V value[ITEMS];
  if constexpr (S::kHasValues) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int e = gpuk::striped_index<ITEMS>(k);
      if (e < valid) value[k] = S::value_at(a.values_in, tile_begin + e);
    }
  }
  // Count the tile's digits first and publish the counts at once, before the (longer) ranking,
  // so that the tiles after this one find them when they look back.
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    if (gpuk::striped_index<ITEMS>(k) < valid) atomicAdd(&ps.tile_count[digit[k]], 1u);
  __syncthreads();
  volatile gpuk::u64* mine = lookback + gpuk::i64(tile) * kRadix;
  if (t < kRadix) *(mine + t) = (tile == 0 ? kInclusive : kAggregate) | ps.tile_count[t];

  Rank::rank(digit, rank, rs);
  gpuk::block_exclusive_scan<BLOCK, kRadix>(ps.histogram, ps.base, ps.scan_tmp);

  // Decoupled look-back, one thread per digit: add the counts of the tiles before this one,
  // walking back until a tile that already knows its inclusive prefix. Eight entries are loaded
  // at a time, so a long walk costs an eighth of the round trips.
  if (t < kRadix) {
    gpuk::u32 prefix = 0;
    if (tile > 0) {
      gpuk::i64 next = gpuk::i64(tile) - 1;  // the newest tile not yet added
      bool found = false;
      while (!found) {
        // EXPERIMENT (radix_lb): while the newest entry is not published, poll it alone (one
        // load per spin, as CUB does) instead of reloading all eight.
        gpuk::u64 first;
        do {
          first = *(volatile const gpuk::u64*)(lookback + next * kRadix + t);
        } while ((first >> 32) == 0);
        gpuk::u64 word[8];
        word[0] = first;
#pragma unroll
        for (int q = 1; q < 8; ++q)
          word[q] = next - q >= 0 ? *(volatile const gpuk::u64*)(lookback + (next - q) * kRadix + t) : kInclusive;
        int used = 0;
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          if (found) break;
          const gpuk::u32 flag = static_cast<gpuk::u32>(word[q] >> 32);
          if (flag == 0) break;  // not published yet: load it again
          prefix += static_cast<gpuk::u32>(word[q]);
          used = q + 1;
          found = flag == 2;
        }
        next -= used;
      }
      *(mine + t) = kInclusive | (prefix + ps.tile_count[t]);
    }
    ps.offset[t] = ps.base[t] + prefix - rs.start[t];
  }

  // Keys to their tile positions, then out in tile order: consecutive threads write consecutive
  // addresses within each digit's run.
  K* kbuf = reinterpret_cast<K*>(smem);
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) kbuf[rank[k]] = key[k];
  __syncthreads();
  gpuk::u32 destination[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int i = j * BLOCK + t;
    if (i < valid) {
      const K k = kbuf[i];
      destination[j] = ps.offset[S::template digit<RADIX_BITS>(k, pass)] + static_cast<gpuk::u32>(i);
      a.keys_out[destination[j]] = k;
    }
  }
  if constexpr (S::kHasValues) {
    V* vbuf = reinterpret_cast<V*>(smem);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int e = gpuk::striped_index<ITEMS>(k);
      if (e < valid) vbuf[rank[k]] = value[k];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const int i = j * BLOCK + t;
      if (i < valid) a.values_out[destination[j]] = vbuf[i];
    }
  }

  // Clear this tile's entries of the next pass's look-back buffer (the previous pass's).
  if (pass + 1 < a.passes && t < kRadix) O::lookback(a.scratch, tiles, (pass + 1) & 1)[gpuk::i64(tile) * kRadix + t] = 0;
  // The last block of the pass to finish resets the pass's histogram and tile counter; every
  // block read the histogram before taking its ticket.
  if (t == 0) {
    __threadfence();
    ps.last = atomicInc(&counters[16 + pass], static_cast<gpuk::u32>(tiles - 1)) == static_cast<gpuk::u32>(tiles - 1);
  }
  __syncthreads();
  if (ps.last) {
    if (t < kRadix) histogram[t] = 0;
    if (t == 0) counters[pass] = 0;
  }
}
