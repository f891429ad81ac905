// The Reducer family's device contract (docs/kernels/reduce.md explains it for kernel writers).
//
// Every reduce kernel is a template whose first argument is a policy R = gpuk::Reduce<T, OP, ABS>
// and whose remaining arguments are the kernel file's own parameters, in metadata order:
//
//   template <class R, int BLOCK, ...>
//   __global__ void entry(const typename R::T* in, gpuk::i64 n, typename R::Acc* out,
//                         typename R::Acc* partials, unsigned int* counter);
//
// `out` receives one Acc (ArgMinMax: a MinMax, the smallest candidate then the largest) (poisoned by the host before every run); `partials` has room for the
// number of Acc slots the metadata's `scratch` expression asks for (uninitialised); `counter` is
// zero when the first launch starts and must be zero again when the last launch ends.
#pragma once
#include "gpuk/common.cuh"

namespace gpuk {

enum class ReduceOp : int { Max = 0, Min = 1, Sum = 2, ArgMax = 3, ArgMin = 4, ArgMinMax = 5 };

// A value and the index it came from. index == kNoIndex marks "no element yet".
template <class V> struct Candidate {
  V value;
  i64 index;
};

// ArgMinMax's answer: what ArgMin and then what ArgMax return, 32 bytes for every V.
template <class V> struct MinMax {
  Candidate<V> min;
  Candidate<V> max;
};

// Sums accumulate in 64 bits: float in double, integers in (unsigned) long long.
template <class V> struct SumAccumulator { using type = V; };
template <> struct SumAccumulator<float> { using type = double; };
template <> struct SumAccumulator<int> { using type = long long; };
template <> struct SumAccumulator<unsigned int> { using type = unsigned long long; };

template <class T_, ReduceOp OP, bool ABS>
struct Reduce {
  using T = T_;                                                        // element in memory
  using V = typename Select<ABS, typename Magnitude<T>::type, T>::type;  // value compared or summed
  static constexpr ReduceOp kOp = OP;
  static constexpr bool kAbs = ABS;
  static constexpr bool kSum = OP == ReduceOp::Sum;
  static constexpr bool kLargest = OP == ReduceOp::Max || OP == ReduceOp::ArgMax;
  // ArgMinMax folds every element into an ArgMin and an ArgMax candidate: the pair is by
  // construction what the two operations return apart (ties, NaN, -0.0 included).
  static constexpr bool kPair = OP == ReduceOp::ArgMinMax;
  using Smallest = Reduce<T_, ReduceOp::ArgMin, ABS>;
  using Largest = Reduce<T_, ReduceOp::ArgMax, ABS>;
  using Acc = typename Select<kSum, typename SumAccumulator<V>::type,
                              typename Select<kPair, MinMax<V>, Candidate<V>>::type>::type;

  static __device__ __forceinline__ V value(T x) {
    if constexpr (ABS) return magnitude(x); else return x;
  }

  // Does v beat the current best? NaN beats every number; nothing beats a NaN.
  static __device__ __forceinline__ bool better(V v, V best) {
    if (is_nan(v)) return !is_nan(best);
    if constexpr (kLargest) return v > best; else return v < best;
  }

  // The value every element is at least as good as: where max and min fold a value alone (they
  // return no index), a start that never beats an element (-inf / +inf for floats, the type's
  // extreme for integers, so that its order key is 0).
  static __device__ __forceinline__ V worst() {
    if constexpr (V(1) / V(2) != V(0)) {  // floating point
      if constexpr (sizeof(V) == 4) return __int_as_float(kLargest ? 0xff800000u : 0x7f800000u);
      else return __longlong_as_double(kLargest ? 0xfff0000000000000ll : 0x7ff0000000000000ll);
    } else if constexpr (V(-1) < V(0)) {
      if constexpr (sizeof(V) == 4) return kLargest ? V(-2147483647 - 1) : V(2147483647);
      else return kLargest ? V(-9223372036854775807LL - 1) : V(9223372036854775807LL);
    } else {
      return kLargest ? V(0) : V(~V(0));
    }
  }

