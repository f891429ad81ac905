/* gpuk
family: sort
operations: [topk]
summary: Top-k with one block per row, in one launch (two when sorted; k = the row's length is a copy, in a launch of its own). A row of up to ROW_KEYS keys is loaded into shared memory once (its first digit counted on the way); the radix-select digit passes then read shared memory, count in a shared histogram (one atomic per distinct digit of a warp), pick the k-th key's digit with one block scan and stop once its bucket is decided; one more pass writes the k in input order (ties by the lower index) by warp ballots and block scans. Rows are read 16 bytes at a time (vectors of 4 or 2 keys) where their addresses and lengths allow. Longer rows are read from global memory in every pass instead. With sorted output a second launch sorts each row's k by (bits, index) in shared memory. k = 1 (a block min-reduction of (bits, index), one read) and k = the row's length (the copy) take no digit pass; nor does k <= 32 with the row in shared memory (up to 256 threads) while the keys at most the k-th smallest of the threads' minima fit one a thread (an exact selection among those candidates; else the digit passes go on over the loaded row).
params:
  BLOCK: {default: 256, values: [128, 256, 512, 1024]}
  ITEMS: {default: 8, values: [1, 2, 4, 8, 16]}
  RADIX_BITS: {default: 8, values: [5, 6, 7, 8, 9, 10, 11]}
  ROW_KEYS: {default: 8192, values: [1024, 2048, 4096, 8192, 16384, 32768]}
  WAVES: {default: 8, values: [1, 2, 4, 8, 16]}
  MATCH: {default: 1, values: [0, 1]}
constraints:
  - ITEMS * BLOCK / 32 <= BLOCK
  - ROW_KEYS * elem_bytes <= 131072
launch:
  - entry: topk_rows
    grid: min(sm_count * WAVES, n)
    block: BLOCK
    shared: ROW_KEYS * elem_bytes
  - entry: topk_copy_rows
    grid: min(sm_count * WAVES, n)
    block: BLOCK
  - entry: topk_sort_rows
    grid: min(sm_count * WAVES, n)
    block: BLOCK
    shared: 4096 * (elem_bytes + 4)
*/

// Why it is shaped like this (docs/kernels/sort.md, "Top-k"):
// - topk_radix.cu spreads a row over many blocks and hands each digit pass over between launches
//   (a launch per pass, the row's histogram in global memory, the last block to arrive picking the
//   digit). A batch of rows that each fit one block needs none of that: one block owns a row (a
//   grid-stride over the rows), keeps it in shared memory, and every pass, scan and decision is
//   block-local. One launch, no scratch, no global atomics.
// - The same selection as topk_radix: the k smallest S::bits (the descending flip, the float order
//   and a bit window are all in S::bits), found digit by digit from the top; after a pass the
//   block knows the k-th key's top bits (`prefix`) and how many of the keys sharing them are
//   among the k (`k_rem`); a bucket holding exactly k_rem keys is decided and ends the passes.
//   Then one pass writes the keys below the prefix and the first k_rem equal to it, in input
//   order, positions from warp ballots and a block scan per tile (no atomic decides a place).
// - A row's read from global memory into the block (pass 0, k = 1, the small-k path) is by 16-byte
//   vectors of 4 keys for 4-byte keys where every row's address and length allow it (kRowsVector;
//   else, and for 8-byte keys, a key an access; passes over shared memory read keys): ITEMS keys a
//   thread a tile as ITEMS / 4 vectors, so that the registers stay those of ITEMS keys. The copy
//   (topk_copy_rows) reads and writes vectors of 16 bytes for every key width. (ITEMS vectors a thread, 32
//   float32 keys in flight, took 80 registers against 64 at 128 threads: 6 blocks an SM instead of
//   8, and 1024 rows ran in two rounds; k = 4096 took 0.037 ms against 0.025, H200, 2026-12-03.)
// - k >= the row's length is a copy, in a launch of its own (topk_copy_rows; the launcher runs it
//   instead of topk_rows there): its few registers let every row of a batch run at once.
// - Shared memory holds the row's keys themselves (not their bits): the bits are recomputed each
//   pass (a few instructions), and the output is the key bit for bit, a window or CUB's -0.0
//   merge notwithstanding. Rows longer than ROW_KEYS are read from global memory in every pass.
// - Low-entropy keys put most of a row in a few digits (floats in [-1, 1] share their top byte):
//   MATCH 1 adds one count per distinct digit of a warp (a ballot match), not one per key.
//   Copies of the histogram (2, 4 or 8, lane l counting into copy l mod the copies, to spread the
//   plain atomics of equal digits) measured no faster on an H200 (1024 rows of 4096 float32, k 8
//   to 1024: 0.0378-0.0404 ms with one, 0.0379-0.0415 with 2, 4 or 8; int32 at k 256: 0.0319 with
//   one, 0.0348-0.0357 with more, at 80 registers against 64; 2026-12-03), so there is one.
// - Two shapes need no digit pass, and their rows cost what their bytes cost: k >= the row's
//   length is a copy of the row (in its own launch), k == 1 a block min-reduction of (S::bits, index) over one read
//   of it (the lower index on equal bits, as the stable sort). Both are decided per call, the same
//   in every thread, and touch neither the row in shared memory nor the histogram.
// - Small k (2..32, the row in shared memory, BLOCK <= 256) needs no digit pass either: loading the
//   row, each thread keeps the smallest bits of its own keys; the k-th smallest of those BLOCK
//   minima bounds the k-th key's bits from above (k threads' minima are k keys at most it), and
//   on keys of many values few keys lie below it (uniform floats: about k to 2k). Those
//   candidates, gathered in shared memory (at most one a thread), are ranked exactly by (bits,
//   index) and the k of them written in input order: the same answer as the passes. Ties at the
//   bound (all-equal keys, few values) can bring more candidates than threads: then the digit
//   passes run over the row already in shared memory. Ranking the minima costs BLOCK^2 compares a
//   row, hence the 256-thread bound.
// - sorted: a second launch (topk_sort_rows, skipped for unsorted output) reads each row's k
//   (k <= 4096, the plugin refuses more) back from the outputs into shared memory as (bits,
//   index), a bitonic sort orders them, and the keys are read again from the input by index. Its
//   own launch keeps topk_rows' shared memory to the row alone (ROW_KEYS keys): 16 KiB for 4096
//   float32 keys, so 8 blocks of 256 threads share an SM (with the sort's 32 KiB, 7 did: 1024
//   rows took two rounds of 924 blocks on 132 SMs).

