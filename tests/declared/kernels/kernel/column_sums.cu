/* gpuk
family: kernel
summary: "the sum of each column of an m x n row-major matrix, added into `split` accumulators in turn: another split, another order of additions, other last bits; x is written back unchanged (declared inout, as a script that forgets const declares it)"
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
  - {entry: column_sums, grid: "ceil_div(n, block_size_x)", block: block_size_x}
*/
extern "C" __global__ void column_sums(float* sums, float* x, int n, int m) {
  const int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i >= n) return;
  float acc[split];
  for (int s = 0; s < split; s++) acc[s] = 0.0f;
  for (int j = 0; j < m; j++) acc[j % split] += x[(size_t)j * n + i];
  float total = 0.0f;
  for (int s = 0; s < split; s++) total += acc[s];
  sums[i] = total;
}
