// One sweep in progress (tune() in sweep.cpp) and the strategies that walk it, one file each:
// walk_exhaustive.cpp, walk_random.cpp, walk_anneal.cpp, bayes.cpp. The Sweep owns the
// bookkeeping (pruning, measuring each point once, energy, the journal, progress, budgets); a
// strategy only picks the points. Not installed.
#pragma once
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tune/sweep/sweep.hpp"

namespace gpuk::detail {

class Sweep {
 public:
  Sweep(const Space& space, Measurer& measurer, const TuneOptions& options);

  const Space& space() const { return space_; }
  const TuneOptions& options() const { return options_; }
  std::mt19937_64& rng() { return rng_; }

  // False when the point cannot run here (recorded once as pruned).
  bool runnable(const Candidate& c);
  // True when the point was evaluated already (this sweep, or the journal).
  bool known(const Candidate& c) const { return known_.count(c) > 0; }
  // Verifies and times a point (once; later calls return the first evaluation).
  const Evaluation& evaluate(const Candidate& c);
  // Its cost under the objective (the median), nullopt when it did not run correctly.
  std::optional<double> cost(const Evaluation& e) const;
  // The points evaluated so far (pruned ones aside), with their costs.
  std::vector<std::pair<Candidate, std::optional<double>>> history() const;
  // These points will be measured soon (the measurer compiles them in the background).
  void prepare(const std::vector<Candidate>& points) { measurer_.prepare(space_, points); }

  // The strategy plans this many measured points (the progress line's denominator).
  void plan(std::size_t planned);
  bool out_of_time() const;
  bool stopped() const { return !result_.stopped.empty(); }
  std::size_t done() const { return progress_.done; }
  // Strategies with a budget of evaluations (anneal, bayes): whether to go on, and the reason to
  // give when the time ran out first.
  bool within(int budget) const;
  void note_time_budget(int budget);
  // Exhaustive and random: measures a planned list in order (the journal's points are taken,
  // the rest compiled in the background first), until the time budget or the GPU runs out.
  void measure_in_order(const std::vector<Candidate>& todo);

  // Runs the strategy, the recheck of the leaders and the ranking.
  TuneResult run();

 private:
  void report(const std::string& current);
  Evaluation make(const Candidate& c) const;
  void add_energy(Evaluation& e);
  void take_prior();
  void lost(const ContextLost& ex);
  void stop_for_time(std::size_t left);
  void recheck();
  void rank();

  const Space& space_;
  Measurer& measurer_;
  const TuneOptions& options_;
  const std::chrono::steady_clock::time_point start_;
  const LaunchLimits limits_;
  const std::vector<std::string> args_;
  const bool want_energy_;
  TuneResult result_;
  std::map<Candidate, std::size_t> known_;  // point -> its evaluation
  std::vector<std::size_t> ok_;             // the ranking, once rank() has run
  Progress progress_;
  std::mt19937_64 rng_;
  bool context_dead_ = false;
  double in_measure_ = 0;  // inside measurer.measure()
  double in_recheck_ = 0;
};

// The spread of the joules per call of a point's energy windows.
Spread joules_of(const std::vector<EnergySample>& energy);

void walk_exhaustive(Sweep& sweep);
void walk_random(Sweep& sweep);
// Simulated annealing over neighbouring values (docs/tuning.md, "Strategies").
void walk_anneal(Sweep& sweep);
// Bayesian optimisation: a Gaussian-process surrogate of log cost (Matern 5/2, hyperparameters
// by marginal likelihood over a grid) and expected improvement over the runnable unseen points
// (docs/tuning.md, "Strategies").
void walk_bayes(Sweep& sweep);

}  // namespace gpuk::detail