#include "gpuk/topk.cuh"

using gpuk::i64;
using gpuk::u32;
using gpuk::u64;

namespace topk_rows_detail {

constexpr u32 kFull = 0xffffffffu;
constexpr int kFewMax = 32;  // the small-k path's largest k

// V keys read or written as one access of 16 bytes where the row's address and length allow it,
// else V = 1: the plain key. Thread t holds the vectors t, t + BLOCK, ... of a tile of BLOCK x
// kVecs vectors (ITEMS keys a thread): with 128 threads and ITEMS 8, 2 vectors of 4 float32 a
// thread, a tile of 1024 keys in 2 accesses a thread where single keys took 8 (more than 8 keys
// a thread in flight left 6 blocks of 128 threads an SM, not 8, and 1024 rows took two rounds).
template <class K, int V> struct alignas(sizeof(K) * V) Pack {
  K k[V];
};
// Whether every row of `len` elements from `p` starts on 16 bytes and is whole vectors of V.
template <int V, class T> __device__ __forceinline__ bool row_vectors(const T* p, i64 len) {
  return len % V == 0 && reinterpret_cast<unsigned long long>(p) % 16 == 0;
}
// The first read's vector: 4 keys of 4 bytes. Vectors of two 8-byte keys took topk_rows from 66-72
// registers to 128 at 128 threads (4 blocks an SM instead of 7), and spilled when bounded.
template <class K> constexpr int kRowsVector = sizeof(K) == 4 ? 4 : 1;
// ITEMS keys a thread a tile whatever V (the registers the same): ITEMS / V vectors, at least one.
template <int ITEMS, int V> constexpr int kVecs = ITEMS / V > 0 ? ITEMS / V : 1;

// A thread's vectors of the tile at `base` (vectors base + j * BLOCK + thread), those below `vecs`.
template <int BLOCK, int N, class P>
__device__ __forceinline__ void load_tile(const P* src, i64 base, i64 vecs, P (&key)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const i64 v = base + j * BLOCK + threadIdx.x;
    if (v < vecs) key[j] = src[v];
  }
}

// Adds one to hist[digit] for each lane with `in`; every lane of the warp calls it (control flow
// uniform in the warp). MATCH 1: the lanes with equal digits are found by ballots and the lowest
// of them adds their number; lanes without `in` take digit 2^RADIX_BITS, which no real one has.
template <int RADIX_BITS, int MATCH>
__device__ __forceinline__ void count_digit(u32* hist, bool in, u32 digit) {
  if constexpr (MATCH == 0) {
    if (in) atomicAdd(&hist[digit], 1u);
  } else {
    if (__ballot_sync(kFull, in) == 0u) return;  // the same for the whole warp
    const u32 d = in ? digit : (1u << RADIX_BITS);
    const u32 peers = gpuk::match_peers<RADIX_BITS + 1, 0>(d);
    if (in && (peers & gpuk::lanemask_lt()) == 0u) atomicAdd(&hist[digit], static_cast<u32>(__popc(peers)));
  }
}

