/* gpuk
family: kernel
summary: "column_sums' reference: each column summed in double, one thread per column"
sizes: [n, m]
args:
  - {name: sums, array: float32, length: n, role: out}
  - {name: x, array: float32, length: n * m, role: inout}
  - {name: n, scalar: int32, value: n}
  - {name: m, scalar: int32, value: m}
launch:
  - {entry: column_sums_ref, grid: "ceil_div(n, 128)", block: 128}
*/
extern "C" __global__ void column_sums_ref(float* sums, float* x, int n, int m) {
  const int i = blockIdx.x * 128 + threadIdx.x;
  if (i >= n) return;
  double total = 0.0;
  for (int j = 0; j < m; j++) total += x[(size_t)j * n + i];
  sums[i] = (float)total;
}
