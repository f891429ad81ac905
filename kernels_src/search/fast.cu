/* gpuk
family: search
operations: [find, any, count, find_if]
dtypes: [int32, uint32, int64, float32, float64]
summary: Built for HBM, in one launch. A grid sized to the GPU strides over tiles of BLOCK * UNROLL 16-byte vectors, UNROLL loads in flight per thread. A match goes to one atomicMin per warp on a "best so far" index that every warp polls once every POLL tiles, so find stops at the first tile past the best match (any at the first match) and still returns the lowest index. The last block to finish writes the result.
fixes: Not one of the write-up's kernels; it fixes what all four leave on the table - 4-byte loads one at a time (here 16-byte vectors, several in flight), a grid that grows with n (here one wave that strides over tiles), and scanning all n after the answer is known (here an early exit).
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  UNROLL: {default: 4, values: [1, 2, 4, 8]}
  BLOCKS_PER_SM: {default: 4, values: [1, 2, 4, 8]}
  POLL: {default: 4, values: [1, 2, 4, 8]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
launch:
  - entry: search_fast
    grid: min(ceil_div(n, BLOCK * UNROLL * vec), sm_count * BLOCKS_PER_SM)
    block: BLOCK
*/

// Why it is shaped like this:
// - Bandwidth. Each thread issues its UNROLL 16-byte loads before it compares anything; with
//   the defaults that is 64 KiB in flight per multiprocessor. The grid is at most one wave and
//   strides over the tiles, so it does not grow with n.
// - Early exit. A warp polls state->best once every POLL tiles (warps staggered, so that the
//   polls of the whole grid, all to one address, spread out in time: polling every tile cost
//   about 5% of the full scan on the H100), with a volatile load issued together with the
//   tile's loads and read after the compares, so the poll costs no latency of its own. The
//   decision uses old news, which only means a few tiles more of work, never a wrong answer:
//   best only ever goes down during a run, and a block stops only at a tile whose first index
//   is at or above it (find; any stops at any match). Lane 0's value is broadcast, so the whole
//   warp leaves the loop together (commit_index votes over all 32 lanes). A warp's own match
//   counts at once: where every element matches, a warp stops after its first tile instead of
//   offering a match per tile until its next poll.
// - Lowest index. Vector u of thread t in a tile holds elements tile + (u * BLOCK + t) * vec
//   + [0, vec). A thread's first match in (u, element) order is its lowest in the tile; the warp
//   takes the minimum over lanes, and atomicMin over warps and blocks. Whatever the scheduling,
//   no tile below the final best is skipped, so the minimum is the lowest match.
// - Matches are rare, so the common path per tile is compares, an OR and one warp vote; the
//   lowest index is only worked out in the warp that has a match.
// - The partial last tile reads element by element past the last whole vector; every lane
//   still votes.
// - Finishing. The last block to take a ticket writes out and resets the state
//   (gpuk::finish_if_last_block), so one launch does everything.
// `in` must be 16-byte aligned (cudaMalloc gives 256).

#include "gpuk/search.cuh"

template <class S, int BLOCK, int UNROLL>
__device__ __forceinline__ void load_partial_tile(gpuk::Vec16<typename S::T> (&v)[UNROLL],
                                                  const typename S::T* __restrict__ in, gpuk::i64 start,
                                                  gpuk::i64 n) {
  using T = typename S::T;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const gpuk::i64 first = start + gpuk::i64(u * BLOCK + threadIdx.x) * kVec;
    if (first + kVec <= n) {
      v[u] = gpuk::load_vec16(in + first);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) v[u].v[j] = first + j < n ? in[first + j] : T(0);
    }
  }
}

template <class S, int BLOCK, int UNROLL, int BLOCKS_PER_SM, int POLL>
__global__ void __launch_bounds__(BLOCK, 1)
search_fast(const typename S::T* __restrict__ in, gpuk::i64 n, typename S::Value value, gpuk::i64* out,
            gpuk::SearchState* state) {
  using T = typename S::T;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * UNROLL * kVec;
  const gpuk::i64 whole_tiles = n / kTile;
  const gpuk::i64 tiles = gpuk::ceil_div(n, kTile);

  gpuk::u64 count = 0;
  gpuk::i64 best = gpuk::kNoIndex;  // the last poll of state->best, the same in every lane
  unsigned step = threadIdx.x / 32;  // staggers the warps' polls
  for (gpuk::i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x, ++step) {
    const gpuk::i64 start = tile * kTile;
    if (S::done_before(best, start)) break;
    gpuk::i64 polled = best;
    if constexpr (!S::kCount)
      if (step % POLL == 0) polled = gpuk::poll_best(state);  // warp-uniform branch

    gpuk::Vec16<T> v[UNROLL];
    const bool partial = tile >= whole_tiles;
    if (!partial) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) v[u] = gpuk::load_vec16(in + start + gpuk::i64(u * BLOCK + threadIdx.x) * kVec);
    } else {
      load_partial_tile<S, BLOCK, UNROLL>(v, in, start, n);
    }

    // Element j of vector u is at start + (u * BLOCK + threadIdx.x) * kVec + j; in the partial
    // tile only those below n count.
    const auto index = [&](int u, int j) { return start + gpuk::i64(u * BLOCK + threadIdx.x) * kVec + j; };
    if constexpr (S::kCount) {
      unsigned tile_count = 0;
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int j = 0; j < kVec; ++j) tile_count += (S::match(v[u].v[j], value) && (!partial || index(u, j) < n)) ? 1u : 0u;
      count += tile_count;
    } else {
      gpuk::i64 mine = gpuk::kNoIndex;  // the warp's lowest match in this tile
      bool hit = false;
#pragma unroll
      for (int u = 0; u < UNROLL; ++u)
#pragma unroll
        for (int j = 0; j < kVec; ++j) hit |= S::match(v[u].v[j], value) && (!partial || index(u, j) < n);
      if (__any_sync(0xffffffffu, hit)) {  // rare: work out the lowest match and offer it
        gpuk::i64 found = gpuk::kNoIndex;
#pragma unroll
        for (int u = UNROLL - 1; u >= 0; --u)  // backwards, so the lowest match is written last
#pragma unroll
          for (int j = kVec - 1; j >= 0; --j)
            if (S::match(v[u].v[j], value) && (!partial || index(u, j) < n)) found = index(u, j);
        mine = gpuk::commit_index(state, found);
      }
      best = __shfl_sync(0xffffffffu, polled, 0);
      if (mine < best) best = mine;  // its own match: no tile past it is needed (warp-uniform)
    }
  }

  if constexpr (S::kCount) gpuk::commit_count(state, count);
  gpuk::finish_if_last_block<S>(out, state);
}
