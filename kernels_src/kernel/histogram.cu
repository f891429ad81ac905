/* gpuk
family: kernel
summary: Histogram of n uint32 values into `bins` bins (bin = value % bins); each block counts into its own copy of the bins in shared memory, then adds it to the global one
sizes: [n, bins]
params_as: template
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8, 16]}
constraints:
  # the block's copy of the bins, in dynamic shared memory
  - bins * 4 <= 48 * 1024
  - BLOCK * BLOCKS_PER_SM <= 2048
args:
  - {name: hist, array: uint32, length: bins, role: out}
  - {name: values, array: uint32, length: n, role: in}
  - {name: n, scalar: int64, value: n}
  - {name: bins, scalar: int32, value: bins}
launch:
  - entry: histogram_clear
    grid: ceil_div(bins, 256)
    block: 256
  - entry: histogram
    grid: sm_count * BLOCKS_PER_SM
    block: BLOCK
    shared_bytes: bins * 4
bytes: n * 4 + bins * 4
*/

// Global atomics on a few hundred counters serialise: every thread of the GPU hits the same
// addresses. Here each block counts its grid-stride share of the values into a private copy of
// the histogram in shared memory (atomics there are cheap and contend only within the block),
// then adds each non-zero count to the global histogram once: sm_count * BLOCKS_PER_SM global
// atomics per bin instead of one per value. The counts are integers, so the result is exact
// whatever the order. The first launch zeroes the global histogram, since the second adds to it.

template <int BLOCK, int BLOCKS_PER_SM>
__global__ void histogram_clear(unsigned int* __restrict__ hist, const unsigned int* __restrict__ /*values*/,
                                long long /*n*/, int bins) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < bins) hist[b] = 0;
}

template <int BLOCK, int BLOCKS_PER_SM>
__global__ void __launch_bounds__(BLOCK)
histogram(unsigned int* __restrict__ hist, const unsigned int* __restrict__ values, long long n, int bins) {
  extern __shared__ unsigned int counts[];  // bins of them
  for (int b = threadIdx.x; b < bins; b += BLOCK) counts[b] = 0;
  __syncthreads();
  const long long stride = (long long)gridDim.x * BLOCK;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride)
    atomicAdd(&counts[values[i] % (unsigned int)bins], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += BLOCK)
    if (counts[b] != 0) atomicAdd(&hist[b], counts[b]);
}
