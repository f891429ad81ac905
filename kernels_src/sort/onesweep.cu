/* gpuk
family: sort
operations: [sort, sort_pairs, argsort]
summary: Onesweep least-significant-digit radix sort with 8-bit digits, ranked and placed in one step. One histogram launch counts every digit pass at once (radix.cu's); then one launch per digit pass ranks a tile of BLOCK * ITEMS keys, each key (and value) going to shared memory as soon as its rank is known, finds the tile's global offsets by a decoupled look-back whose entries carry the pass's parity (so nothing is ever cleared), and scatters. Integer keys are held in their sort bits, mapped once at load and back once at store.
params:
  BLOCK: {default: 384, values: [256, 384, 512]}
  ITEMS: {default: 16, values: [8, 12, 14, 16, 18, 20, 22, 23, 24]}
  MIN_BLOCKS: {default: 2, values: [1, 2, 3, 4]}
  VLOAD: {default: 0, values: [0, 1, 2]}
  MATCH: {default: 0, values: [0, 1, 2]}
  LB32: {default: 0, values: [0, 1]}
  LB: {default: 8, values: [1, 4, 8]}
  KLOAD: {default: 0, values: [0, 1]}
  BATCH: {default: 0, values: [0, 1]}
  SHORT: {default: 0, values: [0, 1, 2]}
  SKIP: {default: 0, values: [0, 1]}
constraints:
  - BLOCK * MIN_BLOCKS <= 2048
  - n < 4294967296
  - LB32 == 0 || n < 536870912
launch:
  - entry: onesweep_histogram
    grid: min(ceil_div(n, BLOCK * ITEMS), sm_count * 4)
    block: BLOCK
  - entry: onesweep_pass
    repeat: elem_bytes
    grid: ceil_div(n, BLOCK * ITEMS)
    block: BLOCK
    shared: BLOCK * ITEMS * 8 + (BLOCK / 32 + 1) * 1024 + 64
scratch: 32 + 4 * elem_bytes * 256 + (2 - LB32) * ceil_div(n, BLOCK * ITEMS) * 256
*/

// How the host runs it: onesweep_histogram once, then onesweep_pass once per 8-bit digit of the
// bits sorted by (4 passes for 32-bit keys, 8 for 64-bit; ceil((end_bit - begin_bit) / 8) with a
// begin_bit / end_bit window), each reading the previous pass's output and writing the other
// buffer, so that the last pass lands in keys_out / values_out.
//
// What differs from radix.cu (docs/kernels/sort.md, "onesweep"):
// - Integer keys are held, in registers and in shared memory, as their sort bits (S::bits: a xor
//   with a constant, so it is undone at the store by the same xor); a digit is a shift and a mask
//   of them, no digit array. Float keys keep their own bits (their map sends every NaN to one
//   value, so it cannot be undone) and their digits, 4 to a register, computed once at load.
// - Rank and place: a key's rank is final when it is found (the per-warp offsets are tile-wide
//   before the ranking loop), so the key (and, for 4-byte keys and values loaded with the keys,
//   its value) is written to shared memory there: no rank array. Where values go through the
//   exchange after the keys (8-byte keys or values, or VLOAD 1), the ranks are kept as 16-bit
//   halves, two to a register. With VLOAD 2 a 4-byte value goes from global to shared memory at
//   its key's rank by cp.async, issued there: no value registers at all (what keeps pairs from
//   3 blocks per SM otherwise), its latency behind the rest of the ranking and the look-back.
// - The look-back has one buffer. An entry is a tag (bit 0: the pass's parity; bits 1-2: 1 this
//   tile's count, 2 its inclusive prefix) above the count; an entry of the previous pass has the
//   other parity and reads as not ready. Every tile writes all its entries in every pass, so with
//   an even number of passes (the whole key) the buffer is never cleared: a run starts at parity
//   0 with every entry zero or left at parity 1 by an earlier run's last pass. An odd number (a
//   begin_bit / end_bit window) would leave parity-0 entries behind for tiles a smaller run does
//   not reach: there the histogram launch zeroes this run's tiles' entries first.
// - MATCH picks how a warp's lanes with one digit find each other (gpuk::match_peers).
// - BATCH 1 issues a tile's loads together. With BATCH 0 ptxas interleaves each float key's map
//   (and KLOAD 1's digits) with the loads, a map right after its own key's load, so only about 5
//   of the 20 key loads of a 384 x 20 tile are in flight before the first map waits; argsort's
//   VLOAD 0 value loads (a branch per item on values_in == nullptr) come after all the maps. With
//   BATCH 1 the values (VLOAD 0) are loaded, or argsort's first-pass indices made, before any
//   digit is mapped, the nullptr test taken once per tile, and every map takes an opaque zero
//   that depends on every key (their OR, and a.pass >> 31, which ptxas cannot know is 0), so
//   that no map can start before the last key load is issued; items past n get digit 255 by an
//   OR instead of a branch. The SASS then has all 20 key loads (and 20 value loads) before the
//   first map, as integer keys have.
//
// Parameters: the tile (BLOCK x ITEMS keys); MIN_BLOCKS, the pass's __launch_bounds__ minimum of
// resident blocks per SM (a register cap of 65536 / (BLOCK * MIN_BLOCKS)); VLOAD, values loaded
// with the keys (0), after the keys are written (1, CUB's order: fewer registers through the
// ranking) or copied to shared memory at their rank (2; 8-byte keys or values: as 1); MATCH; LB32, 32-bit look-back entries (a 29-bit count: n < 2^29) instead of 64-bit;
// LB, look-back entries read per round; BATCH (below); SHORT, a tile whose keys all have one
// digit is not ranked: copied to its place (1, Pass::write_direct) or put through the exchange in
// its own order (2, Pass::place_in_order); SKIP, a pass in which every key has one digit is not
// run (Route, below). Both default to 0 (the shipped entries name them per GPU model and cell):
// docs/kernels/sort.md says why.
//
// Scratch (u32 words, zero when bound): [0, 16) the passes' tile counters (blocks take tiles in
// the order they start, so a block only waits on tiles already held by running blocks); [16] the
// histogram's done counter; [17] (SKIP 1) the passes of one digit, a bit each; [32, 32 + P * 256)
// the digit counts, [32 + P * 256, 32 + 2 * P * 256) each pass's digit bases
// (gpuk::digit_histogram); then the look-back, tiles * 256 entries.
//
// The exchange buffer is 8 bytes per tile element: the kernel's shared-memory expression cannot
// see the value type (the metadata knows elem_bytes only), so it is sized for the widest case
// that goes through it in one round (4-byte keys with 4-byte values); 8-byte keys or values take
// two rounds through it (keys, then values).

