// The Searcher family's device contract (docs/kernels/search.md explains it for kernel writers).
//
// Every search kernel is a template whose first argument is a policy S = gpuk::Search<T, OP> and
// whose remaining arguments are the kernel file's own parameters, in metadata order:
//
//   template <class S, int K, int BLOCK>
//   __global__ void entry(const typename S::T* in, gpuk::i64 n, typename S::Value value,
//                         gpuk::i64* out, gpuk::SearchState* state);
//
// S::Value is S::T, but for find_if's ranges, where it is gpuk::Range<T> {lo, hi}.
// `out` receives one i64 (poisoned by the host before every run): find and any the index, or -1
// when nothing matches; count the number of matches. An element matches when S::match(x, value)
// holds: `x == value` for find, any and count; find_if's comparison (S::kCompare) otherwise.
// `state` holds {best = kNoIndex, count = 0, ticket = 0} when the first launch starts, and must
// hold it again when the last launch ends.
#pragma once
#include "gpuk/common.cuh"

namespace gpuk {

enum class SearchOp : int { Find = 0, Any = 1, Count = 2 };

// The comparison an element is held to: `x OP value`, as C++ compares (find_if; find, any and
// count use Eq). Any comparison with a NaN is false, so a NaN element never matches and a NaN
// value matches nothing, except for Ne: `x != NaN` is true for every x (a NaN element included),
// and `NaN != value` is true for every value. -0.0 and +0.0 compare equal. The ranges take two
// values (Range<T>): Range is `lo <= x && x < hi`, ClosedRange `lo <= x && x <= hi`, so a NaN is in
// no range and a range with hi below lo (hi <= lo for Range) or a NaN bound holds nothing.
enum class Compare : int { Eq = 0, Ne = 1, Lt = 2, Le = 3, Gt = 4, Ge = 5, Range = 6, ClosedRange = 7 };

// A range's bounds, passed by value: {lo, hi}, packed as T[2].
template <class T> struct Range {
  T lo, hi;
};

// Cross-block state in global memory. The host zeroes it (best = kNoIndex) once, at upload; every
// kernel leaves it as it found it, which finish() does.
struct SearchState {
  i64 best;     // find: the lowest matching index seen so far; any: some matching index; else kNoIndex
  u64 count;    // count: matches so far
  u32 ticket;   // blocks that are done, for the last-block finish of one-launch kernels
  u32 unused;
};

template <class T_, SearchOp OP, Compare CMP = Compare::Eq>
struct Search {
  using T = T_;
  static constexpr SearchOp kOp = OP;
  static constexpr Compare kCompare = CMP;
  static constexpr bool kFind = OP == SearchOp::Find;
  static constexpr bool kAny = OP == SearchOp::Any;
  static constexpr bool kCount = OP == SearchOp::Count;
  static constexpr bool kRange = CMP == Compare::Range || CMP == Compare::ClosedRange;
  using Value = typename Select<kRange, Range<T>, T>::type;  // the kernel's `value` argument

  // IEEE comparisons for floats: with Eq a NaN matches nothing (not even a NaN), -0.0 matches
  // +0.0; see Compare for the others.
  static __device__ __forceinline__ bool match(T x, Value value) {
    if constexpr (CMP == Compare::Range) return value.lo <= x && x < value.hi;
    else if constexpr (CMP == Compare::ClosedRange) return value.lo <= x && x <= value.hi;
    else if constexpr (CMP == Compare::Eq) return x == value;
    else if constexpr (CMP == Compare::Ne) return x != value;
    else if constexpr (CMP == Compare::Lt) return x < value;
    else if constexpr (CMP == Compare::Le) return x <= value;
    else if constexpr (CMP == Compare::Gt) return x > value;
    else return x >= value;
  }

