/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: EXPERIMENT (onepass.cu with switches). One launch built for HBM bandwidth. Blocks stride over tiles of BLOCK * UNROLL 16-byte vectors with UNROLL loads in flight per thread, reduce with warp shuffles, and write one partial each; the last block to finish combines the partials and resets the counter.
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  UNROLL: {default: 4, values: [1, 2, 4, 8]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
  PACKED: {default: 0, values: [0, 1]}
  DECODE: {default: 0, values: [0, 1]}
constraints:
  - BLOCK * UNROLL <= 8192
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: reduce_onepass_x
    grid: min(ceil_div(n, BLOCK * UNROLL * vec), sm_count * BLOCKS_PER_SM)
    block: BLOCK
scratch: sm_count * BLOCKS_PER_SM
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
//   0 on that last ticket, which leaves it zero for the next run. Max, min, argmax and argmin of
//   32-bit values skip the partials: each block atomicMax-es a packed 64-bit candidate into the
//   word at counter + 2, and the last block unpacks it and zeroes the word.
// `in` must be 16-byte aligned (cudaMalloc gives 256).

#include "gpuk/reduce.cuh"

// The value of a packed candidate's 32-bit order key, where that key names one value: every key
// but a NaN's (its payload and sign are lost) and, without abs, a float zero's (-0.0 and +0.0
// share a key). Saves the last block reading in[i] back: one dependent round trip to memory.
template <class R>
__device__ __forceinline__ bool decode_value(gpuk::u32 key, typename R::V& v) {
  using V = typename R::V;
  const gpuk::u32 ordered = R::kLargest ? key : 0xffffffffu - key;
  if constexpr (V(1) / V(2) != V(0)) {  // floating point
    if (key == 0xffffffffu) return false;                  // NaN
    if (!R::kAbs && ordered == 0x80000000u) return false;  // -0.0 or +0.0
    const gpuk::u32 b = (ordered & 0x80000000u) ? (ordered ^ 0x80000000u) : ~ordered;
    v = __uint_as_float(b);
  } else if constexpr (V(-1) < V(0)) {
    v = static_cast<V>(ordered ^ 0x80000000u);
  } else {
    v = static_cast<V>(ordered);
  }
  return true;
}

// Max of packed candidates over the warp: the key half first, then the index half among the lanes
// that hold the best key (two redux.sync instead of five rounds of three shuffles).
__device__ __forceinline__ unsigned long long warp_max_packed(unsigned long long p) {
  const gpuk::u32 hi = static_cast<gpuk::u32>(p >> 32);
  const gpuk::u32 best_hi = __reduce_max_sync(0xffffffffu, hi);
  const gpuk::u32 lo = hi == best_hi ? static_cast<gpuk::u32>(p) : 0u;
  const gpuk::u32 best_lo = __reduce_max_sync(0xffffffffu, lo);
  return (static_cast<unsigned long long>(best_hi) << 32) | best_lo;
}

// The whole reduction on packed candidates (32-bit values, n < 2^32): each element becomes its
// order key above its inverted index, and everything after is an unsigned 64-bit max.
template <class R, int BLOCK, int UNROLL, int DECODE>
__device__ __forceinline__ void packed_onepass(const typename R::T* __restrict__ in, gpuk::i64 n,
                                               typename R::Acc* out, unsigned int* counter) {
  using T = typename R::T;
  using P = gpuk::PackedCandidate<R>;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * UNROLL * kVec;
  __shared__ unsigned long long warp_best[BLOCK / 32];
  unsigned long long acc = 0;
  const auto fold = [&](T x, gpuk::i64 i) {
    const unsigned long long p = ((R::order_key(R::value(x)) & 0xffffffffull) << 32) | (0xffffffffull - static_cast<unsigned long long>(i));
    acc = p > acc ? p : acc;
  };
  const gpuk::i64 whole_tiles = n / kTile;
  gpuk::i64 tile = blockIdx.x;
  for (; tile < whole_tiles; tile += gridDim.x) {
    gpuk::Vec16<T> v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = gpuk::load_vec16(in + tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec);
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
        const gpuk::Vec16<T> v = gpuk::load_vec16(in + first);
#pragma unroll
        for (int j = 0; j < kVec; ++j) fold(v.v[j], first + j);
      } else {
        for (gpuk::i64 i = first; i < n; ++i) fold(in[i], i);
      }
    }
  }
  acc = warp_max_packed(acc);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_best[warp] = acc;
  __syncthreads();
  if (warp != 0) return;
  acc = warp_max_packed(lane < BLOCK / 32 ? warp_best[lane] : 0ull);
  if (lane != 0) return;
  unsigned long long* best = reinterpret_cast<unsigned long long*>(counter + 2);
  atomicMax(best, acc);
  if (gpuk::ticket_acq_rel(counter, gridDim.x - 1) == gridDim.x - 1) {
    const unsigned long long packed = atomicExch(best, 0ull);
    const gpuk::i64 i = P::index(packed);
    typename R::V v;
    if (!(DECODE == 1 && decode_value<R>(static_cast<gpuk::u32>(packed >> 32), v))) v = R::value(in[i]);
    *out = typename R::Acc{v, i};
  }
}

