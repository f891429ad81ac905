// The bayes strategy: Bayesian optimisation with a Gaussian-process surrogate of log cost and
// expected improvement (gp.hpp), over the runnable points of the space.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "gp.hpp"
#include "strategies.hpp"

namespace gpuk::detail {

namespace {

// A point as coordinates in [0, 1]: one per kernel file (1 for its own, when there are several
// files) and one per parameter name of any file (its position in the file's ascending list; 0
// for a file without it). Lists are mostly powers of two or ranges, so positions are a fair scale.
class Encoder {
 public:
  explicit Encoder(const Space& space) : space_(space) {
    for (const auto& f : space.files())
      for (const auto& p : f.file->params)
        if (!names_.count(p.name)) names_.emplace(p.name, names_.size());
  }
  std::vector<double> operator()(const Candidate& c) const {
    const std::size_t files = space_.files().size() > 1 ? space_.files().size() : 0;
    std::vector<double> x(files + names_.size(), 0.0);
    if (files) x[c.file] = 1;
    const auto& sf = space_.files()[c.file];
    for (std::size_t i = 0; i < sf.values.size(); ++i) {
      const auto& list = sf.values[i];
      const auto at = std::find(list.begin(), list.end(), c.values[i]) - list.begin();
      x[files + names_.at(sf.file->params[i].name)] =
          list.size() > 1 ? static_cast<double>(at) / static_cast<double>(list.size() - 1) : 0.5;
    }
    return x;
  }

 private:
  const Space& space_;
  std::map<std::string, std::size_t> names_;
};

constexpr std::uint64_t kWholePool = 4096;  // spaces up to this size are scored point by point
constexpr std::size_t kSampledPool = 2048;  // larger ones: this many random points per step
constexpr std::size_t kMostPoints = 160;    // the model's training set at most

// The walk: an initial design, then each step the point of most expected improvement under a
// model fitted to what was measured.
class BayesWalk {
 public:
  explicit BayesWalk(Sweep& sweep) : sweep_(sweep), space_(sweep.space()), encode_(space_), size_(space_.size()) {
    for (const auto& [c, cost] : sweep.history()) add(c, cost);
    if (size_ <= kWholePool)
      for (std::uint64_t i = 0; i < size_; ++i) {
        const Candidate c = space_.at(i);
        if (sweep.runnable(c)) whole_.push_back(c);
      }
  }

  void run(int budget) {
    const std::vector<Candidate> start = initial_design();
    sweep_.prepare(start);
    for (const auto& c : start) {
      if (!sweep_.within(budget)) break;
      if (!sweep_.known(c)) record(c);
    }
    while (sweep_.within(budget)) {
      const auto candidates = pool();
      if (candidates.empty()) break;
      step(candidates);
    }
  }

 private:
  void add(const Candidate& c, std::optional<double> cost) {
    xs_.push_back(c);
    costs_.push_back(cost && *cost > 0 ? std::optional<double>(std::log(*cost)) : std::nullopt);
  }
  void record(const Candidate& c) { add(c, sweep_.cost(sweep_.evaluate(c))); }

  // The runnable points not yet seen: all of a small space (in order), or a fresh random
  // sample of a large one plus the neighbours of the best so far.
  std::vector<Candidate> pool() {
    std::vector<Candidate> out;
    if (size_ <= kWholePool) {
      for (const auto& c : whole_)
        if (!sweep_.known(c)) out.push_back(c);
      return out;
    }
    std::set<Candidate> seen;
    for (std::size_t tries = 0; out.size() < kSampledPool && tries < 4 * kSampledPool; ++tries) {
      const Candidate c = space_.at(std::uniform_int_distribution<std::uint64_t>(0, size_ - 1)(sweep_.rng()));
      if (!sweep_.known(c) && seen.insert(c).second && sweep_.runnable(c)) out.push_back(c);
    }
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < xs_.size(); ++i)
      if (costs_[i]) ok.push_back(i);
    std::sort(ok.begin(), ok.end(), [&](auto a, auto b) { return *costs_[a] < *costs_[b]; });
    for (std::size_t k = 0; k < ok.size() && k < 4; ++k)
      for (const auto& n : space_.neighbours(xs_[ok[k]]))
        if (!sweep_.known(n) && seen.insert(n).second && sweep_.runnable(n)) out.push_back(n);
    return out;
  }

