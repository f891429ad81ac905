/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin, argminmax]
summary: The cheapest launch, for launch-bound sizes (a few thousand elements, where one launch and one round of loads is the whole time). One block, one launch; no partials, no counter, no atomics, no scratch to set. Each thread loads UNROLL 16-byte vectors a step in onepass's tile order, folds them with the policy (max and min keep a value alone), and one block_reduce finishes.
params:
  BLOCK: {default: 512, values: [128, 256, 512, 1024]}
  UNROLL: {default: 2, values: [1, 2, 4, 8]}
launch:
  - entry: reduce_one_block
    grid: 1
    block: BLOCK
scratch: 0
*/

// Why: at 2^12 float32 onepass already runs one block (its tile is 4,096 floats), but it carries
// what a grid needs (the 64-bit packed path, the partials path, the ticket and the atomics) and
// max and min there still turn every element into an order key. This file is the whole of the
// one-block case and nothing else, so its machine code is short (after the timing's L2 flush the
// kernel's instructions come from memory too). Any n runs correctly, but with one block a large n
// is slow: the family picks this file for small n only (reduce_plugin.cpp, choose_kernel) and a
// shipped entry for a tuned size wins over that pick.
// - Index order: vector u of thread t in a tile holds elements tile + (u * BLOCK + t) * vec
//   + [0, vec), visited u first, then the vector's elements, then the next tile: increasing index
//   order per thread, as R::accumulate needs. Across threads R::combine (block_reduce) decides.
// - Max and min return no index (as onepass's FOLD 1: the index written is -1), so a thread keeps
//   the best value alone, started at the value every element is at least as good as (-inf / +inf
//   for floats, the type's extreme for integers): a thread without elements then never wins
//   against one with, and R::better keeps a NaN.

#include "gpuk/reduce.cuh"

// The value every element of R's max (min) is at least as good as.
template <class R> __device__ __forceinline__ typename R::V worst_value() {
  using V = typename R::V;
  if constexpr (V(1) / V(2) != V(0)) {  // floating point: -inf for max, +inf for min
    if constexpr (sizeof(V) == 4) return __int_as_float(R::kLargest ? 0xff800000u : 0x7f800000u);
    else return __longlong_as_double(R::kLargest ? 0xfff0000000000000ll : 0x7ff0000000000000ll);
  } else if constexpr (V(-1) < V(0)) {
    if constexpr (sizeof(V) == 4) return R::kLargest ? V(-2147483647 - 1) : V(2147483647);
    else return R::kLargest ? V(-9223372036854775807LL - 1) : V(9223372036854775807LL);
  } else {
    return R::kLargest ? V(0) : V(~V(0));
  }
}

template <class R, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK, 1)
reduce_one_block(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out,
                 typename R::Acc* /*partials*/, unsigned int* /*counter*/) {
  using T = typename R::T;
  using V = typename R::V;
  using Acc = typename R::Acc;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * UNROLL * kVec;
  constexpr bool kValueOnly = R::kOp == gpuk::ReduceOp::Max || R::kOp == gpuk::ReduceOp::Min;
  __shared__ Acc scratch[BLOCK / 32];

  Acc acc = R::identity();
  V best = worst_value<R>();  // kValueOnly
  const auto fold = [&](T x, gpuk::i64 i) {
    if constexpr (kValueOnly) {
      const V v = R::value(x);
      best = R::better(v, best) ? v : best;
    } else {
      R::accumulate(acc, x, i);
    }
  };
  const gpuk::i64 whole_tiles = n / kTile;
  for (gpuk::i64 tile = 0; tile < whole_tiles; ++tile) {
    gpuk::Vec16<T> v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = gpuk::load_vec16(in + tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int j = 0; j < kVec; ++j) fold(v[u].v[j], tile * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec + j);
  }
  if (whole_tiles * kTile < n) {  // the partial tile: whole vectors below n, the one across n by element
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const gpuk::i64 first = whole_tiles * kTile + gpuk::i64(u * BLOCK + threadIdx.x) * kVec;
      if (first + kVec <= n) {
        const gpuk::Vec16<T> v = gpuk::load_vec16(in + first);
#pragma unroll
        for (int j = 0; j < kVec; ++j) fold(v.v[j], first + j);
      } else {
        for (gpuk::i64 i = first; i < n; ++i) fold(in[i], i);
      }
    }
  }
  if constexpr (kValueOnly) acc = Acc{best, -1};
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);
  if (threadIdx.x == 0) *out = acc;
}
