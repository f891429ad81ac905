// The sweep of `gpuk tune` (no GPU here: see gpu_measurer.cpp): the bookkeeping a strategy
// walks with (strategies.hpp), and tune() that runs it.
#include <algorithm>
#include <chrono>

#include "gpuk/error.hpp"
#include "tune/strategies/strategies.hpp"
#include "tune/sweep/stopwatch.hpp"
#include "tune/sweep/sweep.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace detail {

Spread joules_of(const std::vector<EnergySample>& energy) {
  std::vector<double> j;
  for (const auto& s : energy) j.push_back(s.joules);
  return Spread::of(j);
}

Sweep::Sweep(const Space& space, Measurer& measurer, const TuneOptions& options)
    : space_(space), measurer_(measurer), options_(options), start_(std::chrono::steady_clock::now()),
      limits_(measurer.limits()), args_(measurer.leading_args()),
      want_energy_(options.measure_energy || needs_energy(options.objective)), rng_(options.seed) {
  result_.objective = options.objective;
}

void Sweep::report(const std::string& current) {
  if (!options_.progress) return;
  progress_.elapsed = seconds_since(start_);
  progress_.current = current;
  options_.progress(progress_);
}

bool Sweep::out_of_time() const { return options_.seconds && seconds_since(start_) >= *options_.seconds; }

void Sweep::plan(std::size_t planned) { progress_.planned = planned; }

bool Sweep::within(int budget) const {
  return static_cast<int>(progress_.done) < budget && result_.stopped.empty() && !out_of_time();
}

void Sweep::note_time_budget(int budget) {
  if (result_.stopped.empty() && out_of_time() && static_cast<int>(progress_.done) < budget)
    result_.stopped = "the time budget of " + fixed(*options_.seconds, 1) + " s ran out after " +
                      std::to_string(progress_.done) + " of " + std::to_string(budget) + " evaluations";
}

void Sweep::stop_for_time(std::size_t left) {
  result_.stopped = "the time budget of " + fixed(*options_.seconds, 1) + " s ran out with " + std::to_string(left) +
                    " planned variant" + (left == 1 ? "" : "s") + " not measured";
}

void Sweep::measure_in_order(const std::vector<Candidate>& todo) {
  plan(todo.size());
  report({});
  std::vector<Candidate> missing;  // what the journal has needs no compiling
  for (const auto& c : todo)
    if (!known(c)) missing.push_back(c);
  prepare(missing);
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (out_of_time()) {
      stop_for_time(todo.size() - i);
      break;
    }
    evaluate(todo[i]);
    if (stopped()) break;
  }
}

Evaluation Sweep::make(const Candidate& c) const {
  Evaluation e;
  e.candidate = c;
  e.label = space_.label(c);
  e.params = space_.params(c);
  e.at_seconds = seconds_since(start_);
  return e;
}

bool Sweep::runnable(const Candidate& c) {
  if (const auto it = known_.find(c); it != known_.end())
    return result_.evaluations[it->second].outcome.status != Status::pruned;
  std::string why;
  const auto reason = space_.prune(c, args_, limits_, nullptr, &why);
  if (!reason) return true;
  Evaluation e = make(c);
  e.outcome.status = Status::pruned;
  e.outcome.why = why;
  e.outcome.detail = *reason;
  known_[c] = result_.evaluations.size();
  result_.evaluations.push_back(std::move(e));
  ++progress_.pruned;
  return false;
}

std::optional<double> Sweep::cost(const Evaluation& e) const {
  const auto c = cost_of(e, options_);
  return c ? std::optional<double>(c->median) : std::nullopt;
}

std::vector<std::pair<Candidate, std::optional<double>>> Sweep::history() const {
  std::vector<std::pair<Candidate, std::optional<double>>> h;
  for (const auto& e : result_.evaluations)
    if (e.outcome.status != Status::pruned) h.emplace_back(e.candidate, cost(e));
  return h;
}

void Sweep::lost(const ContextLost& ex) {
  result_.stopped = ex.what();
  result_.aborted = true;
  result_.context_lost = true;
  context_dead_ = true;
}

