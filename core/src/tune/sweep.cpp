// The sweep of `gpuk tune` (no GPU here: see tune_gpu.cpp): the strategies walking a Space with
// a Measurer, the recheck of the leaders, and the state handed to a fresh process.
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
#include "gpuk/text.hpp"
#include "gpuk/tune.hpp"
#include "tune/outcome_json.hpp"
#include "util/atomic_file.hpp"

namespace gpuk {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  // Verifies and times a point not yet evaluated; returns its evaluation.
  const auto evaluate = [&](const Candidate& c) -> const Evaluation& {
    if (const auto it = known.find(c); it != known.end()) return result.evaluations[it->second];
    Evaluation e = make(c);
    report(e.label);
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
    }
    e.time = Spread::of(e.outcome.samples);
    known[c] = result.evaluations.size();
    result.evaluations.push_back(std::move(e));
    ++progress.done;
    report({});
    return result.evaluations.back();
  };
  for (const Evaluation& e : options.prior) {
    known[e.candidate] = result.evaluations.size();
    result.evaluations.push_back(e);
    if (e.outcome.status == Status::pruned) ++progress.pruned;
    else ++progress.done;
  }
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
    measurer.prepare(space, todo);
    for (std::size_t i = 0; i < todo.size(); ++i) {
      if (out_of_time()) {
        stop_for_time(todo.size() - i);
        break;
      }
      evaluate(todo[i]);
      if (!result.stopped.empty()) break;
    }
  } else {
    // Simulated annealing over neighbouring values, starting from the best of the kernel files'
    // default variants, restarting from a random point when it stalls or has nowhere to go.
    const int budget = options.evaluations.value_or(32);
    progress.planned = static_cast<std::size_t>(budget);
    const auto cost = [&](const Evaluation& e) -> std::optional<double> {
      if (e.outcome.status != Status::ok) return std::nullopt;
      return e.time.median;
    };
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
      Candidate c;
      c.file = f;
      const auto& sf = space.files()[f];
      for (std::size_t i = 0; i < sf.file->params.size(); ++i) {
        const auto& list = sf.values[i];
        const auto d = sf.file->params[i].default_value;
        c.values.push_back(std::find(list.begin(), list.end(), d) != list.end() ? d : list[list.size() / 2]);
      }
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

  // The best few again, interleaved round by round, so that drift hits them alike.
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < result.evaluations.size(); ++i)
    if (result.evaluations[i].outcome.status == Status::ok) ok.push_back(i);
  const auto by_median = [&](std::size_t a, std::size_t b) {
    return result.evaluations[a].time.median < result.evaluations[b].time.median;
  };
  std::stable_sort(ok.begin(), ok.end(), by_median);
  const std::size_t top = std::min<std::size_t>(ok.size(), static_cast<std::size_t>(std::max(0, options.recheck_top)));
  if (top > 0 && options.recheck_repeats > 0 && !context_dead) {
    const int rounds = std::max(1, options.recheck_rounds);
    const int per_round = std::max(1, (options.recheck_repeats + rounds - 1) / rounds);
    std::vector<std::vector<double>> samples(top);
    bool aborted = false;
    for (int r = 0; r < rounds && !aborted; ++r) {
      for (std::size_t k = 0; k < top && !aborted; ++k) {
        Evaluation& e = result.evaluations[ok[k]];
        report("recheck " + e.label);
        try {
          const auto s = measurer.time(space, e.candidate, per_round);
          samples[k].insert(samples[k].end(), s.begin(), s.end());
        } catch (const ContextLost& ex) {
          // It ran correctly before and faulted now: it is not to be chosen.
          e.outcome.status = ex.outcome.status;
          e.outcome.why = ex.outcome.why;
          e.outcome.detail = ex.outcome.detail;
          samples[k].clear();
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
    }
    for (std::size_t k = 0; k < top; ++k) {
      if (samples[k].empty()) continue;
      Evaluation& e = result.evaluations[ok[k]];
      e.time = Spread::of(samples[k]);
      e.rechecked = true;
    }
    std::stable_sort(ok.begin(), ok.begin() + static_cast<std::ptrdiff_t>(top), by_median);
    std::erase_if(ok, [&](std::size_t i) { return result.evaluations[i].outcome.status != Status::ok; });
  }
  result.ranking = ok;
  if (!ok.empty()) {
    const Evaluation& w = result.evaluations[ok.front()];
    for (std::size_t k = 1; k < ok.size(); ++k) {
      const Evaluation& e = result.evaluations[ok[k]];
      if (!e.rechecked || !w.rechecked) break;
      if (e.time.q1 <= w.time.q3) result.ties.push_back(ok[k]);  // their middle halves overlap
    }
  }
  result.seconds = seconds_since(start);
  return result;
}

// --- State of a sweep that goes on in another process ----------------------------------------

void write_tune_state(const std::filesystem::path& path, const std::vector<Evaluation>& evaluations) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : evaluations)
    j.push_back({{"file", e.candidate.file}, {"values", e.candidate.values}, {"label", e.label},
                 {"outcome", outcome_to_json(e.outcome)}, {"at_seconds", e.at_seconds}});
  write_file_atomically(path, j.dump() + "\n", "the state of the sweep");
}

std::vector<Evaluation> read_tune_state(const std::filesystem::path& path, const Space& space) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot read the state of the sweep");
  std::vector<Evaluation> out;
  try {
    const auto j = nlohmann::json::parse(in);
    for (const auto& v : j) {
      Evaluation e;
      e.candidate.file = v.at("file").get<std::size_t>();
      e.candidate.values = v.at("values").get<std::vector<std::int64_t>>();
      e.label = space.label(e.candidate);
      if (e.label != v.at("label").get<std::string>()) throw Error("the state does not match the space");
      e.params = space.params(e.candidate);
      e.outcome = outcome_from_json(v.at("outcome"));
      e.at_seconds = v.at("at_seconds").get<double>();
      e.time = Spread::of(e.outcome.samples);
      out.push_back(std::move(e));
    }
  } catch (const std::exception& e) {
    throw Error(path.string() + ": the state of the sweep is damaged (" + e.what() + ")");
  }
  return out;
}

}  // namespace gpuk
