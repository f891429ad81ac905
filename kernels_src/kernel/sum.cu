/* gpuk
family: kernel
summary: Sum of n int32 values as an exact int64, in two launches; GRID blocks write one partial sum each to a scratch array, then one block adds the GRID partials
sizes: [n]
params_as: template
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  GRID: {default: 1024, values: [132, 264, 528, 1024, 2048, 4096]}
args:
  - {name: total, array: int64, length: 1, role: out}
  - {name: values, array: int32, length: n, role: in}
  - {name: n, scalar: int64, value: n}
scratch:
  - {name: partials, array: int64, length: GRID}
launch:
  - entry: sum_partials
    grid: GRID
    block: BLOCK
    args: [partials, values, n]
  - entry: sum_partials_finish
    grid: 1
    block: BLOCK
    args: [total, partials]
bytes: n * 4
*/

// A sum needs every block's result before it can finish. Rather than a global atomic per block
// (or a counter that tells the last block to finish), this kernel ends its first launch after
// each of the GRID blocks has written its partial to the scratch array, and lets the launch
// boundary order the second, one-block launch after all of them. The first launch strides by
// the whole grid, so the blocks' slices are disjoint and every value is read once; a block that
// sees no value writes 0, so all GRID partials are defined. Integer sums are exact, so the total
// does not depend on the order of the additions.

template <int BLOCK>
__device__ long long block_sum(long long x) {
  __shared__ long long warp_sums[BLOCK / 32];
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_down_sync(0xffffffffu, x, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = x;
  __syncthreads();
  x = 0;
  if (threadIdx.x < 32) {
    x = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0;
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_down_sync(0xffffffffu, x, offset);
  }
  return x;  // the block's sum, in thread 0
}

template <int BLOCK, int GRID>
__global__ void __launch_bounds__(BLOCK)
sum_partials(long long* __restrict__ partials, const int* __restrict__ values, long long n) {
  long long x = 0;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += (long long)GRID * BLOCK) x += values[i];
  x = block_sum<BLOCK>(x);
  if (threadIdx.x == 0) partials[blockIdx.x] = x;
}

template <int BLOCK, int GRID>
__global__ void __launch_bounds__(BLOCK)
sum_partials_finish(long long* __restrict__ total, const long long* __restrict__ partials) {
  long long x = 0;
  for (int p = threadIdx.x; p < GRID; p += BLOCK) x += partials[p];
  x = block_sum<BLOCK>(x);
  if (threadIdx.x == 0) *total = x;
}