// One digit pass's counts: the digit at `shift` (`mask` wide) of each of src[0, len) whose top
// `bits_done` bits equal `prefix`, added into `hist`. COPY: src is the row in global memory, and
// its keys are also stored into `copy` (the row in shared memory) on the way. V: Pack's.
template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int MATCH, bool COPY, int V>
__device__ __forceinline__ void count_pass(const typename S::K* src, typename S::K* copy, i64 len,
                                           typename S::Bits prefix, u32 bits_done, int shift, u32 mask, u32* hist) {
  using P = Pack<typename S::K, V>;
  using Bits = typename S::Bits;
  const i64 vecs = len / V;  // len % V == 0
  for (i64 base = 0; base < vecs; base += i64{BLOCK} * kVecs<ITEMS, V>) {
    P key[kVecs<ITEMS, V>];
    load_tile<BLOCK>(reinterpret_cast<const P*>(src), base, vecs, key);
#pragma unroll
    for (int j = 0; j < kVecs<ITEMS, V>; ++j) {
      const i64 v = base + j * BLOCK + threadIdx.x;
      if constexpr (COPY)
        if (v < vecs) reinterpret_cast<P*>(copy)[v] = key[j];
#pragma unroll
      for (int e = 0; e < V; ++e) {
        bool in = v < vecs;
        Bits b = 0;
        if (in) {
          b = S::bits(key[j].k[e]);
          in = gpuk::top_bits<S>(b, bits_done) == prefix;
        }
        count_digit<RADIX_BITS, MATCH>(hist, in, static_cast<u32>(b >> shift) & mask);
      }
    }
  }
}

// What the passes have found of the row's k-th key (written by one thread, read by all).
template <class Bits> struct Selection {
  Bits prefix;    // the top `bits_done` bits of the k-th smallest S::bits of the row
  u32 bits_done;  // how many of its bits are known
  u32 k_rem;      // how many keys whose top bits equal `prefix` are among the k
  u32 done;       // 1: every key with those top bits is among the k, or every bit is known
};

// The pass's decision: the bin where the running count of `hist` first reaches k_rem gives the
// next digit of the k-th key. Clears `hist` for the next pass. Every thread calls it; `sel` is
// written by one thread, and a barrier ends the call.
template <int BLOCK, int RADIX_BITS, class Bits>
__device__ __forceinline__ void pick_digit(u32* hist, u32 mask, int width, Selection<Bits>& sel, u32* tmp) {
  constexpr int kBins = 1 << RADIX_BITS;
  constexpr int kPerThread = (kBins + BLOCK - 1) / BLOCK;
  const Bits prefix = sel.prefix;
  const u32 bits_done = sel.bits_done, k_rem = sel.k_rem;
  u32 h[kPerThread];
  u32 sum = 0;
#pragma unroll
  for (int q = 0; q < kPerThread; ++q) {
    const int bin = threadIdx.x * kPerThread + q;
    h[q] = bin <= static_cast<int>(mask) ? hist[bin] : 0u;
    sum += h[q];
  }
  u32 total;
  u32 before = gpuk::block_exclusive_sum<BLOCK>(sum, total, tmp);  // every read of `hist` is before its barriers
#pragma unroll
  for (int q = 0; q < kPerThread; ++q) {
    const int bin = threadIdx.x * kPerThread + q;
    if (bin < kBins) hist[bin] = 0;
  }
  if (before < k_rem && k_rem <= before + sum) {
#pragma unroll
    for (int q = 0; q < kPerThread; ++q) {
      if (before < k_rem && k_rem <= before + h[q]) {
        const u32 left = k_rem - before;
        sel.prefix = static_cast<Bits>((prefix << width) | static_cast<Bits>(threadIdx.x * kPerThread + q));
        sel.bits_done = bits_done + static_cast<u32>(width);
        sel.k_rem = left;
        sel.done = h[q] == left;
        break;
      }
      before += h[q];
    }
  }
  __syncthreads();
}