#include "gpuk/sort_pass.cuh"

namespace {

template <class S, int BLOCK, int ITEMS, int LB32>
struct Onesweep8 {
  using K = typename S::K;
  using V = typename S::V;
  using B = typename S::Bits;
  static constexpr int kTile = BLOCK * ITEMS;
  static constexpr int kRadix = 256;
  static constexpr int kPasses = S::template passes<8>();
  static constexpr bool kFloat = K(1) / K(2) != K(0);
  // Integer keys as held: key ^ kFlip is S::bits(key) (signed: the sign bit; descending: all).
  static constexpr B kSign = B(1) << (8 * sizeof(B) - 1);
  static constexpr B kFlip = B(K(-1) < K(0) ? kSign : B(0)) ^ B(S::kDescending ? ~B(0) : B(0));
  // 4-byte keys with 4-byte values (or none) share one round of the exchange.
  static constexpr bool kOneRound = sizeof(K) == 4 && (!S::kHasValues || sizeof(V) == 4);
  // Keys-only 4-byte floats keep each element's digit as a byte beside the keys (bytes [4, 5) of
  // the 8: the values' place); the others map a float key again at the store.
  static constexpr bool kDigitBytes = kFloat && !S::kHasValues && sizeof(K) == 4;
  // Look-back entries: the tag at bit kShift, above the count.
  using E = typename gpuk::Select<LB32 == 1, gpuk::u32, gpuk::u64>::type;
  static constexpr int kShift = LB32 == 1 ? 29 : 32;
  static constexpr E kCountMask = (E(1) << kShift) - 1;
  static __device__ __forceinline__ gpuk::u32* histogram(gpuk::u32* scratch) { return scratch + 32; }
  static __device__ __forceinline__ gpuk::u32* bases(gpuk::u32* scratch) { return scratch + 32 + kPasses * kRadix; }
  static __device__ __forceinline__ E* lookback(gpuk::u32* scratch) {
    return reinterpret_cast<E*>(scratch + 32 + 2 * kPasses * kRadix);
  }
  // The held form of a key (integers: sort bits; floats: the key's own bits) and back.
  static __device__ __forceinline__ B hold(K key) {
    if constexpr (kFloat) {
      if constexpr (sizeof(K) == 4) return __float_as_uint(key);
      else return static_cast<B>(__double_as_longlong(key));
    } else {
      return static_cast<B>(key) ^ kFlip;
    }
  }
  static __device__ __forceinline__ K release(B held) {
    if constexpr (kFloat) {
      if constexpr (sizeof(K) == 4) return __uint_as_float(held);
      else return __longlong_as_double(static_cast<gpuk::i64>(held));
    } else {
      return static_cast<K>(held ^ kFlip);
    }
  }
  // The digit of pass `pass` of a held key (integers: of the bits [begin_bit, end_bit) of its
  // sort bits, S::window).
  static __device__ __forceinline__ gpuk::u32 digit(B held, int pass) {
    if constexpr (kFloat) return S::template digit<8>(release(held), pass);
    else return static_cast<gpuk::u32>(S::window(held) >> (8 * pass)) & 0xffu;
  }
  // The same for an integer key, in a form the compiler does not merge with digit(): the counting
  // loop uses it, so that the ranking loop computes its digits again instead of the compiler
  // keeping all ITEMS of them live across the barrier between the two (a digit array in all but
  // name, which made 384 x 20 keys spill under 56 registers).
  // (Floats: byte `pass` of a register of packed digits.)
  template <class W>
  static __device__ __forceinline__ gpuk::u32 digit_apart(W held, int pass) {
    gpuk::u32 d;
    if constexpr (sizeof(W) == 4) asm volatile("bfe.u32 %0, %1, %2, 8;" : "=r"(d) : "r"(held), "r"(8 * pass));
    else {
      gpuk::u64 w;
      asm volatile("bfe.u64 %0, %1, %2, 8;" : "=l"(w) : "l"(held), "r"(8 * pass));
      d = static_cast<gpuk::u32>(w);
    }
    return d;
  }
};

// A digit pass's choices and its stages: onesweep_pass (below) runs them in order.
template <class S, int BLOCK, int ITEMS, int VLOAD, int MATCH, int LB32, int KLOAD, int BATCH>
struct Pass : Onesweep8<S, BLOCK, ITEMS, LB32> {
  using O = Onesweep8<S, BLOCK, ITEMS, LB32>;
  using K = typename O::K;
  using V = typename O::V;
  using B = typename O::B;
  using Shared = gpuk::PassShared<BLOCK, O::kRadix>;
  static constexpr int kTile = O::kTile;
  static constexpr bool kOneRound = O::kOneRound, kDigitBytes = O::kDigitBytes;
  // Values that reach the exchange before its barrier, to go out with the keys in one loop: loaded
  // with the keys and written at their rank (VLOAD 0), or copied from global to shared memory at
  // their rank by cp.async as soon as the rank is known (VLOAD 2: no registers, the copies'
  // latency hidden behind the rest of the ranking and the look-back). Otherwise (VLOAD 1, or
  // 8-byte keys or values, whose values take a second round) the ranks are kept.
  static constexpr bool kPlaceValues = S::kHasValues && kOneRound && VLOAD != 1;
  static constexpr bool kAsyncValues = kPlaceValues && VLOAD == 2;
  static constexpr bool kKeepRanks = S::kHasValues && !kPlaceValues;
  // KLOAD 1: the keys are loaded for their digits only (kept 4 to a register, as floats' always
  // are) and copied from global to shared memory at their rank by cp.async, so the ranking holds
  // no key registers (8-byte keys: 2 x ITEMS fewer); the exchange then has the keys as they are.
  static constexpr bool kAsyncKeys = KLOAD == 1;
  static constexpr bool kPacked = O::kFloat || kAsyncKeys;
  // BATCH 1 with integer keys that are flipped to be held (signed, descending): loaded as they
  // are (positions past n as ~kFlip) and flipped after the last load.
  static constexpr bool kFlipAfter = BATCH == 1 && !O::kFloat && O::kFlip != B(0);
  // Two rounds through the exchange: each key's destination kept for its value.
  static constexpr bool kDestinations = S::kHasValues && !kOneRound;
  static constexpr int kPackedWords = kPacked ? (ITEMS + 3) / 4 : 1;  // 4 digits a register
  static constexpr int kValues = S::kHasValues ? ITEMS : 1;
  static constexpr int kRankWords = kKeepRanks ? (ITEMS + 1) / 2 : 1;  // 16-bit ranks, 2 a register
  // SHORT 2's placement of a one-digit tile: a loop of its own (place_in_order), or a flag of
  // rank_and_place's for argsort of 8-byte keys (place_in_order says why).
  static constexpr bool kInOrderApart = !(S::kIndex && sizeof(K) == 8);
  static_assert(BLOCK % 32 == 0 && BLOCK >= O::kRadix, "a thread per digit");
  static_assert(kTile <= 65536, "ranks are kept in 16 bits");

