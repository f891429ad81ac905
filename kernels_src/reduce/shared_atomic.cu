/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: One block; each thread reduces a block-stride slice in registers, then offers its result to an accumulator in shared memory with atomics; thread 0 writes the result.
fixes: The original initialised the shared maximum to 0 (wrong for all-negative data), its float atomicMax read the address without an atomic, the index was written by whichever thread with an equal maximum raced last (not the lowest index), and NaN was ignored.
params:
  BLOCK: {default: 1024, values: [64, 128, 256, 512, 1024]}
launch:
  - entry: reduce_shared_atomic
    grid: 1
    block: BLOCK
scratch: 0
*/

// block_atomic.cu with the accumulator in shared memory, as in the write-up's "shared memory"
// variant: shared-memory atomics stay on the multiprocessor instead of travelling to L2.
// Max/min/argmax/argmin pick the winner in two 64-bit integer atomic steps:
//   1. atomicMax of R::order_key(value): a key that orders values like R::better does, with
//      every NaN on top and all NaNs equal;
//   2. after a barrier, the threads whose key equals the winning key atomicMin their index, so
//      the lowest index among equal values (or the first NaN) wins, whatever the scheduling.
// The output value is then read back from the input at the winning index. Sums atomicAdd their
// per-thread sums (float sums in double; the order of the additions is not fixed).

#include "gpuk/reduce.cuh"

template <class R, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
reduce_shared_atomic(const typename R::T* __restrict__ in, gpuk::i64 n, typename R::Acc* out,
                     typename R::Acc* /*partials*/, unsigned int* /*counter*/) {
  using Acc = typename R::Acc;
  Acc acc = R::identity();
  for (gpuk::i64 i = threadIdx.x; i < n; i += BLOCK) R::accumulate(acc, in[i], i);

  if constexpr (R::kSum) {
    __shared__ Acc sum;
    if (threadIdx.x == 0) sum = Acc(0);
    __syncthreads();
    gpuk::atomic_add(&sum, acc);
    __syncthreads();
    if (threadIdx.x == 0) *out = sum;
  } else {
    __shared__ gpuk::u64 best_key, best_index;
    if (threadIdx.x == 0) {
      best_key = 0;
      best_index = gpuk::kNoIndex;
    }
    __syncthreads();
    // Threads that saw no element (n < BLOCK) stay out: their identity value is not an element.
    const bool has_element = acc.index != gpuk::kNoIndex;
    const gpuk::u64 key = has_element ? R::order_key(acc.value) : 0;
    if (has_element) atomicMax(&best_key, key);
    __syncthreads();
    if (has_element && key == best_key) atomicMin(&best_index, static_cast<gpuk::u64>(acc.index));
    __syncthreads();
    if (threadIdx.x == 0) {
      const gpuk::i64 index = static_cast<gpuk::i64>(best_index);
      *out = Acc{R::value(in[index]), index};
    }
  }
}
