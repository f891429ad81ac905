// The anneal strategy: simulated annealing over neighbouring values, starting from the best of
// the kernel files' default variants, restarting from a random point when it stalls or has
// nowhere to go.
#include <algorithm>
#include <cmath>

#include "strategies.hpp"

namespace gpuk::detail {

namespace {

class Annealer {
 public:
  explicit Annealer(Sweep& sweep)
      : sweep_(sweep), budget_(sweep.options().evaluations.value_or(32)), patience_(std::max(8, budget_ / 4)),
        cooling_(std::pow(0.01, 1.0 / std::max(1, budget_))) {}

  void run() {
    sweep_.plan(static_cast<std::size_t>(budget_));
    start_from_defaults();
    while (sweep_.within(budget_)) {
      if (!current_ || since_best_ >= patience_) {
        since_best_ = 0;
        const auto r = random_point();
        if (!r) break;  // nothing left to try
        const Evaluation& e = sweep_.evaluate(*r);
        if (!current_ || sweep_.cost(e)) consider(e, true);
        continue;
      }
      std::vector<Candidate> fresh;
      for (const auto& n : sweep_.space().neighbours(*current_))
        if (!sweep_.known(n) && sweep_.runnable(n)) fresh.push_back(n);
      if (fresh.empty()) {
        since_best_ = patience_;  // a local optimum with every neighbour seen: restart
        continue;
      }
      sweep_.prepare(fresh);
      const Candidate pick = fresh[std::uniform_int_distribution<std::size_t>(0, fresh.size() - 1)(sweep_.rng())];
      const Evaluation& e = sweep_.evaluate(pick);
      ++since_best_;
      consider(e, false);
      temperature_ *= cooling_;
    }
    sweep_.note_time_budget(budget_);
  }

 private:
  // Every file's defaults; the best of them is where the walk starts.
  void start_from_defaults() {
    std::vector<Candidate> starts;
    for (std::size_t f = 0; f < sweep_.space().files().size(); ++f) {
      const Candidate c = sweep_.space().defaults(f);
      if (sweep_.runnable(c)) starts.push_back(c);
    }
    sweep_.prepare(starts);
    for (const auto& c : starts) {
      if (!sweep_.within(budget_)) break;
      const Evaluation& e = sweep_.evaluate(c);
      const auto ec = sweep_.cost(e);
      if (ec && (!current_ || *ec < current_cost_)) consider(e, true);
    }
  }

  std::optional<Candidate> random_point() {
    const Space& space = sweep_.space();
    const std::uint64_t size = space.size();
    for (int tries = 0; tries < 1000; ++tries) {
      const Candidate c = space.at(std::uniform_int_distribution<std::uint64_t>(0, size - 1)(sweep_.rng()));
      if (!sweep_.known(c) && sweep_.runnable(c)) return c;
    }
    for (std::uint64_t i = 0; i < size && i < 1000000; ++i) {  // a nearly exhausted space
      const Candidate c = space.at(i);
      if (!sweep_.known(c) && sweep_.runnable(c)) return c;
    }
    return std::nullopt;
  }

  void consider(const Evaluation& e, bool force) {
    const auto c = sweep_.cost(e);
    if (!c) return;
    if (!have_best_ || *c < best_cost_) best_cost_ = *c, have_best_ = true, since_best_ = 0;
    if (force || !current_) {
      current_ = e.candidate, current_cost_ = *c;
      return;
    }
    const double delta = (*c - current_cost_) / current_cost_;
    if (delta < 0 || std::uniform_real_distribution<double>(0, 1)(sweep_.rng()) < std::exp(-delta / temperature_))
      current_ = e.candidate, current_cost_ = *c;
  }

  Sweep& sweep_;
  const int budget_;
  const int patience_;
  const double cooling_;
  double temperature_ = 0.05;  // a 5% slower neighbour is accepted with probability 1/e at first
  std::optional<Candidate> current_;
  double current_cost_ = 0, best_cost_ = 0;
  bool have_best_ = false;
  int since_best_ = 0;
};

}  // namespace

void walk_anneal(Sweep& sweep) { Annealer(sweep).run(); }

}  // namespace gpuk::detail
