/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin, argminmax]
summary: One launch built for HBM bandwidth. Blocks stride over tiles of BLOCK * UNROLL 16-byte vectors with UNROLL loads in flight per thread and reduce with warp shuffles; the last block to finish combines the blocks' results and resets the counter. Max, min, argmax and argmin of 32-bit values reduce packed 64-bit candidates (order key above inverted index) with one 64-bit atomicMax per block. Switches LOAD (cache hints of the loads), SPLIT (contiguous tiles per block), WAVES (an oversubscribed grid) default to the code before them; FOLD 1 (the default) folds 32-bit keys per element and packs once per thread; max and min fold the values themselves (one max.NaN / min.NaN an element for float32, a tree per tile) and key once per thread. Argminmax folds every element into an argmin and an argmax candidate in the same pass (of 32-bit values two key-index pairs per thread and two packed words); of float32, FOLD 2 compares the values as floats instead of their keys, screening each tile for NaN with one sum (elsewhere FOLD 2 is FOLD 1).
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  UNROLL: {default: 4, values: [1, 2, 4, 8]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
  LOAD: {default: 0, values: [0, 1, 2]}
  SPLIT: {default: 0, values: [0, 1]}
  WAVES: {default: 1, values: [1, 2, 4, 8]}
  FOLD: {default: 1, values: [0, 1, 2]}
constraints:
  - BLOCK * UNROLL <= 8192
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: reduce_onepass
    grid: min(ceil_div(n, BLOCK * UNROLL * vec), sm_count * BLOCKS_PER_SM * WAVES)
    block: BLOCK
scratch: sm_count * BLOCKS_PER_SM * WAVES
*/

// Why it is shaped like this:
// - Bandwidth. A tile is BLOCK * UNROLL vectors of 16 bytes; each thread issues its UNROLL
//   vector loads before it compares anything, so UNROLL * 16 bytes per thread are in flight.
//   With the defaults (256 threads, 4 blocks per multiprocessor) that is 64 KiB per
//   multiprocessor, several times what the H100 needs to cover HBM3 latency. The grid is at
//   most one wave (BLOCK * BLOCKS_PER_SM <= 2048 threads per multiprocessor) and strides over
//   the tiles, so large n needs no more blocks than the GPU holds at once.
// - Small n. The grid is never larger than the number of tiles, so 250,000 floats take 62
//   blocks of one tile each and the last block combines 62 partials; n below one tile runs a
//   single block that writes out directly, with no partials and no atomic.
// - Index order. Vector u of thread t in a tile holds elements tile + (u * BLOCK + t) * vec
//   + [0, vec); the thread visits u, then the vector's elements, in increasing order, and its
//   tiles in increasing order, so its elements are seen in increasing index order even though
//   they are not contiguous. That is what lets R::accumulate keep the lowest index with one
//   strict compare per element. Across threads and blocks R::combine breaks ties by index.
// - The tail. Whole tiles take vector loads with no bounds checks. The last, partial tile
//   goes to the block whose tile stride lands on it (exactly one does), after its whole tiles
//   (index order again); there, a vector that lies wholly below n is still one 16-byte load
//   and the single vector that straddles n is read element by element.
// - Finishing. Thread 0 writes partials[blockIdx.x], then takes a ticket with an
//   acquire-release atomicInc(counter, gridDim.x - 1) (gpuk::ticket_acq_rel). The block with the
//   last ticket reads every partial from L2 (gpuk::load_cg). The increment wraps the counter to
//   0 on that last ticket, which leaves it zero for the next run.
// - Max, min, argmax and argmin of 32-bit values (n < 2^32) take packed_onepass instead: every
//   element becomes a 64-bit packed candidate (its order key above its inverted index,
//   gpuk::PackedCandidate), so the whole reduction is an unsigned max: two redux.sync per warp
//   instead of shuffling a value and a 64-bit index, no partials (each block atomicMax-es the word
//   at counter + 2 and the last block reads and zeroes it), and the value is decoded from the
//   winning key instead of read back from in[i], one dependent memory round trip less. On the
//   H100, argmax of 250,000 float32 |x|: 6.7 us before, 5.6 us (docs/PERFORMANCE.md).
// - The switches (issue 35: the H200 has 1.4x the H100's bandwidth; the experiment that measured
//   them is tools/experiments/reduce_h200/, its results docs/PERFORMANCE.md). LOAD, SPLIT and
//   WAVES default to the code as it was before them; FOLD defaults to 1, which was faster in
//   every cell of the H200's matrix (FOLD 0 1.01-1.18x slower: the packed 64-bit compare and
//   select per element fell behind HBM3e), so the packed path above is FOLD 0's per element and
//   FOLD 1's per thread.
//   LOAD 0 ld.global.nc (__ldg); 1 ld.global.nc.L1::no_allocate.L2::256B (no L1 line kept for
//   data read once, and a hint to fetch 256 bytes into L2); 2 ld.global.cs (__ldcs, evict first).
//   SPLIT 0 tiles strided over the blocks; 1 each block a contiguous run of tiles, whole_tiles
//   split evenly (CUB's even share), the partial tile to the last block: index order holds.
//   WAVES: the grid may hold WAVES times the blocks that fit at once (CUB launches 5x the
//   occupancy), so blocks that finish early are replaced instead of idling at the end.
//   FOLD 1: argmax and argmin take per element a 32-bit order key and keep a 32-bit index beside
//   the best, starting from the index of the thread's first element so that a strict compare
//   keeps the lowest index. Max and min return no index, so they fold the values themselves
//   (R::best_of: for float32 one max.NaN / min.NaN an element, which keeps a NaN as `better`
//   does; a tile's values as a tree, since no index order is to be kept) and take the order key
//   once per thread; a warp's keys reduce in one redux.sync (gpuk::block_max_u32). The value is
//   decoded from the key, a NaN's as a NaN and a float zero's as +0.0, and the index written is
//   -1. Why: keying every element cost about ten instructions an element; at 2^12 float32 the
//   whole input is one block on one multiprocessor, where those instructions (about 350 cycles
//   of its four schedulers) were the part of the launch that CUB's single-tile max, one
//   instruction an element, does not pay. The block's result is packed as FOLD 0's, so what
//   follows is the same.
// - Argminmax reads the data once for both answers. Its policy (gpuk::Reduce's kPair) folds each
//   element into an ArgMin and an ArgMax candidate, so the pair is what the two operations return
//   apart. Of 32-bit values (n < 2^32) it takes packed_pair_onepass: FOLD 1's key and index per
//   element, twice (the two order keys share their bit twiddling), two packed words per thread,
//   four redux.sync per warp, and the words at counter + 2 and counter + 4 across blocks, both
//   zeroed by the last block. Wider values take the partials path with a 32-byte MinMax partial.
// - FOLD 2 (argminmax of float32; every other case takes FOLD 1): float_pair_onepass. FOLD 1's
//   per-element key twiddling, two 32-bit compares and selects of key and index cost 19 ALU-pipe
//   instructions per element (SASS of the shipped 2^28 variant: 724 per 32-element tile, 615 on
//   that pipe), and the ALU pipe, 16 lanes per partition on sm_90, then caps the pass at about
//   3.5 TB/s (0.311 ms at 2^28 on the H200, where one read takes 0.235). FOLD 2 compares the
//   floats themselves (a compare, a select of the value and of the index per side and element;
//   261 instructions per tile, 215 on the ALU pipe) and catches NaN, which no compare
//   orders, by one sum per tile on the FMA pipes (NaN if an element is, or if +inf meets -inf;
//   such a tile is folded again element by element with the NaN rule).
// `in` must be 16-byte aligned (cudaMalloc gives 256).

#include "gpuk/reduce.cuh"

// One 16-byte vector of `in`: LOAD 0 ld.global.nc (__ldg); 1 the same without allocating in L1
// and with a 256-byte L2 prefetch hint; 2 a streaming load (ld.global.cs, __ldcs).
template <int LOAD, class T> __device__ __forceinline__ gpuk::Vec16<T> load_tile_vec(const T* p) {
  if constexpr (LOAD == 0) {
    return gpuk::load_vec16(p);
  } else {
    uint4 raw;
    if constexpr (LOAD == 1) {
      asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
          : "=r"(raw.x), "=r"(raw.y), "=r"(raw.z), "=r"(raw.w)
          : "l"(p));
    } else {
      raw = __ldcs(reinterpret_cast<const uint4*>(p));
    }
    gpuk::Vec16<T> out;
    *reinterpret_cast<uint4*>(out.v) = raw;
    return out;
  }
}

