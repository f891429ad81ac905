/* gpuk
family: search
operations: [find, any, count]
dtypes: [int32, uint32, int64, float32, float64]
summary: The write-up's "coalesced N search". With m threads in the grid, thread t reads t, t + m, t + 2m, ... (K elements), so a warp reads 32 adjacent elements per step; it stops at its first match. A warp offers its lowest match to one atomicMin (its count to one atomicAdd); a second, one-thread launch writes the result and resets the state.
fixes: The original took the thread count m (numOfThreads) as an argument independent of the launch (a mismatch skipped or re-read elements; here m is gridDim.x * BLOCK and the grid covers n), let every matching thread overwrite foundIndex (the last racer won, not the lowest index), never initialised foundIndex, and used int indices. The loop is kept rolled (`#pragma unroll 1`), as the original's run-time bound made it.
params:
  K: {default: 8, range: [1, 64]}
  BLOCK: {default: 256, values: [32, 64, 128, 256, 512, 1024]}
launch:
  - entry: search_coalesced
    grid: ceil_div(n, BLOCK * K)
    block: BLOCK
  - entry: search_coalesced_finish
    grid: 1
    block: 32
*/

// A thread visits its elements in increasing index order, so its first match is its lowest; the
// warp's minimum over lanes is then the warp's lowest match.

#include "gpuk/search.cuh"

template <class S, int K, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
search_coalesced(const typename S::T* __restrict__ in, gpuk::i64 n, typename S::Value value, gpuk::i64* out,
                 gpuk::SearchState* state) {
  const gpuk::i64 m = gpuk::i64(gridDim.x) * BLOCK;
  const gpuk::i64 t = gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x;
  gpuk::i64 found = gpuk::kNoIndex;
  gpuk::u64 count = 0;
#pragma unroll 1
  for (int k = 0; k < K; ++k) {
    const gpuk::i64 i = t + k * m;
    if (i >= n) break;
    if (S::match(in[i], value)) {
      if constexpr (S::kCount) {
        ++count;
      } else {
        found = i;
        break;
      }
    }
  }
  if constexpr (S::kCount) gpuk::commit_count(state, count);
  else gpuk::commit_index(state, found);
}

template <class S, int K, int BLOCK>
__global__ void search_coalesced_finish(const typename S::T* __restrict__, gpuk::i64, typename S::T,
                                        gpuk::i64* out, gpuk::SearchState* state) {
  if (threadIdx.x == 0) gpuk::finish<S>(out, state);
}
