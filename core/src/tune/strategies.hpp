// The strategies' internal interface: what a walk over the space may ask of the sweep (tune() in
// sweep.cpp owns the bookkeeping: pruning, measuring, budgets). Not installed.
#pragma once
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "tune/sweep.hpp"

namespace gpuk::detail {

struct WalkHooks {
  // True when the point can run here (a pruned point is recorded as such by the sweep).
  std::function<bool(const Candidate&)> runnable;
  // True when the point was evaluated already (this sweep, or the journal).
  std::function<bool(const Candidate&)> known;
  // Measures the point (once); returns its cost under the objective, nullopt when it failed.
  std::function<std::optional<double>(const Candidate&)> evaluate;
  // Points evaluated before the walk started (the journal), with their costs.
  std::function<std::vector<std::pair<Candidate, std::optional<double>>>()> history;
  // False once the budget, the time or the GPU has run out.
  std::function<bool()> go_on;
  // These points will be measured soon (compile them in the background).
  std::function<void(const std::vector<Candidate>&)> prepare;
};

// Bayesian optimisation: a Gaussian-process surrogate of log cost (Matern 5/2, hyperparameters
// by marginal likelihood over a grid) and expected improvement over the runnable unseen points
// (docs/tuning.md, "Strategies").
void walk_bayes(const Space& space, const WalkHooks& hooks, std::mt19937_64& rng);

}  // namespace gpuk::detail
