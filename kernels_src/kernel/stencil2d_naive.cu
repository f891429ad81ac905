// The reference for stencil2d.cu: the same 5-point stencil, one thread per output, every
// neighbour read straight from global memory. Simple enough to trust; its declaration,
// stencil2d_naive.yaml, gives it the same arguments as stencil2d.
//
//   out[y][x] = c0 * in[y][x] + c1 * (in[y][x-1] + in[y][x+1] + in[y-1][x] + in[y+1][x]),
//   cells outside the grid read as 0.

extern "C" __global__ void stencil2d_naive(float* __restrict__ out, const float* __restrict__ in, int nx, int ny,
                                           float c0, float c1) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  const long long i = (long long)y * nx + x;
  const float west = x > 0 ? in[i - 1] : 0.0f;
  const float east = x + 1 < nx ? in[i + 1] : 0.0f;
  const float north = y > 0 ? in[i - nx] : 0.0f;
  const float south = y + 1 < ny ? in[i + nx] : 0.0f;
  out[i] = c0 * in[i] + c1 * (west + east + north + south);
}