// This block's whole tiles: first, first + step, ... below end. SPLIT 0: every gridDim.x-th tile
// from blockIdx.x; SPLIT 1: a contiguous run, whole_tiles split evenly over the blocks (CUB's
// "even share"). Either way the tile after the loop is whole_tiles for exactly the block that
// takes the partial tile (SPLIT 1: the last block; with no whole tile the grid is one block).
template <int SPLIT> struct TileRange {
  gpuk::i64 first, end, step;
  __device__ __forceinline__ explicit TileRange(gpuk::i64 whole_tiles) {
    if constexpr (SPLIT == 0) {
      first = blockIdx.x;
      end = whole_tiles;
      step = gridDim.x;
    } else {
      first = whole_tiles * blockIdx.x / gridDim.x;
      end = whole_tiles * (blockIdx.x + 1) / gridDim.x;
      step = 1;
    }
  }
};

template <class R, int BLOCK, int UNROLL, int LOAD, int SPLIT, int FOLD>
__device__ __forceinline__ void packed_onepass(const typename R::T* __restrict__ in, gpuk::i64 n,
                                               typename R::Acc* out, unsigned int* counter) {
  using T = typename R::T;
  using P = gpuk::PackedCandidate<R>;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * UNROLL * kVec;
  // FOLD 1: max and min keep the best 32-bit order key alone (they return no index); argmax and
  // argmin keep it beside a 32-bit index (a 32-bit compare per element instead of a 64-bit one).
  constexpr bool kSplitKey = FOLD >= 1;  // FOLD 2 is argminmax's; here it is FOLD 1
  constexpr bool kIndexed = R::kOp == gpuk::ReduceOp::ArgMax || R::kOp == gpuk::ReduceOp::ArgMin;
  constexpr bool kValueOnly = kSplitKey && !kIndexed;  // FOLD 1's max and min
  __shared__ gpuk::u64 warp_best[BLOCK / 32];
  gpuk::u64 acc = 0;  // below every packed candidate
  gpuk::u32 best_key = 0;
  gpuk::u32 best_index = 0xffffffffu;  // no element yet (n < 2^32: no index is 2^32 - 1)
  typename R::V best_value = R::worst();  // kValueOnly: the values themselves, keyed once per thread
  const auto fold = [&](T x, gpuk::i64 i) {
    if constexpr (kValueOnly) {
      best_value = R::best_of(best_value, R::value(x));
    } else if constexpr (kSplitKey) {
      const gpuk::u32 key = static_cast<gpuk::u32>(R::order_key(R::value(x)));
      if (key > best_key) {
        best_key = key;
        best_index = static_cast<gpuk::u32>(i);
      }
    } else {
      const gpuk::u64 p = P::of(x, i);
      acc = p > acc ? p : acc;
    }
  };
  const gpuk::i64 whole_tiles = n / kTile;
  const TileRange<SPLIT> range(whole_tiles);
  gpuk::i64 tile = range.first;
  if constexpr (kSplitKey && kIndexed) {
    // Starting from key 0 with the index of the thread's first element keeps that element when
    // its key is 0 (a strict compare would never take it) and when a later one ties with it.
    const gpuk::i64 first = tile * kTile + gpuk::i64(threadIdx.x) * kVec;
    const bool partial_mine = tile >= range.end && tile == whole_tiles && whole_tiles * kTile < n;
    if (tile < range.end || (partial_mine && first < n)) best_index = static_cast<gpuk::u32>(first);
  }
  for (; tile < range.end; tile += range.step) {
    gpuk::Vec16<T> v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = load_tile_vec<LOAD>(in + tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec);
    if constexpr (kValueOnly) {
      // A value alone has no index order to keep: the tile's values fold as a tree (4 steps deep
      // for 16, not a chain of 16), then into the thread's best.
      typename R::V t[UNROLL * kVec];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int j = 0; j < kVec; ++j) t[u * kVec + j] = R::value(v[u].v[j]);
#pragma unroll
      for (int w = 1; w < UNROLL * kVec; w *= 2)
#pragma unroll
        for (int k = 0; k + w < UNROLL * kVec; k += 2 * w) t[k] = R::best_of(t[k], t[k + w]);
      best_value = R::best_of(best_value, t[0]);
    } else {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int j = 0; j < kVec; ++j) fold(v[u].v[j], tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec + j);
    }
  }
  if (tile == whole_tiles && whole_tiles * kTile < n) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const gpuk::i64 first = tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec;
      if (first + kVec <= n) {
        const gpuk::Vec16<T> v = load_tile_vec<LOAD>(in + first);
#pragma unroll
        for (int j = 0; j < kVec; ++j) fold(v.v[j], first + j);
      } else {
        for (gpuk::i64 i = first; i < n; ++i) fold(in[i], i);
      }
    }
  }
  if constexpr (kValueOnly) {
    // One key per thread, one redux.sync per warp (the packed word's index half is empty). A
    // thread with no element holds R::worst(), whose key no element's key is below: harmless.
    __shared__ gpuk::u32 warp_key[BLOCK / 32];
    acc = gpuk::u64(gpuk::block_max_u32<BLOCK>(static_cast<gpuk::u32>(R::order_key(best_value)), warp_key)) << 32;
  } else {
    if constexpr (kSplitKey) {
      acc = best_index == 0xffffffffu ? 0ull
                                      : (gpuk::u64(best_key) << 32) | (0xffffffffull - gpuk::u64(best_index));
    }
    acc = gpuk::warp_max_packed(acc);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if constexpr (BLOCK > 32) {
      if (lane == 0) warp_best[warp] = acc;
      __syncthreads();
      if (warp != 0) return;
      acc = gpuk::warp_max_packed(lane < BLOCK / 32 ? warp_best[lane] : 0ull);
    }
  }
  if (threadIdx.x != 0) return;
  gpuk::u64 best = acc;
  if (gridDim.x > 1) {
    gpuk::u64* word = reinterpret_cast<gpuk::u64*>(counter + 2);
    atomicMax(word, acc);
    if (gpuk::ticket_acq_rel(counter, gridDim.x - 1) != gridDim.x - 1) return;
    best = atomicExch(word, 0ull);  // read and reset in one: zero again for the next run
  }
  typename R::V v;
  if constexpr (kValueOnly) {
    // No index to read the value back from: a NaN's key decodes to a NaN, a float zero's to +0.0
    // (max and min compare values, and -0.0 == +0.0).
    if (!P::value(best, v)) v = static_cast<gpuk::u32>(best >> 32) == 0xffffffffu ? __int_as_float(0x7fffffff) : 0.0f;
    *out = typename R::Acc{v, -1};
  } else {
    const gpuk::i64 i = P::index(best);
    if (!P::value(best, v)) v = R::value(in[i]);
    *out = typename R::Acc{v, i};
  }
}