  // Each file's defaults, then space-filling points: one per 12 runnable ones, 3 to 10 in all.
  std::vector<Candidate> initial_design() {
    const std::size_t runnable =
        size_ <= kWholePool ? whole_.size() : static_cast<std::size_t>(std::min<std::uint64_t>(size_, 1u << 20));
    const std::size_t initial = std::max(space_.files().size(), std::clamp<std::size_t>((runnable + 11) / 12, 3, 10));
    std::vector<Candidate> start;
    for (std::size_t f = 0; f < space_.files().size(); ++f) {
      const Candidate c = space_.defaults(f);
      if (!sweep_.known(c) && sweep_.runnable(c)) start.push_back(c);
    }
    // Space-filling: one random point (the seed's), then each next one the farthest (in the
    // encoding) from those chosen and measured.
    auto rest = pool();
    std::shuffle(rest.begin(), rest.end(), sweep_.rng());
    std::vector<std::vector<double>> chosen;
    for (const auto& c : xs_) chosen.push_back(encode_(c));
    for (const auto& c : start) chosen.push_back(encode_(c));
    bool drawn = false;
    while (start.size() + xs_.size() < initial && !rest.empty()) {
      const std::size_t pick = drawn ? farthest(rest, chosen) : 0;  // the shuffled pool's first: a random point
      drawn = true;
      chosen.push_back(encode_(rest[pick]));
      start.push_back(rest[pick]);
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    return start;
  }

  // The point of `rest` farthest from its nearest of `chosen`.
  std::size_t farthest(const std::vector<Candidate>& rest, const std::vector<std::vector<double>>& chosen) const {
    std::size_t pick = 0;
    double far = -1;
    for (std::size_t i = 0; i < rest.size(); ++i) {
      const auto x = encode_(rest[i]);
      double near = 1e300;
      for (const auto& y : chosen) {
        double d = 0;
        for (std::size_t k = 0; k < x.size(); ++k) d += (x[k] - y[k]) * (x[k] - y[k]);
        near = std::min(near, d);
      }
      if (near > far) far = near, pick = i;
    }
    return pick;
  }

  // The model learns from at most kMostPoints: the best half and the latest others (a dense
  // Cholesky per hyperparameter pair costs n^3 / 3).
  std::vector<std::size_t> training_set() const {
    std::vector<std::size_t> use(xs_.size());
    std::iota(use.begin(), use.end(), std::size_t{0});
    if (use.size() <= kMostPoints) return use;
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < xs_.size(); ++i)
      if (costs_[i]) ok.push_back(i);
    std::sort(ok.begin(), ok.end(), [&](auto a, auto b) { return *costs_[a] < *costs_[b]; });
    ok.resize(std::min(ok.size(), kMostPoints / 2));
    std::vector<bool> taken(xs_.size(), false);
    for (auto i : ok) taken[i] = true;
    for (std::size_t i = xs_.size(); i-- > 0 && ok.size() < kMostPoints;)
      if (!taken[i]) ok.push_back(i);
    return ok;
  }

  // Measures the candidate of most expected improvement (a random one while nothing ran).
  void step(const std::vector<Candidate>& candidates) {
    // Failed points count as a little worse than the worst that ran, so the model steers away.
    double worst = -1e300, best = 1e300;
    for (const auto& c : costs_)
      if (c) worst = std::max(worst, *c), best = std::min(best, *c);
    if (best > worst) {  // nothing ran yet: a random point
      record(candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(sweep_.rng())]);
      return;
    }
    const double penalty = worst + std::max(0.1, 0.25 * (worst - best));
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    for (std::size_t i : training_set()) {
      x.push_back(encode_(xs_[i]));
      y.push_back(costs_[i].value_or(penalty));
    }
    GaussianProcess gp;
    gp.fit(x, y);
    std::vector<std::pair<double, std::size_t>> scored;  // -EI, index: the best first, ties in pool order
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      double mean = 0, sd = 0;
      gp.predict(encode_(candidates[i]), mean, sd);
      scored.emplace_back(-GaussianProcess::expected_improvement(mean, sd, best, 1e-3), i);
    }
    const std::size_t ahead = std::min<std::size_t>(scored.size(), 8);
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(ahead), scored.end());
    // The next few likely picks compile in the background while this one is measured.
    std::vector<Candidate> soon;
    for (std::size_t k = 0; k < ahead; ++k) soon.push_back(candidates[scored[k].second]);
    sweep_.prepare(soon);
    record(candidates[scored.front().second]);
  }

  Sweep& sweep_;
  const Space& space_;
  const Encoder encode_;
  const std::uint64_t size_;
  std::vector<Candidate> whole_;             // a small space's runnable points
  std::vector<Candidate> xs_;                // measured
  std::vector<std::optional<double>> costs_;  // log cost; nullopt: failed
};

}  // namespace

// The budget counts the points measured before (the journal) too, as anneal's does: a sweep run
// again measures only what is missing.
void walk_bayes(Sweep& sweep) {
  const int budget = sweep.options().evaluations.value_or(32);
  sweep.plan(static_cast<std::size_t>(budget));
  BayesWalk(sweep).run(budget);
  sweep.note_time_budget(budget);
}

}  // namespace gpuk::detail
