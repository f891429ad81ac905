/* gpuk
family: kernel
summary: Tiled float32 matmul C = A * B; a block stages TILE_M x TILE_K of A and TILE_K x TILE_N of B in shared memory, each thread accumulates WORK_M x WORK_N outputs in registers
sizes: [m, n, k]
params_as: template
params:
  TILE_M: {default: 64, values: [16, 32, 64, 128]}
  TILE_N: {default: 64, values: [16, 32, 64, 128]}
  TILE_K: {default: 16, values: [8, 16, 32]}
  WORK_M: {default: 4, values: [1, 2, 4, 8]}
  WORK_N: {default: 4, values: [1, 2, 4, 8]}
constraints:
  # A thread computes WORK_M x WORK_N outputs, so the tile must split evenly among the threads...
  - TILE_M % WORK_M == 0
  - TILE_N % WORK_N == 0
  # ...into a block of at least two warps and at most 1024 threads,
  - (TILE_M / WORK_M) * (TILE_N / WORK_N) >= 64
  - (TILE_M / WORK_M) * (TILE_N / WORK_N) <= 1024
  # and the two staged tiles (A's padded by a column) fit in 48 KiB of static shared memory.
  - (TILE_K * (TILE_M + 1) + TILE_K * TILE_N) * 4 <= 48 * 1024
args:
  - {name: C, array: float32, length: m * n, role: out}
  - {name: A, array: float32, length: m * k, role: in}
  - {name: B, array: float32, length: k * n, role: in}
  - {name: m, scalar: int32, value: m}
  - {name: n, scalar: int32, value: n}
  - {name: k, scalar: int32, value: k}
launch:
  - entry: matmul
    grid: [ceil_div(n, TILE_N), ceil_div(m, TILE_M)]
    block: [TILE_N / WORK_N, TILE_M / WORK_M]
metrics:
  GFLOP/s: 2 * m * n * k / seconds / 1e9
*/

// Row-major A (m x k), B (k x n), C (m x n). Block (bx, by) owns C's tile of rows
// by * TILE_M .. + TILE_M and columns bx * TILE_N .. + TILE_N. It walks k in steps of TILE_K: the
// threads copy A's TILE_M x TILE_K slab (transposed, so the inner loop reads a row of it) and B's
// TILE_K x TILE_N slab into shared memory, then every thread multiplies its WORK_M rows by its
// WORK_N columns out of shared memory and registers. A thread's outputs lie one block-height (or
// width) apart, so a warp's loads of B's slab and its stores to C are consecutive addresses.
// Cells outside the matrices are staged as 0 and outputs outside C are not stored: m, n and k need
// not be multiples of the tiles. Each output sums its k products in increasing order, as
// matmul_naive.cu does. Indices into the arrays are 64-bit.

template <int TILE_M, int TILE_N, int TILE_K, int WORK_M, int WORK_N>
__global__ void __launch_bounds__((TILE_M / WORK_M) * (TILE_N / WORK_N))
matmul(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int m, int n, int k) {
  constexpr int THREADS_X = TILE_N / WORK_N, THREADS_Y = TILE_M / WORK_M;
  constexpr int THREADS = THREADS_X * THREADS_Y;
  __shared__ float As[TILE_K][TILE_M + 1];  // A's slab transposed; the pad spreads the stores over banks
  __shared__ float Bs[TILE_K][TILE_N];

  const int tid = threadIdx.y * THREADS_X + threadIdx.x;
  const int row0 = blockIdx.y * TILE_M, col0 = blockIdx.x * TILE_N;
  float acc[WORK_M][WORK_N] = {};

  for (int k0 = 0; k0 < k; k0 += TILE_K) {
    // Consecutive threads read consecutive addresses of a row of A and of a row of B.
    for (int i = tid; i < TILE_M * TILE_K; i += THREADS) {
      const int r = i / TILE_K, c = i % TILE_K;
      const int row = row0 + r, kk = k0 + c;
      As[c][r] = row < m && kk < k ? A[(long long)row * k + kk] : 0.0f;
    }
    for (int i = tid; i < TILE_K * TILE_N; i += THREADS) {
      const int r = i / TILE_N, c = i % TILE_N;
      const int kk = k0 + r, col = col0 + c;
      Bs[r][c] = kk < k && col < n ? B[(long long)kk * n + col] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TILE_K; ++kk) {
      float a[WORK_M], b[WORK_N];
#pragma unroll
      for (int i = 0; i < WORK_M; ++i) a[i] = As[kk][threadIdx.y + i * THREADS_Y];
#pragma unroll
      for (int j = 0; j < WORK_N; ++j) b[j] = Bs[kk][threadIdx.x + j * THREADS_X];
#pragma unroll
      for (int i = 0; i < WORK_M; ++i)
#pragma unroll
        for (int j = 0; j < WORK_N; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // before the next slab overwrites this one
  }

#pragma unroll
  for (int i = 0; i < WORK_M; ++i) {
    const int row = row0 + threadIdx.y + i * THREADS_Y;
#pragma unroll
    for (int j = 0; j < WORK_N; ++j) {
      const int col = col0 + threadIdx.x + j * THREADS_X;
      if (row < m && col < n) C[(long long)row * n + col] = acc[i][j];
    }
  }
}