  // The better of two values where no index is kept (max and min): `better`'s rule, a NaN wins
  // and stays; of two equal values (-0.0 and +0.0 too) either, since their order keys are equal.
  // Float32 from sm_80 on is one max.NaN / min.NaN, where `better`'s NaN test, compare and
  // select take four: with one block holding all of a small input (2^12 floats), those
  // instructions on one multiprocessor were a measurable part of the launch.
  static __device__ __forceinline__ V best_of(V a, V b) {
#if __CUDA_ARCH__ >= 800
    if constexpr (sizeof(V) == 4 && V(1) / V(2) != V(0)) {
      float d;
      if constexpr (kLargest) asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
      else asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
      return d;
    } else {
      return better(b, a) ? b : a;
    }
#else
    return better(b, a) ? b : a;
#endif
  }

  static __device__ __forceinline__ Acc identity() {
    if constexpr (kPair) return Acc{Smallest::identity(), Largest::identity()};
    else if constexpr (kSum) return Acc(0);
    else return Acc{V(0), kNoIndex};
  }

  // Fold element x at index i into a. Callers visit one thread's elements in increasing index
  // order, so a strict comparison keeps the lowest index among equal values.
  static __device__ __forceinline__ void accumulate(Acc& a, T x, i64 i) {
    if constexpr (kPair) {
      Smallest::accumulate(a.min, x, i);
      Largest::accumulate(a.max, x, i);
    } else if constexpr (kSum) {
      a += static_cast<Acc>(value(x));
    } else {
      const V v = value(x);
      if (a.index == kNoIndex || better(v, a.value)) a = Acc{v, i};
    }
  }

  // Associative and commutative: ties and NaNs resolve to the lowest index, whatever the order.
  static __device__ __forceinline__ Acc combine(const Acc& a, const Acc& b) {
    if constexpr (kPair) {
      return Acc{Smallest::combine(a.min, b.min), Largest::combine(a.max, b.max)};
    } else if constexpr (kSum) {
      return a + b;
    } else {
      if (b.index == kNoIndex) return a;
      if (a.index == kNoIndex) return b;
      if (better(a.value, b.value)) return a;
      if (better(b.value, a.value)) return b;
      return a.index < b.index ? a : b;  // equal values, or both NaN
    }
  }

  static __device__ __forceinline__ Acc shuffle_xor(const Acc& a, int mask) {
    if constexpr (kPair) return Acc{Smallest::shuffle_xor(a.min, mask), Largest::shuffle_xor(a.max, mask)};
    else if constexpr (kSum) return shfl_xor(a, mask);
    else return Acc{shfl_xor(a.value, mask), shfl_xor(a.index, mask)};
  }

  // Every lane of the warp ends with the warp's result.
  static __device__ __forceinline__ Acc warp_reduce(Acc a) {
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) a = combine(a, shuffle_xor(a, mask));
    return a;
  }

  // An unsigned key that orders values the way `better` does (a larger key is better), with every
  // NaN above all numbers. Lets atomicMax on a 64-bit word pick the best value.
  static __device__ __forceinline__ u64 order_key(V v) {
    using U = typename Select<sizeof(V) == 4, u32, u64>::type;  // V's bits
    constexpr U kSign = U(1) << (8 * sizeof(U) - 1);
    U bits = *reinterpret_cast<const U*>(&v);
    if constexpr (V(-1) < V(0)) {  // signed or floating point: flip so that bits order like values
      if constexpr (V(1) / V(2) != V(0)) {  // floating point
        if (is_nan(v)) return ~0ull;
        if (v == V(0)) bits = 0;  // -0.0 == +0.0 for `better`, so both get +0.0's key
        bits = (bits & kSign) ? ~bits : (bits | kSign);
      } else {
        bits ^= kSign;
      }
    }
    const u64 ordered = bits;
    // Smallest first: the key's complement within V's width (a non-NaN never maps to ~0 either way).
    if constexpr (sizeof(V) == 4) return kLargest ? ordered : 0xffffffffull - ordered;
    else return kLargest ? ordered : ~ordered;
  }
};

