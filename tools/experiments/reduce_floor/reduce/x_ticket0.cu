/* gpuk
family: reduce
operations: [argmax]
summary: experiment x_ticket0
params:
  BLOCK: {default: 256, values: [256]}
launch:
  - entry: x_ticket0
    grid: ceil_div(n, BLOCK * vec)
    block: BLOCK
scratch: max(ceil_div(n, BLOCK * vec), 1) + 4
*/
#include "gpuk/reduce.cuh"
template <class R, int BLOCK>
__global__ void x_ticket0(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out, typename R::Acc* partials, unsigned int* counter) {
  using T = typename R::T;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  __shared__ typename R::Acc scratch[BLOCK / 32];
  __shared__ bool is_last;
  typename R::Acc acc = R::identity();
  const gpuk::i64 first = (gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x) * kVec;
  if (first + kVec <= n) { auto v = gpuk::load_vec16(in + first);
#pragma unroll
    for (int j = 0; j < kVec; ++j) R::accumulate(acc, v.v[j], first + j); }
  else for (gpuk::i64 i = first; i < n; ++i) R::accumulate(acc, in[i], i);
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    if (0) __threadfence();
    is_last = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  if (0) __threadfence();
  acc = R::identity();
  for (unsigned p = threadIdx.x; p < gridDim.x; p += BLOCK) acc = R::combine(acc, gpuk::load_cg(partials + p));
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);
  if (threadIdx.x == 0) *out = acc;
}
