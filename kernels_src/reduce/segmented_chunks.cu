/* gpuk
family: reduce
operations: [max, min, sum, argmax, argmin]
summary: "Segmented (segments: N): every segment is cut into chunks of CHUNK elements; one small launch numbers the chunks (a scan of the segments' chunk counts), then a one-wave grid takes chunks from a queue, so a 1M-element segment is spread over many multiprocessors instead of one block. A segment's last chunk to finish combines its chunks' partials in order. For segments of about a thousand elements and more."
params:
  BLOCK: {default: 512, values: [128, 256, 512, 1024]}
  UNROLL: {default: 4, values: [1, 2, 4, 8]}
  BLOCKS_PER_SM: {default: 2, values: [1, 2, 4, 8]}
  CHUNK: {default: 262144, values: [8192, 16384, 32768, 65536, 131072, 262144, 524288]}
constraints:
  - BLOCK * BLOCKS_PER_SM <= 2048
  - BLOCK * UNROLL <= 8192
launch:
  - entry: reduce_segmented_plan
    grid: 1
    block: 1024
  - entry: reduce_segmented_chunks
    grid: sm_count * BLOCKS_PER_SM
    block: BLOCK
scratch: 0
*/

// The segmented contract (docs/kernels/reduce.md, "Segments and channels"): every entry takes
//   (in, begin, end, segments, out, scratch, capacity)
// where segment s is in[begin[s], end[s]) (empty when end <= begin), out[s] receives its Acc, the
// index of argmax/argmin relative to begin[s] (as cub::DeviceSegmentedReduce), and an empty
// segment gets R's empty answer (gpuk::segment_empty: CUB's identity value, index -1).
// `scratch` is the family's: 256 bytes of counters (zero between runs), then (segments + 1)
// chunk numbers, `segments` done-counters (zero between runs) and `capacity` partials.
//
// The defaults are gpuk tune's best of 36 (BLOCK 256/512, UNROLL 2/4/8, BLOCKS_PER_SM 2/4, CHUNK
// 64Ki/128Ki/256Ki) for argmax of 1,000 float32 segments of 1,024 to 1,048,576 elements on the
// H100: 0.835 ms, 1.30x cub::DeviceSegmentedReduce::ArgMax (docs/PERFORMANCE.md).
//
// Why chunks: with one block per segment (what CUB does) a 1M-element segment is read by one
// block at a few tens of GB/s while the rest of the GPU idles at the end. Chunks handed out in
// order keep every multiprocessor busy until the last CHUNK elements.
// The plan launch scans the segments' chunk counts with one block; when the chunks would not fit
// in `capacity` partials (segments that overlap: sum of lengths above n) it doubles the chunk.
// The chunk of item q is found by a 32-way search of the chunk numbers (two rounds for 1,000
// segments), by warp 0 while the block reads the item before. A segment with one chunk writes out directly; otherwise its chunks write partials
// and take a ticket on the segment's done-counter (atomicInc wraps it to 0 for the next run);
// the last combines the partials in chunk order, so sums do not depend on scheduling.

#include "gpuk/reduce.cuh"

namespace {

// Folds in[lo, hi) into this thread's accumulator, indices relative to `base`. Each thread sees
// its elements in increasing index order (head, 16-byte vectors tile by tile, tail), which is
// what R::accumulate's strict comparison needs to keep the lowest index.
template <class R, int BLOCK, int UNROLL>
__device__ __forceinline__ void block_range(typename R::Acc& acc, const typename R::T* __restrict__ in, gpuk::i64 lo,
                                            gpuk::i64 hi, gpuk::i64 base) {
  using T = typename R::T;
  constexpr int kVec = gpuk::Vec16<T>::kCount;
  // Elements before the first 16-byte boundary: whatever the caller's pointer and offsets.
  const gpuk::i64 misaligned = static_cast<gpuk::i64>((reinterpret_cast<unsigned long long>(in + lo) & 15) / sizeof(T));
  gpuk::i64 a = lo + (misaligned ? kVec - misaligned : 0);
  if (a > hi) a = hi;
  if (lo + threadIdx.x < a) R::accumulate(acc, in[lo + threadIdx.x], lo + threadIdx.x - base);
  const gpuk::i64 vectors = (hi - a) / kVec;
  constexpr gpuk::i64 kTile = gpuk::i64(BLOCK) * UNROLL;  // vectors
  gpuk::i64 v0 = 0;
  for (; v0 + kTile <= vectors; v0 += kTile) {
    gpuk::Vec16<T> v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = gpuk::load_vec16(in + a + (v0 + u * BLOCK + threadIdx.x) * kVec);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int j = 0; j < kVec; ++j) R::accumulate(acc, v[u].v[j], a + (v0 + u * BLOCK + threadIdx.x) * kVec + j - base);
  }
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const gpuk::i64 vi = v0 + u * BLOCK + threadIdx.x;
    if (vi < vectors) {
      const gpuk::Vec16<T> v = gpuk::load_vec16(in + a + vi * kVec);
#pragma unroll
      for (int j = 0; j < kVec; ++j) R::accumulate(acc, v.v[j], a + vi * kVec + j - base);
    }
  }
  const gpuk::i64 tail = a + vectors * kVec;
  if (tail + threadIdx.x < hi) R::accumulate(acc, in[tail + threadIdx.x], tail + threadIdx.x - base);
}

