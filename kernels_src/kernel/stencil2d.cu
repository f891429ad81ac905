// A 5-point stencil on an nx x ny grid of floats (row-major, x fastest), written the way kernels
// for Kernel Tuner are: plain CUDA, no gpuk metadata, its tunables arriving as preprocessor
// names. Its declaration (arguments, grid, parameters) is stencil2d.yaml beside it.
//
//   out[y][x] = c0 * in[y][x] + c1 * (in[y][x-1] + in[y][x+1] + in[y-1][x] + in[y+1][x])
//
// with cells outside the grid read as 0. A block of block_size_x x block_size_y threads computes
// a tile of block_size_x columns and block_size_y * tile_size_y rows: it first copies the tile
// and a one-cell halo around it into shared memory (each input cell is then read from global
// memory about once, not five times), then each thread computes tile_size_y outputs, one every
// block_size_y rows. Sizes need not be multiples of the tile: loads outside the grid read 0 and
// stores outside it are skipped. Indices into the arrays are 64-bit.

#if !defined(block_size_x) || !defined(block_size_y) || !defined(tile_size_y)
#error "stencil2d.cu needs block_size_x, block_size_y and tile_size_y defined (-D name=value)"
#endif

#define tile_width (block_size_x + 2)
#define tile_height (block_size_y * tile_size_y + 2)

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
stencil2d(float* __restrict__ out, const float* __restrict__ in, int nx, int ny, float c0, float c1) {
  __shared__ float tile[tile_height][tile_width];
  const int x0 = blockIdx.x * block_size_x;                  // the tile's first column
  const int y0 = blockIdx.y * (block_size_y * tile_size_y);  // and first row

  // The tile and its halo: cell (tx, ty) of the tile is grid cell (x0 + tx - 1, y0 + ty - 1).
  for (int i = threadIdx.y * block_size_x + threadIdx.x; i < tile_width * tile_height;
       i += block_size_x * block_size_y) {
    const int tx = i % tile_width, ty = i / tile_width;
    const int x = x0 + tx - 1, y = y0 + ty - 1;
    tile[ty][tx] = (x >= 0 && x < nx && y >= 0 && y < ny) ? in[(long long)y * nx + x] : 0.0f;
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