  // The exchange buffer: keys as held (KLOAD 1: as they are); values at bytes [4, 8) of the 8 in
  // one round, over the keys in two; keys-only 4-byte floats' digits at bytes [4, 5).
  static __device__ __forceinline__ B* kbuf(unsigned char* smem) { return reinterpret_cast<B*>(smem); }
  static __device__ __forceinline__ V* vbuf(unsigned char* smem) {
    return reinterpret_cast<V*>(kOneRound ? smem + kTile * 4 : smem);
  }
  static __device__ __forceinline__ unsigned char* dbuf(unsigned char* smem) { return smem + kTile * 4; }

  // The tile's values, warp-striped; argsort's first pass makes its indices instead, the nullptr
  // test taken once, not per item.
  static __device__ __forceinline__ void load_values(const gpuk::SortArgs<S>& a, gpuk::i64 tile_begin, int valid,
                                                     V (&value)[kValues]) {
    if constexpr (S::kHasValues) {
      if (S::kIndex && a.values_in == nullptr) {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) value[k] = static_cast<V>(tile_begin + gpuk::striped_index<ITEMS>(k));
      } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
          const int e = gpuk::striped_index<ITEMS>(k);
          if (e < valid) value[k] = a.values_in[tile_begin + e];
        }
      }
    }
  }

  // Keys, warp-striped, as held, and (kPacked) their digits; VLOAD 0's values. Positions past n
  // take digit 255 in every pass (all-ones bits) and rank behind the real keys; they are never
  // written, and only the last tile has them.
  static __device__ __forceinline__ void load(const gpuk::SortArgs<S>& a, gpuk::i64 tile_begin, int valid, int pass,
                                              B (&held)[ITEMS], gpuk::u32 (&packed)[kPackedWords],
                                              V (&value)[kValues]) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int e = gpuk::striped_index<ITEMS>(k);
      if constexpr (kFlipAfter) held[k] = e < valid ? static_cast<B>(a.keys_in[tile_begin + e]) : B(~O::kFlip);
      else held[k] = e < valid ? O::hold(a.keys_in[tile_begin + e]) : ~B(0);
    }
    // BATCH 1: the tile's values (VLOAD 0) before any key is mapped (VLOAD 1 loads them so too).
    if constexpr (BATCH == 1 && S::kHasValues && VLOAD == 0) load_values(a, tile_begin, valid, value);
    if constexpr (BATCH == 1 && (kPacked || kFlipAfter)) {
      // A zero that depends on every key (a.pass >= 0, which ptxas cannot know): every map takes
      // it, so none can be scheduled before the last key load is issued.
      B every = held[0];
#pragma unroll
      for (int k = 1; k < ITEMS; ++k) every |= held[k];
      const B zero = every & static_cast<B>(a.pass >> 31);
      if constexpr (kFlipAfter) {
        const B flip = O::kFlip ^ zero;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) held[k] ^= flip;
      }
      if constexpr (kPacked) {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
          const gpuk::u32 beyond = gpuk::striped_index<ITEMS>(k) < valid ? 0u : 0xffu;
          const gpuk::u32 d = O::digit(kFlipAfter ? held[k] : held[k] | zero, pass) | beyond;
          if (k % 4 == 0) packed[k / 4] = d;
          else packed[k / 4] |= d << (8 * (k % 4));
        }
      }
    } else if constexpr (kPacked) {
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const gpuk::u32 d = gpuk::striped_index<ITEMS>(k) < valid ? O::digit(held[k], pass) : 0xffu;
        if (k % 4 == 0) packed[k / 4] = d;
        else packed[k / 4] |= d << (8 * (k % 4));
      }
    }
    if constexpr (BATCH == 0 && S::kHasValues && VLOAD == 0)
      gpuk::load_striped_values<S>(a.values_in, tile_begin, valid, value);
  }

  // Item k's digit.
  static __device__ __forceinline__ gpuk::u32 digit_of(const B (&held)[ITEMS], const gpuk::u32 (&packed)[kPackedWords],
                                                       int k, int pass) {
    if constexpr (kPacked) return (packed[k / 4] >> (8 * (k % 4))) & 0xffu;
    else return O::digit(held[k], pass);
  }

  // Rank and place: the lanes with item k's digit (peers) take consecutive positions after the
  // warp's counter, which their highest lane advances for all of them; each key goes to its
  // position at once (and its digit byte, and its value where kPlaceValues); kKeepRanks: the
  // ranks kept as 16-bit halves for the values' round. `in_order` (SHORT 2's one-digit tile where
  // !kInOrderApart): each item's rank is its own place in the tile, as place_in_order's.
  static __device__ __forceinline__ void rank_and_place(const gpuk::SortArgs<S>& a, Shared& ps, gpuk::i64 tile_begin,
                                                        int valid, int pass, const B (&held)[ITEMS],
                                                        const gpuk::u32 (&packed)[kPackedWords],
                                                        const V (&value)[kValues], gpuk::u32 (&ranks)[kRankWords],
                                                        B* const kbuf, V* const vbuf, unsigned char* const dbuf,
                                                        int warp, bool in_order) {
    const int lane = threadIdx.x & 31;
    gpuk::u32 le;
    asm("mov.u32 %0, %%lanemask_le;" : "=r"(le));
    // VLOAD 2 (KLOAD 1): item k's value (key) is element k * 32 after this thread's first.
    const int here = gpuk::striped_index<ITEMS>(0);
    const int valid_here = valid - here;
    const bool indices = S::kIndex && a.values_in == nullptr;  // argsort's first pass
    const V* const values_here = kAsyncValues && !indices ? a.values_in + tile_begin + here : nullptr;
    const gpuk::u32 first_index = static_cast<gpuk::u32>(tile_begin + here);
    const K* const keys_here = a.keys_in + tile_begin + here;  // KLOAD 1
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const gpuk::u32 d = digit_of(held, packed, k, pass);
      gpuk::u32 rank;
      if (!kInOrderApart && in_order) {
        rank = static_cast<gpuk::u32>(here + k * 32);  // SHORT 2's one-digit tile: its own place
      } else {
        const gpuk::u32 peers = gpuk::match_peers<8, MATCH>(d);
        const int leader = 31 - __clz(peers);
        const gpuk::u32 upto = __popc(peers & le);
        gpuk::u32 offset = 0;
        if (lane == leader) offset = atomicAdd(&ps.warp_offset[warp][d], upto);
        offset = __shfl_sync(0xffffffffu, offset, leader);
        rank = offset + upto - 1;
      }
      if constexpr (kAsyncKeys) {
        if (k * 32 < valid_here) gpuk::copy_async<sizeof(K)>(kbuf + rank, keys_here + k * 32);
      } else {
        kbuf[rank] = held[k];
      }
      if constexpr (kDigitBytes) dbuf[rank] = static_cast<unsigned char>(d);
      if constexpr (S::kHasValues && kOneRound && VLOAD == 0) vbuf[rank] = value[k];
      if constexpr (kAsyncValues) {
        if (k * 32 < valid_here) {
          if (indices) vbuf[rank] = static_cast<V>(first_index + k * 32);
          else gpuk::copy_async<4>(vbuf + rank, values_here + k * 32);
        }
      }
      if constexpr (kKeepRanks) {
        if (k % 2 == 0) ranks[k / 2] = rank;
        else ranks[k / 2] |= rank << 16;
      }
    }
  }

  // Exchange element i as held (KLOAD 1 copied the keys as they are).
  static __device__ __forceinline__ B held_at(unsigned char* smem, int i) {
    if constexpr (kAsyncKeys) return O::hold(reinterpret_cast<const K*>(kbuf(smem))[i]);
    else return kbuf(smem)[i];
  }

  // After the look-back and a barrier: out in tile order, consecutive threads writing consecutive
  // addresses within each digit's run; the values with the keys, or (kKeepRanks) through the
  // exchange after them.
  static __device__ __forceinline__ void write_out(const gpuk::SortArgs<S>& a, const Shared& ps, gpuk::i64 tile_begin,
                                                   int valid, int pass, V (&value)[kValues],
                                                   const gpuk::u32 (&ranks)[kRankWords], unsigned char* smem) {
    const int t = threadIdx.x;
    gpuk::u32 destination[kDestinations ? ITEMS : 1];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const int i = j * BLOCK + t;
      if (i < valid) {
        const B x = held_at(smem, i);
        const gpuk::u32 d = kDigitBytes ? gpuk::u32(dbuf(smem)[i]) : O::digit(x, pass);
        const gpuk::u32 to = ps.offset[d] + static_cast<gpuk::u32>(i);
        a.keys_out[to] = O::release(x);
        if constexpr (kPlaceValues) a.values_out[to] = vbuf(smem)[i];
        if constexpr (kDestinations) destination[j] = to;
      }
    }
    if constexpr (kKeepRanks) {
      if constexpr (VLOAD != 0 && BATCH == 1) {
        load_values(a, tile_begin, valid, value);
      } else if constexpr (VLOAD != 0) {
        gpuk::load_striped_values<S>(a.values_in, tile_begin, valid, value);
      }
      if constexpr (!kOneRound) __syncthreads();  // the keys' reads are done: values over them
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const gpuk::u32 rank = (k % 2 == 0 ? ranks[k / 2] : ranks[k / 2] >> 16) & 0xffffu;
        if (gpuk::striped_index<ITEMS>(k) < valid) vbuf(smem)[rank] = value[k];
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const int i = j * BLOCK + t;
        if (i < valid) {
          if constexpr (kDestinations) {
            a.values_out[destination[j]] = vbuf(smem)[i];
          } else {
            const gpuk::u32 d = O::digit(held_at(smem, i), pass);
            a.values_out[ps.offset[d] + static_cast<gpuk::u32>(i)] = vbuf(smem)[i];
          }
        }
      }
    }
  }

  // SHORT 2, a tile whose keys all have one digit: its order is the input's, so each item's rank
  // is its own place in the tile (no peers, no warp counters), and it goes to the exchange
  // there, with its digit byte, its value (or the value's cp.async) and its rank as
  // rank_and_place would put them; the look-back and write_out are as for any tile. Nothing is
  // held longer than in any other tile, so other tiles' registers are as without SHORT.
  // (kInOrderApart false, argsort of 8-byte keys: ptxas of CUDA 13.0 fails to allocate this
  // loop's registers beside rank_and_place's there, so rank_and_place takes `in_order` itself;
  // elsewhere that form spills more: 48-112 bytes of stack against 0-24, 384 x 20 shapes.)
  static __device__ __forceinline__ void place_in_order(const gpuk::SortArgs<S>& a, gpuk::i64 tile_begin, int valid,
                                                        int pass, const B (&held)[ITEMS],
                                                        const gpuk::u32 (&packed)[kPackedWords],
                                                        const V (&value)[kValues], gpuk::u32 (&ranks)[kRankWords],
                                                        B* const kbuf, V* const vbuf, unsigned char* const dbuf) {
    const int here = gpuk::striped_index<ITEMS>(0);
    const int valid_here = valid - here;
    const bool indices = S::kIndex && a.values_in == nullptr;  // argsort's first pass
    const V* const values_here = kAsyncValues && !indices ? a.values_in + tile_begin + here : nullptr;
    const gpuk::u32 first_index = static_cast<gpuk::u32>(tile_begin + here);
    const K* const keys_here = a.keys_in + tile_begin + here;  // KLOAD 1
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const gpuk::u32 rank = static_cast<gpuk::u32>(here + k * 32);
      if constexpr (kAsyncKeys) {
        if (k * 32 < valid_here) gpuk::copy_async<sizeof(K)>(kbuf + rank, keys_here + k * 32);
      } else {
        kbuf[rank] = held[k];
      }
      if constexpr (kDigitBytes) dbuf[rank] = static_cast<unsigned char>(digit_of(held, packed, k, pass));
      if constexpr (S::kHasValues && kOneRound && VLOAD == 0) vbuf[rank] = value[k];
      if constexpr (kAsyncValues) {
        if (k * 32 < valid_here) {
          if (indices) vbuf[rank] = static_cast<V>(first_index + k * 32);
          else gpuk::copy_async<4>(vbuf + rank, values_here + k * 32);
        }
      }
      if constexpr (kKeepRanks) {
        if (k % 2 == 0) ranks[k / 2] = rank;
        else ranks[k / 2] |= rank << 16;
      }
    }
  }

  // SHORT 1, a tile whose keys all have one digit (ps.tile): its order is the input's, so it is
  // copied to offset[d] onward (CUB's TryShortCircuit), its keys and values read again (from L2,
  // mostly) rather than kept in registers through the look-back, where every other tile has let
  // them go: held there they cost the other tiles spills (uint32 pairs, VLOAD 1). Each thread
  // issues all its ITEMS loads (warp-striped, as the tile was loaded) before its first store: a
  // loop of one load at a time in flight made keys of few distinct values slower than without
  // SHORT (docs/kernels/sort.md).
  static __device__ __forceinline__ void write_direct(const gpuk::SortArgs<S>& a, const Shared& ps,
                                                      gpuk::i64 tile_begin, int valid) {
    const gpuk::u32 to = ps.offset[ps.tile];
    K key[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int e = gpuk::striped_index<ITEMS>(k);
      if (e < valid) key[k] = a.keys_in[tile_begin + e];
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int e = gpuk::striped_index<ITEMS>(k);
      if (e < valid) a.keys_out[to + e] = key[k];
    }
    if constexpr (S::kHasValues) {
      V value[ITEMS];
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const int e = gpuk::striped_index<ITEMS>(k);
        if (e < valid) value[k] = S::value_at(a.values_in, tile_begin + e);
      }
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const int e = gpuk::striped_index<ITEMS>(k);
        if (e < valid) a.values_out[to + e] = value[k];
      }
    }
  }
};

