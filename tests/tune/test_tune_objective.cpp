// The objective (time, energy, energy x delay) from the config and command line through the
// ranking, the report (table, JSON, CSV) and the tuning database's key (no GPU: a fake
// measurer with a synthetic energy per call).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "builtins.hpp"
#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

// Energy per call is lowest at BLOCK=128 UNROLL=1, not at the fastest point (BLOCK=256 UNROLL=4).
double synthetic_joules(const std::map<std::string, std::int64_t>& p) {
  return 1e-3 * (1 + 0.2 * std::pow(std::log2(static_cast<double>(p.at("BLOCK"))) - 7, 2) +
                 0.1 * std::log2(static_cast<double>(p.at("UNROLL"))));
}

using test::onepass_tune_spec;
using test::h100_info;

}  // namespace

TEST_CASE("cost_of: time in ms, energy in J per call, edp in J x s, with their quartiles") {
  Evaluation e;
  e.outcome.status = Status::ok;
  e.time = Spread::of({1, 2, 3});  // ms
  CHECK(cost_of(e, TuneObjective::time)->median == 2);
  CHECK_FALSE(cost_of(e, TuneObjective::energy));  // no energy measured
  e.energy = Spread::of({0.5, 0.5, 0.5});          // J
  CHECK(cost_of(e, TuneObjective::energy)->median == 0.5);
  CHECK(cost_of(e, TuneObjective::edp)->median == doctest::Approx(0.5 * 2e-3));
  CHECK(cost_of(e, TuneObjective::edp)->q1 == doctest::Approx(0.5 * 1.5e-3));
  e.outcome.status = Status::invalid;
  CHECK_FALSE(cost_of(e, TuneObjective::time));
  CHECK(parse_objective("edp") == TuneObjective::edp);
  CHECK_FALSE(parse_objective("power"));
  CHECK(std::string(objective_name(TuneObjective::energy)) == "energy");
  CHECK(parse_strategy("bayes") == TuneStrategy::bayes);
  CHECK(std::string(strategy_name(TuneStrategy::bayes)) == "bayes");
}

TEST_CASE("objective energy ranks by energy per call; time and edp by theirs") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const auto run = [&](TuneObjective objective) {
    test::FakeMeasurer m;
    m.joules = synthetic_joules;
    TuneOptions o;
    o.objective = objective;
    o.measure_energy = true;
    return tune(space, m, o);
  };
  const TuneResult time = run(TuneObjective::time);
  const TuneResult energy = run(TuneObjective::energy);
  const TuneResult edp = run(TuneObjective::edp);
  REQUIRE(time.winner());
  REQUIRE(energy.winner());
  REQUIRE(edp.winner());
  CHECK(time.winner()->label == "k BLOCK=256 UNROLL=4");
  CHECK(energy.winner()->label == "k BLOCK=128 UNROLL=1");
  CHECK(energy.objective == TuneObjective::energy);
  for (std::size_t k = 1; k < energy.ranking.size(); ++k)
    CHECK(energy.evaluations[energy.ranking[k - 1]].energy.median <=
          energy.evaluations[energy.ranking[k]].energy.median);
  // edp weighs both: its winner is no worse than either winner by its own measure.
  const auto edp_of = [](const Evaluation& e) { return *cost_of(e, TuneObjective::edp); };
  CHECK(edp_of(*edp.winner()).median <= edp_of(*time.winner()).median);
  CHECK(edp_of(*edp.winner()).median <= edp_of(*energy.winner()).median);
  // The time sweep measured energy too (measure_energy): every ok point has it.
  for (const auto& e : time.evaluations)
    if (e.outcome.status == Status::ok) CHECK(e.energy.count > 0);
}

TEST_CASE("an energy objective where energy cannot be measured is an error that says so") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;  // no joules: energy() is nullopt, as without NVML
  TuneOptions o;
  o.objective = TuneObjective::energy;
  CHECK_THROWS_WITH_AS(tune(space, m, o), doctest::Contains("needs energy"), Error);
  o.objective = TuneObjective::time;
  o.measure_energy = true;  // asked for, not needed: the sweep goes on without it
  const TuneResult r = tune(space, m, o);
  REQUIRE(r.winner());
  CHECK(r.winner()->energy.count == 0);
}

TEST_CASE("tune configs: objective, energy, repeats: auto, recheck.repeats: auto, auto_repeats") {
  const TuneSpec plain = onepass_tune_spec("");
  CHECK(plain.objective == TuneObjective::time);
  CHECK_FALSE(plain.energy);
  CHECK_FALSE(plain.auto_repeats);
  CHECK(plain.recheck_auto);  // the recheck is noise-aware by default
  CHECK(plain.run.repeats == 30);
  const TuneSpec t = onepass_tune_spec("objective: edp\nenergy: true\nrepeats: auto\nauto_repeats: {bound: 0.02, seconds: 3}\n"
                          "recheck: {top: 3, repeats: 40}\nstrategy: bayes\n");
  CHECK(t.objective == TuneObjective::edp);
  CHECK(t.energy);
  CHECK(t.auto_repeats);
  CHECK(t.auto_bound == 0.02);
  CHECK(t.auto_seconds == 3);
  CHECK_FALSE(t.recheck_auto);  // a number of repeats is a fixed recheck
  CHECK(t.recheck_repeats == 40);
  CHECK(t.strategy == TuneStrategy::bayes);
  CHECK(onepass_tune_spec("recheck: {repeats: auto}\n").recheck_auto);
  CHECK_THROWS_WITH_AS(onepass_tune_spec("objective: power\n"), doctest::Contains("unknown objective 'power'"), ConfigError);
  CHECK_THROWS_WITH_AS(onepass_tune_spec("auto_repeats: {bound: 2}\n"), doctest::Contains("auto_repeats.bound"), ConfigError);
  CHECK_THROWS_AS(onepass_tune_spec("repeats: sometimes\n"), ConfigError);
}

