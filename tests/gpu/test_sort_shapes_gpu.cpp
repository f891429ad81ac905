// The sort kernels' shapes on the GPU: radix and onesweep at their tiles, register caps, value
// loads, warp matches and look-back widths, rank_bucket at its splits, each against
// std::stable_sort on ties across many tiles (test_sort_gpu.cpp sweeps every file at its defaults).
// Needs a GPU: without one this program prints why and exits 77, which CTest reports as skipped.
#include <doctest/doctest.h>

#include "sort_gpu.hpp"

using namespace gpuk;
using namespace gpuk::test::sort_gpu;

TEST_CASE("radix takes the digit passes when the one-block path is off, at every radix width, tile, register cap, value load and look-back width") {
  const std::vector<std::string> params = {
      "{SMALL: 0}", "{SMALL: 0, RADIX_BITS: 5}", "{RADIX_BITS: 7, BLOCK: 128, ITEMS: 8}",
      "{RADIX_BITS: 6, BLOCK: 384, ITEMS: 10}", "{BLOCK: 512, ITEMS: 4, RADIX_BITS: 4}",
      // tiles above 48 KiB of shared memory (opted in at launch); the compiler's own register choice
      "{BLOCK: 384, ITEMS: 20, MIN_BLOCKS: 2}", "{MIN_BLOCKS: 1}",
      // values loaded with the keys; 32-bit look-back entries
      "{SMALL: 0, VLOAD: 0}", "{SMALL: 0, LB32: 1, RADIX_BITS: 6}", "{BLOCK: 256, ITEMS: 23, VLOAD: 0, LB32: 1}"};
  CHECK(shape_sweep("radix", params, {DType::uint32, DType::float64, DType::int64},
                    {Case{"sort_pairs", "uint64", true}, Case{"argsort", "uint32", false}}) == 10 * 3 * 4 * 2);
}

TEST_CASE("onesweep at every tile, register cap, value load, warp match and look-back width, on ties across many tiles") {
  const std::vector<std::string> params = {
      "{BLOCK: 256, ITEMS: 8, MATCH: 1}", "{BLOCK: 512, ITEMS: 12, MATCH: 2, LB: 1}",
      "{BLOCK: 384, ITEMS: 20, MIN_BLOCKS: 3, LB32: 1}", "{VLOAD: 1, LB: 4}",
      "{BLOCK: 256, ITEMS: 23, VLOAD: 1, LB32: 1, MATCH: 1}", "{MIN_BLOCKS: 1, ITEMS: 24}"};
  CHECK(shape_sweep("onesweep", params, {DType::uint32, DType::float32, DType::int64, DType::float64},
                    {Case{"sort", "uint32", true}, Case{"sort_pairs", "uint32", false},
                     Case{"sort_pairs", "uint64", true}, Case{"argsort", "uint32", false}}) == 6 * 4 * 4 * 4);
}

TEST_CASE("onesweep copies values to shared memory at their rank (VLOAD 2): pairs and argsort, one exchange round and two") {
  // 4-byte keys with 4-byte values: each value goes from global to shared memory by cp.async as
  // soon as its key's rank is known (argsort's first pass writes the index); 8-byte keys or
  // values take VLOAD 1's second round. Ties across many tiles, a partial last tile, n = 1.
  shape_sweep("onesweep", {"{BLOCK: 384, ITEMS: 20, MIN_BLOCKS: 3, VLOAD: 2, LB32: 1}", "{BLOCK: 256, ITEMS: 12, VLOAD: 2, MATCH: 1}"},
                 {DType::uint32, DType::float32, DType::int32, DType::float64},
                 {Case{"sort_pairs", "uint32", false}, Case{"sort_pairs", "uint32", true},
                  Case{"sort_pairs", "uint64", false}, Case{"argsort", "uint32", true}});
}