  // May a block skip the work that starts at `first`, once `best` is known? find: every match
  // there would be above best; any: one match is enough. count must see everything.
  static __device__ __forceinline__ bool done_before(i64 best, i64 first) {
    if constexpr (kCount) return false;
    else if constexpr (kAny) return best != kNoIndex;
    else return best <= first;  // kNoIndex is above every index
  }
};

// A fresh read of state->best, never cached in a register or in L1 (another block may have
// lowered it): the early-exit poll.
__device__ __forceinline__ i64 poll_best(const SearchState* state) {
  return *reinterpret_cast<const volatile i64*>(&state->best);
}

// The lowest of the warp's 32 indices, in every lane. Call from all 32 lanes.
__device__ __forceinline__ i64 warp_min(i64 i) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) {
    const i64 other = __shfl_xor_sync(0xffffffffu, i, mask);
    i = other < i ? other : i;
  }
  return i;
}

__device__ __forceinline__ u64 warp_sum(u64 c) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) c += __shfl_xor_sync(0xffffffffu, c, mask);
  return c;
}

// Offers each lane's match (kNoIndex for none) to state->best: at most one atomicMin per warp,
// only when some lane has one and it is below the best already there (best only goes down, so
// the atomic would change nothing: where every element matches, thousands of warps offering
// at once serialised on the one address cost 20 us on an H200). Returns the warp's lowest match
// (kNoIndex for none) in every lane. Call from all 32 lanes of the warp.
__device__ __forceinline__ i64 commit_index(SearchState* state, i64 index) {
  if (!__any_sync(0xffffffffu, index != kNoIndex)) return kNoIndex;
  index = warp_min(index);
  if (threadIdx.x % 32 == 0 && index < poll_best(state))
    atomicMin(reinterpret_cast<u64*>(&state->best), static_cast<u64>(index));
  return index;
}

// Adds the warp's counts to state->count: one atomicAdd per warp, only when non-zero. Call from
// all 32 lanes of the warp.
__device__ __forceinline__ void commit_count(SearchState* state, u64 count) {
  count = warp_sum(count);
  if (threadIdx.x % 32 == 0 && count != 0) atomicAdd(&state->count, count);
}

// Writes the result to `out` from what every block committed, and puts `state` back. One thread
// calls it, after every commit of the run is visible to it (a later launch, or the last block
// after its ticket and a fence).
template <class S>
__device__ __forceinline__ void finish(i64* out, SearchState* state) {
  if constexpr (S::kCount) {
    *out = static_cast<i64>(__ldcg(&state->count));
  } else {
    const i64 best = __ldcg(&state->best);
    *out = best == kNoIndex ? -1 : best;
  }
  state->best = kNoIndex;
  state->count = 0;
}

// For one-launch kernels: the last block to get here finishes. Every thread of the block calls
// it (it has a barrier), after its commits.
template <class S>
__device__ __forceinline__ void finish_if_last_block(i64* out, SearchState* state) {
  __syncthreads();  // every warp of this block has committed
  if (threadIdx.x == 0) {
    __threadfence();  // this block's commits are visible device-wide before its ticket
    // atomicInc wraps the ticket back to 0 on the last block: the reset the contract asks for.
    if (atomicInc(&state->ticket, gridDim.x - 1) == gridDim.x - 1) {
      __threadfence();
      finish<S>(out, state);
    }
  }
}

// --- lower_bound and upper_bound (docs/kernels/search.md, "Bounds") ---------------------------
//
// Many needles in a sorted haystack, one index per needle:
//
//   template <class B, params...>
//   __global__ void entry(const typename B::T* hay, gpuk::i64 n, const typename B::T* needles,
//                         gpuk::i64 m, gpuk::i64* out, typename B::Bits* scratch);
//
// out[i] = the first index j in [0, n] such that hay[j] does not go before needles[i]: lower_bound
// (hay[j] < needle goes before), upper_bound (hay[j] <= needle goes before), in the sort family's
// order (KeyBits: -inf < ... < -0.0 < +0.0 < ... < +inf < NaN, all NaNs equal). `hay` is sorted
// in that order; `needles` need not be. `scratch` holds the launch plan's scratch slots (8 bytes
// each) and may be left as the kernels like (nothing carries over between runs).
enum class Side : int { Lower = 0, Upper = 1 };

