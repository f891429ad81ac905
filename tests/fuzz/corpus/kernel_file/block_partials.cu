/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: Two launches. GRID blocks reduce grid-stride slices (warp shuffles, then across warps) to one partial each; one block then combines the GRID partials.
fixes: The original strode by blockDim.x from blockIdx.x * blockDim.x, so block b read every element from b * blockDim.x on (the blocks' ranges overlapped and the work grew with the grid); it initialised the maxima to 0, kept int indices, wrote the index of whichever equal maximum raced last, ignored NaN, and left the per-block results for the host to finish.
params:
  BLOCK: {default: 256, values: [64, 128, 256, 512, 1024]}
  GRID: {default: 512, values: [32, 64, 128, 256, 512, 1024, 2048]}
launch:
  - entry: reduce_block_partials
    grid: GRID
    block: BLOCK
  - entry: reduce_block_partials_finish
    grid: 1
    block: BLOCK
scratch: GRID
*/
template <class R, int BLOCK> __global__ void k() {}
