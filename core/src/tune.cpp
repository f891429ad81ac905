// The space, the strategies and the report of `gpuk tune` (no GPU here: see tune_gpu.cpp).
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

namespace gpuk {

namespace {

bool builtin_name(std::string_view id) { return id == "n" || id == "sm_count" || id == "elem_bytes" || id == "vec"; }

// A short reason that groups alike failures, from a full message.
std::string short_reason(const std::string& message) {
  static const std::regex constraint(R"(breaks the (config's )?constraint '([^']*)')");
  std::smatch m;
  if (std::regex_search(message, m, constraint)) return "constraint '" + m[2].str() + "'";
  if (message.find("threads per block") != std::string::npos) return "more threads per block than the GPU allows";
  if (message.find("bytes; this GPU allows at most") != std::string::npos)
    return "more shared memory than a block may use";
  if (message.find("grid '") != std::string::npos && message.find("must be between") != std::string::npos)
    return "grid size out of range";
  if (message.find("is not allowed") != std::string::npos) return "value not allowed";
  return message.size() > 80 ? message.substr(0, 77) + "..." : message;
}

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

std::string ms_text(double value) {
  return value < 1 ? fixed(value, 4) : value < 100 ? fixed(value, 3) : fixed(value, 1);
}

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

// --- Space -----------------------------------------------------------------------------------

Space::Space(std::vector<SpaceFile> files, std::vector<TuneConstraint> constraints)
    : files_(std::move(files)), constraints_(std::move(constraints)) {
  std::uint64_t offset = 0;
  for (const auto& f : files_) {
    if (f.values.size() != f.file->params.size())
      throw Error("space of " + f.file->name + ": one value list per parameter is needed");
    offsets_.push_back(offset);
    std::uint64_t n = 1;
    for (const auto& v : f.values) {
      if (v.empty()) throw Error("space of " + f.file->name + ": a parameter has no values");
      if (n > (std::uint64_t{1} << 40) / v.size()) throw ConfigError("the space of " + f.file->name + " is too large");
      n *= v.size();
    }
    offset += n;
  }
  offsets_.push_back(offset);
}

Space Space::from_spec(const TuneSpec& spec, const KernelLibrary& kernels) {
  std::vector<SpaceFile> files;
  for (const auto& name : spec.kernels) {
    const auto original = kernels.find(spec.run.family, name);
    auto copy = std::make_shared<KernelFile>(*original);
    SpaceFile sf;
    for (auto& p : copy->params) {
      const auto it = spec.params.find(p.name);
      std::vector<std::int64_t> values = it == spec.params.end() ? p.values : it->second;
      for (auto v : values)
        if (!std::binary_search(p.values.begin(), p.values.end(), v))
          sf.widened.push_back(p.name + "=" + std::to_string(v));
      std::vector<std::int64_t> allowed = p.values;
      allowed.insert(allowed.end(), values.begin(), values.end());
      std::sort(allowed.begin(), allowed.end());
      allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
      p.values = allowed;
      sf.values.push_back(values);
    }
    sf.file = copy;
    files.push_back(std::move(sf));
  }
  return Space(std::move(files), spec.constraints);
}

std::uint64_t Space::size() const { return offsets_.back(); }

Candidate Space::at(std::uint64_t index) const {
  if (index >= size()) throw Error("point " + std::to_string(index) + " is outside the space");
  const std::size_t f = static_cast<std::size_t>(std::upper_bound(offsets_.begin(), offsets_.end(), index) -
                                                 offsets_.begin() - 1);
  Candidate c;
  c.file = f;
  std::uint64_t rest = index - offsets_[f];
  const auto& lists = files_[f].values;
  c.values.resize(lists.size());
  for (std::size_t i = lists.size(); i-- > 0;) {
    c.values[i] = lists[i][rest % lists[i].size()];
    rest /= lists[i].size();
  }
  return c;
}

std::uint64_t Space::index_of(const Candidate& c) const {
  const auto& lists = files_.at(c.file).values;
  std::uint64_t index = 0;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    const auto it = std::find(lists[i].begin(), lists[i].end(), c.values.at(i));
    if (it == lists[i].end()) throw Error("value not in the space: " + label(c));
    index = index * lists[i].size() + static_cast<std::uint64_t>(it - lists[i].begin());
  }
  return offsets_[c.file] + index;
}

std::map<std::string, std::int64_t> Space::params(const Candidate& c) const {
  std::map<std::string, std::int64_t> out;
  const auto& ps = files_.at(c.file).file->params;
  for (std::size_t i = 0; i < ps.size(); ++i) out[ps[i].name] = c.values.at(i);
  return out;
}

std::string Space::label(const Candidate& c) const {
  const auto& f = *files_.at(c.file).file;
  std::string out = f.name;
  for (std::size_t i = 0; i < f.params.size(); ++i) out += " " + f.params[i].name + "=" + std::to_string(c.values.at(i));
  return out;
}

Variant Space::variant(const Candidate& c, const std::vector<std::string>& leading_args) const {
  return Variant(files_.at(c.file).file, leading_args, params(c));
}

std::vector<Candidate> Space::neighbours(const Candidate& c) const {
  std::vector<Candidate> out;
  const auto& lists = files_.at(c.file).values;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    const auto it = std::find(lists[i].begin(), lists[i].end(), c.values[i]);
    if (it == lists[i].end()) continue;
    const std::size_t k = static_cast<std::size_t>(it - lists[i].begin());
    for (int step : {-1, 1}) {
      if ((step < 0 && k == 0) || (step > 0 && k + 1 >= lists[i].size())) continue;
      Candidate n = c;
      n.values[i] = lists[i][k + step];
      out.push_back(std::move(n));
    }
  }
  return out;
}