TEST_CASE("the report, JSON and CSV carry the objective and the energy columns") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;
  m.joules = synthetic_joules;
  TuneOptions o;
  o.objective = TuneObjective::energy;
  const TuneSpec t = onepass_tune_spec("objective: energy\n");
  TuneReport report = make_tune_report(t, o, tune(space, m, o), h100_info(), 4000000, false, {});
  CHECK(report.objective == "energy");
  CHECK(report.sm_count == 132);
  std::ostringstream out;
  print_tune_report(out, report, 5);
  CAPTURE(out.str());
  CHECK(out.str().find("ranked by energy (energy per call)") != std::string::npos);
  CHECK(out.str().find("energy/call") != std::string::npos);
  CHECK(out.str().find("SM MHz") != std::string::npos);
  CHECK(out.str().find("1.000 mJ") != std::string::npos);  // joules in a unit that suits them
  CHECK(report.timing.find("energy from NVML") != std::string::npos);
  CHECK(report.timing.find("each window took 1000 calls") != std::string::npos);  // said when one call is too short

  const test::TempDir dir;
  write_tune_json(dir.path() / "t.json", report);
  std::ifstream in(dir.path() / "t.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j["objective"] == "energy");
  CHECK(j["device"]["sm_count"] == 132);
  CHECK(j["best"]["joules_per_call"].get<double>() == doctest::Approx(synthetic_joules({{"BLOCK", 128}, {"UNROLL", 1}})));
  bool any = false;
  for (const auto& v : j["variants"])
    if (v["status"] == "ok") {
      CHECK(v["energy"]["joules_per_call"].get<double>() > 0);
      CHECK(v["energy"]["sm_mhz"] == 1755);
      any = true;
    }
  CHECK(any);
  write_tune_csv(dir.path() / "t.csv", report);
  std::ifstream csv(dir.path() / "t.csv");
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  CHECK(header.find(",joules_per_call,watts,sm_mhz,") != std::string::npos);
  CHECK(header.find(",objective") != std::string::npos);
  CHECK(first.find(",energy") != std::string::npos);
}

TEST_CASE("the database records the objective in the key; an old database without it reads as time") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;
  m.joules = synthetic_joules;
  TuneOptions o;
  o.objective = TuneObjective::energy;
  const TuneSpec t = onepass_tune_spec("objective: energy\n");
  const TuneReport report = make_tune_report(t, o, tune(space, m, o), h100_info(), 4000000, false, {});
  const auto e = winner_entry(report, space);
  REQUIRE(e);
  CHECK(e->key.objective == "energy");
  REQUIRE(e->joules);
  CHECK(*e->joules == doctest::Approx(synthetic_joules(e->params)));

  const test::TempDir dir;
  const auto path = dir.path() / "db.json";
  TuningEntry time_entry = *e;
  time_entry.key.objective = "time";
  time_entry.params["BLOCK"] = 256;
  time_entry.joules.reset();
  TuningDb::merge_into(path, {*e, time_entry});
  const TuningDb db = TuningDb::read(path);
  CHECK(db.entries().size() == 2);  // one per objective: an energy tune never replaces the time winner
  TuningKey key = e->key;
  key.objective = "time";
  REQUIRE(db.pick(key).entry);
  CHECK(db.pick(key).entry->params.at("BLOCK") == 256);
  key.objective = "energy";
  REQUIRE(db.pick(key).entry);
  CHECK(db.pick(key).entry->params.at("BLOCK") == e->params.at("BLOCK"));
  CHECK(db.pick(key).entry->joules);

  // A database written before objectives: its entries are time entries.
  {
    std::ofstream old(dir.path() / "old.json");
    old << R"({"format": "gpuk-tuning-db", "version": 1, "entries": [{"gpu": "G", "arch": "sm_90",
      "family": "reduce", "operation": "max", "options": "", "dtype": "float32", "size_bucket": 20,
      "kernel": "onepass", "params": {"BLOCK": 512}, "median_ms": 0.1}]})";
  }
  const TuningDb old = TuningDb::read(dir.path() / "old.json");
  REQUIRE(old.entries().size() == 1);
  CHECK(old.entries()[0].key.objective == "time");
  TuningKey k{"G", "sm_90", "reduce", "max", "", "float32", 20};
  CHECK(old.pick(k).entry);
  k.objective = "energy";
  CHECK_FALSE(old.pick(k).entry);
}

TEST_CASE("repeats: auto in a tune config: every variant timed until its median is known, the recheck too") {
  const TuneSpec t = onepass_tune_spec("repeats: auto\nauto_repeats: {bound: 0.02, seconds: 0.5}\nrecheck: {top: 2, repeats: auto}\n");
  CHECK(t.auto_repeats);
  CHECK(t.auto_bound == doctest::Approx(0.02));
  CHECK(t.recheck_auto);
  const TuneSpec fixed = onepass_tune_spec("repeats: 7\n");
  CHECK_FALSE(fixed.auto_repeats);
  CHECK(fixed.run.repeats == 7);
}
