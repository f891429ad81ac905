/* gpuk
family: search
operations: [find, any, count]
dtypes: [int32, uint32, int64, float32, float64]
summary: The write-up's "unrolled coalesced N search", unrolled for real. Thread t of m reads t, t + m, ..., t + (K - 1) m; K is a template constant, so `#pragma unroll` flattens the loop and the K loads can be in flight together. A warp offers its lowest match to one atomicMin (its count to one atomicAdd); a second, one-thread launch writes the result and resets the state.
fixes: In the original the trip count numToCheck was a run-time argument, so `#pragma unroll` could not unroll anything (the "unrolled" kernel was the coalesced one); here K is a template parameter. Also as in coalesced.cu - m independent of the launch, the last racer's index instead of the lowest, foundIndex never initialised, int indices.
params:
  K: {default: 8, range: [1, 64]}
  BLOCK: {default: 256, values: [32, 64, 128, 256, 512, 1024]}
launch:
  - entry: search_coalesced_unrolled
    grid: ceil_div(n, BLOCK * K)
    block: BLOCK
  - entry: search_coalesced_unrolled_finish
    grid: 1
    block: 32
*/

// No `break` in the loop: an exit after a match would make each load depend on the previous
// compare and serialise them again. Instead every element is compared and the thread keeps its
// first (lowest) match.

#include "gpuk/search.cuh"

template <class S, int K, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
search_coalesced_unrolled(const typename S::T* __restrict__ in, gpuk::i64 n, typename S::Value value, gpuk::i64* out,
                          gpuk::SearchState* state) {
  const gpuk::i64 m = gpuk::i64(gridDim.x) * BLOCK;
  const gpuk::i64 t = gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x;
  gpuk::i64 found = gpuk::kNoIndex;
  gpuk::u64 count = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const gpuk::i64 i = t + k * m;
    const bool hit = i < n && S::match(in[i], value);
    if constexpr (S::kCount) count += hit ? 1 : 0;
    else if (hit && found == gpuk::kNoIndex) found = i;
  }
  if constexpr (S::kCount) gpuk::commit_count(state, count);
  else gpuk::commit_index(state, found);
}

template <class S, int K, int BLOCK>
__global__ void search_coalesced_unrolled_finish(const typename S::T* __restrict__, gpuk::i64, typename S::T,
                                                 gpuk::i64* out, gpuk::SearchState* state) {
  if (threadIdx.x == 0) gpuk::finish<S>(out, state);
}