TEST_CASE("onesweep copies keys to shared memory at their rank (KLOAD 1): keys, pairs and argsort, 8- and 4-byte keys") {
  // The keys are loaded for their digits only and copied from global to shared memory by
  // cp.async once ranked; the exchange then holds them as they are (integers unmapped, floats'
  // NaNs and zeros untouched). With VLOAD 2 keys and values both go that way.
  shape_sweep("onesweep", {"{BLOCK: 384, ITEMS: 20, MIN_BLOCKS: 3, KLOAD: 1, LB32: 1}", "{BLOCK: 256, ITEMS: 12, KLOAD: 1, VLOAD: 2, MATCH: 2}"},
                 {DType::uint64, DType::int64, DType::float64, DType::float32},
                 {Case{"sort", "uint32", false}, Case{"sort", "uint32", true}, Case{"sort_pairs", "uint32", false},
                  Case{"argsort", "uint32", true}});
}

TEST_CASE("onesweep with a tile's loads issued together (BATCH 1): keys, pairs and argsort, every key kind, VLOAD 0, 1 and 2, KLOAD 1") {
  // Every key and value load of a tile before the first key is mapped (floats) or flipped
  // (signed, descending), argsort's first-pass indices made once per tile: the same answers, on
  // ties across many tiles, a partial last tile and n = 1.
  CHECK(shape_sweep("onesweep",
                    {"{BLOCK: 384, ITEMS: 20, MIN_BLOCKS: 2, VLOAD: 0, LB32: 1, BATCH: 1}",
                     "{BLOCK: 256, ITEMS: 12, VLOAD: 1, MATCH: 1, BATCH: 1}",
                     "{BLOCK: 384, ITEMS: 20, MIN_BLOCKS: 3, VLOAD: 2, KLOAD: 1, LB32: 1, BATCH: 1}"},
                    {DType::uint32, DType::int32, DType::float32, DType::float64},
                    {Case{"sort", "uint32", true}, Case{"sort_pairs", "uint32", false},
                     Case{"sort_pairs", "uint64", true}, Case{"argsort", "uint32", true}}) == 3 * 4 * 4 * 4);
}

TEST_CASE("rank_bucket's blocks share the ranking: every split, bucket width and grouping, on repeated, narrow and 8-byte keys") {
  // The blocks order a bucket's keys differently (each by its own atomics), so which block ranks
  // which bucket must not depend on that order: buckets crossing a block's share of the
  // positions are where it would show, and repeated keys make them long.
  int runs = 0;
  for (const std::string params : {"{SPLIT: 1}", "{SPLIT: 2, SHARE: 0}", "{SPLIT: 2}", "{SPLIT: 4, SHARE: 0}",
                                   "{SPLIT: 4}", "{SPLIT: 8, BUCKET_BITS: 10}", "{SPLIT: 16, BUCKET_BITS: 11}",
                                   "{SPLIT: 16, ITEMS: 8, BUCKET_BITS: 13}", "{BLOCK: 256, ITEMS: 16, BUCKET_BITS: 8, SPLIT: 8}"})
    for (DType dtype : {DType::uint32, DType::float64})
      for (std::uint64_t size : {33ull, 1000ull, 4096ull})
        for (const std::string data : {"{generator: few_distinct, distinct: 5, " + range_of(dtype),
                                       std::string("{generator: uniform, low: 1000, high: 1100"),
                                       "{generator: uniform, " + range_of(dtype)})
          for (const Case& c : {Case{"sort_pairs", "uint32", true}, Case{"argsort", "uint32", false}}) {
            const std::string yaml = "family: sort\noperation: " + c.op + "\nkernel: rank_bucket\nparams: " + params +
                                     "\ndtype: " + std::string(dtype_name(dtype)) + "\norder: " +
                                     (c.descending ? "descending" : "ascending") + "\nvalues: " + c.values +
                                     "\nsize: " + std::to_string(size) + "\ndata: " + data +
                                     ", seed: " + std::to_string(fresh_seed()) +
                                     "}\nwarmup: 1\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n";
            const RunSpec spec = parse_run_spec(yaml, "gpu-test.yaml", gpu().plugins, gpu().kernels);
            const RunReport r = run(spec, {gpu().runtime}, gpu().device);
            ++runs;
            CHECK_MESSAGE(r.verification.passed, (params + " " + std::string(dtype_name(dtype)) + " n=" +
                                                  std::to_string(size) + " " + data + " " + c.op + ": " +
                                                  r.verification.detail));
          }
  CHECK(runs == 9 * 2 * 3 * 3 * 2);
}