struct ChunkScratch {
  unsigned* queue;      // next item
  unsigned* ticket;     // blocks done (the last resets the queue)
  gpuk::i64* chunk;     // [0]: chunk length of this run; then first[s], s = 0..segments
  gpuk::i64* first;     // first item of segment s; first[segments] = items
  unsigned* done;       // per segment
  unsigned char* partials;
};

__device__ __forceinline__ ChunkScratch carve(unsigned char* scratch, gpuk::i64 segments) {
  ChunkScratch c;
  c.queue = reinterpret_cast<unsigned*>(scratch);
  c.ticket = c.queue + 1;
  c.chunk = reinterpret_cast<gpuk::i64*>(scratch + 8);
  c.first = reinterpret_cast<gpuk::i64*>(scratch + 256);
  c.done = reinterpret_cast<unsigned*>(c.first + segments + 1);
  const unsigned long long p = reinterpret_cast<unsigned long long>(c.done + segments);
  c.partials = reinterpret_cast<unsigned char*>((p + 15) & ~15ull);
  return c;
}

__device__ __forceinline__ gpuk::i64 chunks_of(gpuk::i64 len, gpuk::i64 chunk) { return len > 0 ? (len + chunk - 1) / chunk : 0; }

}  // namespace

// One block of 1024 threads: the chunk numbers (an exclusive scan of the chunk counts), and the
// empty segments' answers.
template <class R, int BLOCK, int UNROLL, int BLOCKS_PER_SM, int CHUNK>
__global__ void __launch_bounds__(1024)
reduce_segmented_plan(const typename R::T* __restrict__ /*in*/, const gpuk::i64* __restrict__ begin,
                      const gpuk::i64* __restrict__ end, gpuk::i64 segments, typename R::Acc* out,
                      unsigned char* scratch, gpuk::i64 capacity) {
  __shared__ gpuk::i64 warp_sums[32];
  __shared__ gpuk::i64 carry;
  __shared__ gpuk::i64 chunk;
  const ChunkScratch c = carve(scratch, segments);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) chunk = CHUNK;
  for (;;) {  // at most 40 rounds: with chunk >= every length, items <= segments <= capacity
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    const gpuk::i64 ch = chunk;
    for (gpuk::i64 s0 = 0; s0 < segments; s0 += 1024) {
      const gpuk::i64 s = s0 + threadIdx.x;
      gpuk::i64 k = 0;
      if (s < segments) k = chunks_of(end[s] - begin[s], ch);
      gpuk::i64 x = k;  // inclusive scan in the warp, then over the warps
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const gpuk::i64 y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
      }
      if (lane == 31) warp_sums[warp] = x;
      __syncthreads();
      if (warp == 0) {
        gpuk::i64 w = warp_sums[lane];
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
          const gpuk::i64 y = __shfl_up_sync(0xffffffffu, w, d);
          if (lane >= d) w += y;
        }
        warp_sums[lane] = w;
      }
      __syncthreads();
      const gpuk::i64 before = carry + (warp ? warp_sums[warp - 1] : 0) + x - k;
      if (s < segments) c.first[s] = before;
      __syncthreads();
      if (threadIdx.x == 1023) carry = before + k;
      __syncthreads();
    }
    if (carry <= capacity) break;
    __syncthreads();
    if (threadIdx.x == 0) chunk = ch * 2;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    c.first[segments] = carry;
    *c.chunk = chunk;
  }
  for (gpuk::i64 s = threadIdx.x; s < segments; s += 1024)
    if (end[s] <= begin[s]) out[s] = gpuk::segment_empty<R>();
}

