/* gpuk
family: kernel
summary: "spmv_csr's reference: one thread per row"
sizes: [nrows, ncols, nnz]
args:
  - {name: y, array: float32, length: nrows, role: out}
  - {name: row_ptr, array: int32, length: nrows + 1, role: in}
  - {name: col, array: int32, length: nnz, role: in}
  - {name: val, array: float32, length: nnz, role: in}
  - {name: x, array: float32, length: ncols, role: in}
  - {name: nrows, scalar: int32, value: nrows}
launch:
  - {entry: spmv_csr_naive, grid: "ceil_div(nrows, 128)", block: 128}
*/
extern "C" __global__ void spmv_csr_naive(float* y, const int* row_ptr, const int* col, const float* val, const float* x,
                                          int nrows) {
  const int row = blockIdx.x * 128 + threadIdx.x;
  if (row >= nrows) return;
  const int begin = min(row_ptr[row], row_ptr[row + 1]), end = max(row_ptr[row], row_ptr[row + 1]);
  double sum = 0.0;
  for (int j = begin; j < end; ++j) sum += (double)val[j] * (double)x[col[j]];
  y[row] = (float)sum;
}
