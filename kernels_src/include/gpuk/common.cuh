// Device helpers shared by every kernel family. Kernel files are compiled by NVRTC with
// kernels_src/include on the include path and no system headers, so this file defines the
// few things the kernels need instead of including <cstdint> or <limits>.
#pragma once

namespace gpuk {

using i64 = long long;
using u64 = unsigned long long;
using u32 = unsigned int;

// Select<C, A, B>::type is A when C, else B (std::conditional; kernels include no std headers).
template <bool C, class A, class B> struct Select { using type = A; };
template <class A, class B> struct Select<false, A, B> { using type = B; };

constexpr i64 kNoIndex = 0x7fffffffffffffffLL;  // "no element seen yet"

template <class T> __device__ __forceinline__ bool is_nan(T) { return false; }
template <> __device__ __forceinline__ bool is_nan<float>(float x) { return x != x; }
template <> __device__ __forceinline__ bool is_nan<double>(double x) { return x != x; }

// |x| as an unsigned magnitude for signed integers, so that |INT_MIN| does not overflow.
template <class T> struct Magnitude { using type = T; };
template <> struct Magnitude<int> { using type = unsigned int; };
template <> struct Magnitude<long long> { using type = unsigned long long; };

template <class T> __device__ __forceinline__ typename Magnitude<T>::type magnitude(T x) { return x; }
template <> __device__ __forceinline__ float magnitude<float>(float x) { return fabsf(x); }
template <> __device__ __forceinline__ double magnitude<double>(double x) { return fabs(x); }
template <> __device__ __forceinline__ unsigned int magnitude<int>(int x) {
  return x < 0 ? 0u - static_cast<unsigned int>(x) : static_cast<unsigned int>(x);
}
template <> __device__ __forceinline__ unsigned long long magnitude<long long>(long long x) {
  return x < 0 ? 0ull - static_cast<unsigned long long>(x) : static_cast<unsigned long long>(x);
}

// A 16-byte vector of T, for loads that move 16 bytes per thread per instruction.
template <class T> struct alignas(16) Vec16 {
  static constexpr int kCount = 16 / sizeof(T);
  T v[kCount];
};

template <class T> __device__ __forceinline__ Vec16<T> load_vec16(const T* p) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  Vec16<T> out;
  *reinterpret_cast<uint4*>(out.v) = raw;
  return out;
}

template <class T> __device__ __forceinline__ T shfl_xor(T x, int mask) {
  return __shfl_xor_sync(0xffffffffu, x, mask);
}

__device__ __forceinline__ i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

template <int BYTES> struct UnsignedOfSize;
template <> struct UnsignedOfSize<4> { using type = u32; };
template <> struct UnsignedOfSize<8> { using type = u64; };

// Order-preserving maps of a key to an unsigned integer ("bits"): the sort family's key order and
// the search family's bounds order (docs/kernels/sort.md, "Order").
template <class K> struct KeyBits {
  using Bits = typename UnsignedOfSize<sizeof(K)>::type;
  static __device__ __forceinline__ Bits of(K k) { return static_cast<Bits>(k); }  // unsigned
};
template <> struct KeyBits<int> {
  using Bits = u32;
  static __device__ __forceinline__ Bits of(int k) { return static_cast<u32>(k) ^ 0x80000000u; }
};
template <> struct KeyBits<long long> {
  using Bits = u64;
  static __device__ __forceinline__ Bits of(long long k) { return static_cast<u64>(k) ^ 0x8000000000000000ull; }
};
// Floats: negatives have every bit flipped, positives only the sign bit, so -inf < -0.0 < +0.0 <
// +inf; every NaN (either sign, any payload) maps to all ones: after +inf, and all NaNs equal.
// Written without a branch (the sign spread by an arithmetic shift, the NaN case a select), so
// that a pass can map each key as it arrives without splitting its loads into regions (the same
// map as the branching form for all 2^32 float patterns).
template <> struct KeyBits<float> {
  using Bits = u32;
  static __device__ __forceinline__ Bits of(float k) {
    const u32 b = __float_as_uint(k);
    const u32 flipped = b ^ (static_cast<u32>(static_cast<int>(b) >> 31) | 0x80000000u);
    return (b & 0x7fffffffu) > 0x7f800000u ? 0xffffffffu : flipped;
  }
};
template <> struct KeyBits<double> {
  using Bits = u64;
  static __device__ __forceinline__ Bits of(double k) {
    const u64 b = static_cast<u64>(__double_as_longlong(k));
    const u64 flipped = b ^ (static_cast<u64>(static_cast<long long>(b) >> 63) | 0x8000000000000000ull);
    return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull ? ~0ull : flipped;
  }
};

}  // namespace gpuk
