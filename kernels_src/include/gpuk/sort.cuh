// The Sorter family's device contract (docs/kernels/sort.md explains it for kernel writers).
//
// Every sort kernel is a template whose first argument is a policy S = gpuk::Sort<K, V, DESC,
// KIND> and whose remaining arguments are the kernel file's own parameters, in metadata order.
// Every entry takes one argument, the SortArgs<S> of its launch, by value:
//
//   template <class S, int BLOCK, ...>
//   __global__ void entry(gpuk::SortArgs<S> a);
//
// The host fills SortArgs per launch: a single-launch sort reads keys_in (and values_in) and
// writes keys_out (and values_out); a digit pass (an entry whose launch has `repeat:`) gets the
// ping-pong buffers of its pass. Keys are ordered by S::bits(key): IEEE total order for floats with every
// NaN equal to every other NaN and after +inf (or, with CUB's order, -0.0 equal to +0.0 and NaNs
// ordered by their sign and payload bits, as cub::DeviceRadixSort does); descending order inverts
// the bits; then only bits [BEGIN_BIT, END_BIT) of them count (CUB's begin_bit and end_bit),
// shifted down to bit 0. Sorting is stable: equal keys (equal bits) keep their input order.
#pragma once
#include "gpuk/common.cuh"

namespace gpuk {

struct NoValue {};  // the value type of a keys-only sort

// TopK: the first k of a stable sort (kernels_src/include/gpuk/topk.cuh); V is its int64 index.
enum class SortKind : int { Keys = 0, Pairs = 1, Index = 2, TopK = 3 };

// CUB's bit order (cub::Traits<K>::TwiddleIn): integers as KeyBits; floats with negatives' bits
// all flipped and positives' sign bit flipped, NaNs included (a NaN with the sign bit set before
// -inf, one without after +inf, each ordered by its payload). -0.0 is made equal to +0.0 after
// the descending flip, as CUB's digit extractor does (ProcessFloatMinusZero): Sort::bits.
template <class K> struct CubKeyBits : KeyBits<K> {};
template <> struct CubKeyBits<float> {
  using Bits = u32;
  static __device__ __forceinline__ Bits of(float k) {
    const u32 b = __float_as_uint(k);
    return b ^ (static_cast<u32>(static_cast<int>(b) >> 31) | 0x80000000u);
  }
};
template <> struct CubKeyBits<double> {
  using Bits = u64;
  static __device__ __forceinline__ Bits of(double k) {
    const u64 b = static_cast<u64>(__double_as_longlong(k));
    return b ^ (static_cast<u64>(static_cast<long long>(b) >> 63) | 0x8000000000000000ull);
  }
};

// How floats order: gpuk's total order (the default) or CUB's (the host's sort::FloatOrder).
enum class FloatOrder : int { Total = 0, Cub = 1 };

// The policy. K: key type; V: value type (NoValue for keys only; the index type for argsort).
// BEGIN_BIT, END_BIT: the bits of the ordered key that count (CUB's begin_bit, end_bit): the
// sort is by bits [BEGIN_BIT, END_BIT) alone, stable among keys equal there. ORDER: FloatOrder.
template <class K_, class V_, bool DESC, SortKind KIND, int BEGIN_BIT = 0, int END_BIT = 8 * int(sizeof(K_)),
          FloatOrder ORDER = FloatOrder::Total>
struct Sort {
  using K = K_;
  using V = V_;
  using Bits = typename KeyBits<K>::Bits;
  static constexpr int kKeyBits = 8 * sizeof(K);
  static constexpr int kBeginBit = BEGIN_BIT, kEndBit = END_BIT;
  static constexpr int kSortBits = END_BIT - BEGIN_BIT;  // the bits sorted by: what the passes cover
  static constexpr bool kWindow = BEGIN_BIT != 0 || END_BIT != kKeyBits;
  static constexpr bool kCubOrder = ORDER == FloatOrder::Cub;
  static constexpr bool kFloatKey = K(1) / K(2) != K(0);
  static_assert(0 <= BEGIN_BIT && BEGIN_BIT < END_BIT && END_BIT <= kKeyBits, "0 <= BEGIN_BIT < END_BIT <= key bits");
  static constexpr bool kDescending = DESC;
  static constexpr bool kHasValues = KIND != SortKind::Keys;
  static constexpr bool kIndex = KIND == SortKind::Index;

