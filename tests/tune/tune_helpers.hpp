// Helpers shared by the tuning tests: a small kernel file and a fake Measurer (no GPU).
#pragma once
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernel/kernel_file.hpp"
#include "tune/sweep/sweep.hpp"

namespace gpuk::test {

inline const char* kTuneKernel = R"(/* gpuk
family: reduce
operations: [max]
params:
  BLOCK: {default: 256, values: [64, 128, 256, 512, 1024]}
  UNROLL: {default: 2, values: [1, 2, 4, 8]}
constraints:
  - BLOCK * UNROLL <= 4096
launch:
  - entry: k
    grid: ceil_div(n, BLOCK * UNROLL)
    block: BLOCK
*/
template <class R, int BLOCK, int UNROLL> __global__ void __launch_bounds__(BLOCK) k(int* out) { *out = UNROLL; }
)";

inline const char* kTuneKernel2 = R"(/* gpuk
family: reduce
operations: [max]
params:
  BLOCK: {default: 128, values: [32, 64, 128, 256]}
launch:
  - entry: other
    grid: 1
    block: BLOCK
*/
template <class R, int BLOCK> __global__ void __launch_bounds__(BLOCK) other() {}
)";

inline std::shared_ptr<const KernelFile> tune_kernel(const char* source = kTuneKernel, const char* name = "k.cu") {
  return std::make_shared<const KernelFile>(KernelFile::parse(source, name));
}

// The whole metadata space of `files`.
inline Space metadata_space(const std::vector<std::shared_ptr<const KernelFile>>& files,
                            std::vector<TuneConstraint> constraints = {}) {
  std::vector<SpaceFile> sfs;
  for (const auto& f : files) {
    SpaceFile sf;
    sf.file = f;
    for (const auto& p : f->params) sf.values.push_back(p.values);
    sfs.push_back(sf);
  }
  return Space(std::move(sfs), std::move(constraints));
}

// A smooth cost with its minimum at BLOCK=256, UNROLL=4 (1.0 ms); `override` can turn chosen
// points into failures.
inline double smooth_cost(const std::map<std::string, std::int64_t>& p) {
  double cost = 1.0;
  if (p.count("BLOCK")) cost += 0.1 * std::pow(std::log2(static_cast<double>(p.at("BLOCK"))) - 8, 2);
  if (p.count("UNROLL")) cost += 0.05 * std::pow(std::log2(static_cast<double>(p.at("UNROLL"))) - 2, 2);
  return cost;
}

class FakeMeasurer : public Measurer {
 public:
  std::function<Outcome(const std::map<std::string, std::int64_t>&)> outcome;
  std::vector<std::size_t> batches;  // sizes of prepare() calls
  std::vector<std::string> measured;
  int timed = 0;

  FakeMeasurer() {
    outcome = [](const std::map<std::string, std::int64_t>& p) {
      Outcome o;
      const double c = smooth_cost(p);
      o.samples = {c * 1.002, c * 0.999, c, c * 1.001, c * 0.998};
      o.registers = 32;
      return o;
    };
  }
  std::map<std::string, std::int64_t> sizes;  // a declared kernel's named sizes, for its plans
  LaunchLimits limits() const override {
    LaunchLimits l{1 << 20, 132, 4, 1024, 48 * 1024};
    l.sizes = sizes;
    return l;
  }
  std::vector<std::string> leading_args() const override { return {"gpuk::Reduce<float, gpuk::ReduceOp::Max, false>"}; }
  void prepare(const Space&, const std::vector<Candidate>& points) override { batches.push_back(points.size()); }
  Outcome measure(const Space& space, const Candidate& c) override {
    measured.push_back(space.label(c));
    return outcome(space.params(c));
  }
  // Energy per call of a point (joules); none: energy() returns nullopt, as without NVML.
  std::function<double(const std::map<std::string, std::int64_t>&)> joules;
  int energies = 0;  // energy() calls
  std::optional<EnergySample> energy(const Space& space, const Candidate& c, double ms) override {
    if (!joules) return std::nullopt;
    ++energies;
    EnergySample s;
    s.joules = joules(space.params(c));
    s.watts = ms > 0 ? s.joules / (ms * 1e-3) : 0;
    s.sm_mhz = 1755;
    s.calls = 1000;
    s.window_s = 0.1;
    return s;
  }
  std::vector<double> time(const Space& space, const Candidate& c, int repeats) override {
    ++timed;
    const auto o = outcome(space.params(c));
    std::vector<double> out;
    for (int i = 0; i < repeats; ++i) out.push_back(o.samples[static_cast<std::size_t>(i) % o.samples.size()]);
    return out;
  }
};

}  // namespace gpuk::test
