// onesweep.cu's shortcuts against the CPU reference on the inputs that take them, alone and with
// BATCH 1 (as the H200's shipped entries take them): SKIP 1 (a pass
// in which every key has one digit is not run; which passes run, and which buffers each reads and
// writes, decided on the device; where none is left out, the pass without routing), SHORT 1 (a
// tile whose keys all have one digit is copied from the input to its place) and SHORT 2 (such a
// tile goes through the exchange in its own order, unranked). Keys, pairs (stability through the
// values) and argsort; every answer element by element. Sizes from the device: a few tiles per SM. Needs a GPU: without one
// this program prints why and exits 77, which CTest reports as skipped.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "sort_gpu.hpp"

using namespace gpuk;
using namespace gpuk::test::sort_gpu;

namespace {

// Keys whose digit p (8 bits, of the unsigned key's bits) is constant where `fixed` has bit p
// set (its value: that byte of `pattern`), random elsewhere, as a .npy file.
std::string constant_digits(DType dtype, std::uint64_t n, unsigned fixed, std::uint64_t pattern) {
  std::mt19937_64 rng(fresh_seed());
  const auto path = gpu().dir.path() / ("digits-" + std::to_string(rng()) + ".npy");
  HostArray a(dtype, n);
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    std::uint64_t mask = 0;
    for (unsigned p = 0; p < sizeof(T); ++p)
      if (fixed >> p & 1u) mask |= std::uint64_t{0xff} << (8 * p);
    for (auto& x : a.as<T>()) {
      const std::uint64_t bits = (rng() & ~mask) | (pattern & mask);
      if constexpr (sizeof(T) == 4) {
        const auto b = static_cast<std::uint32_t>(bits);
        std::memcpy(&x, &b, 4);
      } else {
        std::memcpy(&x, &bits, 8);
      }
    }
  });
  write_npy(path, a);
  return "{file: " + path.string() + "}";
}

struct Kind {
  std::string name;
  std::string data;
};

// The inputs: the shortcuts' own (labels, one digit high or low, digits in between, all equal,
// sorted and reversed runs of few keys) and plain random and sorted data beside them.
std::vector<Kind> kinds(DType dtype, std::uint64_t n) {
  const std::string seed = ", seed: " + std::to_string(fresh_seed()) + "}";
  std::vector<Kind> k = {
      {"random", "{generator: uniform, " + range_of(dtype) + seed},
      {"sorted", "{generator: sorted, " + range_of(dtype) + seed},
      {"reversed", "{generator: reversed, " + range_of(dtype) + seed},
      {"all equal", "{generator: few_distinct, distinct: 1, " + range_of(dtype) + seed},
      {"16 labels", "{generator: uniform, low: 0, high: 15" + seed},
      {"16 labels sorted", "{generator: sorted, low: 0, high: 15" + seed},
      {"16 labels reversed", "{generator: reversed, low: 0, high: 15" + seed},
      {"16 distinct", "{generator: few_distinct, distinct: 16, " + range_of(dtype) + seed},
  };
  if (!dtype_is_float(dtype)) {
    k.push_back({"digits 0 and 1 vary", "{generator: uniform, low: 16777216, high: 16842751" + seed});
    k.push_back({"digit 0 one value", constant_digits(dtype, n, 0x1u, 0x5a)});
    k.push_back({"digits 0 and 2 one value", constant_digits(dtype, n, 0x5u, 0x00c300a5)});
  }
  return k;
}

struct Params {
  const char* name;
  std::string yaml;
};

// Two tiles per SM (384 x 16 keys at the defaults) and a ragged end.
std::uint64_t tiles_size() { return static_cast<std::uint64_t>(gpu().device.info().sm_count) * 2 * 384 * 16 + 77; }

// One run: its spec and what a failure names.
struct Job {
  RunSpec spec;
  std::string label;
};

Job job(const Params& p, DType dtype, const Case& c, const Kind& kind, std::uint64_t n) {
  const std::string yaml = "family: sort\noperation: " + c.op + "\nkernel: onesweep\nparams: " + p.yaml +
                           "\ndtype: " + std::string(dtype_name(dtype)) + "\norder: " +
                           (c.descending ? "descending" : "ascending") + "\nvalues: " + c.values +
                           "\nsize: " + std::to_string(n) + "\ndata: " + kind.data +
                           "\nwarmup: 1\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n";
  return {parse_run_spec(yaml, "gpu-test.yaml", gpu().plugins, gpu().kernels),
          std::string(p.name) + " " + std::string(dtype_name(dtype)) + " " + c.op + " " +
              (c.descending ? "descending " : "") + kind.name + " n=" + std::to_string(n)};
}

// Every job's variants compiled at once, then each run and checked element by element.
void run_all(const std::vector<Job>& jobs) {
  const auto file = gpu().kernels.find("sort", "onesweep");
  REQUIRE(file);
  const auto names = [&](const RunSpec& spec) {
    const Variant v(file, gpu().plugins.get("sort").template_args(problem_of(spec)), spec.params);
    std::vector<std::string> out;
    for (const auto& l : file->launches) out.push_back(v.name_expression(l));
    return out;
  };
  test::CompiledSet set;
  std::vector<std::vector<std::string>> variants;
  for (const auto& j : jobs) variants.push_back(names(j.spec));
  set.add(file, variants, 2);
  set.compile(Jit(jit_options(gpu().device.info().arch(), gpu().kernels), &gpu().cache));
  for (const auto& j : jobs) {
    const RunReport r = run(j.spec, {gpu().runtime}, gpu().device, &set.holding(*file, names(j.spec).front()));
    CHECK_MESSAGE(r.verification.passed, (j.label + ": " + r.verification.detail));
  }
}

}  // namespace

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
