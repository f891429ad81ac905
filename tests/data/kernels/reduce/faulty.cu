/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: A test kernel for gpuk's fault handling (tests/gpu/test_fault_gpu.cpp), not a reduction to use. FAULT 0 is a correct single-block reduction; 1 writes through a wild pointer (CUDA_ERROR_ILLEGAL_ADDRESS), 2 executes a trap, 3 spins forever.
params:
  FAULT: {default: 0, values: [0, 1, 2, 3]}
  BLOCK: {default: 256, values: [128, 256]}
launch:
  - entry: reduce_faulty
    grid: 1
    block: BLOCK
*/

#include "gpuk/reduce.cuh"

template <class R, int FAULT, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
reduce_faulty(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out,
              typename R::Acc* /*partials*/, unsigned int* /*counter*/) {
  using Acc = typename R::Acc;
  __shared__ Acc scratch[BLOCK / 32];
  if (FAULT == 1 && threadIdx.x == 0) {
    // Above the 47-bit user address space, so neither a device allocation nor (with HMM) host
    // memory: the store faults with CUDA_ERROR_ILLEGAL_ADDRESS.
    *reinterpret_cast<volatile unsigned int*>((1ull << 48) + 16 * static_cast<unsigned long long>(n)) = 1u;
  }
  if (FAULT == 2 && threadIdx.x == 0) __trap();
  if (FAULT == 3) {
    // Nothing ever sets the flag: every thread spins until the host gives up on the kernel.
    __shared__ volatile int stop;
    if (threadIdx.x == 0) stop = 0;
    __syncthreads();
    while (!stop) {
    }
  }
  Acc acc = R::identity();
  for (gpuk::i64 i = threadIdx.x; i < n; i += BLOCK) R::accumulate(acc, in[i], i);
  acc = gpuk::block_reduce<R, BLOCK>(acc, scratch);
  if (threadIdx.x == 0) *out = acc;
}
