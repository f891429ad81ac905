/* gpuk
family: kernel
summary: Histogram of n uint32 values into `bins` bins (bin = value % bins), one global atomic per value (the reference)
sizes: [n, bins]
params_as: template
params:
  BLOCK: {default: 256, values: [256]}
args:
  - {name: hist, array: uint32, length: bins, role: out}
  - {name: values, array: uint32, length: n, role: in}
  - {name: n, scalar: int64, value: n}
  - {name: bins, scalar: int32, value: bins}
launch:
  - entry: histogram_naive_clear
    grid: ceil_div(bins, BLOCK)
    block: BLOCK
  - entry: histogram_naive
    grid: ceil_div(n, BLOCK)
    block: BLOCK
bytes: n * 4 + bins * 4
*/

// The reference for histogram.cu: zero the bins, then one thread per value adds 1 to its bin
// in global memory.

template <int BLOCK>
__global__ void histogram_naive_clear(unsigned int* __restrict__ hist, const unsigned int* __restrict__ /*values*/,
                                      long long /*n*/, int bins) {
  const int b = blockIdx.x * BLOCK + threadIdx.x;
  if (b < bins) hist[b] = 0;
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
histogram_naive(unsigned int* __restrict__ hist, const unsigned int* __restrict__ values, long long n, int bins) {
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) atomicAdd(&hist[values[i] % (unsigned int)bins], 1u);
}