std::optional<std::string> Space::prune(const Candidate& c, const std::vector<std::string>& leading_args,
                                        const LaunchLimits& limits, LaunchPlan* plan, std::string* why) const {
  const auto fail = [&](const std::string& reason) -> std::optional<std::string> {
    if (why) *why = short_reason(reason);
    return reason;
  };
  const KernelFile& file = *files_.at(c.file).file;
  std::optional<Variant> v;
  try {
    v.emplace(variant(c, leading_args));
  } catch (const ConfigError& e) {
    return fail(e.what());
  }
  const std::map<std::string, std::int64_t, std::less<>> extra = {
      {"n", limits.n},
      {"sm_count", limits.sm_count},
      {"elem_bytes", limits.elem_bytes},
      {"vec", limits.elem_bytes ? 16 / limits.elem_bytes : 1}};
  for (const auto& constraint : constraints_) {
    bool binds = true;
    for (const auto& id : constraint.expr.identifiers()) binds = binds && (builtin_name(id) || file.param(id));
    if (!binds) continue;
    try {
      if (constraint.expr.eval([&](std::string_view n) { return v->lookup(n, extra); }) == 0)
        return fail(v->label() + " breaks the config's constraint '" + constraint.expr.text() + "' (line " +
                    std::to_string(constraint.line) + ")");
    } catch (const ConfigError& e) {
      return fail("constraint '" + constraint.expr.text() + "' of " + v->label() + ": " + e.what());
    }
  }
  try {
    LaunchPlan p = plan_launches(*v, limits);
    if (plan) *plan = std::move(p);
  } catch (const ConfigError& e) {
    return fail(e.what());
  }
  return std::nullopt;
}

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
  for (const auto& e : evaluations) {
    nlohmann::json launches = nlohmann::json::array();
    for (const auto& l : e.outcome.launches)
      launches.push_back({{"name_expression", l.name_expression}, {"grid", l.grid}, {"block", l.block},
                          {"shared_bytes", l.shared_bytes}});
    j.push_back({{"file", e.candidate.file}, {"values", e.candidate.values}, {"label", e.label},
                 {"status", static_cast<int>(e.outcome.status)}, {"why", e.outcome.why},
                 {"detail", e.outcome.detail}, {"samples", e.outcome.samples},
                 {"registers", e.outcome.registers}, {"spill_bytes", e.outcome.spill_bytes},
                 {"launches", launches}, {"at_seconds", e.at_seconds}});
  }
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump() << "\n";
    if (!out) throw Error(tmp.string() + ": cannot write the state of the sweep");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error(path.string() + ": cannot write the state of the sweep");
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
      const int status = v.at("status").get<int>();
      if (status < 0 || status > static_cast<int>(Status::timed_out)) throw Error("bad status");
      e.outcome.status = static_cast<Status>(status);
      e.outcome.why = v.at("why").get<std::string>();
      e.outcome.detail = v.at("detail").get<std::string>();
      e.outcome.samples = v.at("samples").get<std::vector<double>>();
      e.outcome.registers = v.at("registers").get<int>();
      e.outcome.spill_bytes = v.at("spill_bytes").get<int>();
      for (const auto& l : v.at("launches")) {
        ResolvedLaunch r;
        r.name_expression = l.at("name_expression").get<std::string>();
        r.grid = l.at("grid").get<decltype(r.grid)>();
        r.block = l.at("block").get<decltype(r.block)>();
        r.shared_bytes = l.at("shared_bytes").get<decltype(r.shared_bytes)>();
        e.outcome.launches.push_back(std::move(r));
      }
      e.at_seconds = v.at("at_seconds").get<double>();
      e.time = Spread::of(e.outcome.samples);
      out.push_back(std::move(e));
    }
  } catch (const std::exception& e) {
    throw Error(path.string() + ": the state of the sweep is damaged (" + e.what() + ")");
  }
  return out;
}