// A packed candidate of key and index (the index 0xffffffff: no element, below every candidate).
__device__ __forceinline__ gpuk::u64 pack_key_index(gpuk::u32 key, gpuk::u32 index) {
  return index == 0xffffffffu ? 0ull : (gpuk::u64(key) << 32) | (0xffffffffull - gpuk::u64(index));
}

// The candidate a packed word names: the value decoded from its key, or read back where the key
// does not name one value (a NaN, a float zero without abs).
template <class Q>
__device__ __forceinline__ gpuk::Candidate<typename Q::V> unpack_candidate(const typename Q::T* in, gpuk::u64 best) {
  const gpuk::i64 i = gpuk::PackedCandidate<Q>::index(best);
  typename Q::V v;
  if (!gpuk::PackedCandidate<Q>::value(best, v)) v = Q::value(in[i]);
  return {v, i};
}

// Argminmax's end, after either fold: each thread's two packed candidates reduced per warp (four
// redux.sync), per block (shared memory), then across blocks by atomicMax into the words at
// counter + 2 and counter + 4, which the block with the last ticket takes and zeroes.
template <class R, int BLOCK>
__device__ __forceinline__ void finish_packed_pair(gpuk::u64 lo, gpuk::u64 hi, const typename R::T* in,
                                                   typename R::Acc* out, unsigned int* counter) {
  using Lo = typename R::Smallest;
  using Hi = typename R::Largest;
  __shared__ gpuk::u64 warp_best[2][BLOCK / 32];
  lo = gpuk::warp_max_packed(lo);
  hi = gpuk::warp_max_packed(hi);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if constexpr (BLOCK > 32) {
    if (lane == 0) {
      warp_best[0][warp] = lo;
      warp_best[1][warp] = hi;
    }
    __syncthreads();
    if (warp != 0) return;
    lo = gpuk::warp_max_packed(lane < BLOCK / 32 ? warp_best[0][lane] : 0ull);
    hi = gpuk::warp_max_packed(lane < BLOCK / 32 ? warp_best[1][lane] : 0ull);
  }
  if (threadIdx.x != 0) return;
  if (gridDim.x > 1) {
    gpuk::u64* words = reinterpret_cast<gpuk::u64*>(counter + 2);  // counter + 2 and counter + 4
    atomicMax(words, lo);
    atomicMax(words + 1, hi);
    if (gpuk::ticket_acq_rel(counter, gridDim.x - 1) != gridDim.x - 1) return;
    lo = atomicExch(words, 0ull);  // read and reset in one: zero again for the next run
    hi = atomicExch(words + 1, 0ull);
  }
  *out = typename R::Acc{unpack_candidate<Lo>(in, lo), unpack_candidate<Hi>(in, hi)};
}