// SKIP 1: which passes run, decided on the device from the histogram's mask of passes in which
// every key has one digit (scratch word [17]), with no word to the host. Those passes are not run
// (their launches return at once), except that the passes run are kept to an even number (the
// lowest one-digit pass runs too when needed: it is a stable pass like any other), so that the
// look-back's parity ends each run at 1 and a sort in place never writes the buffer it reads. The
// passes run ping-pong between the spare buffers and the outputs by their place among those run,
// the first reading the input and the last writing the outputs. When every pass has one digit,
// the input is its own sorted order: the last pass copies it to the outputs (argsort: writes the
// indices) where they differ. An odd number of passes (a bit window) runs every pass.
template <class S>
struct Route {
  bool identity = true;  // every pass runs, on the buffers a launch without SKIP has: `a` as it is
  bool run = true;       // this pass sorts
  bool copies = false;   // this pass copies the input to the outputs instead
  int order = 0;         // its place among the passes run: its look-back parity
  // `mask`: the histogram's scratch word [17] (the histogram launch ran before this pass).
  static __device__ __forceinline__ Route of(gpuk::SortArgs<S>& a, gpuk::u32 mask) {
    Route r;
    r.order = a.pass;
    // An odd number of passes (a bit window) runs them all, as without SKIP: the launcher may
    // have copied an input sorted in place to the spare buffer, which such a run starts from.
    if (a.passes % 2 == 1) return r;
    const gpuk::u32 all = (1u << a.passes) - 1u, me = 1u << a.pass;
    const gpuk::u32 one_digit = mask & all;
    gpuk::u32 runs = all & ~one_digit;
    if (__popc(runs) % 2 == 1) runs |= one_digit & (0u - one_digit);
    if (runs == all) return r;
    r.identity = false;
    if (runs == 0) {
      r.run = false;
      r.copies = a.pass == a.passes - 1;
      a.keys_in = a.keys_first, a.keys_out = a.keys_last;
      a.values_in = a.values_first, a.values_out = a.values_last;
      return r;
    }
    if ((runs & me) == 0) {
      r.run = false;
      return r;
    }
    const int j = __popc(runs & (me - 1u)), e = __popc(runs);
    r.order = j;
    // Run j writes the outputs when e - 1 - j is even; run j - 1 wrote what run j reads.
    a.keys_in = j == 0 ? a.keys_first : (e - j) % 2 == 0 ? a.keys_last : a.keys_spare;
    a.keys_out = (e - 1 - j) % 2 == 0 ? a.keys_last : a.keys_spare;
    a.values_in = j == 0 ? a.values_first : (e - j) % 2 == 0 ? a.values_last : a.values_spare;
    a.values_out = (e - 1 - j) % 2 == 0 ? a.values_last : a.values_spare;
    return r;
  }
  // The copy: tile blockIdx.x of the input to the outputs, each array where the two differ.
  template <int TILE, int BLOCK>
  static __device__ __forceinline__ void copy(const gpuk::SortArgs<S>& a) {
    const gpuk::i64 begin = gpuk::i64(blockIdx.x) * TILE;
    const gpuk::i64 end = a.n - begin < TILE ? a.n : begin + TILE;
    if (a.keys_in != a.keys_out)
      for (gpuk::i64 i = begin + threadIdx.x; i < end; i += BLOCK) a.keys_out[i] = a.keys_in[i];
    if constexpr (S::kHasValues) {
      if (a.values_in != a.values_out)
        for (gpuk::i64 i = begin + threadIdx.x; i < end; i += BLOCK) a.values_out[i] = S::value_at(a.values_in, i);
    }
  }
};

}  // namespace

