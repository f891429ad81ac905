// A 2-D kernel with #define parameters, declared by scale2d.yaml beside it.
extern "C" __global__ void scale2d(float* out, const float* in, int nx, int ny, float alpha) {
  const int x = blockIdx.x * block_size_x + threadIdx.x;
  const int y = blockIdx.y * block_size_y + threadIdx.y;
  if (x < nx && y < ny) out[y * nx + x] = alpha * in[y * nx + x];
}
