/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: The VecMax write-up. GRID blocks reduce grid-stride slices, then halve a shared-memory array (ib /= 2, a barrier per step) to one partial per block; a second launch of one block does the same over the GRID partials (the write-up finished on the CPU).
fixes: The original started each thread at RAND_MIN (not a standard macro; where defined it is 0, wrong for all-negative data), had no index (an int one would overflow past 2^31), no NaN or tie rule, and silently needed a power-of-two block (now a constraint).
params:
  BLOCK: {default: 256, values: [32, 64, 128, 256, 512, 1024]}
  GRID: {default: 512, values: [4, 16, 32, 64, 128, 256, 512, 1024, 2048]}
constraints:
  - BLOCK <= 1024 && 1024 % BLOCK == 0
launch:
  - entry: reduce_vecmax_tree
    grid: GRID
    block: BLOCK
  - entry: reduce_vecmax_tree_finish
    grid: 1
    block: BLOCK
scratch: GRID
*/
template <class R, int BLOCK> __global__ void k() {}
