// The sweep of `gpuk tune` (no GPU here: see tune_gpu.cpp): the strategies walking a Space with
// a Measurer, the recheck of the leaders, and the ranking by the objective.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "gpuk/error.hpp"
#include "strategies.hpp"
#include "tune/sweep.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Spread joules_of(const std::vector<EnergySample>& energy) {
  std::vector<double> j;
  for (const auto& s : energy) j.push_back(s.joules);
  return Spread::of(j);
}


}  // namespace

std::string_view status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::invalid: return "wrong answer";
    case Status::pruned: return "pruned";
    case Status::compile_error: return "compile error";
    case Status::launch_error: return "launch error";
    case Status::faulted: return "faulted";
    case Status::timed_out: return "time limit";
  }
  return "?";
}

Spread Spread::of(std::vector<double> samples) {
  Spread s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  // Linear interpolation between order statistics (NumPy's default).
  const auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(samples.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, samples.size() - 1);
    return samples[lo] + (pos - static_cast<double>(lo)) * (samples[hi] - samples[lo]);
  };
  s.median = quantile(0.5);
  s.q1 = quantile(0.25);
  s.q3 = quantile(0.75);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

bool needs_energy(TuneObjective o) { return o != TuneObjective::time; }

const char* objective_name(TuneObjective o) {
  return o == TuneObjective::time ? "time" : o == TuneObjective::energy ? "energy" : "edp";
}

std::optional<TuneObjective> parse_objective(std::string_view name) {
  if (name == "time") return TuneObjective::time;
  if (name == "energy") return TuneObjective::energy;
  if (name == "edp") return TuneObjective::edp;
  return std::nullopt;
}

std::optional<TuneStrategy> parse_strategy(std::string_view name) {
  if (name == "exhaustive") return TuneStrategy::exhaustive;
  if (name == "random") return TuneStrategy::random;
  if (name == "anneal") return TuneStrategy::anneal;
  if (name == "bayes") return TuneStrategy::bayes;
  return std::nullopt;
}

std::optional<Cost> cost_of(const Evaluation& e, TuneObjective objective) {
  if (e.outcome.status != Status::ok || e.time.count == 0) return std::nullopt;
  const Spread& t = e.time;
  if (objective == TuneObjective::time) return Cost{t.median, t.q1, t.q3};
  if (e.energy.count == 0) return std::nullopt;
  const Spread& j = e.energy;
  if (objective == TuneObjective::energy) return Cost{j.median, j.q1, j.q3};
  // Energy x delay, J x s: the quartiles multiply (both are positive).
  return Cost{j.median * t.median * 1e-3, j.q1 * t.q1 * 1e-3, j.q3 * t.q3 * 1e-3};
}

double SweepTimes::other() const {
  return std::max(0.0, total - (start + data + reference + compile_wait + measure + verify + recheck + save));
}

double gbs_of(std::uint64_t bytes, double ms) { return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) / 1e9 : 0; }

// --- The sweep -------------------------------------------------------------------------------

std::size_t TuneResult::count(Status s) const {
  return static_cast<std::size_t>(
      std::count_if(evaluations.begin(), evaluations.end(), [&](const Evaluation& e) { return e.outcome.status == s; }));
}