  // Bits [BEGIN_BIT, END_BIT) of ordered bits, at bit 0.
  static __device__ __forceinline__ Bits window(Bits b) {
    if constexpr (!kWindow) return b;
    else {
      b = static_cast<Bits>(b >> BEGIN_BIT);
      if constexpr (kSortBits < kKeyBits) b &= static_cast<Bits>((Bits(1) << kSortBits) - 1);
      return b;
    }
  }
  // The ordered bits before the window: descending order flips them, which keeps ties stable.
  static __device__ __forceinline__ Bits full_bits(K key) {
    if constexpr (kCubOrder) {
      Bits b = CubKeyBits<K>::of(key);
      if constexpr (DESC) b = static_cast<Bits>(~b);
      if constexpr (kFloatKey) {
        constexpr Bits kSign = Bits(1) << (kKeyBits - 1);
        if (b == static_cast<Bits>(kSign - 1)) b = kSign;  // -0.0 (ascending) or +0.0 (descending)
      }
      return b;
    } else {
      const Bits b = KeyBits<K>::of(key);
      return DESC ? static_cast<Bits>(~b) : b;
    }
  }
  // The bits a kernel sorts by, ascending.
  static __device__ __forceinline__ Bits bits(K key) { return window(full_bits(key)); }
  // RADIX_BITS-wide digit `pass` (0 = least significant).
  template <int RADIX_BITS>
  static __device__ __forceinline__ u32 digit(K key, int pass) {
    return static_cast<u32>(bits(key) >> (pass * RADIX_BITS)) & ((1u << RADIX_BITS) - 1u);
  }
  // Digit passes over the bits sorted by (the host runs as many: plugins/sort/sort_launcher.cpp).
  template <int RADIX_BITS> __host__ __device__ static constexpr int passes() { return (kSortBits + RADIX_BITS - 1) / RADIX_BITS; }
  // The value of element i: values[i], or for argsort's first read (values == nullptr) i itself.
  static __device__ __forceinline__ V value_at(const V* values, i64 i) {
    if constexpr (kIndex) {
      if (values == nullptr) return static_cast<V>(i);
    }
    return values[i];
  }
};

// The one argument of every sort entry (host mirror in plugins/sort/sort_launcher.cpp: keep the
// layout in step).
template <class S> struct SortArgs {
  const typename S::K* keys_in;    // this launch's input keys (the user's input: never written)
  typename S::K* keys_out;         // this launch's output keys
  const typename S::V* values_in;  // input values; nullptr for keys-only, and for argsort when
                                   // the values are the indices themselves
  typename S::V* values_out;       // output values (nullptr for keys-only)
  u32* scratch;                    // the metadata's `scratch` words, zero when first bound
  i64 n;                           // elements, >= 1
  int pass;                        // this repeat of a launch with `repeat:` (a digit pass), else 0
  int passes;                      // the launch's repeat count (digit passes), else 1
  // The whole run's buffers, the same in every launch: the sort's input (keys_in of pass 0), its
  // outputs (keys_out of the last pass) and the spare pair that digit passes ping-pong through
  // (nullptr where a launch does not repeat). A pass that chooses its own buffers reads them
  // (onesweep.cu's SKIP 1: a pass every key shares a digit of is not run).
  const typename S::K* keys_first;
  typename S::K* keys_last;
  typename S::K* keys_spare;
  const typename S::V* values_first;
  typename S::V* values_last;
  typename S::V* values_spare;
};

// ---- block-level building blocks (radix_block.cu, radix.cu) ---------------------------------

__device__ __forceinline__ u32 lanemask_lt() {
  u32 m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// The lanes of the warp whose RADIX_BITS-bit digit equals this lane's: one ballot per bit, as
// CUB's MatchAny does (faster than __match_any_sync on sm_70 to sm_90). All 32 lanes call it.
template <int RADIX_BITS>
__device__ __forceinline__ u32 match_digit(u32 digit) {
  u32 peers = 0xffffffffu;
#pragma unroll
  for (int b = 0; b < RADIX_BITS; ++b) {
    const bool set = (digit >> b) & 1u;
    const u32 ballot = __ballot_sync(0xffffffffu, set);
    peers &= set ? ballot : ~ballot;
  }
  return peers;
}

// The lanes of the warp whose 8-or-fewer-bit digit equals this lane's, three ways (a kernel's
// MATCH parameter): 0, CUB's MatchAny as inline PTX (per bit: and, setp, vote.ballot, a
// predicated not: ptxas folds the bit tests into one R2P); 1, the hardware's match.any
// (__match_any_sync); 2, match_digit's C++ ballots. All 32 lanes call it.
template <int RADIX_BITS, int MATCH>
__device__ __forceinline__ u32 match_peers(u32 digit) {
  if constexpr (MATCH == 1) {
    return __match_any_sync(0xffffffffu, digit);
  } else if constexpr (MATCH == 2) {
    return match_digit<RADIX_BITS>(digit);
  } else {
    u32 peers = 0xffffffffu;
#pragma unroll
    for (int b = 0; b < RADIX_BITS; ++b) {
      u32 mask;
      asm("{\n"
          "  .reg .pred p;\n"
          "  and.b32 %0, %1, %2;\n"
          "  setp.ne.u32 p, %0, 0;\n"
          "  vote.ballot.sync.b32 %0, p, 0xffffffff;\n"
          "  @!p not.b32 %0, %0;\n"
          "}\n"
          : "=r"(mask)
          : "r"(digit), "r"(1u << b));
      peers &= mask;
    }
    return peers;
  }
}

// A copy of BYTES (4 or 8) from global to shared memory that does not pass through registers
// (cp.async, sm_80 on; before that a load and a store), and the wait for all of a thread's
// copies, after which they are visible to the thread (a barrier then shows them to the block).
template <int BYTES>
__device__ __forceinline__ void copy_async(void* shared_to, const void* global_from) {
  static_assert(BYTES == 4 || BYTES == 8, "cp.async.ca copies 4, 8 or 16 bytes");
#if __CUDA_ARCH__ >= 800
  const u32 to = static_cast<u32>(__cvta_generic_to_shared(shared_to));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(to), "l"(global_from), "n"(BYTES));
#else
  using W = typename UnsignedOfSize<BYTES>::type;
  *static_cast<W*>(shared_to) = *static_cast<const W*>(global_from);
#endif
}
__device__ __forceinline__ void copy_async_wait_all() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// Exclusive scan of N <= BLOCK counters `in[0, N)` into `out[0, N)` (shared memory), every thread
// of the block calling it. `tmp` holds (N + 31) / 32 words. Ends with a barrier.
template <int BLOCK, int N>
__device__ __forceinline__ void block_exclusive_scan(const u32* in, u32* out, u32* tmp) {
  constexpr int kWarps = (N + 31) / 32;
  static_assert(kWarps * 32 <= BLOCK, "the scan needs a thread per counter");
  const int t = threadIdx.x, lane = t & 31;
  u32 v = 0, inclusive = 0;
  if (t < kWarps * 32) {
    v = t < N ? in[t] : 0u;
    inclusive = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const u32 y = __shfl_up_sync(0xffffffffu, inclusive, o);
      if (lane >= o) inclusive += y;
    }
    if (lane == 31) tmp[t >> 5] = inclusive;
  }
  __syncthreads();
  if (t < N) {
    u32 add = 0;
    for (int w = 0; w < (t >> 5); ++w) add += tmp[w];
    out[t] = inclusive - v + add;
  }
  __syncthreads();
}

