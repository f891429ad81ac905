/* gpuk
family: sort
operations: [sort, sort_pairs, argsort]
summary: One launch, one block. The block holds up to BLOCK * ITEMS keys in registers and sorts them with ceil(key bits / RADIX_BITS) stable digit passes, each ranked with warp ballots and per-warp digit counters in shared memory, then writes keys (and values) out coalesced. For small arrays (a few thousand keys), where a multi-launch sort is all launch latency.
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  ITEMS: {default: 16, values: [1, 2, 4, 8, 12, 16]}
  RADIX_BITS: {default: 8, values: [4, 5, 6, 7, 8]}
constraints:
  - BLOCK >= pow2(RADIX_BITS)
  - n <= BLOCK * ITEMS
launch:
  - entry: radix_block
    grid: 1
    block: BLOCK
    shared: BLOCK * ITEMS * 8 + (BLOCK / 32 + 2) * pow2(RADIX_BITS) * 4 + 32
*/

// Why it is shaped like this:
// - One launch. Below a few thousand keys a device-wide radix sort is launch latency (a
//   histogram launch and one launch per digit pass); one block does it all in shared memory.
// - Stability. Items are kept warp-striped (item k of lane l of warp w is tile element
//   w * 32 * ITEMS + k * 32 + l), so walking a warp's items in k order, lanes in order, then the
//   warps in order is element order; gpuk::BlockRank ranks in exactly that order.
// - Elements past n take the largest digit in every pass, so they stay behind the real ones and
//   are never written.
// - Shared memory: one exchange buffer of 8 bytes per element (keys, then values, reuse it) and
//   the per-warp digit counters; the constraint n <= BLOCK * ITEMS refuses larger arrays.

#include "gpuk/sort.cuh"

template <class S, int BLOCK, int ITEMS, int RADIX_BITS>
__global__ void __launch_bounds__(BLOCK, 1) radix_block(gpuk::SortArgs<S> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  gpuk::block_radix_sort<S, BLOCK, ITEMS, RADIX_BITS>(a, smem);
}
