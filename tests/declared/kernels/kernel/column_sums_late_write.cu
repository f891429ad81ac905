/* gpuk
family: kernel
summary: "column_sums, which changes x from its third run on (x[0] + 1 after reading it): its verified runs (on the GPU, then maybe on the host) leave x as it was, its timed runs do not"
sizes: [n, m]
params_as: defines
params:
  block_size_x: {default: 128, values: [64, 128]}
  split: {default: 1, values: [1, 2, 4]}
args:
  - {name: sums, array: float32, length: n, role: out}
  - {name: x, array: float32, length: n * m, role: inout}
  - {name: n, scalar: int32, value: n}
  - {name: m, scalar: int32, value: m}
launch:
  - {entry: column_sums_late_write, grid: "ceil_div(n, block_size_x)", block: block_size_x}
*/
__device__ unsigned gpuk_test_calls;

extern "C" __global__ void column_sums_late_write(float* sums, float* x, int n, int m) {
  const int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i >= n) return;
  float acc[split];
  for (int s = 0; s < split; s++) acc[s] = 0.0f;
  for (int j = 0; j < m; j++) acc[j % split] += x[(size_t)j * n + i];
  float total = 0.0f;
  for (int s = 0; s < split; s++) total += acc[s];
  sums[i] = total;
  if (i == 0) {
    if (gpuk_test_calls > 1) x[0] += 1.0f;  // column 0 is this thread's alone
    gpuk_test_calls++;
  }
}