template <class R, int BLOCK, int UNROLL, bool kPartial>
__device__ __forceinline__ void accumulate_tile(typename R::Acc& acc, const typename R::T* __restrict__ in,
                                                gpuk::i64 tile_start, gpuk::i64 n) {
  using T = typename R::T;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  gpuk::Vec16<T> v[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const gpuk::i64 first = tile_start + gpuk::i64(u * BLOCK + threadIdx.x) * kVec;
    if (!kPartial || first + kVec <= n) {
      v[u] = gpuk::load_vec16(in + first);
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
template <class R, int BLOCK, int UNROLL, int BLOCKS_PER_SM, int PACKED, int DECODE>
__global__ void __launch_bounds__(BLOCK, 1)
reduce_onepass_x(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out,
               typename R::Acc* partials, unsigned int* counter) {
  using Acc = typename R::Acc;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * UNROLL * gpuk::Vec16<typename R::T>::kCount;
  __shared__ Acc scratch[BLOCK / 32];
  __shared__ bool is_last;

  if constexpr (PACKED == 1 && gpuk::PackedCandidate<R>::kPossible) {
    if (n <= gpuk::i64(0xffffffffll) && gridDim.x > 1) {
      packed_onepass<R, BLOCK, UNROLL, DECODE>(in, n, out, counter);
      return;
    }
  }
  Acc acc = R::identity();
  const gpuk::i64 whole_tiles = n / kTile;
  gpuk::i64 tile = blockIdx.x;
  for (; tile < whole_tiles; tile += gridDim.x) {
    accumulate_tile<R, BLOCK, UNROLL, false>(acc, in, tile * kTile, n);
  }
  if (tile == whole_tiles && whole_tiles * kTile < n) {
    accumulate_tile<R, BLOCK, UNROLL, true>(acc, in, tile * kTile, n);
  }
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);

  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = acc;
    return;
  }
  // Max, min, argmax and argmin of 32-bit values with n < 2^32: one 64-bit atomicMax per block
  // on a packed candidate (gpuk::PackedCandidate), and the last block unpacks it. No partials to
  // write or read back: about 1.5 us less than the general finish below at 250,000 elements.
  if constexpr (gpuk::PackedCandidate<R>::kPossible) {
    if (n <= gpuk::i64(0xffffffffll)) {
      unsigned long long* best = reinterpret_cast<unsigned long long*>(counter + 2);
      if (threadIdx.x == 0) {
        atomicMax(best, gpuk::PackedCandidate<R>::pack(acc));
        if (gpuk::ticket_acq_rel(counter, gridDim.x - 1) == gridDim.x - 1) {
          // Read and reset in one: the word is zero again for the next run.
          const unsigned long long packed = atomicExch(best, 0ull);
          const gpuk::i64 i = gpuk::PackedCandidate<R>::index(packed);
          typename R::V v;
          if (!(DECODE == 1 && decode_value<R>(static_cast<gpuk::u32>(packed >> 32), v))) v = R::value(in[i]);
          *out = Acc{v, i};
        }
      }
      return;
    }
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
