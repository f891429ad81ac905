/* gpuk
family: kernel
summary: "reduce_kt's reference: the sum of x in double by one block"
sizes: [n]
args:
  - {name: total, array: float32, length: 1, role: out}
  - {name: x, array: float32, length: n, role: in}
  - {name: n, scalar: int32, value: n}
launch:
  - {entry: sum_ref, grid: 1, block: 256}
*/
extern "C" __global__ void sum_ref(float* total, const float* x, int n) {
  __shared__ double s[256];
  double sum = 0.0;
  for (int i = threadIdx.x; i < n; i += 256) sum += x[i];
  s[threadIdx.x] = sum;
  __syncthreads();
  for (int w = 128; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *total = (float)s[0];
}
