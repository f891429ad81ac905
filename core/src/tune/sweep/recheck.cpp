// The end of a sweep: the best few measured again, interleaved round by round, so that drift
// hits them alike, then the ranking by the objective and the ties within the winner's noise.
#include <algorithm>

#include "tune/strategies/strategies.hpp"
#include "tune/sweep/stopwatch.hpp"

namespace gpuk::detail {

// A fixed number of runs in recheck_rounds rounds, or (recheck_auto) rounds of a batch each until
// every leader's median is known within the bound or the time cap (seconds x leaders) is spent.
void Sweep::recheck() {
  for (std::size_t i = 0; i < result_.evaluations.size(); ++i)
    if (cost(result_.evaluations[i])) ok_.push_back(i);
  std::stable_sort(ok_.begin(), ok_.end(),
                   [&](std::size_t a, std::size_t b) { return *cost(result_.evaluations[a]) < *cost(result_.evaluations[b]); });
  const std::size_t top = std::min<std::size_t>(ok_.size(), static_cast<std::size_t>(std::max(0, options_.recheck_top)));
  const bool automatic = options_.recheck_auto.has_value();
  if (top == 0 || (options_.recheck_repeats <= 0 && !automatic) || context_dead_) return;
  const int rounds = std::max(1, options_.recheck_rounds);
  const int per_round = automatic ? std::max(1, options_.recheck_auto->batch)
                                  : std::max(1, (options_.recheck_repeats + rounds - 1) / rounds);
  AutoRepeats rule = options_.recheck_auto.value_or(AutoRepeats{});
  rule.min_runs = std::max(rule.min_runs, 2 * per_round);  // at least two interleaved rounds
  const double cap = rule.seconds * static_cast<double>(top);
  const auto recheck_start = std::chrono::steady_clock::now();
  std::vector<Candidate> leaders;  // those from the journal are not compiled in this process yet
  for (std::size_t k = 0; k < top; ++k) leaders.push_back(result_.evaluations[ok_[k]].candidate);
  measurer_.prepare(space_, leaders);
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
      Evaluation& e = result_.evaluations[ok_[k]];
      report("recheck " + e.label);
      try {
        const auto s = measurer_.time(space_, e.candidate, per_round);
        samples[k].insert(samples[k].end(), s.begin(), s.end());
        if (want_energy_ && r < rounds) {
          const auto sample = measurer_.energy(space_, e.candidate, Spread::of(samples[k]).median);
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
        if (options_.on_measured) options_.on_measured(e);  // the next process must not recheck it again
        result_.stopped = ex.what();
        result_.aborted = true;
        result_.context_lost = true;
        aborted = true;
      } catch (const SweepAborted& ex) {
        result_.stopped = ex.what();
        result_.aborted = true;
        aborted = true;
      }
    }
    if (!any) break;
  }
  in_recheck_ = seconds_since(recheck_start);
  for (std::size_t k = 0; k < top; ++k) {
    if (samples[k].empty()) continue;
    Evaluation& e = result_.evaluations[ok_[k]];
    e.time = Spread::of(samples[k]);
    if (!energies[k].empty()) {
      e.outcome.energy.insert(e.outcome.energy.end(), energies[k].begin(), energies[k].end());
      e.energy = joules_of(e.outcome.energy);
    }
    e.rechecked = true;
    if (automatic) e.recheck_stop = auto_stop_name(stops[k]);
  }
  // The rechecked ones first, by their recheck; one that failed now goes.
  std::stable_sort(ok_.begin(), ok_.begin() + static_cast<std::ptrdiff_t>(top), [&](std::size_t a, std::size_t b) {
    const auto ca = cost(result_.evaluations[a]), cb = cost(result_.evaluations[b]);
    return ca && (!cb || *ca < *cb);
  });
  std::erase_if(ok_, [&](std::size_t i) { return !cost(result_.evaluations[i]); });
}

// The ranking (ok_, after the recheck) and the ties: rechecked points whose middle halves
// overlap the winner's.
void Sweep::rank() {
  result_.ranking = ok_;
  if (ok_.empty()) return;
  const Evaluation& w = result_.evaluations[ok_.front()];
  const Cost wc = *cost_of(w, options_);
  for (std::size_t k = 1; k < ok_.size(); ++k) {
    const Evaluation& e = result_.evaluations[ok_[k]];
    if (!e.rechecked || !w.rechecked) break;
    if (cost_of(e, options_)->q1 <= wc.q3) result_.ties.push_back(ok_[k]);
  }
}

}  // namespace gpuk::detail