// The index of the thread's first element, or 0xffffffff where it has none (n < 2^32 here).
template <int BLOCK, int kVec, int SPLIT>
__device__ __forceinline__ gpuk::u32 first_index(const TileRange<SPLIT>& range, gpuk::i64 whole_tiles, gpuk::i64 kTile,
                                                 gpuk::i64 n) {
  const gpuk::i64 tile = range.first;
  const gpuk::i64 first = tile * kTile + gpuk::i64(threadIdx.x) * kVec;
  const bool partial_mine = tile >= range.end && tile == whole_tiles && whole_tiles * kTile < n;
  return tile < range.end || (partial_mine && first < n) ? static_cast<gpuk::u32>(first) : 0xffffffffu;
}

template <class R, int BLOCK, int UNROLL, int LOAD, int SPLIT>
__device__ __forceinline__ void packed_pair_onepass(const typename R::T* __restrict__ in, gpuk::i64 n,
                                                    typename R::Acc* out, unsigned int* counter) {
  using T = typename R::T;
  using Lo = typename R::Smallest;
  using Hi = typename R::Largest;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * UNROLL * kVec;
  const gpuk::i64 whole_tiles = n / kTile;
  const TileRange<SPLIT> range(whole_tiles);
  gpuk::u32 lo_key = 0, hi_key = 0;
  // Key 0 with the index of the thread's first element, as packed_onepass's FOLD 1.
  gpuk::u32 lo_index = first_index<BLOCK, kVec>(range, whole_tiles, kTile, n), hi_index = lo_index;
  const auto fold = [&](T x, gpuk::i64 i) {
    const typename R::V v = R::value(x);
    const gpuk::u32 lk = static_cast<gpuk::u32>(Lo::order_key(v)), hk = static_cast<gpuk::u32>(Hi::order_key(v));
    if (lk > lo_key) {
      lo_key = lk;
      lo_index = static_cast<gpuk::u32>(i);
    }
    if (hk > hi_key) {
      hi_key = hk;
      hi_index = static_cast<gpuk::u32>(i);
    }
  };
  gpuk::i64 tile = range.first;
  for (; tile < range.end; tile += range.step) {
    gpuk::Vec16<T> v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = load_tile_vec<LOAD>(in + tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int j = 0; j < kVec; ++j) fold(v[u].v[j], tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec + j);
  }
  if (tile == whole_tiles && whole_tiles * kTile < n) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const gpuk::i64 first = tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec;
      if (first + kVec <= n) {
        const gpuk::Vec16<T> v = load_tile_vec<LOAD>(in + first);
#pragma unroll
        for (int j = 0; j < kVec; ++j) fold(v.v[j], first + j);
      } else {
        for (gpuk::i64 i = first; i < n; ++i) fold(in[i], i);
      }
    }
  }
  finish_packed_pair<R, BLOCK>(pack_key_index(lo_key, lo_index), pack_key_index(hi_key, hi_index), in, out, counter);
}

