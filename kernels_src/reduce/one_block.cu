/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin, argminmax]
summary: The cheapest launch, for launch-bound sizes (a few thousand elements, where one launch and one round of loads is the whole time). One block, one launch; no partials, no counter, no atomics, no scratch to set. Each thread loads UNROLL 16-byte vectors a step in onepass's tile order, folds them with the policy, and one block_reduce finishes; max and min of 32-bit values keep a value alone (one max.NaN / min.NaN an element for float32) and finish with one redux.sync a warp on its order key.
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
//   for floats, the type's extreme for integers: R::worst): a thread without elements then never
//   wins against one with, and R::best_of keeps a NaN (for float32 one max.NaN / min.NaN an
//   element instead of better's test, compare and select). Of 32-bit values the block finishes
//   on order keys, one redux.sync a warp (gpuk::block_max_u32), instead of block_reduce's five
//   shuffle rounds of a value and a 64-bit index.

#include "gpuk/reduce.cuh"

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
  V best = R::worst();  // kValueOnly
  const auto fold = [&](T x, gpuk::i64 i) {
    if constexpr (kValueOnly) {
      best = R::best_of(best, R::value(x));
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
  if constexpr (kValueOnly && gpuk::PackedCandidate<R>::kPossible) {
    // 32-bit values: the block's best as an order key (one redux.sync per warp), decoded as
    // onepass's FOLD 1 does: a NaN's key to a NaN, a float zero's to +0.0.
    __shared__ gpuk::u32 warp_key[BLOCK / 32];
    const gpuk::u32 key = gpuk::block_max_u32<BLOCK>(static_cast<gpuk::u32>(R::order_key(best)), warp_key);
    if (threadIdx.x != 0) return;
    V v;
    if (!gpuk::PackedCandidate<R>::value(gpuk::u64(key) << 32, v)) v = key == 0xffffffffu ? __int_as_float(0x7fffffff) : 0.0f;
    *out = Acc{v, -1};
  } else {
    if constexpr (kValueOnly) acc = Acc{best, -1};
    acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);
    if (threadIdx.x == 0) *out = acc;
  }
}