TuneResult tune(const Space& space, Measurer& measurer, const TuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  TuneResult result;
  const LaunchLimits limits = measurer.limits();
  const std::vector<std::string> args = measurer.leading_args();
  std::map<Candidate, std::size_t> known;  // point -> its evaluation
  Progress progress;
  std::mt19937_64 rng(options.seed);
  bool context_dead = false;
  double in_measure = 0;  // inside measurer.measure()
  double in_recheck = 0;
  result.objective = options.objective;
  const bool want_energy = options.measure_energy || needs_energy(options.objective);

  const auto report = [&](const std::string& current) {
    if (!options.progress) return;
    progress.elapsed = seconds_since(start);
    progress.current = current;
    options.progress(progress);
  };
  const auto out_of_time = [&] { return options.seconds && seconds_since(start) >= *options.seconds; };
  const auto make = [&](const Candidate& c) {
    Evaluation e;
    e.candidate = c;
    e.label = space.label(c);
    e.params = space.params(c);
    e.at_seconds = seconds_since(start);
    return e;
  };
  // Records the point as pruned and returns true when it cannot run.
  const auto pruned = [&](const Candidate& c) {
    if (const auto it = known.find(c); it != known.end()) return result.evaluations[it->second].outcome.status == Status::pruned;
    std::string why;
    const auto reason = space.prune(c, args, limits, nullptr, &why);
    if (!reason) return false;
    Evaluation e = make(c);
    e.outcome.status = Status::pruned;
    e.outcome.why = why;
    e.outcome.detail = *reason;
    known[c] = result.evaluations.size();
    result.evaluations.push_back(std::move(e));
    ++progress.pruned;
    return true;
  };
  // One energy window of an ok point into `e` (nothing once the context is gone).
  const auto add_energy = [&](Evaluation& e) {
    if (context_dead || e.outcome.status != Status::ok) return;
    try {
      const auto sample = measurer.energy(space, e.candidate, e.time.median);
      if (!sample) {
        if (needs_energy(options.objective))
          throw Error(std::string("the objective '") + objective_name(options.objective) +
                      "' needs energy, which cannot be measured here");
        return;
      }
      e.outcome.energy.push_back(*sample);
      e.energy = joules_of(e.outcome.energy);
    } catch (const ContextLost& ex) {
      e.outcome.status = ex.outcome.status;
      e.outcome.why = ex.outcome.why;
      e.outcome.detail = ex.outcome.detail;
      result.stopped = ex.what();
      result.aborted = true;
      result.context_lost = true;
      context_dead = true;
    } catch (const SweepAborted& ex) {
      result.stopped = ex.what();
      result.aborted = true;
      context_dead = true;
    }
  };
  // Verifies and times a point not yet evaluated; returns its evaluation.
  const auto evaluate = [&](const Candidate& c) -> const Evaluation& {
    if (const auto it = known.find(c); it != known.end()) return result.evaluations[it->second];
    Evaluation e = make(c);
    report(e.label);
    bool measured = true;  // false: the GPU went away before the point could be measured
    const auto measure_start = std::chrono::steady_clock::now();
    struct Clock {
      std::chrono::steady_clock::time_point from;
      double& into;
      ~Clock() { into += seconds_since(from); }
    } clock{measure_start, in_measure};
    try {
      e.outcome = measurer.measure(space, c);
    } catch (const ContextLost& ex) {
      e.outcome = ex.outcome;
      result.stopped = ex.what();
      result.aborted = true;
      result.context_lost = true;
      context_dead = true;
    } catch (const SweepAborted& ex) {
      e.outcome.status = Status::launch_error;
      e.outcome.why = "the GPU could not be recovered";
      e.outcome.detail = ex.what();
      result.stopped = ex.what();
      result.aborted = true;
      context_dead = true;
      measured = false;
    }
    e.time = Spread::of(e.outcome.samples);
    e.energy = joules_of(e.outcome.energy);
    if (want_energy && e.outcome.energy.empty()) add_energy(e);
    if (options.on_measured && measured) options.on_measured(e);  // not journaled: measured next time
    known[c] = result.evaluations.size();
    result.evaluations.push_back(std::move(e));
    ++progress.done;
    report({});
    return result.evaluations.back();
  };
  for (const Evaluation& p : options.prior) {
    if (known.count(p.candidate)) continue;
    known[p.candidate] = result.evaluations.size();
    result.evaluations.push_back(p);
    Evaluation& e = result.evaluations.back();
    e.time = Spread::of(e.outcome.samples);
    e.energy = joules_of(e.outcome.energy);
    if (e.reused) ++result.reused;
    if (e.outcome.status == Status::pruned) ++progress.pruned;
    else ++progress.done;
    // Measured before without energy: only the energy is missing.
    if (want_energy && e.outcome.status == Status::ok && e.outcome.energy.empty() && !context_dead) {
      add_energy(e);
      // Its energy, or the fault that measuring it caused (else the next process would fault again).
      if ((!e.outcome.energy.empty() || e.outcome.status != Status::ok) && options.on_measured) options.on_measured(e);
    }
  }
  const auto cost = [&](const Evaluation& e) -> std::optional<double> {
    const auto c = cost_of(e, options.objective);
    return c ? std::optional<double>(c->median) : std::nullopt;
  };
  const auto stop_for_time = [&](std::size_t left) {
    result.stopped = "the time budget of " + fixed(*options.seconds, 1) + " s ran out with " + std::to_string(left) +
                     " planned variant" + (left == 1 ? "" : "s") + " not measured";
  };

  const std::uint64_t size = space.size();
  if (options.strategy == TuneStrategy::exhaustive || options.strategy == TuneStrategy::random) {
    std::vector<Candidate> todo;
    if (options.strategy == TuneStrategy::exhaustive) {
      if (size > 1000000)
        throw ConfigError("the space has " + std::to_string(size) +
                          " points; an exhaustive sweep takes at most 1,000,000: narrow params, or use strategy "
                          "random or anneal with a budget");
      for (std::uint64_t i = 0; i < size; ++i) {
        if (options.evaluations && todo.size() >= static_cast<std::size_t>(*options.evaluations)) break;
        const Candidate c = space.at(i);
        if (!pruned(c)) todo.push_back(c);
      }
    } else {
      // A partial Fisher-Yates shuffle of [0, size), sparse: the draw depends on the seed only.
      const std::size_t budget = static_cast<std::size_t>(options.evaluations.value_or(32));
      std::unordered_map<std::uint64_t, std::uint64_t> swapped;
      const auto slot = [&](std::uint64_t i) {
        const auto it = swapped.find(i);
        return it == swapped.end() ? i : it->second;
      };
      for (std::uint64_t i = 0; i < size && todo.size() < budget; ++i) {
        const std::uint64_t j = i + std::uniform_int_distribution<std::uint64_t>(0, size - 1 - i)(rng);
        const std::uint64_t pick = slot(j);
        swapped[j] = slot(i);
        const Candidate c = space.at(pick);
        if (!pruned(c)) todo.push_back(c);
      }
    }
    progress.planned = todo.size();
    report({});
    std::vector<Candidate> missing;  // what the journal has needs no compiling
    for (const auto& c : todo)
      if (!known.count(c)) missing.push_back(c);
    measurer.prepare(space, missing);
    for (std::size_t i = 0; i < todo.size(); ++i) {
      if (out_of_time()) {
        stop_for_time(todo.size() - i);
        break;
      }
      evaluate(todo[i]);
      if (!result.stopped.empty()) break;
    }
  } else if (options.strategy == TuneStrategy::bayes) {
    // The budget counts the points measured before (the journal) too, as anneal's does: a sweep
    // run again measures only what is missing.
    const int budget = options.evaluations.value_or(32);
    progress.planned = static_cast<std::size_t>(budget);
    detail::WalkHooks hooks;
    hooks.runnable = [&](const Candidate& c) { return !pruned(c); };
    hooks.known = [&](const Candidate& c) { return known.count(c) > 0; };
    hooks.evaluate = [&](const Candidate& c) { return cost(evaluate(c)); };
    hooks.history = [&] {
      std::vector<std::pair<Candidate, std::optional<double>>> h;
      for (const auto& e : result.evaluations)
        if (e.outcome.status != Status::pruned) h.emplace_back(e.candidate, cost(e));
      return h;
    };
    hooks.go_on = [&] {
      return progress.done < static_cast<std::size_t>(budget) && result.stopped.empty() && !out_of_time();
    };
    hooks.prepare = [&](const std::vector<Candidate>& points) { measurer.prepare(space, points); };
    detail::walk_bayes(space, hooks, rng);
    if (result.stopped.empty() && out_of_time() && progress.done < static_cast<std::size_t>(budget))
      result.stopped = "the time budget of " + fixed(*options.seconds, 1) + " s ran out after " +
                       std::to_string(progress.done) + " of " + std::to_string(budget) + " evaluations";
  } else {
    // Simulated annealing over neighbouring values, starting from the best of the kernel files'
    // default variants, restarting from a random point when it stalls or has nowhere to go.
    const int budget = options.evaluations.value_or(32);
    progress.planned = static_cast<std::size_t>(budget);
    const auto budget_left = [&] {
      return static_cast<int>(progress.done) < budget && result.stopped.empty() && !out_of_time();
    };
    const auto random_point = [&]() -> std::optional<Candidate> {
      for (int tries = 0; tries < 1000; ++tries) {
        const Candidate c = space.at(std::uniform_int_distribution<std::uint64_t>(0, size - 1)(rng));
        if (!known.count(c) && !pruned(c)) return c;
      }
      for (std::uint64_t i = 0; i < size && i < 1000000; ++i) {  // a nearly exhausted space
        const Candidate c = space.at(i);
        if (!known.count(c) && !pruned(c)) return c;
      }
      return std::nullopt;
    };
    std::optional<Candidate> current;
    double current_cost = 0, best_cost = 0;
    bool have_best = false;
    int since_best = 0;
    const int patience = std::max(8, budget / 4);
    const double t0 = 0.05;  // a 5% slower neighbour is accepted with probability 1/e at first
    const double cooling = std::pow(0.01, 1.0 / std::max(1, budget));
    double temperature = t0;
    const auto consider = [&](const Evaluation& e, bool force) {
      const auto c = cost(e);
      if (!c) return;
      if (!have_best || *c < best_cost) best_cost = *c, have_best = true, since_best = 0;
      if (force || !current) {
        current = e.candidate, current_cost = *c;
        return;
      }
      const double delta = (*c - current_cost) / current_cost;
      if (delta < 0 || std::uniform_real_distribution<double>(0, 1)(rng) < std::exp(-delta / temperature))
        current = e.candidate, current_cost = *c;
    };
    // Start: every file's defaults.
    std::vector<Candidate> starts;
    for (std::size_t f = 0; f < space.files().size(); ++f) {
      const Candidate c = space.defaults(f);
      if (!pruned(c)) starts.push_back(c);
    }
    measurer.prepare(space, starts);
    for (const auto& c : starts) {
      if (!budget_left()) break;
      const Evaluation& e = evaluate(c);
      const auto ec = cost(e);
      if (ec && (!current || *ec < current_cost)) consider(e, true);
    }
    while (budget_left()) {
      if (!current || since_best >= patience) {
        since_best = 0;
        const auto r = random_point();
        if (!r) break;  // nothing left to try
        const Evaluation& e = evaluate(*r);
        if (!current || cost(e)) consider(e, true);
        continue;
      }
      std::vector<Candidate> fresh;
      for (const auto& n : space.neighbours(*current))
        if (!known.count(n) && !pruned(n)) fresh.push_back(n);
      if (fresh.empty()) {
        since_best = patience;  // a local optimum with every neighbour seen: restart
        continue;
      }
      measurer.prepare(space, fresh);
      const Candidate pick = fresh[std::uniform_int_distribution<std::size_t>(0, fresh.size() - 1)(rng)];
      const Evaluation& e = evaluate(pick);
      ++since_best;
      consider(e, false);
      temperature *= cooling;
    }
    if (result.stopped.empty() && out_of_time() && static_cast<int>(progress.done) < budget)
      result.stopped = "the time budget of " + fixed(*options.seconds, 1) + " s ran out after " +
                       std::to_string(progress.done) + " of " + std::to_string(budget) + " evaluations";
  }

  // The best few again, interleaved round by round, so that drift hits them alike: a fixed
  // number of runs in recheck_rounds rounds, or (recheck_auto) rounds of a batch each until
  // every leader's median is known within the bound or the time cap (seconds x leaders) is spent.
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < result.evaluations.size(); ++i)
    if (cost(result.evaluations[i])) ok.push_back(i);
  const auto by_cost = [&](std::size_t a, std::size_t b) {
    return *cost(result.evaluations[a]) < *cost(result.evaluations[b]);
  };
  std::stable_sort(ok.begin(), ok.end(), by_cost);
  const std::size_t top = std::min<std::size_t>(ok.size(), static_cast<std::size_t>(std::max(0, options.recheck_top)));
  const bool automatic = options.recheck_auto.has_value();
  if (top > 0 && (options.recheck_repeats > 0 || automatic) && !context_dead) {
    const int rounds = std::max(1, options.recheck_rounds);
    const int per_round =
        automatic ? std::max(1, options.recheck_auto->batch) : std::max(1, (options.recheck_repeats + rounds - 1) / rounds);
    AutoRepeats rule = options.recheck_auto.value_or(AutoRepeats{});
    rule.min_runs = std::max(rule.min_runs, 2 * per_round);  // at least two interleaved rounds
    const double cap = rule.seconds * static_cast<double>(top);
    const auto recheck_start = std::chrono::steady_clock::now();
    std::vector<Candidate> leaders;  // those from the journal are not compiled in this process yet
    for (std::size_t k = 0; k < top; ++k) leaders.push_back(result.evaluations[ok[k]].candidate);
    measurer.prepare(space, leaders);
    std::vector<std::vector<double>> samples(top);
    std::vector<std::vector<EnergySample>> energies(top);
    std::vector<AutoStop> stops(top, AutoStop::more);
    bool aborted = false;
    for (int r = 0; !aborted; ++r) {
      if (!automatic && r >= rounds) break;
      bool any = false;
      for (std::size_t k = 0; k < top && !aborted; ++k) {
        if (stops[k] != AutoStop::more) continue;
        any = true;
        Evaluation& e = result.evaluations[ok[k]];
        report("recheck " + e.label);
        try {
          const auto s = measurer.time(space, e.candidate, per_round);
          samples[k].insert(samples[k].end(), s.begin(), s.end());
          if (want_energy && r < rounds) {
            const auto sample = measurer.energy(space, e.candidate, Spread::of(samples[k]).median);
            if (sample) energies[k].push_back(*sample);
          }
          if (automatic) {
            AutoRepeats mine = rule;
            mine.seconds = cap;  // the cap is the recheck's, shared
            stops[k] = s.empty() ? AutoStop::run_cap : auto_repeats_stop(samples[k], seconds_since(recheck_start), mine);
          }
        } catch (const ContextLost& ex) {
          // It ran correctly before and faulted now: it is not to be chosen.
          e.outcome.status = ex.outcome.status;
          e.outcome.why = ex.outcome.why;
          e.outcome.detail = ex.outcome.detail;
          samples[k].clear();
          if (options.on_measured) options.on_measured(e);  // the next process must not recheck it again
          result.stopped = ex.what();
          result.aborted = true;
          result.context_lost = true;
          aborted = true;
        } catch (const SweepAborted& ex) {
          result.stopped = ex.what();
          result.aborted = true;
          aborted = true;
        }
      }
      if (!any) break;
    }
    in_recheck = seconds_since(recheck_start);
    for (std::size_t k = 0; k < top; ++k) {
      if (samples[k].empty()) continue;
      Evaluation& e = result.evaluations[ok[k]];
      e.time = Spread::of(samples[k]);
      if (!energies[k].empty()) {
        e.outcome.energy.insert(e.outcome.energy.end(), energies[k].begin(), energies[k].end());
        e.energy = joules_of(e.outcome.energy);
      }
      e.rechecked = true;
      if (automatic) e.recheck_stop = auto_stop_name(stops[k]);
    }
    // The rechecked ones first, by their recheck; one that failed now goes.
    std::stable_sort(ok.begin(), ok.begin() + static_cast<std::ptrdiff_t>(top), [&](std::size_t a, std::size_t b) {
      const auto ca = cost(result.evaluations[a]), cb = cost(result.evaluations[b]);
      return ca && (!cb || *ca < *cb);
    });
    std::erase_if(ok, [&](std::size_t i) { return !cost(result.evaluations[i]); });
  }
  result.ranking = ok;
  if (!ok.empty()) {
    const Evaluation& w = result.evaluations[ok.front()];
    const Cost wc = *cost_of(w, options.objective);
    for (std::size_t k = 1; k < ok.size(); ++k) {
      const Evaluation& e = result.evaluations[ok[k]];
      if (!e.rechecked || !w.rechecked) break;
      if (cost_of(e, options.objective)->q1 <= wc.q3) result.ties.push_back(ok[k]);  // their middle halves overlap
    }
  }
  result.seconds = seconds_since(start);
  result.times = measurer.times();
  if (result.times.measure == 0 && result.times.verify == 0 && result.times.compile_wait == 0)
    result.times.measure = in_measure;  // a measurer that keeps no times of its own
  result.times.recheck = in_recheck;
  result.times.total = result.seconds;
  return result;
}

}  // namespace gpuk