// FOLD 2, argminmax of float32: the values compared as floats, no order key per element. Per
// element and side one compare (|x| folds into its operands) and a predicated move of the value
// and of the 32-bit index, instead of FOLD 1's key twiddling, compare and selects: the integer
// pipe (16 lanes per partition on sm_90) was the limit. The compares order numbers as `better`
// does (-0.0 == +0.0, strict, so the first of equal values stays); NaN, which no compare orders,
// is screened per tile by the sum of its elements (NaN if any is, or if +inf meets -inf): such a
// tile, rare, is folded element by element with the NaN rule, and a thread that met a NaN stops
// reading, since everything after it has a higher index. The keys are taken once per thread.
template <class R, int BLOCK, int UNROLL, int LOAD, int SPLIT>
__device__ __forceinline__ void float_pair_onepass(const float* __restrict__ in, gpuk::i64 n, typename R::Acc* out,
                                                   unsigned int* counter) {
  using Lo = typename R::Smallest;
  using Hi = typename R::Largest;
  constexpr int kVec = 4;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * UNROLL * kVec;
  const float inf = __int_as_float(0x7f800000);
  // The elements themselves are kept (compared as R::value): +inf and, of |x|, 0 or else -inf
  // start the sides, which only an element equal to them leaves in place, at the first index.
  float lo = inf, hi = R::kAbs ? 0.0f : -inf;
  bool nan_seen = false;
  const gpuk::i64 whole_tiles = n / kTile;
  const TileRange<SPLIT> range(whole_tiles);
  gpuk::u32 lo_index = first_index<BLOCK, kVec>(range, whole_tiles, kTile, n), hi_index = lo_index;
  const auto fold = [&](float x, gpuk::u32 i) {
    if (R::value(x) < R::value(lo)) {
      lo = x;
      lo_index = i;
    }
    if (R::value(x) > R::value(hi)) {
      hi = x;
      hi_index = i;
    }
  };
  const auto fold_checked = [&](float x, gpuk::u32 i) {
    if (nan_seen) return;
    if (x != x) {  // the thread's first NaN: both answers, for good
      nan_seen = true;
      lo = hi = x;
      lo_index = hi_index = i;
    } else {
      fold(x, i);
    }
  };
  gpuk::i64 tile = range.first;
  for (; tile < range.end; tile += range.step) {
    // One 64-bit address per tile; the vectors lie at constant offsets from it.
    const float* tile_in = in + tile * kTile + gpuk::i64(threadIdx.x) * kVec;
    gpuk::Vec16<float> v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = load_tile_vec<LOAD>(tile_in + u * BLOCK * kVec);
    float sum[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) sum[u] = (v[u].v[0] + v[u].v[1]) + (v[u].v[2] + v[u].v[3]);
#pragma unroll
    for (int w = 1; w < UNROLL; w *= 2)
#pragma unroll
      for (int u = 0; u + w < UNROLL; u += 2 * w) sum[u] += sum[u + w];
    const gpuk::u32 base = static_cast<gpuk::u32>(tile * kTile) + threadIdx.x * kVec;
    if (sum[0] == sum[0]) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int j = 0; j < kVec; ++j) fold(v[u].v[j], base + u * BLOCK * kVec + j);
    } else {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int j = 0; j < kVec; ++j) fold_checked(v[u].v[j], base + u * BLOCK * kVec + j);
      if (nan_seen) break;
    }
  }
  if (!nan_seen && tile == whole_tiles && whole_tiles * kTile < n) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const gpuk::i64 first = tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec;
      if (first + kVec <= n) {
        const gpuk::Vec16<float> v = load_tile_vec<LOAD>(in + first);
#pragma unroll
        for (int j = 0; j < kVec; ++j) fold_checked(v.v[j], static_cast<gpuk::u32>(first + j));
      } else {
        for (gpuk::i64 i = first; i < n; ++i) fold_checked(in[i], static_cast<gpuk::u32>(i));
      }
    }
  }
  const gpuk::u32 lo_key = static_cast<gpuk::u32>(Lo::order_key(R::value(lo)));
  const gpuk::u32 hi_key = static_cast<gpuk::u32>(Hi::order_key(R::value(hi)));
  finish_packed_pair<R, BLOCK>(pack_key_index(lo_key, lo_index), pack_key_index(hi_key, hi_index), in, out, counter);
}

