// The steps of a onesweep radix sort's digit pass that radix.cu's radix_pass and onesweep.cu's
// onesweep_pass share: the pass's shared memory, taking a tile, and the values' striped load.
// The tile's count scan and the decoupled look-back stay written out in each kernel: as shared
// __forceinline__ functions they compiled (NVRTC 13.0, sm_90) to other instruction orders in many
// variants, and the kernels' measured times rest on their SASS as it is. Moving code into or out
// of a kernel: compare the SASS of every shipped variant before and after (tools/dev/sass_diff.py).
#pragma once
#include "gpuk/sort.cuh"

namespace gpuk {

// A pass's shared memory after its exchange buffer (BLOCK / 32 warps, RADIX digits).
template <int BLOCK, int RADIX>
struct PassShared {
  u32 warp_offset[BLOCK / 32][RADIX];
  u32 offset[RADIX];  // output index of tile position i with digit d: offset[d] + i
  u32 scan_tmp[8];
  u32 tile;
};

// Takes this block's tile of pass a.pass (blocks take tiles in the order they start, so a block
// only waits on tiles already held by running blocks), reads digit t's base (t < RADIX, else
// 0) into `base` and zeroes the per-warp counts. Ends with a barrier; returns the tile.
template <class S, int BLOCK, int RADIX>
__device__ __forceinline__ u32 take_tile(const SortArgs<S>& a, const u32* bases, PassShared<BLOCK, RADIX>& ps,
                                         u32& base) {
  const int t = threadIdx.x, pass = a.pass;
  if (t == 0) ps.tile = atomicAdd(&a.scratch[pass], 1u);
  base = 0;
  if (t < RADIX) base = __ldcg(bases + pass * RADIX + t);
  for (int i = t; i < (BLOCK / 32) * RADIX; i += BLOCK) (&ps.warp_offset[0][0])[i] = 0;
  __syncthreads();
  return ps.tile;
}

// Items of the warp-striped tile that start at tile_begin with `valid` elements: value[k] =
// values[tile_begin + striped_index(k)] where that is below valid (the others are left).
template <class S, int ITEMS>
__device__ __forceinline__ void load_striped_values(const typename S::V* values, i64 tile_begin, int valid,
                                                    typename S::V (&value)[ITEMS]) {
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int e = striped_index<ITEMS>(k);
    if (e < valid) value[k] = S::value_at(values, tile_begin + e);
  }
}

}  // namespace gpuk
