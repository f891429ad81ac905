// `gpuk tune`: sweeps the template parameters of kernel files, verifies and times every variant,
// ranks them, and keeps the best per GPU and problem in a tuning database (docs/tuning.md).
//
// The pieces, each testable without a GPU:
//   Space     - the points to sweep: kernel files x parameter values, and what prunes them;
//   Measurer  - verifies and times one point (the GPU one compiles in bulk in the background;
//               tests inject a fake);
//   tune()    - a strategy (exhaustive, random, anneal, bayes) walking the space with a
//               Measurer, then the best few measured again, interleaved, to tell a win from a
//               tie, ranked by the objective (time, energy, energy x delay);
//   journal   - every measured point appended as it is measured, so that a sweep run again or
//               cut short measures only what is missing (tune/report/journal.hpp);
//   TuningDb  - the database on disk: atomic, merged under a lock with concurrent writers.
//
// This header: the sweep (tune(), its options and result), its report and its winner. The space
// is tune/sweep/space.hpp, measuring tune/sweep/measurer.hpp, the database tuning/tuning_db.hpp;
// one process's part of a sweep on the GPU is tune/sweep_on_gpu.hpp, its options
// tune/measure/sweep_options.hpp.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "plugin/plugin.hpp"
#include "tune/sweep/measurer.hpp"
#include "tune/sweep/space.hpp"
#include "tuning/tuning_db.hpp"

namespace gpuk {

struct DeviceInfo;

// --- The sweep -------------------------------------------------------------------------------

struct Evaluation {
  Candidate candidate;
  std::string label;
  std::map<std::string, std::int64_t> params;
  Outcome outcome;
  Spread time;             // of outcome.samples, or of the recheck's samples when rechecked
  Spread energy;           // joules per call, of outcome.energy (count 0: not measured)
  bool rechecked = false;
  bool reused = false;     // taken from the journal of an earlier sweep, not measured now
  std::string recheck_stop;  // with an automatic recheck: "converged", "time cap" or "run cap"
  double at_seconds = 0;   // since the sweep started
};

struct Progress {
  std::size_t done = 0, planned = 0;  // measured points (pruned excluded)
  std::size_t pruned = 0;
  double elapsed = 0;
  std::string current;
};

struct TuneOptions {
  TuneStrategy strategy = TuneStrategy::exhaustive;
  TuneObjective objective = TuneObjective::time;
  // A metric that ranks instead (TuneSpec::metric_objective): its value for an evaluation whose
  // kernel takes `ms` milliseconds, nullopt when it has none. Higher is better: ranked by 1 / value.
  std::function<std::optional<double>(const Evaluation&, double ms)> metric;
  bool metric_higher_is_better = true;
  bool measure_energy = false;     // ask the measurer for energy (always with energy and edp)
  std::optional<int> evaluations;  // budget; random, anneal and bayes default to 32
  std::optional<double> seconds;
  std::uint64_t seed = 1;
  int recheck_top = 5;
  int recheck_repeats = 60;
  int recheck_rounds = 4;
  // The recheck times each leader in rounds until its median's confidence interval is within
  // the bound (recheck_repeats is then unused); see tune/sweep/auto_repeats.hpp.
  std::optional<AutoRepeats> recheck_auto;
  std::function<void(const Progress&)> progress;
  // Evaluations measured before (the journal: an earlier sweep, or an earlier process of this
  // one that lost its CUDA context): taken as they are and never measured again. An ok one
  // without energy gets its energy measured when the sweep needs it.
  std::vector<Evaluation> prior;
  // Called with each point as it is measured (and again when energy is added to a prior one):
  // the journal appends it.
  std::function<void(const Evaluation&)> on_measured;
};

// An evaluation's figure of merit under an objective, with its quartiles; nullopt when it did
// not run correctly or (energy, edp) has no energy. time: ms; energy: J per call; edp: J x s.
struct Cost {
  double median = 0, q1 = 0, q3 = 0;
};
std::optional<Cost> cost_of(const Evaluation& e, TuneObjective objective);
// The same under the options' objective, or their metric when they rank by one (a positive cost:
// the metric, or 1 / metric when higher is better; nullopt when it is not positive then).
std::optional<Cost> cost_of(const Evaluation& e, const TuneOptions& options);
bool needs_energy(TuneObjective objective);

struct TuneResult {
  std::vector<Evaluation> evaluations;  // in the order they were evaluated, pruned ones included
  std::vector<std::size_t> ranking;     // indices of the ok evaluations, best (by the objective) first
  std::vector<std::size_t> ties;        // ranked ok evaluations within the winner's noise
  TuneObjective objective = TuneObjective::time;
  std::size_t reused = 0;               // evaluations taken from the journal of earlier sweeps
  std::string stopped;                  // why the sweep stopped early, if it did
  bool aborted = false;                 // it stopped because the GPU could not go on
  bool context_lost = false;            // ... because a variant took the CUDA context down:
                                        // a fresh process can go on (from the journal)
  double seconds = 0;
  SweepTimes times;                     // the measurer's, with the recheck and total of tune()
  std::size_t count(Status s) const;
  const Evaluation* winner() const { return ranking.empty() ? nullptr : &evaluations[ranking.front()]; }
};

TuneResult tune(const Space& space, Measurer& measurer, const TuneOptions& options);

// Milliseconds -> GB/s for `bytes` moved.
double gbs_of(std::uint64_t bytes, double ms);

// The report of a sweep.
struct TuneReport {
  std::string config, family, operation, dtype, gpu, arch, nvrtc, strategy, timing;
  std::string objective = "time";
  int sm_count = 0;                // the device's, for replays (tools/bench_strategies)
  std::string journal;             // the journal file of the sweep ("" when none)
  std::vector<std::string> notes;  // said under the table ("energy not measured: ...")
  std::vector<std::pair<std::string, std::string>> options;
  std::uint64_t size = 0, bytes_moved = 0, seed = 0;
  DataSummary data;  // the input every variant ran on
  double peak_gbs = 0, wall_seconds = 0;
  std::vector<std::string> devices;  // a sweep over several GPUs: "GPU 0", "GPU 1", ... of this model
  CompileStats compile;
  TuneResult result;
  // Where the time went: result.times with the process's start and the saving added (a pooled
  // sweep: the parent's), and for a pooled sweep each worker's own ("GPU 0", its times).
  SweepTimes times;
  std::vector<std::pair<std::string, SweepTimes>> worker_times;
  // The family's library call timed on the same input after the sweep (SweepOptions::baseline).
  std::optional<BaselineTiming> baseline;
};
void print_tune_report(std::ostream& out, const TuneReport& report, int show);

// The report of a sweep of `t` on `info`: the problem, the device, the strategy, and the timing
// sentence (repeats, recheck, whether and how the L2 was flushed). wall_seconds is left to the
// caller, which may have run the sweep over several processes.
TuneReport make_tune_report(const TuneSpec& t, const TuneOptions& options, TuneResult result, const DeviceInfo& info,
                            std::uint64_t bytes_moved, bool flushed, const CompileStats& stats);


void write_tune_json(const std::filesystem::path& path, const TuneReport& report);
void write_tune_csv(const std::filesystem::path& path, const TuneReport& report);

// --- What a sweep records -------------------------------------------------------------------

// The sweep's winner as a tuning database entry (TuningDb::merge_into writes it); nullopt when
// there is none or the sweep was cut short by the GPU.
std::optional<TuningEntry> winner_entry(const TuneReport& report, const Space& space);

}  // namespace gpuk
