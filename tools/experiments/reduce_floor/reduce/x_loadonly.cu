/* gpuk
family: reduce
operations: [argmax]
summary: experiment x_loadonly
params:
  BLOCK: {default: 256, values: [256]}
launch:
  - entry: x_loadonly
    grid: ceil_div(n, BLOCK * vec)
    block: BLOCK
scratch: max(ceil_div(n, BLOCK * vec), 1) + 4
*/
#include "gpuk/reduce.cuh"
template <class R, int BLOCK>
__global__ void x_loadonly(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out, typename R::Acc* partials, unsigned int* counter) {
  using T = typename R::T;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  __shared__ typename R::Acc scratch[BLOCK / 32];
  typename R::Acc acc = R::identity();
  const gpuk::i64 first = (gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x) * kVec;
  if (first + kVec <= n) { auto v = gpuk::load_vec16(in + first);
#pragma unroll
    for (int j = 0; j < kVec; ++j) R::accumulate(acc, v.v[j], first + j); }
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = acc;
}