// Writes the row's k in input order: a key below the prefix goes to (keys below before it) +
// min(keys equal before it, k_rem); a key equal to it, while fewer than k_rem equal keys come
// before it, to (keys below before it) + (keys equal before it). Tiles of BLOCK x ITEMS keys,
// block-striped; stops once all k are written. `warp_counts` holds ITEMS x BLOCK / 32 values,
// `tmp` BLOCK / 32. Ends with a barrier.
template <class S, int BLOCK, int ITEMS>
__device__ __forceinline__ void write_k(const typename S::K* src, i64 len, typename S::Bits prefix, u32 bits_done,
                                        u64 k_rem, u64 k, typename S::K* values, i64* indices, u64* warp_counts,
                                        u64* tmp) {
  using K = typename S::K;
  using Bits = typename S::Bits;
  constexpr int kWarps = BLOCK / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const u32 lanes_below = gpuk::lanemask_lt();
  u64 below_before = 0, equal_before = 0;
  for (i64 base = 0; base < len; base += i64{BLOCK} * ITEMS) {
    if (below_before + (equal_before < k_rem ? equal_before : k_rem) == k) break;  // the same in every thread
    K key[ITEMS];
    u32 below[ITEMS], equal[ITEMS];  // the warp's ballots
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const i64 i = base + j * BLOCK + threadIdx.x;
      if (i < len) key[j] = src[i];
    }
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const i64 i = base + j * BLOCK + threadIdx.x;
      bool lt = false, eq = false;
      if (i < len) {
        const Bits top = gpuk::top_bits<S>(S::bits(key[j]), bits_done);
        lt = top < prefix;
        eq = top == prefix;
      }
      below[j] = __ballot_sync(kFull, lt);
      equal[j] = __ballot_sync(kFull, eq);
      if (lane == 0) warp_counts[j * kWarps + warp] = (static_cast<u64>(__popc(below[j])) << 32) | __popc(equal[j]);
    }
    __syncthreads();
    // Tile items in index order are (j, warp) in j-major order: one entry per thread.
    u64 total;
    const u64 mine = threadIdx.x < ITEMS * kWarps ? warp_counts[threadIdx.x] : 0ull;
    const u64 ex = gpuk::block_exclusive_sum<BLOCK>(mine, total, tmp);
    if (threadIdx.x < ITEMS * kWarps) warp_counts[threadIdx.x] = ex;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const i64 i = base + j * BLOCK + threadIdx.x;
      const u64 at = warp_counts[j * kWarps + warp];
      const u64 lt_before = below_before + (at >> 32) + __popc(below[j] & lanes_below);
      const u64 eq_before = equal_before + (at & 0xffffffffull) + __popc(equal[j] & lanes_below);
      i64 pos = -1;
      if ((below[j] >> lane) & 1u) pos = static_cast<i64>(lt_before + (eq_before < k_rem ? eq_before : k_rem));
      else if (((equal[j] >> lane) & 1u) && eq_before < k_rem) pos = static_cast<i64>(lt_before + eq_before);
      if (pos >= 0) {
        values[pos] = key[j];
        indices[pos] = i;
      }
    }
    below_before += total >> 32;
    equal_before += total & 0xffffffffull;
    __syncthreads();  // warp_counts is written again by the next tile
  }
}

// k >= the row's length: every key is among the k, in input order, so the row is copied (keys bit
// for bit, indices 0..len-1), block-striped and coalesced, ITEMS loads in flight a thread: no
// digit pass, no scan, one read of the row. V: Pack's, for the keys read and written; with V > 1
// the indices go as pairs of 16 bytes.
template <class S, int BLOCK, int ITEMS, int V>
__device__ __forceinline__ void copy_row(const typename S::K* keys, i64 len, typename S::K* values, i64* indices) {
  using P = Pack<typename S::K, V>;
  const i64 vecs = len / V;  // len % V == 0
  for (i64 base = 0; base < vecs; base += i64{BLOCK} * kVecs<ITEMS, V>) {
    P key[kVecs<ITEMS, V>];
    load_tile<BLOCK>(reinterpret_cast<const P*>(keys), base, vecs, key);
#pragma unroll
    for (int j = 0; j < kVecs<ITEMS, V>; ++j) {
      const i64 v = base + j * BLOCK + threadIdx.x;
      if (v < vecs) {
        reinterpret_cast<P*>(values)[v] = key[j];
        if constexpr (V == 1) indices[v] = v;
      }
    }
  }
  // The indices do not depend on the keys: pairs striped over the threads, a warp's store 512
  // contiguous bytes. (Each thread storing its own V indices, two 16-byte halves of each 32-byte
  // sector by two stores a warp, went with a copy of 0.0307 ms where the scalar one took 0.0264:
  // 1024 rows of 4096 float32, H200.)
  if constexpr (V > 1)
    for (i64 q = threadIdx.x; q < len / 2; q += BLOCK)
      reinterpret_cast<Pack<i64, 2>*>(indices)[q] = Pack<i64, 2>{{2 * q, 2 * q + 1}};
}

