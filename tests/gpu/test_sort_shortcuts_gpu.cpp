// onesweep.cu's shortcuts against the CPU reference on the inputs that take them: SKIP 1 (a pass
// in which every key has one digit is not run; which passes run, and which buffers each reads and
// writes, decided on the device; where none is left out, the pass without routing), SHORT 1 (a
// tile whose keys all have one digit is copied from the input to its place) and SHORT 2 (such a
// tile goes through the exchange in its own order, unranked). Keys, pairs (stability through the
// values) and argsort; every answer element by element. Sizes from the device: a few tiles per SM.
// test_sort_batch_gpu.cpp has them with BATCH 1. Needs a GPU: without one this program prints why
// and exits 77, which CTest reports as skipped.
#include <doctest/doctest.h>

#include "sort_shortcuts.hpp"

using namespace gpuk;
using namespace gpuk::test::sort_shortcuts;


TEST_CASE("onesweep's SKIP and SHORT shortcuts match std::stable_sort on the inputs that take them") {
  const std::uint64_t n = tiles_size();
  // Pairs take the first two (the full set of shortcuts, and SHORT 2's); keys and argsort all.
  const std::vector<Params> params = {{"SKIP 1 SHORT 1", "{SKIP: 1, SHORT: 1}"},
                                      {"SKIP 1 SHORT 2", "{SKIP: 1, SHORT: 2}"},
                                      {"SKIP 0 SHORT 1", "{SKIP: 0, SHORT: 1}"},
                                      {"SKIP 1 SHORT 1 KLOAD 1 VLOAD 1", "{SKIP: 1, SHORT: 1, KLOAD: 1, VLOAD: 1}"},
                                      {"SKIP 0 SHORT 2 VLOAD 1", "{SKIP: 0, SHORT: 2, VLOAD: 1}"},
                                      {"SKIP 1 SHORT 2 KLOAD 1 VLOAD 2", "{SKIP: 1, SHORT: 2, KLOAD: 1, VLOAD: 2}"}};
  const std::vector<Case> cases = {{"sort", "uint32", false},
                                   {"sort_pairs", "uint32", true},
                                   {"argsort", "uint32", false}};
  std::vector<Job> jobs;
  for (DType dtype : {DType::uint32, DType::int64, DType::float32})
    for (const Kind& kind : kinds(dtype, n))
      for (const Params& p : params)
        for (const Case& c : cases) {
          if (c.op == "sort_pairs" && p.name != params[0].name && p.name != params[1].name) continue;
          jobs.push_back(job(p, dtype, c, kind, n));
        }
  run_all(jobs);
}