template <class S, int BLOCK, int ITEMS, int MIN_BLOCKS, int VLOAD, int MATCH, int LB32, int LB, int KLOAD, int BATCH,
          int SHORT, int SKIP>
__global__ void __launch_bounds__(BLOCK) onesweep_histogram(gpuk::SortArgs<S> a) {
  using O = Onesweep8<S, BLOCK, ITEMS, LB32>;
  if constexpr (O::kPasses % 2 == 0) {
    gpuk::digit_histogram<S, BLOCK, 8, SKIP == 1>(a, O::histogram(a.scratch), O::bases(a.scratch), nullptr, 0);
  } else {
    // An odd number of passes (a begin_bit / end_bit window) would leave entries of the first
    // pass's parity behind: this run's tiles' entries are cleared instead (radix.cu's way).
    const gpuk::i64 tiles = gpuk::ceil_div(a.n, gpuk::i64(O::kTile));
    gpuk::digit_histogram<S, BLOCK, 8, SKIP == 1>(a, O::histogram(a.scratch), O::bases(a.scratch),
                                                  reinterpret_cast<gpuk::u32*>(O::lookback(a.scratch)),
                                                  tiles * O::kRadix * gpuk::i64(sizeof(typename O::E) / 4));
  }
}

template <class S, int BLOCK, int ITEMS, int MIN_BLOCKS, int VLOAD, int MATCH, int LB32, int LB, int KLOAD, int BATCH,
          int SHORT, int SKIP>
