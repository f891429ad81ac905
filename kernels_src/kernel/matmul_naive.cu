/* gpuk
family: kernel
summary: float32 matmul C = A * B, one thread per output reading A and B from global memory (the reference)
sizes: [m, n, k]
params_as: template
params:
  BLOCK_X: {default: 32, values: [32]}
  BLOCK_Y: {default: 8, values: [8]}
args:
  - {name: C, array: float32, length: m * n, role: out}
  - {name: A, array: float32, length: m * k, role: in}
  - {name: B, array: float32, length: k * n, role: in}
  - {name: m, scalar: int32, value: m}
  - {name: n, scalar: int32, value: n}
  - {name: k, scalar: int32, value: k}
launch:
  - entry: matmul_naive
    grid: [ceil_div(n, BLOCK_X), ceil_div(m, BLOCK_Y)]
    block: [BLOCK_X, BLOCK_Y]
metrics:
  GFLOP/s: 2 * m * n * k / seconds / 1e9
*/

// The reference for matmul.cu (row-major A m x k, B k x n, C m x n): thread (col, row) sums
// A[row][i] * B[i][col] for i = 0 .. k - 1 in order, the order matmul.cu keeps. Threads of a warp
// share a row of A and read consecutive columns of B.

template <int BLOCK_X, int BLOCK_Y>
__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
matmul_naive(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int m, int n, int k) {
  const int col = blockIdx.x * BLOCK_X + threadIdx.x;
  const int row = blockIdx.y * BLOCK_Y + threadIdx.y;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) acc += A[(long long)row * k + i] * B[(long long)i * n + col];
  C[(long long)row * n + col] = acc;
}