// One energy window of an ok point into `e` (nothing once the context is gone).
void Sweep::add_energy(Evaluation& e) {
  if (context_dead_ || e.outcome.status != Status::ok) return;
  try {
    const auto sample = measurer_.energy(space_, e.candidate, e.time.median);
    if (!sample) {
      if (needs_energy(options_.objective))
        throw Error(std::string("the objective '") + objective_name(options_.objective) +
                    "' needs energy, which cannot be measured here");
      return;
    }
    e.outcome.energy.push_back(*sample);
    e.energy = joules_of(e.outcome.energy);
  } catch (const ContextLost& ex) {
    e.outcome.status = ex.outcome.status;
    e.outcome.why = ex.outcome.why;
    e.outcome.detail = ex.outcome.detail;
    lost(ex);
  } catch (const SweepAborted& ex) {
    result_.stopped = ex.what();
    result_.aborted = true;
    context_dead_ = true;
  }
}

const Evaluation& Sweep::evaluate(const Candidate& c) {
  if (const auto it = known_.find(c); it != known_.end()) return result_.evaluations[it->second];
  Evaluation e = make(c);
  report(e.label);
  bool measured = true;  // false: the GPU went away before the point could be measured
  const Stopwatch clock(in_measure_);
  try {
    e.outcome = measurer_.measure(space_, c);
  } catch (const ContextLost& ex) {
    e.outcome = ex.outcome;
    lost(ex);
  } catch (const SweepAborted& ex) {
    e.outcome.status = Status::launch_error;
    e.outcome.why = "the GPU could not be recovered";
    e.outcome.detail = ex.what();
    result_.stopped = ex.what();
    result_.aborted = true;
    context_dead_ = true;
    measured = false;
  }
  e.time = Spread::of(e.outcome.samples);
  e.energy = joules_of(e.outcome.energy);
  if (want_energy_ && e.outcome.energy.empty()) add_energy(e);
  if (options_.on_measured && measured) options_.on_measured(e);  // not journaled: measured next time
  known_[c] = result_.evaluations.size();
  result_.evaluations.push_back(std::move(e));
  ++progress_.done;
  report({});
  return result_.evaluations.back();
}

// The evaluations of earlier sweeps (the journal), taken as they are.
void Sweep::take_prior() {
  for (const Evaluation& p : options_.prior) {
    if (known_.count(p.candidate)) continue;
    known_[p.candidate] = result_.evaluations.size();
    result_.evaluations.push_back(p);
    Evaluation& e = result_.evaluations.back();
    e.time = Spread::of(e.outcome.samples);
    e.energy = joules_of(e.outcome.energy);
    if (e.reused) ++result_.reused;
    if (e.outcome.status == Status::pruned) ++progress_.pruned;
    else ++progress_.done;
    // Measured before without energy: only the energy is missing.
    if (want_energy_ && e.outcome.status == Status::ok && e.outcome.energy.empty() && !context_dead_) {
      add_energy(e);
      // Its energy, or the fault that measuring it caused (else the next process would fault again).
      if ((!e.outcome.energy.empty() || e.outcome.status != Status::ok) && options_.on_measured)
        options_.on_measured(e);
    }
  }
}

TuneResult Sweep::run() {
  take_prior();
  switch (options_.strategy) {
    case TuneStrategy::exhaustive: walk_exhaustive(*this); break;
    case TuneStrategy::random: walk_random(*this); break;
    case TuneStrategy::bayes: walk_bayes(*this); break;
    case TuneStrategy::anneal: walk_anneal(*this); break;
  }
  recheck();
  rank();
  result_.seconds = seconds_since(start_);
  result_.times = measurer_.times();
  if (result_.times.measure == 0 && result_.times.verify == 0 && result_.times.compile_wait == 0)
    result_.times.measure = in_measure_;  // a measurer that keeps no times of its own
  result_.times.recheck = in_recheck_;
  result_.times.total = result_.seconds;
  return std::move(result_);
}

}  // namespace detail

TuneResult tune(const Space& space, Measurer& measurer, const TuneOptions& options) {
  detail::Sweep sweep(space, measurer, options);
  return sweep.run();
}

}  // namespace gpuk