template <class R, int BLOCK, int UNROLL, int LOAD, bool kPartial>
__device__ __forceinline__ void accumulate_tile(typename R::Acc& acc, const typename R::T* __restrict__ in,
                                                gpuk::i64 tile_start, gpuk::i64 n) {
  using T = typename R::T;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  gpuk::Vec16<T> v[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const gpuk::i64 first = tile_start + gpuk::i64(u * BLOCK + threadIdx.x) * kVec;
    if (!kPartial || first + kVec <= n) {
      v[u] = load_tile_vec<LOAD>(in + first);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) v[u].v[j] = first + j < n ? in[first + j] : T(0);
    }
  }
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const gpuk::i64 first = tile_start + gpuk::i64(u * BLOCK + threadIdx.x) * kVec;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      if (!kPartial || first + j < n) R::accumulate(acc, v[u].v[j], first + j);
    }
  }
}

// The explicit minimum of 1 block per multiprocessor matters: with __launch_bounds__(BLOCK)
// alone, ptxas (CUDA 13) squeezes BLOCK 1024, UNROLL 4 to 32 registers and spills.
template <class R, int BLOCK, int UNROLL, int BLOCKS_PER_SM, int LOAD, int SPLIT, int WAVES, int FOLD>
__global__ void __launch_bounds__(BLOCK, 1)
reduce_onepass(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out,
               typename R::Acc* partials, unsigned int* counter) {
  using Acc = typename R::Acc;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * UNROLL * gpuk::Vec16<typename R::T>::kCount;
  __shared__ Acc scratch[BLOCK / 32];
  __shared__ bool is_last;

  if constexpr (R::kPair && sizeof(typename R::V) <= 4) {
    if (n <= gpuk::i64(0xffffffffll)) {
      using V = typename R::V;
      constexpr bool kFloat = V(1) / V(2) != V(0);
      if constexpr (FOLD == 2 && kFloat) {
        float_pair_onepass<R, BLOCK, UNROLL, LOAD, SPLIT>(in, n, out, counter);
      } else {
        packed_pair_onepass<R, BLOCK, UNROLL, LOAD, SPLIT>(in, n, out, counter);
      }
      return;
    }
  }
  if constexpr (gpuk::PackedCandidate<R>::kPossible) {
    if (n <= gpuk::i64(0xffffffffll)) {
      packed_onepass<R, BLOCK, UNROLL, LOAD, SPLIT, FOLD>(in, n, out, counter);
      return;
    }
  }
  Acc acc = R::identity();
  const gpuk::i64 whole_tiles = n / kTile;
  const TileRange<SPLIT> range(whole_tiles);
  gpuk::i64 tile = range.first;
  for (; tile < range.end; tile += range.step) {
    accumulate_tile<R, BLOCK, UNROLL, LOAD, false>(acc, in, tile * kTile, n);
  }
  if (tile == whole_tiles && whole_tiles * kTile < n) {
    accumulate_tile<R, BLOCK, UNROLL, LOAD, true>(acc, in, tile * kTile, n);
  }
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);

  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = acc;
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    is_last = gpuk::ticket_acq_rel(counter, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();  // also keeps the next block_reduce's writes to scratch after this one's reads
  if (!is_last) return;

  // Thread 0's acquire, then this barrier, orders every thread's reads after all the partials.
  acc = R::identity();
  for (unsigned p = threadIdx.x; p < gridDim.x; p += BLOCK) acc = R::combine(acc, gpuk::load_cg(partials + p));
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);
  if (threadIdx.x == 0) *out = acc;
}
