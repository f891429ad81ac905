/* gpuk
family: sort
operations: [sort, sort_pairs, argsort]
summary: Onesweep least-significant-digit radix sort. One histogram launch counts every digit pass at once and turns the counts into each digit's output base; then one launch per RADIX_BITS-wide digit pass ranks a tile of BLOCK * ITEMS keys in shared memory and finds the tile's global offsets with a decoupled look-back over the tiles before it (a chained scan), then scatters keys and values. Arrays of at most one tile take a one-launch, one-block path instead (SMALL = 1).
params:
  BLOCK: {default: 384, values: [128, 256, 384, 512]}
  ITEMS: {default: 20, values: [4, 6, 8, 10, 12, 14, 16, 18, 20, 21, 22, 23, 24]}
  RADIX_BITS: {default: 8, values: [4, 5, 6, 7, 8]}
  SMALL: {default: 1, values: [0, 1]}
  MIN_BLOCKS: {default: 2, values: [1, 2, 3, 4]}
  VLOAD: {default: 1, values: [0, 1]}
  LB32: {default: 0, values: [0, 1]}
constraints:
  - BLOCK >= pow2(RADIX_BITS)
  - BLOCK * MIN_BLOCKS <= 2048
  - n < 4294967296
  - LB32 == 0 || n < 1073741824
launch:
  - entry: radix_small
    when: SMALL && n <= BLOCK * ITEMS
    grid: 1
    block: BLOCK
    shared: BLOCK * ITEMS * 8 + (BLOCK / 32 + 5) * pow2(RADIX_BITS) * 4 + 128
  - entry: radix_histogram
    when: SMALL == 0 || n > BLOCK * ITEMS
    grid: min(ceil_div(n, BLOCK * ITEMS), sm_count * 4)
    block: BLOCK
  - entry: radix_pass
    when: SMALL == 0 || n > BLOCK * ITEMS
    repeat: ceil_div(elem_bytes * 8, RADIX_BITS)
    grid: ceil_div(n, BLOCK * ITEMS)
    block: BLOCK
    shared: BLOCK * ITEMS * 8 + (BLOCK / 32 + 1) * pow2(RADIX_BITS) * 4 + 64
scratch: 32 + 2 * ceil_div(elem_bytes * 8, RADIX_BITS) * pow2(RADIX_BITS) + 4 * ceil_div(n, BLOCK * ITEMS) * pow2(RADIX_BITS)
*/

// How the host runs it (the launch list's `when` and `repeat`): n <= BLOCK * ITEMS with
// SMALL = 1: radix_small alone. Otherwise radix_histogram once, then radix_pass once per digit
// pass (pass = 0, 1, ...), reading the previous pass's output and writing the other buffer, so
// that the last pass lands in keys_out / values_out and the input is never written.
//
// The parameters besides the tile (BLOCK x ITEMS keys) and the digit width:
// - MIN_BLOCKS is radix_pass's __launch_bounds__ minimum of resident blocks per SM. It caps the
//   registers (4 blocks of 256 threads: 64 each) so that more tiles are in flight while others
//   wait on their look-back. On the H100, 2^28 uint32 keys at BLOCK 256, ITEMS 16 took 15.5 ms
//   with 1 (the compiler's free choice), 9.7 ms with 2 and 7.8 ms with 4 (an earlier version).
// - VLOAD: when a pass loads its values. 0: with the keys, so that their latency overlaps the
//   ranking; 1: after the keys are written out (CUB's order), so that they do not hold registers
//   through the ranking. Which wins depends on the tile: at 2^26 uint32 pairs on the H100, 256 x 23
//   took 2.44 ms with 0 and 2.53 with 1; 384 x 20, 2.67 ms with 1 and more than 2.9 with 0.
// - LB32: the width of a look-back entry. 0: 64 bits (a 32-bit count), any n < 2^32; 1: 32 bits
//   (a 30-bit count, 2 flag bits), n < 2^30 (a constraint), half the look-back's traffic and
//   registers: 2^28 keys at 256 x 16 x 4 took 6.82 ms against 7.13 with 0.
//
// The defaults (384 x 20, MIN_BLOCKS 2, VLOAD 1, LB32 0) sort any n < 2^32. On the H100 they take
// 7.34 ms for 2^28 keys (gpuk tune's best, 256 x 16 x 4 with LB32 1: 6.82) and 2.97 ms for 2^26
// pairs (best, 256 x 23 x 2 with VLOAD 0 and LB32 1: 2.45; the same defaults with LB32 1: 2.67);
// configs/sort.yaml and sort_pairs.yaml carry each operation's best (docs/PERFORMANCE.md).
//
// Scratch (u32 words, zero when bound):
//   [0, 16)   tile counter of pass p: blocks take tiles in the order they start (atomicAdd), so a
//             block only ever waits on tiles already held by running blocks (no deadlock). The
//             histogram launch zeroes them for the run (the previous run's passes are done).
//   [16]      the histogram launch's done counter (atomicInc wraps it back to 0)
//   [32, 32 + P * R)            the global digit counts of each pass (P passes, R digits); zero
//                               between runs: the histogram launch's last block clears them
//   [32 + P * R, 32 + 2 * P * R)  each pass's digit bases (exclusive scan of its counts), written
//                               by that last block, read by every tile of the pass
//   then 2 look-back buffers of tiles * R entries: pass p uses buffer p % 2. The histogram
//   launch clears buffer 0; pass p clears its own tile's entries of buffer (p + 1) % 2 for
//   pass p + 1.
// A look-back entry is a flag (0 not ready, 1 this tile's count, 2 inclusive prefix) above the
// count in one word (u64, or u32 with LB32), so the flag and the count are read together.
// Nothing is cleared at the end of a pass: no fence, ticket or barrier after a tile's writes.
//
// The ranking is CUB's "early counts" (RADIX_RANK_MATCH_EARLY_COUNTS_ANY): per-warp digit counts
// first (shared atomics), which give the tile's counts to publish at once, so that the tiles
// after this one find them early; an exclusive scan of those counts over warps and digits gives
// each warp's first position per digit; then, item by item, the lanes with the same digit find
// each other (gpuk::match_digit) and their highest lane takes their positions with one atomic.