// The histogram launch of a onesweep radix sort (radix.cu, onesweep.cu): every digit pass's
// counts in one read of the keys, turned into each pass's digit bases by the last block to
// finish. Scratch words: [0, 16) the passes' tile counters, zeroed here for the run; [16] the
// done counter (atomicInc wraps it back to 0); `histogram` (P * 2^RADIX_BITS words) left zero for
// the next run; `bases` (as many) written. `clear` words (clear_words of them) are zeroed on the
// way (radix.cu's first look-back buffer; none for onesweep.cu). TRIVIAL: scratch word [17] gets
// bit p set for each pass p in which every key has one digit (a count of n), clear for the others.
// Every thread of the grid calls it.
template <class S, int BLOCK, int RADIX_BITS, bool TRIVIAL = false>
__device__ __forceinline__ void digit_histogram(const SortArgs<S>& a, u32* histogram, u32* bases, u32* clear,
                                                i64 clear_words) {
  using K = typename S::K;
  constexpr int kRadix = 1 << RADIX_BITS, kPasses = S::template passes<RADIX_BITS>();
  __shared__ u32 counts[kPasses * kRadix];
  __shared__ u32 scanned[kRadix];
  __shared__ u32 scan_tmp[8];
  __shared__ bool last;
  for (int i = threadIdx.x; i < kPasses * kRadix; i += BLOCK) counts[i] = 0;
  // The previous run's tile counters: no pass of it runs any more, none of this run's yet.
  if (blockIdx.x == 0 && threadIdx.x < 16) a.scratch[threadIdx.x] = 0;

  const i64 n = a.n;
  const i64 first = i64(blockIdx.x) * BLOCK + threadIdx.x, stride = i64(gridDim.x) * BLOCK;
  for (i64 i = first; i < clear_words; i += stride) clear[i] = 0;
  __syncthreads();

  const auto count = [&](K key) {
    const typename S::Bits b = S::bits(key);
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
      atomicAdd(&counts[p * kRadix + (static_cast<u32>(b >> (p * RADIX_BITS)) & (kRadix - 1))], 1u);
  };
  constexpr int kVec = Vec16<K>::kCount;
  const i64 vectors = n / kVec;
  i64 v = first;
  for (; v + 3 * stride < vectors; v += 4 * stride) {
    Vec16<K> x[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) x[u] = load_vec16(a.keys_in + (v + u * stride) * kVec);
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int e = 0; e < kVec; ++e) count(x[u].v[e]);
  }
  for (; v < vectors; v += stride) {
    const Vec16<K> x = load_vec16(a.keys_in + v * kVec);
#pragma unroll
    for (int e = 0; e < kVec; ++e) count(x.v[e]);
  }
  if (blockIdx.x == 0)
    for (i64 i = vectors * kVec + threadIdx.x; i < n; i += BLOCK) count(a.keys_in[i]);
  __syncthreads();
  for (int i = threadIdx.x; i < kPasses * kRadix; i += BLOCK)
    if (counts[i]) atomicAdd(&histogram[i], counts[i]);
  // The last block to finish scans every pass's counts into its digit bases and zeroes them.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicInc(&a.scratch[16], gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  if constexpr (TRIVIAL) {
    if (threadIdx.x == 0) a.scratch[17] = 0;
    __syncthreads();
  }
  for (int p = 0; p < kPasses; ++p) {
    if (threadIdx.x < kRadix) {
      counts[threadIdx.x] = __ldcg(histogram + p * kRadix + threadIdx.x);
      histogram[p * kRadix + threadIdx.x] = 0;
      // At most one digit of a pass can count all n: one thread sets the pass's bit.
      if (TRIVIAL && counts[threadIdx.x] == static_cast<u32>(n)) atomicOr(&a.scratch[17], 1u << p);
    }
    block_exclusive_scan<BLOCK, kRadix>(counts, scanned, scan_tmp);
    if (threadIdx.x < kRadix) bases[p * kRadix + threadIdx.x] = scanned[threadIdx.x];
  }
}