// Warp 0 takes the next item from the queue and finds its segment: the last segment whose first
// item is <= q, by a 32-way search of the chunk numbers (one load per round). Segment -1: none left.
__device__ __forceinline__ void take_item(const ChunkScratch& c, gpuk::i64 segments, gpuk::i64 items,
                                          gpuk::i64* item_segment, gpuk::i64* item_index) {
  const int lane = threadIdx.x & 31;
  gpuk::i64 q = 0;
  if (lane == 0) q = atomicAdd(c.queue, 1u);
  q = __shfl_sync(0xffffffffu, q, 0);
  gpuk::i64 s = -1;
  if (q < items) {
    gpuk::i64 lo = 0, hi = segments;  // first[lo] <= q < first[hi]
    while (hi - lo > 1) {
      const gpuk::i64 step = (hi - lo + 31) / 32;
      const gpuk::i64 p = lo + lane * step;
      const bool le = p < hi && __ldcg(c.first + p) <= q;
      const int count = __popc(__ballot_sync(0xffffffffu, le));
      lo = lo + (count - 1) * step;
      const gpuk::i64 next = lo + step;
      hi = next < hi ? next : hi;
    }
    s = lo;
  }
  if (lane == 0) {
    *item_segment = s;
    *item_index = q;
  }
}

// A one-wave grid: each block takes items from the queue until there are none. Warp 0 takes the
// next item while the block reads the current one, so the queue's atomic and the search cost
// no time of their own (two slots, swapped at the barrier that ends an item).
template <class R, int BLOCK, int UNROLL, int BLOCKS_PER_SM, int CHUNK>
__global__ void __launch_bounds__(BLOCK, 1)
reduce_segmented_chunks(const typename R::T* __restrict__ in, const gpuk::i64* __restrict__ begin,
                        const gpuk::i64* __restrict__ end, gpuk::i64 segments, typename R::Acc* out,
                        unsigned char* scratch, gpuk::i64 /*capacity*/) {
  using Acc = typename R::Acc;
  __shared__ Acc shared_acc[BLOCK / 32];
  __shared__ gpuk::i64 item_segment[2], item_index[2];
  __shared__ bool is_last;
  const ChunkScratch c = carve(scratch, segments);
  Acc* partials = reinterpret_cast<Acc*>(c.partials);
  const gpuk::i64 items = c.first[segments];
  const gpuk::i64 chunk = *c.chunk;

  int slot = 0;
  if (threadIdx.x < 32) take_item(c, segments, items, &item_segment[0], &item_index[0]);
  __syncthreads();
  for (;;) {
    const gpuk::i64 s = item_segment[slot], q = item_index[slot];
    if (s < 0) break;
    if (threadIdx.x < 32) take_item(c, segments, items, &item_segment[slot ^ 1], &item_index[slot ^ 1]);

    const gpuk::i64 b = begin[s], e = end[s];
    const gpuk::i64 first = c.first[s], count = c.first[s + 1] - first;
    const gpuk::i64 lo = b + (q - first) * chunk;
    const gpuk::i64 hi = lo + chunk < e ? lo + chunk : e;
    Acc acc = R::identity();
    block_range<R, BLOCK, UNROLL>(acc, in, lo, hi, b);
    acc = gpuk::block_reduce<R, BLOCK>(acc, shared_acc);
    if (count == 1) {
      if (threadIdx.x == 0) out[s] = acc;
    } else {
      if (threadIdx.x == 0) {
        partials[q] = acc;
        is_last = gpuk::ticket_acq_rel(c.done + s, static_cast<unsigned>(count - 1)) == count - 1;
      }
      __syncthreads();
      if (is_last) {  // thread 0's acquire, then the barrier: every partial of s is visible
        acc = R::identity();
        for (gpuk::i64 p = threadIdx.x; p < count; p += BLOCK) acc = R::combine(acc, gpuk::load_cg(partials + first + p));
        acc = gpuk::block_reduce<R, BLOCK>(acc, shared_acc);
        if (threadIdx.x == 0) out[s] = acc;
      }
    }
    __syncthreads();  // the next item is in its slot; this one's slot, shared_acc and is_last are free
    slot ^= 1;
  }
  // Every block has left the loop when the last one gets its ticket: it resets the queue.
  if (threadIdx.x == 0 && gpuk::ticket_acq_rel(c.ticket, gridDim.x - 1) == gridDim.x - 1) atomicExch(c.queue, 0u);
}
