// What the onesweep shortcut test programs share: the inputs that take the shortcuts, each run's
// spec, and a batch of runs compiled at once and checked element by element.
#pragma once
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sort_gpu.hpp"

namespace gpuk::test::sort_shortcuts {

using namespace gpuk::test::sort_gpu;

// Keys whose digit p (8 bits, of the unsigned key's bits) is constant where `fixed` has bit p
// set (its value: that byte of `pattern`), random elsewhere, as a .npy file.
inline std::string constant_digits(DType dtype, std::uint64_t n, unsigned fixed, std::uint64_t pattern) {
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
inline std::vector<Kind> kinds(DType dtype, std::uint64_t n) {
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
inline std::uint64_t tiles_size() { return static_cast<std::uint64_t>(gpu().device.info().sm_count) * 2 * 384 * 16 + 77; }

// One run: its spec and what a failure names.
struct Job {
  RunSpec spec;
  std::string label;
};

inline Job job(const Params& p, DType dtype, const Case& c, const Kind& kind, std::uint64_t n) {
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
inline void run_all(const std::vector<Job>& jobs) {
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

}  // namespace gpuk::test::sort_shortcuts