// Stable ranking of one tile of BLOCK * ITEMS digits in the warp-striped layout: item k of lane
// l of warp w is tile element w * 32 * ITEMS + k * 32 + l. On return rank[k] is the item's
// position in the tile sorted by digit (ties in element order), count[d] the tile's number of
// digit d and start[d] their first position. MATCH: how lanes find their peers (match_peers; 2,
// match_digit's C++ ballots, unless a kernel asks). Every thread of the block calls it.
template <int BLOCK, int ITEMS, int RADIX_BITS, int MATCH = 2>
struct BlockRank {
  static constexpr int kWarps = BLOCK / 32;
  static constexpr int kRadix = 1 << RADIX_BITS;
  static_assert(BLOCK % 32 == 0 && BLOCK >= kRadix, "BLOCK: a multiple of 32, at least 2^RADIX_BITS");
  struct Shared {
    u32 warp_counts[kWarps][kRadix];
    u32 count[kRadix];
    u32 start[kRadix];
    u32 scan_tmp[(kRadix + 31) / 32];
  };

  static __device__ __forceinline__ void rank(const u32 (&digit)[ITEMS], u32 (&rank)[ITEMS], Shared& s) {
    const int warp = threadIdx.x >> 5;
    u32* flat = &s.warp_counts[0][0];
    for (int i = threadIdx.x; i < kWarps * kRadix; i += BLOCK) flat[i] = 0;
    __syncthreads();
    // Within a warp, item by item: lanes with the same digit find each other (match_digit); the
    // lowest of them bumps the warp's counter once for the group. Counters are per warp, so the
    // only sharing is inside the warp, ordered by __syncwarp.
    const u32 lt = lanemask_lt();
    u32* mine = s.warp_counts[warp];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const u32 peers = match_peers<RADIX_BITS, MATCH>(digit[k]);
      const u32 before = __popc(peers & lt);
      const u32 base = mine[digit[k]];
      __syncwarp();
      if (before == 0) mine[digit[k]] = base + __popc(peers);
      __syncwarp();
      rank[k] = base + before;
    }
    __syncthreads();
    // Per digit: exclusive over the warps (in place), and the tile's total.
    for (int d = threadIdx.x; d < kRadix; d += BLOCK) {
      u32 sum = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const u32 c = s.warp_counts[w][d];
        s.warp_counts[w][d] = sum;
        sum += c;
      }
      s.count[d] = sum;
    }
    __syncthreads();
    block_exclusive_scan<BLOCK, kRadix>(s.count, s.start, s.scan_tmp);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) rank[k] += s.start[digit[k]] + mine[digit[k]];
  }
};