#include "gpuk/sort_pass.cuh"

namespace {

template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int LB32>
struct Onesweep {
  static constexpr int kTile = BLOCK * ITEMS;
  static constexpr int kRadix = 1 << RADIX_BITS;
  static constexpr int kPasses = S::template passes<RADIX_BITS>();
  // A look-back entry: the flag at bit kShift, above the count.
  using E = typename gpuk::Select<LB32 == 1, gpuk::u32, gpuk::u64>::type;
  static constexpr int kShift = LB32 == 1 ? 30 : 32;
  static constexpr E kAggregate = E(1) << kShift, kInclusive = E(2) << kShift;
  static constexpr E kCountMask = kAggregate - 1;
  static __device__ __forceinline__ gpuk::u32* histogram(gpuk::u32* scratch) { return scratch + 32; }
  static __device__ __forceinline__ gpuk::u32* bases(gpuk::u32* scratch) { return scratch + 32 + kPasses * kRadix; }
  static __device__ __forceinline__ E* lookback(gpuk::u32* scratch, gpuk::i64 tiles, int buffer) {
    return reinterpret_cast<E*>(scratch + 32 + 2 * kPasses * kRadix) + buffer * tiles * kRadix;
  }
  // A pass's keys, warp-striped, and their digits; positions past n take the largest digit and
  // rank behind the real keys (they are counted and ranked like keys, never written; only the
  // last tile has them, and no tile reads its published counts).
  static __device__ __forceinline__ void load_keys(const gpuk::SortArgs<S>& a, gpuk::i64 tile_begin, int valid,
                                                   int pass, typename S::K (&key)[ITEMS],
                                                   gpuk::u32 (&digit)[ITEMS]) {
    using K = typename S::K;
    if constexpr (K(1) / K(2) != K(0)) {
      // Floats: all loads first, then the digits. A float's digit takes several instructions, and
      // computed inside each load's bounds check it kept the loads from being issued together.
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const int e = gpuk::striped_index<ITEMS>(k);
        key[k] = e < valid ? a.keys_in[tile_begin + e] : K{};
      }
#pragma unroll
      for (int k = 0; k < ITEMS; ++k)
        digit[k] = gpuk::striped_index<ITEMS>(k) < valid ? S::template digit<RADIX_BITS>(key[k], pass) : kRadix - 1;
    } else {
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
    }
  }
  // Keys and values of 4 bytes leave half of the exchange buffer's 8 bytes per element free:
  // there each element's digit is kept as a byte at its tile position. The key scatter reads it
  // instead of mapping the key again (a float's map is several instructions), and the value
  // scatter finds its destinations from it instead of holding them in ITEMS registers from the
  // key scatter on. Those registers made the default 384 x 20 tile spill about 110 bytes per
  // thread for pairs under its 80-register cap (docs/PERFORMANCE.md, "Sort: float keys and the
  // digit byte").
  static constexpr bool kDigitBytes =
      S::kHasValues && sizeof(typename S::K) <= 4 && sizeof(typename S::V) <= 4;
  // After the look-back and a barrier: keys to their tile positions, then out in tile order,
  // consecutive threads writing consecutive addresses within each digit's run. Values follow
  // through the same buffer.
  template <int VLOAD>
  static __device__ __forceinline__ void write_out(const gpuk::SortArgs<S>& a,
                                                   const gpuk::PassShared<BLOCK, kRadix>& ps, gpuk::i64 tile_begin,
                                                   int valid, int pass,
                                                   const typename S::K (&key)[ITEMS], typename S::V (&value)[ITEMS],
                                                   const gpuk::u32 (&rank)[ITEMS], unsigned char* smem) {
    using K = typename S::K;
    using V = typename S::V;
    const int t = threadIdx.x;
    unsigned char* const dbuf = smem + kTile * 4;
    K* kbuf = reinterpret_cast<K*>(smem);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) kbuf[rank[k]] = key[k];
    __syncthreads();
    gpuk::u32 destination[kDigitBytes ? 1 : ITEMS];  // kept for the values only without digit bytes
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const int i = j * BLOCK + t;
      if (i < valid) {
        const K k = kbuf[i];
        const gpuk::u32 d = kDigitBytes ? gpuk::u32(dbuf[i]) : S::template digit<RADIX_BITS>(k, pass);
        const gpuk::u32 to = ps.offset[d] + static_cast<gpuk::u32>(i);
        if constexpr (!kDigitBytes) destination[j] = to;
        a.keys_out[to] = k;
      }
    }
    if constexpr (S::kHasValues) {
      if constexpr (VLOAD == 1) gpuk::load_striped_values<S>(a.values_in, tile_begin, valid, value);
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
        if (i < valid) {
          if constexpr (kDigitBytes) a.values_out[ps.offset[dbuf[i]] + static_cast<gpuk::u32>(i)] = vbuf[i];
          else a.values_out[destination[j]] = vbuf[i];
        }
      }
    }
  }
};

}  // namespace

