/* gpuk
family: kernel
summary: Sum of n int32 values as an exact int64 by a single block (the reference)
sizes: [n]
params_as: template
params:
  BLOCK: {default: 1024, values: [1024]}
args:
  - {name: total, array: int64, length: 1, role: out}
  - {name: values, array: int32, length: n, role: in}
  - {name: n, scalar: int64, value: n}
launch:
  - entry: sum_naive
    grid: 1
    block: BLOCK
bytes: n * 4
*/

// The reference for sum.cu: one block reads all n values (thread t adds values t, t + BLOCK, ...),
// then its threads' sums are added in shared memory, halving the active threads each step.
// Slow (one SM does the work) and obviously right.

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
sum_naive(long long* __restrict__ total, const int* __restrict__ values, long long n) {
  __shared__ long long sums[BLOCK];
  long long x = 0;
  for (long long i = threadIdx.x; i < n; i += BLOCK) x += values[i];
  sums[threadIdx.x] = x;
  __syncthreads();
  for (int half = BLOCK / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *total = sums[0];
}
