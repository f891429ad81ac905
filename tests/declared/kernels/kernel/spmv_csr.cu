/* gpuk
family: kernel
summary: "y = A x for a CSR matrix of three sizes (rows, columns, non-zeros): one warp per row; its arrays take (nrows + 1 + 2 * nnz + ncols + nrows) * 4 bytes, not the product of the sizes"
sizes: [nrows, ncols, nnz]
params:
  rows_per_block: {default: 4, values: [2, 4, 8]}
args:
  - {name: y, array: float32, length: nrows, role: out}
  - {name: row_ptr, array: int32, length: nrows + 1, role: in}
  - {name: col, array: int32, length: nnz, role: in}
  - {name: val, array: float32, length: nnz, role: in}
  - {name: x, array: float32, length: ncols, role: in}
  - {name: nrows, scalar: int32, value: nrows}
launch:
  - {entry: spmv_csr, grid: "ceil_div(nrows, rows_per_block)", block: rows_per_block * 32}
*/
template <int rows_per_block>
__global__ void spmv_csr(float* y, const int* row_ptr, const int* col, const float* val, const float* x, int nrows) {
  const int row = blockIdx.x * rows_per_block + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= nrows) return;
  // Each row's span, clamped: generated data need not start at 0 or be sorted end to end.
  const int begin = min(row_ptr[row], row_ptr[row + 1]), end = max(row_ptr[row], row_ptr[row + 1]);
  double sum = 0.0;
  for (int j = begin + lane; j < end; j += 32) sum += (double)val[j] * (double)x[col[j]];
  for (int w = 16; w > 0; w /= 2) sum += __shfl_down_sync(0xffffffffu, sum, w);
  if (lane == 0) y[row] = (float)sum;
}