// k == 1: the row's smallest (S::bits(key), index), lowest index on equal bits, by one read of
// the row and a block min-reduction: no digit pass, no histogram. Each thread keeps its best key
// (the index decides between equal bits), the warps
// reduce by shuffles and the block over `tmp_bits` and `tmp_at` (BLOCK / 32 entries each); the
// thread that holds the winning index writes it with its key. Ends with a barrier.
template <class S, int BLOCK, int ITEMS, int V>
__device__ __forceinline__ void first_of_row(const typename S::K* keys, i64 len, typename S::K* value, i64* index,
                                             u64* tmp_bits, u32* tmp_at) {
  using K = typename S::K;
  using Bits = typename S::Bits;
  using P = Pack<K, V>;
  constexpr int kWarps = BLOCK / 32;
  Bits best = static_cast<Bits>(~Bits(0));
  u32 at = 0xffffffffu;  // after every real index (row_len < 2^32 - 1)
  K best_key{};
  const i64 vecs = len / V;  // len % V == 0
  for (i64 base = 0; base < vecs; base += i64{BLOCK} * kVecs<ITEMS, V>) {
    P key[kVecs<ITEMS, V>];
    load_tile<BLOCK>(reinterpret_cast<const P*>(keys), base, vecs, key);
#pragma unroll
    for (int j = 0; j < kVecs<ITEMS, V>; ++j) {
      const i64 v = base + j * BLOCK + threadIdx.x;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const u32 i = static_cast<u32>(v * V + e);
        if (v < vecs) {
          const Bits b = S::bits(key[j].k[e]);
          if (b < best || (b == best && i < at)) {
            best = b;
            at = i;
            best_key = key[j].k[e];
          }
        }
      }
    }
  }
  Bits win = best;
  u32 win_at = at;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const Bits b = __shfl_xor_sync(kFull, win, o);
    const u32 x = __shfl_xor_sync(kFull, win_at, o);
    if (b < win || (b == win && x < win_at)) {
      win = b;
      win_at = x;
    }
  }
  if ((threadIdx.x & 31) == 0) {
    tmp_bits[threadIdx.x >> 5] = win;
    tmp_at[threadIdx.x >> 5] = win_at;
  }
  __syncthreads();
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    const Bits b = static_cast<Bits>(tmp_bits[w]);
    const u32 x = tmp_at[w];
    if (b < win || (b == win && x < win_at)) {
      win = b;
      win_at = x;
    }
  }
  if (at == win_at) {  // one thread: each index is one thread's
    *value = best_key;
    *index = win_at;
  }
  __syncthreads();  // tmp_bits and tmp_at are written again by the next row
}

// What the small-k path shares between its steps (written by one thread, read by all).
template <class Bits> struct Few {
  Bits limit;  // the k-th smallest of the threads' minima: the k-th key's bits are at most this
  u32 count;   // the row's keys with bits <= limit (the candidates), counted by warp atomics
};

// k <= kFewMax, the row in shared memory: the k smallest (S::bits, index) by a threshold and an
// exact selection among few candidates, one read of the row from global memory and no digit pass.
// Loads the row into `row_keys` (as pass 0 does), each thread keeping the smallest bits of its
// own keys (the vectors thread, thread + BLOCK, ... of V keys), ~0 if it has none. `limit` is
// the k-th smallest of these BLOCK minima (ranked by (minimum, thread)): k threads' minima, k
// distinct keys, are at most it, so every key of the k is at most it. The candidates (bits <=
// limit) are gathered in `cand_bits` and `cand_at` (BLOCK entries, any order: a warp's ballot and
// one shared atomic a warp place them); a thread whose minimum is above the limit has none and
// reads nothing more. Each candidate's rank is the count of candidates before it in (bits,
// index), those of rank < k are the k, and each goes to the count of chosen ones with a lower
// index (input order). More than BLOCK candidates (ties at the limit: all-equal keys, few
// distinct values): false, with the row in shared memory for the digit passes. Ends with a
// barrier.
template <class S, int BLOCK, int ITEMS, int V>
__device__ __forceinline__ bool few_of_row(const typename S::K* keys, i64 len, u32 k, typename S::K* row_keys,
                                           typename S::K* values, i64* indices, typename S::Bits* cand_bits,
                                           u32* cand_at, Few<typename S::Bits>& few) {
  using K = typename S::K;
  using Bits = typename S::Bits;
  using P = Pack<K, V>;
  constexpr u32 kNone = 0xffffffffu;  // after every real index (row_len < 2^32 - 1)
  const i64 vecs = len / V;           // len % V == 0
  Bits mine = static_cast<Bits>(~Bits(0));
  for (i64 base = 0; base < vecs; base += i64{BLOCK} * kVecs<ITEMS, V>) {
    P key[kVecs<ITEMS, V>];
    load_tile<BLOCK>(reinterpret_cast<const P*>(keys), base, vecs, key);
#pragma unroll
    for (int j = 0; j < kVecs<ITEMS, V>; ++j) {
      const i64 v = base + j * BLOCK + threadIdx.x;
      if (v < vecs) {
        reinterpret_cast<P*>(row_keys)[v] = key[j];
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const Bits b = S::bits(key[j].k[e]);
          mine = b < mine ? b : mine;
        }
      }
    }
  }
  cand_bits[threadIdx.x] = mine;
  if (threadIdx.x == 0) few.count = 0;
  __syncthreads();
  // The k-th smallest minimum: the thread of rank k - 1 (ranks are distinct, BLOCK >= k).
  u32 rank = 0;
