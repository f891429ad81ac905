/* gpuk
family: kernel
summary: "reduce_partial's reference: the sum of x in double by one block in the first of 1024 slots, the others zero (compared by their total)"
sizes: [n]
args:
  - {name: partial, array: float32, length: 1024, role: out}
  - {name: x, array: float32, length: n, role: in}
  - {name: n, scalar: int32, value: n}
launch:
  - {entry: partial_ref, grid: 1, block: 256}
*/
extern "C" __global__ void partial_ref(float* partial, const float* x, int n) {
  __shared__ double s[256];
  double sum = 0.0;
  for (int i = threadIdx.x; i < n; i += 256) sum += x[i];
  s[threadIdx.x] = sum;
  __syncthreads();
  for (int w = 128; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  for (int i = threadIdx.x; i < 1024; i += 256) partial[i] = i == 0 ? (float)s[0] : 0.0f;
}