// Reduce the block's per-thread accumulators; thread 0 returns the block's result. `scratch`
// needs BLOCK / 32 slots of shared memory. Contains __syncthreads: call from every thread.
template <class R, int BLOCK>
__device__ __forceinline__ typename R::Acc block_reduce(typename R::Acc a, typename R::Acc* scratch) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of 32, at most 1024");
  constexpr int kWarps = BLOCK / 32;
  a = R::warp_reduce(a);
  if constexpr (kWarps > 1) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) scratch[warp] = a;
    __syncthreads();
    if (warp == 0) {
      a = lane < kWarps ? scratch[lane] : R::identity();
      a = R::warp_reduce(a);
    }
  }
  return a;
}

// The ticket of a one-launch reduction: atomicInc with acquire-release ordering at GPU scope.
// Release: this thread's earlier writes (its partial, or its atomicMax) are visible to whoever
// acquires a later value of the counter. Acquire: the last caller sees every earlier caller's
// writes. It replaces the __threadfence() before and after a plain atomicInc, which costs about
// a microsecond more on an H100. Returns the old value; wraps to 0 after `last`, like atomicInc.
__device__ __forceinline__ unsigned ticket_acq_rel(unsigned* counter, unsigned last) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(last) : "memory");
  return old;
}

// Candidates whose value has a 32-bit order key and whose index fits 32 bits pack into one
// 64-bit word, key above (lowest index first) below, so that a plain atomicMax picks the best
// value and, among equal values, the lowest index. Zero is below every packed candidate.
template <class R> struct PackedCandidate {
  static constexpr bool kPossible = !R::kSum && !R::kPair && sizeof(typename R::V) <= 4;
  static __device__ __forceinline__ u64 pack(typename R::Acc a) {
    // order_key's 32-bit keys lie below 2^32 except a NaN's ~0, which the mask turns into the
    // largest 32-bit key: a NaN still beats every number.
    return ((R::order_key(a.value) & 0xffffffffull) << 32) | (0xffffffffull - static_cast<u64>(a.index));
  }
  static __device__ __forceinline__ i64 index(u64 packed) { return i64(0xffffffffull - (packed & 0xffffffffull)); }
  // Element x at index i as a packed candidate.
  static __device__ __forceinline__ u64 of(typename R::T x, i64 i) {
    return ((R::order_key(R::value(x)) & 0xffffffffull) << 32) | (0xffffffffull - static_cast<u64>(i));
  }
  // The value whose order key a packed candidate holds, where the key names exactly one value:
  // every key but a NaN's (its sign and payload are not in the key) and, without abs, a float
  // zero's (-0.0 and +0.0 share one). Returns false for those: read the element back instead.
  static __device__ __forceinline__ bool value(u64 packed, typename R::V& v) {
    using V = typename R::V;
    const u32 key = static_cast<u32>(packed >> 32);
    const u32 ordered = R::kLargest ? key : 0xffffffffu - key;
    if constexpr (V(1) / V(2) != V(0)) {  // floating point
      if (key == 0xffffffffu) return false;                  // a NaN's key (order_key masked)
      if (!R::kAbs && ordered == 0x80000000u) return false;  // -0.0 or +0.0
      v = __uint_as_float((ordered & 0x80000000u) ? (ordered ^ 0x80000000u) : ~ordered);
    } else if constexpr (V(-1) < V(0)) {
      v = static_cast<V>(ordered ^ 0x80000000u);
    } else {
      v = static_cast<V>(ordered);
    }
    return true;
  }
};

// The largest packed candidate of the warp, in every lane: the key halves first, then the index
// halves of the lanes holding the best key. Two redux.sync (sm_80 on) instead of five rounds of
// shuffles of a value and a 64-bit index.
__device__ __forceinline__ u64 warp_max_packed(u64 p) {
  const u32 hi = static_cast<u32>(p >> 32);
#if __CUDA_ARCH__ >= 800
  const u32 best_hi = __reduce_max_sync(0xffffffffu, hi);
  const u32 best_lo = __reduce_max_sync(0xffffffffu, hi == best_hi ? static_cast<u32>(p) : 0u);
  return (static_cast<u64>(best_hi) << 32) | best_lo;
#else
  (void)hi;
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) {
    const u64 q = __shfl_xor_sync(0xffffffffu, p, mask);
    p = q > p ? q : p;
  }
  return p;