// --- Reports ---------------------------------------------------------------------------------

void print_tune_report(std::ostream& out, const TuneReport& r, int show) {
  const TuneResult& res = r.result;
  out << "gpuk tune " << r.config << "\n";
  out << "  " << r.family << " " << r.operation;
  for (const auto& [k, v] : r.options) out << " " << k << "=" << v;
  out << "  dtype " << r.dtype << "  n " << r.size << "\n";
  out << "  device   " << r.gpu << " (" << r.arch << "), NVRTC " << r.nvrtc << "\n";
  const std::size_t measured = res.evaluations.size() - res.count(Status::pruned);
  out << "  sweep    " << r.strategy << " (seed " << r.seed << "): " << measured << " variant"
      << (measured == 1 ? "" : "s") << " measured, " << res.count(Status::pruned) << " pruned, in "
      << fixed(res.seconds, 1) << " s (" << fixed(r.wall_seconds, 1) << " s in all)\n";
  out << "  compile  " << r.compile.variants << " variants in " << r.compile.programs << " NVRTC program"
      << (r.compile.programs == 1 ? "" : "s") << " (" << r.compile.from_cache << " from the cache), "
      << fixed(r.compile.seconds, 1) << " s of compile time\n";
  out << "  timing   " << r.timing << "\n\n";

  if (res.ranking.empty()) {
    out << "  no variant ran correctly.\n";
  } else {
    std::size_t width = 8;
    for (std::size_t k = 0; k < res.ranking.size() && k < static_cast<std::size_t>(show); ++k)
      width = std::max(width, res.evaluations[res.ranking[k]].label.size());
    out << "  " << std::right << std::setw(4) << "rank" << "  " << std::left << std::setw(static_cast<int>(width))
        << "variant" << std::right << std::setw(11) << "median ms" << std::setw(8) << "IQR %" << std::setw(11)
        << "min ms" << std::setw(9) << "GB/s" << std::setw(8) << "% peak" << std::setw(6) << "regs" << "\n";
    for (std::size_t k = 0; k < res.ranking.size() && k < static_cast<std::size_t>(show); ++k) {
      const Evaluation& e = res.evaluations[res.ranking[k]];
      const double gbs = gbs_of(r.bytes_moved, e.time.median);
      const bool tie = std::find(res.ties.begin(), res.ties.end(), res.ranking[k]) != res.ties.end();
      out << "  " << std::right << std::setw(4) << k + 1 << "  " << std::left << std::setw(static_cast<int>(width))
          << e.label << std::right << std::setw(11) << ms_text(e.time.median) << std::setw(8)
          << fixed(e.time.iqr_percent(), 1) << std::setw(11) << ms_text(e.time.min) << std::setw(9) << fixed(gbs, 0)
          << std::setw(8) << fixed(r.peak_gbs > 0 ? 100 * gbs / r.peak_gbs : 0, 1) << std::setw(6)
          << (e.outcome.registers >= 0 ? std::to_string(e.outcome.registers) : "-")
          << (e.rechecked ? "  rechecked" : "") << (tie ? "  tie" : "") << "\n";
    }
    if (res.ranking.size() > static_cast<std::size_t>(show))
      out << "  ... " << res.ranking.size() - static_cast<std::size_t>(show) << " more (--json / --csv have all)\n";
    const Evaluation& w = *res.winner();
    out << "\n  best     " << w.label << "  " << ms_text(w.time.median) << " ms";
    if (!res.ties.empty()) {
      std::vector<std::string> names;
      for (auto i : res.ties) names.push_back(res.evaluations[i].label);
      out << "  -- a tie within the noise (interquartile ranges overlap) with " << join(names);
    }
    out << "\n";
  }

  // Failures, grouped by reason.
  for (Status s : {Status::faulted, Status::timed_out, Status::invalid, Status::compile_error, Status::launch_error,
                   Status::pruned}) {
    std::map<std::string, std::pair<int, std::string>> groups;  // why -> count, first label
    for (const auto& e : res.evaluations)
      if (e.outcome.status == s) {
        auto& g = groups[e.outcome.why];
        if (g.first++ == 0) g.second = e.label;
      }
    if (groups.empty()) continue;
    const std::size_t total = res.count(s);
    out << "  " << std::left << std::setw(14) << std::string(status_name(s)) + ":" << total << "\n";
    for (const auto& [why, g] : groups)
      out << "      " << g.first << " x " << why << "  (e.g. " << g.second << ")\n";
  }
  if (res.count(Status::faulted) + res.count(Status::timed_out) > 0)
    out << "  (a fault or a time limit kills the CUDA context of its process; the sweep went on in a fresh process)\n";
  if (res.count(Status::invalid) + res.count(Status::compile_error) + res.count(Status::launch_error) +
          res.count(Status::faulted) + res.count(Status::timed_out) >
      0)
    out << "  (--json has every variant's full message)\n";
  if (!res.stopped.empty()) out << "  stopped  " << res.stopped << "\n";
}

