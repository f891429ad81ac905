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

}  // namespace

void walk_bayes(const Space& space, const WalkHooks& hooks, std::mt19937_64& rng) {
  const Encoder encode(space);
  std::vector<Candidate> xs;
  std::vector<std::optional<double>> costs;  // log cost; nullopt: failed
  for (const auto& [c, cost] : hooks.history()) {
    xs.push_back(c);
    costs.push_back(cost && *cost > 0 ? std::optional<double>(std::log(*cost)) : std::nullopt);
  }
  const auto record = [&](const Candidate& c) {
    const auto cost = hooks.evaluate(c);
    xs.push_back(c);
    costs.push_back(cost && *cost > 0 ? std::optional<double>(std::log(*cost)) : std::nullopt);
  };

  // The runnable points not yet seen: all of a small space (in order), or a fresh random
  // sample of a large one plus the neighbours of the best so far.
  const std::uint64_t size = space.size();
  std::vector<Candidate> whole;
  if (size <= kWholePool)
    for (std::uint64_t i = 0; i < size; ++i) {
      const Candidate c = space.at(i);
      if (hooks.runnable(c)) whole.push_back(c);
    }
  const auto pool = [&] {
    std::vector<Candidate> out;
    if (size <= kWholePool) {
      for (const auto& c : whole)
        if (!hooks.known(c)) out.push_back(c);
      return out;
    }
    std::set<Candidate> seen;
    for (std::size_t tries = 0; out.size() < kSampledPool && tries < 4 * kSampledPool; ++tries) {
      const Candidate c = space.at(std::uniform_int_distribution<std::uint64_t>(0, size - 1)(rng));
      if (!hooks.known(c) && seen.insert(c).second && hooks.runnable(c)) out.push_back(c);
    }
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < xs.size(); ++i)
      if (costs[i]) ok.push_back(i);
    std::sort(ok.begin(), ok.end(), [&](auto a, auto b) { return *costs[a] < *costs[b]; });
    for (std::size_t k = 0; k < ok.size() && k < 4; ++k)
      for (const auto& n : space.neighbours(xs[ok[k]]))
        if (!hooks.known(n) && seen.insert(n).second && hooks.runnable(n)) out.push_back(n);
    return out;
  };

  // The initial design: each file's defaults, then space-filling points.
  const std::size_t runnable = size <= kWholePool ? whole.size() : static_cast<std::size_t>(std::min<std::uint64_t>(size, 1u << 20));
  // The initial design: one point per 12 runnable ones, 3 to 10 (and every file's defaults).
  const std::size_t initial = std::max(space.files().size(), std::clamp<std::size_t>((runnable + 11) / 12, 3, 10));
  std::vector<Candidate> start;
  for (std::size_t f = 0; f < space.files().size(); ++f) {
    const Candidate c = space.defaults(f);
    if (!hooks.known(c) && hooks.runnable(c)) start.push_back(c);
  }
  {
    // Space-filling: one random point (the seed's), then each next one the farthest (in the
    // encoding) from those chosen and measured.
    auto rest = pool();
    std::shuffle(rest.begin(), rest.end(), rng);
    std::vector<std::vector<double>> chosen;
    for (const auto& c : xs) chosen.push_back(encode(c));
    for (const auto& c : start) chosen.push_back(encode(c));
    bool drawn = false;
    while (start.size() + xs.size() < initial && !rest.empty()) {
      std::size_t pick = 0;  // the shuffled pool's first: a random point
      if (drawn) {
        double far = -1;
        for (std::size_t i = 0; i < rest.size(); ++i) {
          const auto x = encode(rest[i]);
          double near = 1e300;
          for (const auto& y : chosen) {
            double d = 0;
            for (std::size_t k = 0; k < x.size(); ++k) d += (x[k] - y[k]) * (x[k] - y[k]);
            near = std::min(near, d);
          }
          if (near > far) far = near, pick = i;
        }
      }
      drawn = true;
      chosen.push_back(encode(rest[pick]));
      start.push_back(rest[pick]);
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
  hooks.prepare(start);
  for (const auto& c : start) {
    if (!hooks.go_on()) break;
    if (!hooks.known(c)) record(c);
  }

  while (hooks.go_on()) {
    const auto candidates = pool();
    if (candidates.empty()) break;
    // Failed points count as a little worse than the worst that ran, so the model steers away.
    double worst = -1e300, best = 1e300;
    for (const auto& c : costs)
      if (c) worst = std::max(worst, *c), best = std::min(best, *c);
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    if (best > worst) {  // nothing ran yet: a random point
      record(candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng)]);
      continue;
    }
    const double penalty = worst + std::max(0.1, 0.25 * (worst - best));
    // The model learns from at most kMostPoints: the best half and the latest others (a dense
    // Cholesky per hyperparameter pair costs n^3 / 3).
    std::vector<std::size_t> use(xs.size());
    std::iota(use.begin(), use.end(), std::size_t{0});
    if (use.size() > kMostPoints) {
      std::vector<std::size_t> ok;
      for (std::size_t i = 0; i < xs.size(); ++i)
        if (costs[i]) ok.push_back(i);
      std::sort(ok.begin(), ok.end(), [&](auto a, auto b) { return *costs[a] < *costs[b]; });
      ok.resize(std::min(ok.size(), kMostPoints / 2));
      std::vector<bool> taken(xs.size(), false);
      for (auto i : ok) taken[i] = true;
      for (std::size_t i = xs.size(); i-- > 0 && ok.size() < kMostPoints;)
        if (!taken[i]) ok.push_back(i);
      use = ok;
    }
    for (std::size_t i : use) {
      x.push_back(encode(xs[i]));
      y.push_back(costs[i].value_or(penalty));
    }
    GaussianProcess gp;
    gp.fit(x, y);
    std::vector<std::pair<double, std::size_t>> scored;  // -EI, index: the best first, ties in pool order
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      double mean = 0, sd = 0;
      gp.predict(encode(candidates[i]), mean, sd);
      scored.emplace_back(-GaussianProcess::expected_improvement(mean, sd, best, 1e-3), i);
    }
    const std::size_t ahead = std::min<std::size_t>(scored.size(), 8);
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(ahead), scored.end());
    // The next few likely picks compile in the background while this one is measured.
    std::vector<Candidate> soon;
    for (std::size_t k = 0; k < ahead; ++k) soon.push_back(candidates[scored[k].second]);
    hooks.prepare(soon);
    record(candidates[scored.front().second]);
  }
}

}  // namespace gpuk::detail
