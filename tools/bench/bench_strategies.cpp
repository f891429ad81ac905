// bench_strategies: how soon each strategy of `gpuk tune` finds the winner, replayed from
// recorded sweeps (not a test; docs/tuning.md, "Strategies compared").
//
//   bench_strategies [--seeds N] [--kernels DIR] [--plugins DIR] REPORT.json...
//
// Each REPORT.json is what `gpuk tune CONFIG --json REPORT.json` wrote for an exhaustive sweep
// (every variant measured). Its config is loaded again (the path it names, relative to the
// current directory: run from the repository root) to rebuild the same space, and each strategy
// walks it with a measurer that answers from the report instead of the GPU. Printed per report
// and strategy: the evaluations until the best variant measured so far is within the noise of
// the exhaustive winner (its recorded median at most the winner's upper quartile), over the
// seeds: median, mean, worst, and how many seeds got there within a quarter of the space.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/dtype.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "run/prepare.hpp"
#include "tune/sweep/sweep.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

struct Recorded {
  Status status = Status::pruned;
  double median = 0, q1 = 0, q3 = 0;
  int registers = -1;
};

// Answers from a recorded sweep: a point it lacks was pruned there. Once it has answered with a
// variant within `noise`, the next measure() ends the sweep (the count is known; the rest of the
// budget would only cost time).
class ReplayMeasurer final : public Measurer {
 public:
  ReplayMeasurer(const std::map<std::string, Recorded>& table, LaunchLimits limits, std::vector<std::string> leading,
                 double noise)
      : table_(table), limits_(limits), leading_(std::move(leading)), noise_(noise) {}
  LaunchLimits limits() const override { return limits_; }
  std::vector<std::string> leading_args() const override { return leading_; }
  void prepare(const Space&, const std::vector<Candidate>&) override {}
  Outcome measure(const Space& space, const Candidate& c) override {
    if (found_) throw SweepAborted("found");
    Outcome o;
    const auto it = table_.find(space.label(c));
    if (it == table_.end()) {
      o.status = Status::pruned;
      o.why = "not in the recorded sweep";
      return o;
    }
    o.status = it->second.status;
    o.registers = it->second.registers;
    if (o.status == Status::ok) o.samples = samples(it->second);
    else o.why = "recorded: " + std::string(status_name(o.status));
    found_ = found_ || (o.status == Status::ok && it->second.median <= noise_);
    return o;
  }
  std::vector<double> time(const Space& space, const Candidate& c, int) override {
    return samples(table_.at(space.label(c)));
  }

 private:
  static std::vector<double> samples(const Recorded& r) { return {r.q1, r.median, r.median, r.q3}; }
  const std::map<std::string, Recorded>& table_;
  LaunchLimits limits_;
  std::vector<std::string> leading_;
  double noise_;
  bool found_ = false;
};

Status status_of(const std::string& name) {
  for (Status s : {Status::ok, Status::invalid, Status::pruned, Status::compile_error, Status::launch_error,
                   Status::faulted, Status::timed_out})
    if (status_name(s) == name) return s;
  return Status::launch_error;
}

struct Row {
  std::string strategy;
  std::vector<std::size_t> found;  // per seed; 0: never
};