namespace {

nlohmann::json spread_json(const Spread& s) {
  return {{"median_ms", s.median}, {"q1_ms", s.q1}, {"q3_ms", s.q3}, {"min_ms", s.min}, {"max_ms", s.max},
          {"runs", s.count}};
}

}  // namespace

void write_tune_json(const std::filesystem::path& path, const TuneReport& r) {
  nlohmann::json j;
  j["config"] = r.config;
  j["family"] = r.family;
  j["operation"] = r.operation;
  j["options"] = nlohmann::json::object();
  for (const auto& [k, v] : r.options) j["options"][k] = v;
  j["dtype"] = r.dtype;
  j["size"] = r.size;
  j["bytes_moved"] = r.bytes_moved;
  j["device"] = {{"name", r.gpu}, {"arch", r.arch}, {"peak_bandwidth_gbs", r.peak_gbs}};
  j["nvrtc_version"] = r.nvrtc;
  j["strategy"] = r.strategy;
  j["seed"] = r.seed;
  j["timing"] = r.timing;
  j["seconds"] = r.result.seconds;
  j["wall_seconds"] = r.wall_seconds;
  j["compile"] = {{"programs", r.compile.programs}, {"from_cache", r.compile.from_cache},
                  {"variants", r.compile.variants}, {"thread_seconds", r.compile.seconds}};
  j["stopped"] = r.result.stopped;
  j["aborted"] = r.result.aborted;
  std::map<std::size_t, std::size_t> rank;
  for (std::size_t k = 0; k < r.result.ranking.size(); ++k) rank[r.result.ranking[k]] = k + 1;
  if (const Evaluation* w = r.result.winner()) {
    j["best"] = {{"variant", w->label}, {"params", w->params}, {"median_ms", w->time.median}};
    j["best"]["ties"] = nlohmann::json::array();
    for (auto i : r.result.ties) j["best"]["ties"].push_back(r.result.evaluations[i].label);
  }
  j["variants"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.result.evaluations.size(); ++i) {
    const Evaluation& e = r.result.evaluations[i];
    nlohmann::json v;
    v["kernel"] = r.result.evaluations[i].label.substr(0, e.label.find(' '));
    v["variant"] = e.label;
    v["params"] = e.params;
    v["status"] = std::string(status_name(e.outcome.status));
    v["rank"] = rank.count(i) ? nlohmann::json(rank[i]) : nlohmann::json(nullptr);
    if (e.outcome.status == Status::ok) {
      v["time"] = spread_json(e.time);
      v["gbs"] = gbs_of(r.bytes_moved, e.time.median);
      v["rechecked"] = e.rechecked;
    } else {
      v["why"] = e.outcome.why;
      v["detail"] = e.outcome.detail;
    }
    if (e.outcome.registers >= 0) v["registers"] = e.outcome.registers;
    if (e.outcome.spill_bytes >= 0) v["spill_bytes"] = e.outcome.spill_bytes;
    v["launches"] = nlohmann::json::array();
    for (const auto& l : e.outcome.launches)
      v["launches"].push_back({{"name_expression", l.name_expression}, {"grid", l.grid}, {"block", l.block}});
    v["at_seconds"] = e.at_seconds;
    j["variants"].push_back(std::move(v));
  }
  std::ofstream out(path);
  if (!out) throw Error(path.string() + ": cannot write the JSON report");
  out << j.dump(2) << "\n";
}