__device__ __forceinline__ void pass_body(const gpuk::SortArgs<S>& a, int order, gpuk::u32 taken, gpuk::u32 taken_base) {
  using P = Pass<S, BLOCK, ITEMS, VLOAD, MATCH, LB32, KLOAD, BATCH>;
  using O = typename P::O;
  using B = typename P::B;
  using V = typename P::V;
  using E = typename O::E;
  constexpr int kTile = O::kTile, kRadix = O::kRadix, kWarps = BLOCK / 32, kShift = O::kShift;
  extern __shared__ __align__(16) unsigned char smem[];
  auto& ps = *reinterpret_cast<typename P::Shared*>(smem + kTile * 8);
  B* const kbuf = reinterpret_cast<B*>(smem);
  // One round: values at bytes [4, 8) of the 8; two rounds: values over the keys.
  V* const vbuf = reinterpret_cast<V*>(P::kOneRound ? smem + kTile * 4 : smem);
  unsigned char* const dbuf = smem + kTile * 4;

  const int t = threadIdx.x, pass = a.pass;
  const int warp = t >> 5, lane = t & 31;
  const gpuk::i64 n = a.n;
  E* const lookback = O::lookback(a.scratch);
  const E parity = E((SKIP == 1 ? order : pass) & 1);  // SKIP 0: the pass itself
  const E kAggregate = (E(2) | parity) << kShift, kInclusive = (E(4) | parity) << kShift;

  // SKIP 1 took its tile before choosing its route (onesweep_pass); SKIP 0 takes it here.
  gpuk::u32 base = taken_base;
  const gpuk::u32 tile = SKIP == 1 ? taken : gpuk::take_tile(a, O::bases(a.scratch), ps, base);
  const gpuk::i64 tile_begin = gpuk::i64(tile) * kTile;
  const int valid = static_cast<int>(n - tile_begin < kTile ? n - tile_begin : kTile);

  B held[ITEMS];
  gpuk::u32 packed[P::kPackedWords];  // floats' digits (and KLOAD 1's), 4 to a register
  V value[P::kValues];
  P::load(a, tile_begin, valid, pass, held, packed, value);
  // Per-warp digit counts.
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    if constexpr (P::kPacked) atomicAdd(&ps.warp_offset[warp][O::digit_apart(packed[k / 4], k % 4)], 1u);
    else atomicAdd(&ps.warp_offset[warp][O::digit_apart(S::window(held[k]), pass)], 1u);
  }
  __syncthreads();
  // Per digit (thread t < 256): the tile's count, published at once; the tile-wide start of the
  // digit (a block scan); each warp's first position for the digit.
  volatile E* const mine = lookback + gpuk::i64(tile) * kRadix;
  gpuk::u32 count = 0, inclusive = 0;
  if (t < kRadix) {
#pragma unroll
    for (int w = 0; w < kWarps; ++w) count += ps.warp_offset[w][t];
    *(mine + t) = (tile == 0 ? kInclusive : kAggregate) | count;
    inclusive = count;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const gpuk::u32 y = __shfl_up_sync(0xffffffffu, inclusive, o);
      if (lane >= o) inclusive += y;
    }
    if (lane == 31) ps.scan_tmp[warp] = inclusive;
  }
  // SHORT 1 and 2: whether every key of the tile has one digit (then its start is 0); that
  // digit's thread leaves it in ps.tile (every thread read the tile before the counts' barrier).
  bool one_digit = false;
  if constexpr (SHORT != 0) {
    if (t < kRadix && count == kTile) ps.tile = t;
    one_digit = __syncthreads_or(t < kRadix && count == kTile);
  } else {
    __syncthreads();
  }
  gpuk::u32 start = 0;
  if (t < kRadix && !one_digit) {
    start = inclusive - count;
    for (int w = 0; w < warp; ++w) start += ps.scan_tmp[w];
    gpuk::u32 run = start;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const gpuk::u32 c = ps.warp_offset[w][t];
      ps.warp_offset[w][t] = run;
      run += c;
    }
  }
  __syncthreads();
  gpuk::u32 ranks[P::kRankWords];
  if (SHORT == 2 && P::kInOrderApart && one_digit)
    P::place_in_order(a, tile_begin, valid, pass, held, packed, value, ranks, kbuf, vbuf, dbuf);
  else if (SHORT != 1 || !one_digit)
    P::rank_and_place(a, ps, tile_begin, valid, pass, held, packed, value, ranks, kbuf, vbuf, dbuf, warp,
                      SHORT == 2 && one_digit);

  // Decoupled look-back, one thread per digit: add the counts of the tiles before this one,
  // walking back until a tile that already knows its inclusive prefix, LB entries per round.
  if (t < kRadix) {
    gpuk::u32 prefix = 0;
    if (tile > 0) {
      gpuk::i64 next = gpuk::i64(tile) - 1;
      bool found = false;
      while (!found) {
        E word[LB];
#pragma unroll
        for (int q = 0; q < LB; ++q)
          word[q] = next - q >= 0 ? *(volatile const E*)(lookback + (next - q) * kRadix + t) : kInclusive;
        int used = 0;
#pragma unroll
        for (int q = 0; q < LB; ++q) {
          if (found) break;
          const E tag = word[q] & ~O::kCountMask;
          if (tag != kAggregate && tag != kInclusive) break;  // not yet written in this pass
          prefix += static_cast<gpuk::u32>(word[q] & O::kCountMask);
          used = q + 1;
          found = tag == kInclusive;
        }
        next -= used;
      }
      *(mine + t) = kInclusive | (prefix + count);
    }
    ps.offset[t] = base + prefix - start;
  }
  if constexpr (P::kAsyncValues || P::kAsyncKeys) gpuk::copy_async_wait_all();
  __syncthreads();
  if (SHORT == 1 && one_digit) P::write_direct(a, ps, tile_begin, valid);
  else P::write_out(a, ps, tile_begin, valid, pass, value, ranks, smem);
}

