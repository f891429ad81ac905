// A test kernel for gpuk's verification (tests/gpu), not a stencil to use: stencil2d.cu with an
// off-by-one in its halo. The bounds check of the tile's loads stops one cell short of the grid's
// right edge (x < nx - 1), so the last column reads as 0: a verified run fails, and the first bad
// output is cell (nx - 2, 0), index nx - 2, whose east neighbour is that column. Its declaration
// is stencil2d_halo_bug.yaml beside it (stencil2d's, with this entry).

#if !defined(block_size_x) || !defined(block_size_y) || !defined(tile_size_y)
#error "stencil2d_halo_bug.cu needs block_size_x, block_size_y and tile_size_y defined (-D name=value)"
#endif

#define tile_width (block_size_x + 2)
#define tile_height (block_size_y * tile_size_y + 2)

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
stencil2d_halo_bug(float* __restrict__ out, const float* __restrict__ in, int nx, int ny, float c0, float c1) {
  __shared__ float tile[tile_height][tile_width];
  const int x0 = blockIdx.x * block_size_x;                  // the tile's first column
  const int y0 = blockIdx.y * (block_size_y * tile_size_y);  // and first row

  // The tile and its halo: cell (tx, ty) of the tile is grid cell (x0 + tx - 1, y0 + ty - 1).
  for (int i = threadIdx.y * block_size_x + threadIdx.x; i < tile_width * tile_height;
       i += block_size_x * block_size_y) {
    const int tx = i % tile_width, ty = i / tile_width;
    const int x = x0 + tx - 1, y = y0 + ty - 1;
    tile[ty][tx] = (x >= 0 && x < nx - 1 && y >= 0 && y < ny) ? in[(long long)y * nx + x] : 0.0f;  // the bug: x < nx
  }
  __syncthreads();

  const int tx = threadIdx.x + 1;
  const int x = x0 + threadIdx.x;
  if (x >= nx) return;  // after the barrier: every thread helped to load
#pragma unroll
  for (int j = 0; j < tile_size_y; ++j) {
    const int ty = threadIdx.y + j * block_size_y + 1;
    const int y = y0 + ty - 1;
    if (y < ny)
      out[(long long)y * nx + x] =
          c0 * tile[ty][tx] + c1 * (tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] + tile[ty + 1][tx]);
  }
}