void write_tune_csv(const std::filesystem::path& path, const TuneReport& r) {
  const auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::set<std::string> names;
  for (const auto& e : r.result.evaluations)
    for (const auto& [k, v] : e.params) names.insert(k);
  std::map<std::size_t, std::size_t> rank;
  for (std::size_t k = 0; k < r.result.ranking.size(); ++k) rank[r.result.ranking[k]] = k + 1;
  std::ofstream out(path);
  if (!out) throw Error(path.string() + ": cannot write the CSV report");
  out << "rank,kernel,variant";
  for (const auto& n : names) out << ",param_" << n;
  out << ",status,median_ms,q1_ms,q3_ms,min_ms,max_ms,runs,gbs,registers,rechecked,why,gpu,family,operation,dtype,"
         "size\n";
  for (std::size_t i = 0; i < r.result.evaluations.size(); ++i) {
    const Evaluation& e = r.result.evaluations[i];
    const bool ok = e.outcome.status == Status::ok;
    out << (rank.count(i) ? std::to_string(rank[i]) : "") << ',' << e.label.substr(0, e.label.find(' ')) << ','
        << quote(e.label);
    for (const auto& n : names) {
      const auto it = e.params.find(n);
      out << ',' << (it == e.params.end() ? "" : std::to_string(it->second));
    }
    out << ',' << status_name(e.outcome.status) << ',';
    if (ok)
      out << e.time.median << ',' << e.time.q1 << ',' << e.time.q3 << ',' << e.time.min << ',' << e.time.max << ','
          << e.time.count << ',' << gbs_of(r.bytes_moved, e.time.median);
    else
      out << ",,,,,,";
    out << ',' << (e.outcome.registers >= 0 ? std::to_string(e.outcome.registers) : "") << ','
        << (e.rechecked ? "true" : "false") << ',' << quote(ok ? "" : e.outcome.why) << ',' << quote(r.gpu) << ','
        << r.family << ',' << r.operation << ',' << r.dtype << ',' << r.size << "\n";
  }
}

}  // namespace gpuk