#pragma unroll 8
  for (int t = 0; t < BLOCK; ++t) {
    const Bits m = cand_bits[t];
    rank += (m < mine || (m == mine && t < static_cast<int>(threadIdx.x))) ? 1u : 0u;
  }
  if (rank == k - 1) few.limit = mine;
  __syncthreads();
  const Bits limit = few.limit;
  // The candidates, from the thread's own keys in shared memory (its own writes: no barrier).
  if (__any_sync(kFull, mine <= limit)) {  // the same in the whole warp
    const int lane = threadIdx.x & 31;
    for (i64 v = threadIdx.x; v - threadIdx.x < vecs; v += BLOCK) {  // the thread's own vectors
      P key{};
      const bool mine_in = mine <= limit && v < vecs;
      if (mine_in) key = reinterpret_cast<const P*>(row_keys)[v];
#pragma unroll
      for (int e = 0; e < V; ++e) {
        Bits b = 0;
        bool in = false;
        if (mine_in) {
          b = S::bits(key.k[e]);
          in = b <= limit;
        }
        const u32 ballot = __ballot_sync(kFull, in);
        if (ballot != 0u) {
          const int leader = __ffs(ballot) - 1;
          u32 first = 0;
          if (lane == leader) first = atomicAdd(&few.count, static_cast<u32>(__popc(ballot)));
          first = __shfl_sync(kFull, first, leader);
          const u32 at = first + static_cast<u32>(__popc(ballot & gpuk::lanemask_lt()));
          if (in && at < BLOCK) {
            cand_bits[at] = b;
            cand_at[at] = static_cast<u32>(v * V + e);
          }
        }
      }
    }
  }
  __syncthreads();
  const u32 count = few.count;  // >= k; the same in every thread
  if (count > BLOCK) return false;
  // The exact k among the candidates: one a thread.
  bool chosen = false;
  u32 at = kNone;
  if (threadIdx.x < count) {
    const Bits b = cand_bits[threadIdx.x];
    at = cand_at[threadIdx.x];
    u32 before = 0;
    for (u32 j = 0; j < count; ++j) {
      const Bits c = cand_bits[j];
      before += (c < b || (c == b && cand_at[j] < at)) ? 1u : 0u;
    }
    chosen = before < k;
  }
  __syncthreads();
  if (threadIdx.x < count) cand_at[threadIdx.x] = chosen ? at : kNone;
  __syncthreads();
  if (chosen) {
    u32 pos = 0;
    for (u32 j = 0; j < count; ++j) pos += cand_at[j] < at ? 1u : 0u;
    values[pos] = row_keys[at];
    indices[pos] = at;
  }
  __syncthreads();  // the row, the candidates and `few` are written again by the next row
  return true;
}

// sorted: the row's k outputs ordered by (bits, index) in shared memory (a bitonic sort of the
// next power of two, padded with entries after every real one), the keys read again from the
// row by index. The outputs were written by topk_rows, an earlier launch. `smem` holds 4096 bits
// and 4096 indices. Ends with a barrier.
template <class S, int BLOCK>
__device__ __forceinline__ void sort_k(const typename S::K* keys, int k, typename S::K* values, i64* indices,
                                       unsigned char* smem) {
  using Bits = typename S::Bits;
  int m = 1;
  while (m < k) m <<= 1;
  Bits* bits = reinterpret_cast<Bits*>(smem);
  u32* index = reinterpret_cast<u32*>(smem + m * sizeof(Bits));
  for (int i = threadIdx.x; i < m; i += BLOCK) {
    if (i < k) {
      const i64 at = indices[i];
      bits[i] = S::bits(keys[at]);
      index[i] = static_cast<u32>(at);
    } else {
      bits[i] = static_cast<Bits>(~Bits(0));
      index[i] = 0xffffffffu;  // after every real index (row_len < 2^32 - 1)
    }
  }
  __syncthreads();
  for (int size = 2; size <= m; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < m / 2; t += BLOCK) {
        const int lo = 2 * t - (t & (stride - 1)), hi = lo + stride;
        const bool up = (lo & size) == 0;
        const bool greater = bits[lo] > bits[hi] || (bits[lo] == bits[hi] && index[lo] > index[hi]);
        if (greater == up) {
          const Bits b = bits[lo];
          bits[lo] = bits[hi];
          bits[hi] = b;
          const u32 x = index[lo];
          index[lo] = index[hi];
          index[hi] = x;
        }
      }
      __syncthreads();
    }
  }
  for (int i = threadIdx.x; i < k; i += BLOCK) {
    indices[i] = index[i];
    values[i] = keys[index[i]];
  }
  __syncthreads();
}

