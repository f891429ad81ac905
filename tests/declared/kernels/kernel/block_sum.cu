/* gpuk
family: kernel
summary: "the sum of int32 values in two launches: per-block partial sums into scratch, then one block"
sizes: [n]
params:
  BLOCK: {default: 256, values: [128, 256, 512]}
args:
  - {name: total, array: int64, length: 1, role: out}
  - {name: in, array: int32, length: n, role: in}
  - {name: n, scalar: int64, value: n}
scratch:
  - {name: partial, array: int64, length: "ceil_div(n, BLOCK)"}
launch:
  - {entry: partial_sums, grid: "ceil_div(n, BLOCK)", block: BLOCK, args: [partial, in, n]}
  - {entry: final_sum, grid: 1, block: BLOCK, args: [total, partial, n]}
*/
template <int BLOCK> __global__ void partial_sums(long long* partial, const int* in, long long n) {
  __shared__ long long s[BLOCK];
  const long long i = blockIdx.x * (long long)BLOCK + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int w = BLOCK / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}
template <int BLOCK> __global__ void final_sum(long long* total, const long long* partial, long long n) {
  __shared__ long long s[BLOCK];
  const long long blocks = (n + BLOCK - 1) / BLOCK;
  long long sum = 0;
  for (long long b = threadIdx.x; b < blocks; b += BLOCK) sum += partial[b];
  s[threadIdx.x] = sum;
  __syncthreads();
  for (int w = BLOCK / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *total = s[0];
}