int bench(const fs::path& report, const PluginRegistry& plugins, const KernelLibrary& kernels, int seeds) {
  std::ifstream in(report);
  if (!in) throw Error(report.string() + ": cannot read");
  const auto j = nlohmann::json::parse(in);
  const fs::path config = j.at("config").get<std::string>();
  const TuneSpec t = load_tune_spec(config, plugins, kernels);
  const Space space = Space::from_spec(t, kernels);

  std::map<std::string, Recorded> table;
  for (const auto& v : j.at("variants")) {
    Recorded r;
    r.status = status_of(v.at("status").get<std::string>());
    if (r.status == Status::ok) {
      r.median = v.at("time").at("median_ms").get<double>();
      r.q1 = v.at("time").at("q1_ms").get<double>();
      r.q3 = v.at("time").at("q3_ms").get<double>();
    }
    if (v.contains("registers")) r.registers = v["registers"].get<int>();
    table[v.at("variant").get<std::string>()] = r;
  }
  if (!j.contains("best")) throw Error(report.string() + ": the sweep has no winner");
  const Recorded& winner = table.at(j["best"]["variant"].get<std::string>());
  const double noise = winner.q3;  // within the noise: a median at most the winner's upper quartile
  std::size_t within = 0, ran = 0;
  for (const auto& [label, r] : table) {
    within += r.status == Status::ok && r.median <= noise;
    ran += r.status != Status::pruned;
  }

  LaunchLimits limits;
  limits.n = static_cast<std::int64_t>(t.run.size);
  limits.sm_count = j["device"].value("sm_count", 132);
  limits.elem_bytes = static_cast<int>(dtype_size(t.run.dtype));
  limits.max_threads_per_block = 1024;
  limits.max_shared_bytes = 227 * 1024;
  const Problem problem = problem_of(t.run);
  const auto leading = plugins.get(problem.family).template_args(problem);

  std::cout << config.string() << ": " << j.value("gpu", j["device"].value("name", std::string())) << ", "
            << ran << " variants measured of " << space.size() << " points; winner "
            << j["best"]["variant"].get<std::string>() << " " << winner.median << " ms, " << within
            << " variant" << (within == 1 ? "" : "s") << " within its noise (median <= " << noise << " ms)\n";
  const std::size_t quarter = ran / 4;
  std::vector<Row> rows;
  for (TuneStrategy s : {TuneStrategy::exhaustive, TuneStrategy::random, TuneStrategy::anneal, TuneStrategy::bayes}) {
    Row row{strategy_name(s), {}};
    for (int seed = 1; seed <= (s == TuneStrategy::exhaustive ? 1 : seeds); ++seed) {
      ReplayMeasurer m(table, limits, leading, noise);
      TuneOptions o;
      o.strategy = s;
      o.seed = static_cast<std::uint64_t>(seed);
      o.evaluations = static_cast<int>(ran);  // let it run until it finds the winner
      o.recheck_top = 0;
      const TuneResult r = tune(space, m, o);
      std::size_t n = 0, found = 0;
      for (const auto& e : r.evaluations) {
        if (e.outcome.status == Status::pruned && e.outcome.why != "recorded: pruned") continue;  // free
        if (e.outcome.detail == "found") break;  // the sweep was ended here
        ++n;
        if (e.outcome.status == Status::ok && e.time.median <= noise) {
          found = n;
          break;
        }
      }
      row.found.push_back(found);
    }
    rows.push_back(row);
  }
  std::cout << "  " << std::left << std::setw(12) << "strategy" << std::right << std::setw(6) << "seeds"
            << std::setw(9) << "median" << std::setw(8) << "mean" << std::setw(8) << "worst" << std::setw(16)
            << "within 1/4 (" + std::to_string(quarter) + ")" << "   evaluations to a variant within the winner's noise\n";
  for (const auto& row : rows) {
    std::vector<std::size_t> f = row.found;
    const bool all = std::none_of(f.begin(), f.end(), [](auto n) { return n == 0; });
    for (auto& n : f)
      if (n == 0) n = ran + 1;  // never found: counted as past the end
    std::sort(f.begin(), f.end());
    const double mean = static_cast<double>(std::accumulate(f.begin(), f.end(), std::size_t{0})) / f.size();
    const auto ok = std::count_if(f.begin(), f.end(), [&](auto n) { return n <= quarter; });
    std::cout << "  " << std::left << std::setw(12) << row.strategy << std::right << std::setw(6) << f.size()
              << std::setw(9) << f[f.size() / 2] << std::setw(8) << std::fixed << std::setprecision(1) << mean
              << std::setw(8) << (all ? std::to_string(f.back()) : std::string("never")) << std::setw(16)
              << std::to_string(ok) + "/" + std::to_string(f.size()) << std::defaultfloat << std::setprecision(6) << "\n";
  }
  std::cout << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> reports, extra_kernels, extra_plugins;
  int seeds = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "bench_strategies: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seeds") seeds = std::max(1, std::atoi(value().c_str()));
    else if (a == "--kernels") extra_kernels.push_back(value());
    else if (a == "--plugins") extra_plugins.push_back(value());
    else if (a == "-h" || a == "--help") {
      std::cout << "usage: bench_strategies [--seeds N] [--kernels DIR] [--plugins DIR] REPORT.json...\n"
                   "  REPORT.json: gpuk tune CONFIG --json REPORT.json of an exhaustive sweep; run from the\n"
                   "  directory its config path is relative to (the repository root)\n";
      return 0;
    } else reports.push_back(a);
  }
  if (reports.empty()) {
    std::cerr << "bench_strategies: give one or more tune JSON reports (--help)\n";
    return 2;
  }
  try {
    const PluginRegistry plugins(plugin_dirs(extra_plugins));
    const KernelLibrary kernels(kernel_dirs(extra_kernels));
    for (const auto& r : reports) bench(r, plugins, kernels, seeds);
  } catch (const std::exception& e) {
    std::cerr << "bench_strategies: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