template <class T_, Side SIDE> struct Bounds {
  using T = T_;
  using Bits = typename KeyBits<T>::Bits;
  static constexpr bool kUpper = SIDE == Side::Upper;
  static __device__ __forceinline__ Bits bits(T x) { return KeyBits<T>::of(x); }
  // Does a haystack element with ordered bits `h` go before a needle with bits `q`?
  static __device__ __forceinline__ bool before(Bits h, Bits q) {
    if constexpr (kUpper) return h <= q;
    else return h < q;
  }
};

// The first index in [lo, hi) whose element does not go before q, or hi; at(j) gives element j's
// ordered bits (from shared memory, or a read-only load of the haystack).
template <class B, class At>
__device__ __forceinline__ i64 partition_point(At at, i64 lo, i64 hi, typename B::Bits q) {
  i64 count = hi - lo;
  while (count > 0) {
    const i64 step = count / 2;
    if (B::before(at(lo + step), q)) {
      lo += step + 1;
      count -= step + 1;
    } else {
      count = step;
    }
  }
  return lo;
}

// ITEMS binary searches stepping together, so that their loads are in flight at once: search k
// covers [lo[k], lo[k] + count[k]) for q[k] and leaves its answer in lo[k] (count[k] = 0: none).
template <class B, int ITEMS, class At>
__device__ __forceinline__ void partition_points(At at, i64 (&lo)[ITEMS], i64 (&count)[ITEMS],
                                                 const typename B::Bits (&q)[ITEMS]) {
  for (;;) {
    bool more = false;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      if (count[k] > 0) {
        const i64 step = count[k] / 2;
        if (B::before(at(lo[k] + step), q[k])) {
          lo[k] += step + 1;
          count[k] -= step + 1;
        } else {
          count[k] = step;
        }
        more = true;
      }
    }
    if (!more) break;
  }
}

// The searches of a bounds kernel once `table` (shared memory) holds its 2^CACHE splitters, splitter
// j = the ordered bits of hay[j * n >> CACHE]: this block's tiles of BLOCK * ITEMS needles, a tile
// every gridDim.x tiles. A needle's count c of splitters that go before it puts its answer in
// (index of splitter c-1, index of splitter c] (0 for c = 0, n for c = 2^CACHE): equal indices of
// splitters (n < 2^CACHE) cannot bracket c, as equal keys either both go before a needle or
// neither does. The rest is a binary search in global memory (partition_points). Every thread of
// the block calls it.
template <class B, int BLOCK, int ITEMS, int CACHE>
__device__ __forceinline__ void bounds_from_table(const typename B::Bits* table, const typename B::T* __restrict__ hay,
                                                  i64 n, const typename B::T* __restrict__ needles, i64 m,
                                                  i64* __restrict__ out) {
  using Bits = typename B::Bits;
  constexpr int kSplitters = 1 << CACHE;
  constexpr i64 kTile = i64(BLOCK) * ITEMS;
  const auto in_table = [&](i64 j) { return table[j]; };
  const auto in_hay = [&](i64 j) { return B::bits(__ldg(hay + j)); };
  for (i64 base = i64(blockIdx.x) * kTile; base < m; base += i64(gridDim.x) * kTile) {
    Bits q[ITEMS];
    i64 lo[ITEMS], count[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const i64 i = base + i64(k) * BLOCK + threadIdx.x;
      q[k] = i < m ? B::bits(__ldg(needles + i)) : Bits(0);
      const i64 c = partition_point<B>(in_table, 0, kSplitters, q[k]);
      lo[k] = c == 0 ? 0 : (((c - 1) * n) >> CACHE) + 1;
      const i64 hi = c == kSplitters ? n : (c * n) >> CACHE;
      count[k] = i < m ? hi - lo[k] : 0;
    }
    partition_points<B, ITEMS>(in_hay, lo, count, q);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const i64 i = base + i64(k) * BLOCK + threadIdx.x;
      if (i < m) out[i] = lo[k];
    }
  }
}

}  // namespace gpuk