template <class S, int BLOCK, int ITEMS, int MIN_BLOCKS, int VLOAD, int MATCH, int LB32, int LB, int KLOAD, int BATCH,
          int SHORT, int SKIP>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS) onesweep_pass(gpuk::SortArgs<S> a) {
  using O = Onesweep8<S, BLOCK, ITEMS, LB32>;
  extern __shared__ __align__(16) unsigned char smem[];
  auto& ps = *reinterpret_cast<gpuk::PassShared<BLOCK, O::kRadix>*>(smem + O::kTile * 8);
  if constexpr (SKIP == 1) {
    // The histogram's mask of one-digit passes, read by thread 0 beside its tile's atomic (the
    // two latencies overlap) and published by take_tile's barrier. Where no pass is left out (the
    // route is the identity: uniform keys) the pass is the SKIP 0 code, on the kernel's constant
    // parameters; only where passes are left out do the routed buffers (in shared memory, not
    // registers, which they held through the whole pass) serve.
    __shared__ gpuk::u32 one_digit_passes;
    __shared__ gpuk::SortArgs<S> routed;
    if (threadIdx.x == 0) one_digit_passes = __ldcg(a.scratch + 17);
    gpuk::u32 base;
    const gpuk::u32 tile = gpuk::take_tile(a, O::bases(a.scratch), ps, base);
    gpuk::SortArgs<S> r = a;
    const Route<S> route = Route<S>::of(r, one_digit_passes);
    if (route.identity) {
      pass_body<S, BLOCK, ITEMS, MIN_BLOCKS, VLOAD, MATCH, LB32, LB, KLOAD, BATCH, SHORT, SKIP>(a, a.pass, tile, base);
      return;
    }
    if (route.copies) Route<S>::template copy<BLOCK * ITEMS, BLOCK>(r);
    if (!route.run) return;
    if (threadIdx.x == 0) routed = r;
    __syncthreads();
    pass_body<S, BLOCK, ITEMS, MIN_BLOCKS, VLOAD, MATCH, LB32, LB, KLOAD, BATCH, SHORT, SKIP>(routed, route.order, tile,
                                                                                           base);
  } else {
    pass_body<S, BLOCK, ITEMS, MIN_BLOCKS, VLOAD, MATCH, LB32, LB, KLOAD, BATCH, SHORT, SKIP>(a, a.pass, 0, 0);
  }
}
