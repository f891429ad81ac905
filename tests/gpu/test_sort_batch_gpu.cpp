// onesweep.cu's shortcuts (SHORT, SKIP: test_sort_shortcuts_gpu.cpp) with a tile's loads issued
// together (BATCH 1), as the H200's shipped entries take them, against the CPU reference on the
// inputs that take the shortcuts. Needs a GPU: without one this program prints why and exits 77,
// which CTest reports as skipped.
#include <doctest/doctest.h>

#include "sort_shortcuts.hpp"

using namespace gpuk;
using namespace gpuk::test::sort_shortcuts;

TEST_CASE("the shortcuts with a tile's loads issued together (BATCH 1): keys flipped to be held, float pairs, both orders") {
  // The shapes the H200's shipped entries take: keys flipped to be held (descending unsigned,
  // signed) and float32 pairs with BATCH 1 and SHORT 1 or 2 and SKIP 1 or 0.
  const std::uint64_t n = tiles_size();
  const Params keys{"BATCH 1 SKIP 1 SHORT 1", "{BATCH: 1, SKIP: 1, SHORT: 1, MIN_BLOCKS: 3, LB32: 1}"};
  const Params pairs{"BATCH 1 SKIP 1 SHORT 2", "{BATCH: 1, SKIP: 1, SHORT: 2, LB32: 1}"};
  const Params index64{"BATCH 1 SKIP 0 SHORT 2 VLOAD 1", "{BATCH: 1, SKIP: 0, SHORT: 2, VLOAD: 1, LB32: 1}"};
  std::vector<Job> jobs;
  for (DType dtype : {DType::uint32, DType::int32, DType::float32, DType::int64})
    for (const Kind& kind : kinds(dtype, n))
      for (bool descending : {false, true}) {
        if (dtype == DType::uint32 && !descending) continue;  // not flipped: the case above
        if (dtype == DType::int64) {
          jobs.push_back(job(index64, dtype, {"argsort", "uint32", descending}, kind, n));
          continue;
        }
        jobs.push_back(job(dtype == DType::float32 ? pairs : keys, dtype, {"sort", "uint32", descending}, kind, n));
        jobs.push_back(job(pairs, dtype, {"sort_pairs", "uint32", descending}, kind, n));
      }
  run_all(jobs);
}
