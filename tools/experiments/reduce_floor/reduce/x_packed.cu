/* gpuk
family: reduce
operations: [argmax]
summary: experiment x_packed
params:
  BLOCK: {default: 256, values: [256]}
launch:
  - entry: x_packed
    grid: ceil_div(n, BLOCK * vec)
    block: BLOCK
scratch: max(ceil_div(n, BLOCK * vec), 1) + 4
*/
#include "gpuk/reduce.cuh"
template <class R, int BLOCK>
__global__ void x_packed(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out, typename R::Acc* partials, unsigned int* counter) {
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
  unsigned long long* best = reinterpret_cast<unsigned long long*>(partials);
  if (threadIdx.x == 0) {
    const unsigned long long key = (R::order_key(acc.value) << 32) | (0xffffffffull - (unsigned long long)acc.index);
    atomicMax(best, key);
    __threadfence();
    is_last = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;
    if (is_last) {
      const unsigned long long k = atomicExch(best, 0ull);
      const gpuk::i64 idx = 0xffffffffll - (gpuk::i64)(k & 0xffffffffull);
      *out = typename R::Acc{R::value(in[idx]), idx};
    }
  }
}
