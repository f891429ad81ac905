/* gpuk
family: search
operations: [find, any, count]
dtypes: [int32, uint32, int64, float32, float64]
summary: One thread per element (the write-up's "full coalesced" search). Each warp offers its lowest match to one atomicMin (its count to one atomicAdd); a second, one-thread launch writes the result and resets the state.
fixes: The original read array[tid] with no bounds check (past the end whenever n is not a multiple of the block), let every matching thread overwrite foundIndex (the last racer won, not the lowest index), never initialised foundIndex (so "not found" could not be told apart), and used int indices.
params:
  BLOCK: {default: 256, values: [32, 64, 128, 256, 512, 1024]}
launch:
  - entry: search_per_element
    grid: ceil_div(n, BLOCK)
    block: BLOCK
  - entry: search_per_element_finish
    grid: 1
    block: 32
*/

// Threads past n load nothing but still take part in the warp's vote (commit_index needs all 32
// lanes). No early exit: every element is one thread, so there is no later work to skip.

#include "gpuk/search.cuh"

template <class S, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
search_per_element(const typename S::T* __restrict__ in, gpuk::i64 n, typename S::Value value, gpuk::i64* out,
                   gpuk::SearchState* state) {
  const gpuk::i64 i = gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x;
  const bool hit = i < n && S::match(in[i], value);
  if constexpr (S::kCount) gpuk::commit_count(state, hit ? 1 : 0);
  else gpuk::commit_index(state, hit ? i : gpuk::kNoIndex);
}

template <class S, int BLOCK>
__global__ void search_per_element_finish(const typename S::T* __restrict__, gpuk::i64, typename S::T,
                                          gpuk::i64* out, gpuk::SearchState* state) {
  if (threadIdx.x == 0) gpuk::finish<S>(out, state);
}
