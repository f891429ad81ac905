/* gpuk
family: search
operations: [find, any, count]
dtypes: [int32, uint32, int64, float32, float64]
summary: The write-up's "strided N search". Thread t scans its K adjacent elements [t*K, t*K + K) and stops at its first match; a warp offers its lowest match to one atomicMin (its count to one atomicAdd); a second, one-thread launch writes the result and resets the state.
fixes: The original let every matching thread overwrite foundIndex (the last racer won, not the lowest index), never initialised foundIndex (so "not found" could not be told apart), and computed tid * offset + k in int (overflow past 2^31 elements). Kept as the write-up had it otherwise, with uncoalesced loads (lanes K elements apart), to measure what that costs.
params:
  K: {default: 8, range: [1, 64]}
  BLOCK: {default: 256, values: [32, 64, 128, 256, 512, 1024]}
launch:
  - entry: search_strided
    grid: ceil_div(n, BLOCK * K)
    block: BLOCK
  - entry: search_strided_finish
    grid: 1
    block: 32
*/

// A thread's elements are adjacent and visited in increasing order, so its first match is its
// lowest one; lanes are in index order too, so the warp's minimum is its lowest match.

#include "gpuk/search.cuh"

template <class S, int K, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
search_strided(const typename S::T* __restrict__ in, gpuk::i64 n, typename S::Value value, gpuk::i64* out,
               gpuk::SearchState* state) {
  const gpuk::i64 first = (gpuk::i64(blockIdx.x) * BLOCK + threadIdx.x) * K;
  gpuk::i64 found = gpuk::kNoIndex;
  gpuk::u64 count = 0;
  for (int k = 0; k < K; ++k) {
    const gpuk::i64 i = first + k;
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
__global__ void search_strided_finish(const typename S::T* __restrict__, gpuk::i64, typename S::T,
                                      gpuk::i64* out, gpuk::SearchState* state) {
  if (threadIdx.x == 0) gpuk::finish<S>(out, state);
}