#endif
}

// The largest 32-bit word of the warp, in every lane: one redux.sync from sm_80 on.
__device__ __forceinline__ u32 warp_max_u32(u32 x) {
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(0xffffffffu, x);
#else
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) {
    const u32 y = __shfl_xor_sync(0xffffffffu, x, mask);
    x = y > x ? y : x;
  }
  return x;
#endif
}

// The block's largest 32-bit word (an order key of max or min, which keep no index), valid in
// thread 0: one redux.sync per warp, then one in warp 0 over the warps' words; half the
// instructions of warp_max_packed on a key with an empty index half. `warp_words` needs BLOCK /
// 32 words of shared memory. Contains __syncthreads: call from every thread.
template <int BLOCK> __device__ __forceinline__ u32 block_max_u32(u32 x, u32* warp_words) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of 32, at most 1024");
  x = warp_max_u32(x);
  if constexpr (BLOCK > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_words[warp] = x;
    __syncthreads();
    if (warp == 0) x = warp_max_u32(lane < BLOCK / 32 ? warp_words[lane] : 0u);
  }
  return x;
}

// Reads an accumulator that another block of the same launch wrote, from L2 (ld.global.cg): L1
// is not coherent across multiprocessors. The writer stores, __threadfence()s, then signals (an
// atomic on a counter); the reader sees the signal, __threadfence()s, then reads with load_cg.
template <class A> __device__ __forceinline__ A load_cg(const A* p) { return __ldcg(p); }
template <class V> __device__ __forceinline__ Candidate<V> load_cg(const Candidate<V>* p) {
  return Candidate<V>{__ldcg(&p->value), __ldcg(&p->index)};
}
template <class V> __device__ __forceinline__ MinMax<V> load_cg(const MinMax<V>* p) {
  return MinMax<V>{load_cg(&p->min), load_cg(&p->max)};
}

// Atomically adds to a sum accumulator (global or shared memory). CUDA has no signed 64-bit
// atomicAdd; two's-complement addition on the unsigned bits gives the same result.
__device__ __forceinline__ void atomic_add(double* p, double x) { atomicAdd(p, x); }
__device__ __forceinline__ void atomic_add(u64* p, u64 x) { atomicAdd(p, x); }
__device__ __forceinline__ void atomic_add(i64* p, i64 x) {
  atomicAdd(reinterpret_cast<u64*>(p), static_cast<u64>(x));
}

// The answer of an empty segment (the segmented kernels'): cub::DeviceSegmentedReduce's initial
// value (the lowest value for max, the largest for min, 0 for sum) and index -1 where CUB writes 1.
template <class R> __device__ __forceinline__ typename R::Acc segment_empty() {
  using V = typename R::V;
  if constexpr (R::kSum) {
    return typename R::Acc(0);
  } else {
    V v;
    if constexpr (V(1) / V(2) != V(0)) {  // floating point: -max / max (CUB's lowest() / max())
      if constexpr (sizeof(V) == 4) v = R::kLargest ? -3.40282347e+38f : 3.40282347e+38f;
      else v = R::kLargest ? -1.7976931348623157e+308 : 1.7976931348623157e+308;
    } else if constexpr (V(-1) < V(0)) {  // signed: lowest() / max()
      if constexpr (sizeof(V) == 4) v = R::kLargest ? V(-2147483647 - 1) : V(2147483647);
      else v = R::kLargest ? V(-9223372036854775807LL - 1) : V(9223372036854775807LL);
    } else {
      v = R::kLargest ? V(0) : V(~V(0));
    }
    return typename R::Acc{v, -1};
  }
}

}  // namespace gpuk