// Tile element of item k of the calling thread in the warp-striped layout.
template <int ITEMS>
__device__ __forceinline__ int striped_index(int k) {
  return (threadIdx.x >> 5) * 32 * ITEMS + k * 32 + (threadIdx.x & 31);
}

// Moves items to their ranks through shared memory `buf` (room for BLOCK * ITEMS values of T)
// and reads them back warp-striped: afterwards item k holds tile element striped_index(k) of the
// ranked order. Starts and ends with a barrier.
template <class T, int BLOCK, int ITEMS>
__device__ __forceinline__ void exchange_striped(T (&item)[ITEMS], const u32 (&rank)[ITEMS], T* buf) {
  __syncthreads();
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) buf[rank[k]] = item[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) item[k] = buf[striped_index<ITEMS>(k)];
  __syncthreads();
}

// One block sorts n <= BLOCK * ITEMS elements: ceil(key bits / RADIX_BITS) stable digit passes
// through shared memory, then coalesced writes of keys_out (and values_out). `smem` holds
// BLOCK * ITEMS * 8 bytes for the exchanges, then BlockRank's Shared. Every thread calls it.
template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int MATCH = 2>
__device__ __forceinline__ void block_radix_sort(const SortArgs<S>& a, unsigned char* smem) {
  using K = typename S::K;
  using V = typename S::V;
  using Rank = BlockRank<BLOCK, ITEMS, RADIX_BITS, MATCH>;
  constexpr int kTile = BLOCK * ITEMS;
  constexpr int kPasses = S::template passes<RADIX_BITS>();
  typename Rank::Shared& rs = *reinterpret_cast<typename Rank::Shared*>(smem + kTile * 8);
  const int n = static_cast<int>(a.n);

  K key[ITEMS];
  V value[ITEMS];
  bool valid[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int e = striped_index<ITEMS>(k);
    valid[k] = e < n;
    key[k] = K{};
    if constexpr (S::kHasValues) value[k] = V{};
    if (valid[k]) {
      key[k] = a.keys_in[e];
      if constexpr (S::kHasValues) value[k] = S::value_at(a.values_in, e);
    }
  }
#pragma unroll 1
  for (int pass = 0; pass < kPasses; ++pass) {
    // Elements past n take the largest digit in every pass: they start last and stay last.
    u32 digit[ITEMS], rank[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
      digit[k] = valid[k] ? S::template digit<RADIX_BITS>(key[k], pass) : (1u << RADIX_BITS) - 1u;
    Rank::rank(digit, rank, rs);
    if (pass + 1 < kPasses) {
      exchange_striped<K, BLOCK, ITEMS>(key, rank, reinterpret_cast<K*>(smem));
      if constexpr (S::kHasValues) exchange_striped<V, BLOCK, ITEMS>(value, rank, reinterpret_cast<V*>(smem));
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) valid[k] = striped_index<ITEMS>(k) < n;
    } else {
      // Last pass: scatter to the ranks, then write out in blocked-striped (coalesced) order.
      K* kbuf = reinterpret_cast<K*>(smem);
      __syncthreads();
#pragma unroll
      for (int k = 0; k < ITEMS; ++k)
        if (rank[k] < static_cast<u32>(n)) kbuf[rank[k]] = key[k];
      __syncthreads();
      for (int i = threadIdx.x; i < n; i += BLOCK) a.keys_out[i] = kbuf[i];
      if constexpr (S::kHasValues) {
        V* vbuf = reinterpret_cast<V*>(smem);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
          if (rank[k] < static_cast<u32>(n)) vbuf[rank[k]] = value[k];
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += BLOCK) a.values_out[i] = vbuf[i];
      }
    }
  }
}

}  // namespace gpuk
