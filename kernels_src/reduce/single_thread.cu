/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin, argminmax]
summary: The write-up's plain sequential loop on one GPU thread. The reference of intent, not of speed (one load in flight at a time).
fixes: The original started max at 0 (never a real element, and wrong for the max of all-negative data or for any op but |x|), kept the index in an int (overflows past 2^31), skipped NaN (every comparison with NaN is false) and could only do |x| max of floats.
params: {}
launch:
  - entry: reduce_single_thread
    grid: 1
    block: 1
scratch: 0
*/

// The accumulator starts as R::identity(), "no element yet", so the first element always
// replaces it whatever its value; R::accumulate then keeps the first of equal values (the loop
// visits indices in increasing order) and lets a NaN win. The index is 64-bit.

#include "gpuk/reduce.cuh"

template <class R>
__global__ void reduce_single_thread(const typename R::T* __restrict__ in, gpuk::i64 n,
                                     typename R::Acc* out, typename R::Acc* /*partials*/,
                                     unsigned int* /*counter*/) {
  typename R::Acc acc = R::identity();
  for (gpuk::i64 i = 0; i < n; ++i) R::accumulate(acc, in[i], i);
  *out = acc;
}