template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int SMALL, int MIN_BLOCKS, int VLOAD, int LB32>
__global__ void __launch_bounds__(BLOCK, 1) radix_small(gpuk::SortArgs<S> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  gpuk::block_radix_sort<S, BLOCK, ITEMS, RADIX_BITS>(a, smem);
}

template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int SMALL, int MIN_BLOCKS, int VLOAD, int LB32>
__global__ void __launch_bounds__(BLOCK) radix_histogram(gpuk::SortArgs<S> a) {
  using O = Onesweep<S, BLOCK, ITEMS, RADIX_BITS, LB32>;
  const gpuk::i64 tiles = gpuk::ceil_div(a.n, O::kTile);
  gpuk::digit_histogram<S, BLOCK, RADIX_BITS>(a, O::histogram(a.scratch), O::bases(a.scratch),
                                              reinterpret_cast<gpuk::u32*>(O::lookback(a.scratch, tiles, 0)),
                                              tiles * O::kRadix * gpuk::i64(sizeof(typename O::E) / 4));
}

template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int SMALL, int MIN_BLOCKS, int VLOAD, int LB32>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) radix_pass(gpuk::SortArgs<S> a) {
  using O = Onesweep<S, BLOCK, ITEMS, RADIX_BITS, LB32>;
  using K = typename S::K;
  using V = typename S::V;
  using E = typename O::E;
  constexpr int kTile = O::kTile, kRadix = O::kRadix, kWarps = BLOCK / 32;
  constexpr int kShift = O::kShift;
  extern __shared__ __align__(16) unsigned char smem[];
  auto& ps = *reinterpret_cast<gpuk::PassShared<BLOCK, kRadix>*>(smem + kTile * 8);
  constexpr bool kDigitBytes = O::kDigitBytes;
  unsigned char* const dbuf = smem + kTile * 4;

  const int t = threadIdx.x, pass = a.pass;
  const int warp = t >> 5, lane = t & 31;
  const gpuk::i64 n = a.n, tiles = gpuk::ceil_div(n, kTile);
  E* lookback = O::lookback(a.scratch, tiles, pass & 1);

  gpuk::u32 base;
  const gpuk::u32 tile = gpuk::take_tile(a, O::bases(a.scratch), ps, base);
  const gpuk::i64 tile_begin = gpuk::i64(tile) * kTile;
  const int valid = static_cast<int>(n - tile_begin < kTile ? n - tile_begin : kTile);

  K key[ITEMS];
  gpuk::u32 digit[ITEMS], rank[ITEMS];
  O::load_keys(a, tile_begin, valid, pass, key, digit);
  V value[ITEMS];
  if constexpr (S::kHasValues && VLOAD == 0) gpuk::load_striped_values<S>(a.values_in, tile_begin, valid, value);
  // Per-warp digit counts.
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) atomicAdd(&ps.warp_offset[warp][digit[k]], 1u);
  __syncthreads();
  // Per digit (thread t < kRadix): the tile's count, published at once; exclusive over the warps;
  // the tile-wide start of the digit (a block scan, inlined so that the counts stay in registers).
  volatile E* mine = lookback + gpuk::i64(tile) * kRadix;
  constexpr int kScanThreads = kRadix < 32 ? 32 : kRadix;  // whole warps for the shuffles
  gpuk::u32 count = 0, inclusive = 0;
  if (t < kScanThreads) {
    if (t < kRadix) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) count += ps.warp_offset[w][t];
      *(mine + t) = (tile == 0 ? O::kInclusive : O::kAggregate) | count;
    }
    inclusive = count;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const gpuk::u32 y = __shfl_up_sync(0xffffffffu, inclusive, o);
      if (lane >= o) inclusive += y;
    }
    if (lane == 31) ps.scan_tmp[warp] = inclusive;
  }
  __syncthreads();
  gpuk::u32 start = 0;
  if (t < kRadix) {
    start = inclusive - count;
    for (int w = 0; w < warp; ++w) start += ps.scan_tmp[w];
    // The counts are read again rather than kept in kWarps registers (which spilled at 256 x 16
    // with 64 registers); column t of warp_offset is thread t's alone, so no barrier is needed.
    gpuk::u32 run = start;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const gpuk::u32 c = ps.warp_offset[w][t];
      ps.warp_offset[w][t] = run;
      run += c;
    }
  }
  __syncthreads();
  // Ranks: per item, the lanes with this digit (peers) take consecutive positions after the
  // warp's counter, which their highest lane advances for all of them.
  {
    gpuk::u32 le;
    asm("mov.u32 %0, %%lanemask_le;" : "=r"(le));
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const gpuk::u32 peers = gpuk::match_digit<RADIX_BITS>(digit[k]);
      const int leader = 31 - __clz(peers);
      const gpuk::u32 upto = __popc(peers & le);
      gpuk::u32 offset = 0;
      if (lane == leader) offset = atomicAdd(&ps.warp_offset[warp][digit[k]], upto);
      offset = __shfl_sync(0xffffffffu, offset, leader);
      rank[k] = offset + upto - 1;
      if constexpr (kDigitBytes) dbuf[rank[k]] = static_cast<unsigned char>(digit[k]);
    }
  }

  // Decoupled look-back, one thread per digit: add the counts of the tiles before this one,
  // walking back until a tile that already knows its inclusive prefix. Eight entries are loaded
  // at a time, so a long walk costs an eighth of the round trips.
  if (t < kRadix) {
    gpuk::u32 prefix = 0;
    if (tile > 0) {
      gpuk::i64 next = gpuk::i64(tile) - 1;
      bool found = false;
      while (!found) {
        E word[8];
#pragma unroll
        for (int q = 0; q < 8; ++q)
          word[q] = next - q >= 0 ? *(volatile const E*)(lookback + (next - q) * kRadix + t) : O::kInclusive;
        int used = 0;
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          if (found) break;
          const gpuk::u32 flag = static_cast<gpuk::u32>(word[q] >> kShift);
          if (flag == 0) break;
          prefix += static_cast<gpuk::u32>(word[q] & O::kCountMask);
          used = q + 1;
          found = flag == 2;
        }
        next -= used;
      }
      *(mine + t) = O::kInclusive | (prefix + count);
    }
    ps.offset[t] = base + prefix - start;
  }

  O::template write_out<VLOAD>(a, ps, tile_begin, valid, pass, key, value, rank, smem);

  // Clear this tile's entries of the next pass's look-back buffer (the previous pass's).
  if (pass + 1 < a.passes && t < kRadix) O::lookback(a.scratch, tiles, (pass + 1) & 1)[gpuk::i64(tile) * kRadix + t] = 0;
}
