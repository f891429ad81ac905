// scale2d with an off-by-one: the last column of each row is read from the next row.
extern "C" __global__ void scale2d_wrong(float* out, const float* in, int nx, int ny, float alpha) {
  const int x = blockIdx.x * block_size_x + threadIdx.x;
  const int y = blockIdx.y * block_size_y + threadIdx.y;
  if (x < nx && y < ny) out[y * nx + x] = alpha * in[y * nx + x + (x == nx - 1 ? 1 : 0) * (y + 1 < ny)];
}