// One row: the digit passes, then the k written (and sorted). IN_SHARED: the row fits the shared
// memory, pass 0 copies it there and everything after reads it there (`loaded`: the small-k path
// put it there already, and pass 0 reads it there too); else every pass reads the row from global
// memory. Two instantiations, so that each reads through its own address space. `vec`: pass 0
// reads the row from global memory as vectors (row_vectors); the later passes read single keys.
template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int MATCH, bool IN_SHARED>
__device__ __forceinline__ void row_topk(const gpuk::TopKArgs<S>& a, i64 row, unsigned char* smem, u32* hist,
                                         Selection<typename S::Bits>& sel, u32* tmp32, u64* warp_counts, u64* tmp64,
                                         bool loaded, bool vec) {
  using K = typename S::K;
  using Bits = typename S::Bits;
  constexpr int kV = kRowsVector<K>;
  constexpr int kPasses = S::template passes<RADIX_BITS>();
  const K* keys = a.keys_in + row * a.row_len;
  K* row_keys = reinterpret_cast<K*>(smem);
  const K* src = IN_SHARED ? row_keys : keys;
  if (threadIdx.x == 0) sel = Selection<Bits>{Bits(0), 0u, static_cast<u32>(a.k), 0u};
  __syncthreads();
  // Digit passes from the most significant, until the k-th key's bucket is decided.
  for (int pass = 0; pass < kPasses; ++pass) {
    const int width = S::kSortBits - pass * RADIX_BITS < RADIX_BITS ? S::kSortBits - pass * RADIX_BITS : RADIX_BITS;
    const int shift = S::kSortBits - pass * RADIX_BITS - width;
    const u32 mask = (1u << width) - 1u;
    const Bits prefix = sel.prefix;
    const u32 bits_done = sel.bits_done;
    if (IN_SHARED && pass == 0 && !loaded && vec)
      count_pass<S, BLOCK, ITEMS, RADIX_BITS, MATCH, true, kV>(keys, row_keys, a.row_len, prefix, bits_done, shift,
                                                               mask, hist);
    else if (IN_SHARED && pass == 0 && !loaded)
      count_pass<S, BLOCK, ITEMS, RADIX_BITS, MATCH, true, 1>(keys, row_keys, a.row_len, prefix, bits_done, shift,
                                                              mask, hist);
    else
      count_pass<S, BLOCK, ITEMS, RADIX_BITS, MATCH, false, 1>(src, nullptr, a.row_len, prefix, bits_done, shift,
                                                               mask, hist);
    __syncthreads();
    pick_digit<BLOCK, RADIX_BITS>(hist, mask, width, sel, tmp32);
    if (sel.done) break;  // the same in every thread: sel is next written after two barriers
  }
  const Bits prefix = sel.prefix;
  const u32 bits_done = sel.bits_done, k_rem = sel.k_rem;
  K* values = a.values_out + row * a.k;
  i64* indices = a.indices_out + row * a.k;
  write_k<S, BLOCK, ITEMS>(src, a.row_len, prefix, bits_done, k_rem, static_cast<u64>(a.k), values, indices,
                           warp_counts, tmp64);
}

}  // namespace topk_rows_detail

