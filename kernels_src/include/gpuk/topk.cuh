// The sort family's top-k (docs/kernels/sort.md, "Top-k"): the first k elements of the stable
// sort of each row, in the order of S = gpuk::Sort<K, long long, DESC, gpuk::SortKind::TopK, ...>
// (descending: the k largest), with their indices in the row. Every entry is
//
//   template <class S, int P1, ...> __global__ void entry(gpuk::TopKArgs<S> a);
//
// What the entries of kernels_src/sort/topk_radix.cu share: the arguments, how a launch's blocks
// split the rows (RowParts), each row's state in the scratch (TopKRow) and two block scans.
#pragma once
#include "gpuk/sort.cuh"

namespace gpuk {

// The one argument of every top-k entry (host mirror in plugins/sort/topk_launcher.cpp: keep the
// layout in step).
template <class S> struct TopKArgs {
  const typename S::K* keys_in;  // rows * row_len keys, row after row (never written)
  typename S::K* values_out;     // rows * k: each row's k keys
  i64* indices_out;              // rows * k: their indices in the row
  u32* scratch;                  // rows * row_words words, zero when first bound (TopKRow)
  i64 n;                         // rows * row_len
  i64 rows, row_len, k;          // 1 <= k <= row_len < 2^32 - 1
  i64 row_words;                 // scratch words a row has: the metadata's `scratch`
  int pass, passes;              // the digit pass (0: the most significant digit) of a launch with `repeat:`
  int sorted;                    // 0: the k come out in input order; 1: in the sort's order
  int unused;
};

// A row's state in the scratch, at the start of its row_words: what the digit passes have found
// of the k-th key's bits so far. Written by the last block of a row to finish a pass; read by
// the later passes. `hist` (2^RADIX_BITS words) follows it, then two counts per part of the row.
struct TopKRow {
  u64 prefix;     // the top `bits_done` bits of the k-th smallest S::bits of the row
  u32 bits_done;  // how many bits of it are known
  u32 k_rem;      // how many keys whose top bits equal `prefix` are among the k
  u32 done;       // 1: every key with those top bits is among the k (no later pass changes the answer)
  u32 arrived;    // parts of the row that finished this pass; the last resets it to 0
  u32 pad[2];
};
static_assert(sizeof(TopKRow) == 32, "TopKRow is 8 scratch words");
constexpr int kTopKRowWords = 8;

// Which rows and parts of rows a block works on. Every launch of a file has the same grid
// (the launcher checks it), so every launch splits the rows alike: a row has
// `parts` = max(1, gridDim.x / rows) contiguous parts (no more than its tiles), and work item w
// (row w / parts, part w % parts) is taken by block w % gridDim.x, in turn.
struct RowParts {
  i64 rows, row_len, parts, chunk;
  __device__ RowParts(i64 rows_, i64 row_len_, i64 tile) : rows(rows_), row_len(row_len_) {
    i64 p = static_cast<i64>(gridDim.x) / rows;
    const i64 tiles = (row_len + tile - 1) / tile;
    parts = p < 1 ? 1 : (p > tiles ? tiles : p);
    chunk = (row_len + parts - 1) / parts;
  }
  __device__ i64 items() const { return rows * parts; }
  __device__ i64 row(i64 w) const { return w / parts; }
  __device__ i64 part(i64 w) const { return w % parts; }
  __device__ i64 begin(i64 w) const { return part(w) * chunk; }
  __device__ i64 end(i64 w) const {
    const i64 e = begin(w) + chunk;
    return e < row_len ? e : row_len;
  }
};

template <class S> __device__ __forceinline__ TopKRow* topk_row(const TopKArgs<S>& a, i64 row) {
  return reinterpret_cast<TopKRow*>(a.scratch + row * a.row_words);
}
template <class S> __device__ __forceinline__ u32* topk_hist(const TopKArgs<S>& a, i64 row) {
  return a.scratch + row * a.row_words + kTopKRowWords;
}
// The counts of part q of a row: [2q] keys below the k-th's known bits, [2q + 1] keys equal there.
template <class S, int RADIX_BITS> __device__ __forceinline__ u32* topk_counts(const TopKArgs<S>& a, i64 row) {
  return a.scratch + row * a.row_words + kTopKRowWords + (1 << RADIX_BITS);
}

// The top `bits_done` bits of `b` (a kSortBits-wide S::bits), compared with a row's prefix.
template <class S> __device__ __forceinline__ typename S::Bits top_bits(typename S::Bits b, u32 bits_done) {
  return bits_done == 0 ? typename S::Bits(0) : static_cast<typename S::Bits>(b >> (S::kSortBits - bits_done));
}

// Sum of `x` over the block (T: u32 or u64), every thread calling it; `tmp` holds BLOCK / 32
// values. Every thread gets the total. Ends with a barrier.
template <int BLOCK, class T> __device__ __forceinline__ T block_sum(T x, T* tmp) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  if ((threadIdx.x & 31) == 0) tmp[threadIdx.x >> 5] = x;
  __syncthreads();
  T total = 0;
#pragma unroll
  for (int w = 0; w < BLOCK / 32; ++w) total += tmp[w];
  __syncthreads();
  return total;
}

// Exclusive prefix sum of `x` over the block in thread order (T: u32 or u64); `total` gets the
// sum. `tmp` holds BLOCK / 32 values. Ends with a barrier.
template <int BLOCK, class T> __device__ __forceinline__ T block_exclusive_sum(T x, T& total, T* tmp) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T inclusive = x;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o) inclusive += y;
  }
  if (lane == 31) tmp[warp] = inclusive;
  __syncthreads();
  T before = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < BLOCK / 32; ++w) {
    if (w < warp) before += tmp[w];
    total += tmp[w];
  }
  __syncthreads();
  return before + inclusive - x;
}

}  // namespace gpuk