// 4-byte keys, up to 256 threads of up to 8 items: at most 64 registers (1024 / BLOCK blocks an
// SM, 8 of 128 threads: a batch of 1024 rows runs at once on 132 SMs), as before the vector loads
// of the first read, which took them to 72 unbounded; nothing spills under the bound (nvcc 13.0,
// sm_90). Wider blocks and 16 items would spill; 8-byte keys read single keys (kRowsVector).
template <int BLOCK, int ITEMS, class K>
constexpr int kRowsMinBlocks = ITEMS > 8 || BLOCK > 256 ? 1 : (sizeof(K) == 4 ? 1024 : 910) / BLOCK;
template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int ROW_KEYS, int WAVES, int MATCH>
__global__ void __launch_bounds__(BLOCK, kRowsMinBlocks<BLOCK, ITEMS, typename S::K>) topk_rows(gpuk::TopKArgs<S> a) {
  using namespace topk_rows_detail;
  using K = typename S::K;
  using Bits = typename S::Bits;
  constexpr int kBins = 1 << RADIX_BITS;
  constexpr int kV = kRowsVector<K>;
  // The small-k path ranks each thread's minimum among BLOCK (BLOCK^2 compares a block): up to 256
  // threads; wider blocks take the digit passes.
  constexpr bool kFew = BLOCK <= 256;
  constexpr int kCands = kFew ? BLOCK : 1;  // without kFew, few_of_row is never called
  static_assert(ITEMS * (BLOCK / 32) <= BLOCK, "write_k scans a tile's warp counts with a thread each");
  static_assert(kFewMax <= BLOCK, "the small-k path ranks k of BLOCK minima");
  extern __shared__ __align__(16) unsigned char smem[];  // the row (ROW_KEYS keys)
  __shared__ u32 hist[kBins];
  __shared__ __align__(16) Bits cand_bits[kCands];
  __shared__ u32 cand_at[kCands];
  __shared__ Few<Bits> few;
  __shared__ u32 tmp32[BLOCK / 32];
  __shared__ u64 tmp64[BLOCK / 32];
  __shared__ u64 warp_counts[ITEMS * (BLOCK / 32)];
  __shared__ Selection<Bits> sel;
  if (a.k >= a.row_len) return;  // topk_copy_rows' (the launcher runs one of the two)
  for (int i = threadIdx.x; i < kBins; i += BLOCK) hist[i] = 0;  // pick_digit leaves it zero after
  __syncthreads();
  // The shared memory holds at least ROW_KEYS keys (the launch's max(ROW_KEYS, ...)).
  const bool in_shared = a.row_len <= ROW_KEYS;
  // The first read of each row by vectors (the same for every row and thread).
  const bool vec = kV > 1 && row_vectors<kV>(a.keys_in, a.row_len);
  // Two shortcuts, decided per call (k and row_len are the same in every thread and row, so every
  // barrier is reached by the whole block): k == 1 takes the row's minimum, k <= kFewMax with the
  // row in shared memory selects among few candidates (or, with too many, goes on to the digit
  // passes over the row it loaded).
  const bool small_k = kFew && in_shared && a.k <= kFewMax;
  for (i64 row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const K* keys = a.keys_in + row * a.row_len;
    K* values = a.values_out + row * a.k;
    i64* indices = a.indices_out + row * a.k;
    if (a.k == 1) {
      if (vec)
        first_of_row<S, BLOCK, ITEMS, kV>(keys, a.row_len, values, indices, tmp64, tmp32);
      else
        first_of_row<S, BLOCK, ITEMS, 1>(keys, a.row_len, values, indices, tmp64, tmp32);
    } else if (in_shared) {
      K* row_keys = reinterpret_cast<K*>(smem);
      const u32 k = static_cast<u32>(a.k);
      bool done = false;
      if (small_k && vec)
        done = few_of_row<S, BLOCK, ITEMS, kV>(keys, a.row_len, k, row_keys, values, indices, cand_bits, cand_at, few);
      else if (small_k)
        done = few_of_row<S, BLOCK, ITEMS, 1>(keys, a.row_len, k, row_keys, values, indices, cand_bits, cand_at, few);
      if (!done)
        row_topk<S, BLOCK, ITEMS, RADIX_BITS, MATCH, true>(a, row, smem, hist, sel, tmp32, warp_counts, tmp64, small_k,
                                                           vec);
    } else {
      row_topk<S, BLOCK, ITEMS, RADIX_BITS, MATCH, false>(a, row, smem, hist, sel, tmp32, warp_counts, tmp64, false,
                                                          false);
    }
  }
}

// k >= the row's length: each row copied (copy_row), a launch of its own so that its registers are
// its own (topk_rows' paths need 60 or more a thread; a copy needs few, and every row of a batch
// of 1024 runs at once). The launcher runs it instead of topk_rows there, and topk_sort_rows after
// it for sorted output.
template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int ROW_KEYS, int WAVES, int MATCH>
__global__ void __launch_bounds__(BLOCK) topk_copy_rows(gpuk::TopKArgs<S> a) {
  using namespace topk_rows_detail;
  using K = typename S::K;
  constexpr int kV = 16 / sizeof(K);
  if (a.k < a.row_len) return;  // topk_rows' (the launcher runs one of the two)
  const bool vec = row_vectors<kV>(a.keys_in, a.row_len) && row_vectors<kV>(a.values_out, a.k) &&
                   row_vectors<2>(a.indices_out, a.k);
  for (i64 row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const K* keys = a.keys_in + row * a.row_len;
    if (vec)
      copy_row<S, BLOCK, ITEMS, kV>(keys, a.row_len, a.values_out + row * a.k, a.indices_out + row * a.k);
    else
      copy_row<S, BLOCK, ITEMS, 1>(keys, a.row_len, a.values_out + row * a.k, a.indices_out + row * a.k);
  }
}

// sorted: each row's k, as topk_rows wrote them, sorted by (bits, index) in shared memory (a launch
// of its own, so that topk_rows' shared memory is the row's alone: 8 blocks of 256 threads fit an
// SM with 4096-key float32 rows, where the sort's 32 KiB beside them allowed 7). The launcher
// skips it for unsorted output.
template <class S, int BLOCK, int ITEMS, int RADIX_BITS, int ROW_KEYS, int WAVES, int MATCH>
__global__ void __launch_bounds__(BLOCK) topk_sort_rows(gpuk::TopKArgs<S> a) {
  using namespace topk_rows_detail;
  extern __shared__ __align__(16) unsigned char smem[];  // the row's k as (bits, index)
  if (!a.sorted || a.k == 1) return;  // one key is in order (the launcher skips both cases)
  for (i64 row = blockIdx.x; row < a.rows; row += gridDim.x)
    sort_k<S, BLOCK>(a.keys_in + row * a.row_len, static_cast<int>(a.k), a.values_out + row * a.k,
                     a.indices_out + row * a.k, smem);
}
