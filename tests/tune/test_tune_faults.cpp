// The sweep's bookkeeping of variants that fault or run past their time limit (no GPU: the fake
// measurer of tune_helpers.hpp reports what the GPU measurer reports after rebuilding the context).
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "tune/report/journal.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

// BLOCK=256 UNROLL=4, the fastest point of smooth_cost, faults; every BLOCK=512 runs too long.
Outcome faulty_outcome(const std::map<std::string, std::int64_t>& p) {
  Outcome o;
  if (p.at("BLOCK") == 256 && p.at("UNROLL") == 4) {
    o.status = Status::faulted;
    o.why = "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)";
    o.detail = "variant k BLOCK=256 UNROLL=4 of k.cu faulted: " + o.why;
    return o;
  }
  if (p.at("BLOCK") == 512) {
    o.status = Status::timed_out;
    o.why = "ran past its time limit";
    o.detail = "variant k BLOCK=512 of k.cu ran past its time limit of 2 s and was abandoned";
    return o;
  }
  const double c = test::smooth_cost(p);
  o.samples = {c * 1.002, c * 0.999, c, c * 1.001, c * 0.998};
  return o;
}

}  // namespace

TEST_CASE("faulted and timed-out variants are recorded with their error, never chosen, and the sweep goes on") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;
  m.outcome = faulty_outcome;
  TuneOptions o;
  o.recheck_top = 3;
  o.recheck_repeats = 6;
  const TuneResult r = tune(space, m, o);

  // Every point that is not pruned was measured: the faults did not stop the sweep.
  CHECK(r.stopped.empty());
  CHECK_FALSE(r.aborted);
  CHECK(m.measured.size() == r.evaluations.size() - r.count(Status::pruned));
  CHECK(r.count(Status::faulted) == 1);
  CHECK(r.count(Status::timed_out) == 4);  // BLOCK=512 x UNROLL 1, 2, 4, 8 (BLOCK * UNROLL <= 4096)
  for (const auto& e : r.evaluations) {
    CAPTURE(e.label);
    if (e.params.at("BLOCK") == 256 && e.params.at("UNROLL") == 4) {
      CHECK(e.outcome.status == Status::faulted);
      CHECK(e.outcome.why.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
    }
  }
  // Never ranked: the winner is the best of the rest.
  for (auto i : r.ranking) CHECK(r.evaluations[i].outcome.status == Status::ok);
  REQUIRE(r.winner());
  CHECK(r.winner()->label != "k BLOCK=256 UNROLL=4");
  CHECK(r.winner()->params.at("BLOCK") != 512);

  // The report groups them, with the error.
  TuneReport report;
  report.result = r;
  std::ostringstream out;
  print_tune_report(out, report, 5);
  CAPTURE(out.str());
  CHECK(out.str().find("faulted:") != std::string::npos);
  CHECK(out.str().find("1 x CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
  CHECK(out.str().find("time limit:") != std::string::npos);
  CHECK(out.str().find("fresh process") != std::string::npos);

  // And the JSON keeps each one's status and message.
  const test::TempDir dir;
  write_tune_json(dir.path() / "t.json", report);
  std::ifstream in(dir.path() / "t.json");
  const auto j = nlohmann::json::parse(in);
  int faulted = 0, timed_out = 0;
  for (const auto& v : j["variants"]) {
    if (v["status"] == "faulted") {
      ++faulted;
      CHECK(v["detail"].get<std::string>().find("faulted: CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
      CHECK(v["rank"].is_null());
    }
    if (v["status"] == "time limit") ++timed_out;
  }
  CHECK(faulted == 1);
  CHECK(timed_out == 4);
  CHECK(j["aborted"] == false);
}

TEST_CASE("a fault in every variant but one still finds that one, with every strategy") {
  const Space space = test::metadata_space({test::tune_kernel()});
  for (TuneStrategy s : {TuneStrategy::exhaustive, TuneStrategy::random, TuneStrategy::anneal}) {
    CAPTURE(static_cast<int>(s));
    test::FakeMeasurer m;
    m.outcome = [](const std::map<std::string, std::int64_t>& p) {
      Outcome o;
      if (p.at("BLOCK") != 64) {
        o.status = Status::faulted;
        o.why = "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)";
        return o;
      }
      o.samples = {1, 1, 1};
      return o;
    };
    TuneOptions o;
    o.strategy = s;
    o.evaluations = 40;
    o.seed = 3;
    const TuneResult r = tune(space, m, o);
    CHECK_FALSE(r.aborted);
    CHECK(r.count(Status::faulted) > 0);
    if (r.winner()) CHECK(r.winner()->params.at("BLOCK") == 64);
    if (s == TuneStrategy::exhaustive) {
      REQUIRE(r.winner());
      CHECK(r.count(Status::ok) == 4);  // BLOCK=64 x UNROLL 1, 2, 4, 8
    }
  }
}

TEST_CASE("when the GPU cannot be recovered the sweep stops, says why, and keeps what it measured") {
  const Space space = test::metadata_space({test::tune_kernel()});
  struct Dying : test::FakeMeasurer {
    int left = 5;
    Outcome measure(const Space& space, const Candidate& c) override {
      if (--left < 0) throw SweepAborted("variant x faulted; the GPU could not be recovered");
      return FakeMeasurer::measure(space, c);
    }
  } m;
  TuneOptions o;
  const TuneResult r = tune(space, m, o);
  CHECK(r.aborted);
  CHECK(r.stopped.find("could not be recovered") != std::string::npos);
  CHECK(r.count(Status::ok) == 5);
  CHECK(r.count(Status::launch_error) == 1);
  REQUIRE(r.winner());
  CHECK(m.timed == 0);  // no recheck on a lost GPU
}

TEST_CASE("a variant that takes the context down ends the process's part; a fresh one goes on from the journal") {
  const Space space = test::metadata_space({test::tune_kernel()});
  // What the GPU measurer does: the outcome of the faulting point comes with ContextLost, and
  // nothing more can run in that process.
  struct Losing : test::FakeMeasurer {
    std::set<std::string> lose;  // labels that fault (or hang)
    bool dead = false;
    Outcome measure(const Space& space, const Candidate& c) override {
      REQUIRE_FALSE(dead);
      const std::string label = space.label(c);
      if (lose.count(label)) {
        dead = true;
        Outcome o;
        o.status = label.find("BLOCK=512") != std::string::npos ? Status::timed_out : Status::faulted;
        o.why = o.status == Status::faulted ? "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"
                                            : "ran past its time limit";
        o.detail = "variant " + label + " of k.cu " + (o.status == Status::faulted ? "faulted" : "ran past");
        throw ContextLost(o.detail, o);
      }
      return FakeMeasurer::measure(space, c);
    }
    std::vector<double> time(const Space& space, const Candidate& c, int repeats) override {
      REQUIRE_FALSE(dead);
      return FakeMeasurer::time(space, c, repeats);
    }
  };
  const std::set<std::string> lose = {"k BLOCK=256 UNROLL=4", "k BLOCK=64 UNROLL=2", "k BLOCK=512 UNROLL=1"};
  const test::TempDir dir;
  const auto path = dir.path() / "journal.jsonl";
  TuneOptions o;
  o.recheck_top = 3;
  o.recheck_repeats = 6;
  TuneResult r;
  int processes = 0;
  std::set<std::string> measured;
  for (;;) {
    ++processes;
    REQUIRE(processes < 10);
    Losing m;
    m.lose = lose;
    // What each process of `gpuk tune` does: the journal's points of this run first, each new one
    // appended as it is measured.
    TuneJournal journal(path, "run-1");
    o.prior = journal.read(space, true);
    CHECK(o.prior.size() == (processes == 1 ? 0 : measured.size() + static_cast<std::size_t>(processes - 1)));
    o.on_measured = [&](const Evaluation& e) { journal.append(space, e); };
    r = tune(space, m, o);
    for (const auto& label : m.measured) {
      CAPTURE(label);
      CHECK(measured.insert(label).second);  // nothing is measured twice
    }
    if (!r.context_lost) break;
    CHECK(r.aborted);
    CHECK(r.stopped.find("variant k BLOCK=") != std::string::npos);
    CHECK(m.timed == 0);  // no recheck in a process that lost its context
  }
  CHECK(processes == 4);  // three losses, then the process that finishes
  CHECK(r.stopped.empty());
  CHECK_FALSE(r.aborted);
  CHECK(r.count(Status::faulted) == 2);
  CHECK(r.count(Status::timed_out) == 1);
  CHECK(r.evaluations.size() - r.count(Status::pruned) == measured.size() + lose.size());  // the lost ones throw first
  for (const auto& e : r.evaluations)
    if (lose.count(e.label)) {
      CAPTURE(e.label);
      CHECK(e.outcome.status != Status::ok);
      CHECK_FALSE(e.outcome.why.empty());
    }
  REQUIRE(r.winner());
  CHECK(lose.count(r.winner()->label) == 0);
  CHECK(r.winner()->rechecked);
  for (auto i : r.ranking) CHECK(r.evaluations[i].outcome.status == Status::ok);
  // What came through the journal is whole: samples, registers, launches.
  for (const auto& e : r.evaluations)
    if (e.outcome.status == Status::ok) {
      CHECK(e.time.median > 0);
      CHECK(e.outcome.registers == 32);
    }
}

TEST_CASE("a journal line round-trips, and a line of another kernel file or content is not taken") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const test::TempDir dir;
  Evaluation e;
  e.candidate = space.at(3);
  e.label = space.label(e.candidate);
  e.params = space.params(e.candidate);
  e.outcome.status = Status::faulted;
  e.outcome.why = "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)";
  e.outcome.detail = "variant faulted";
  e.outcome.launches = {{"k<gpuk::Reduce<float>, 64, 8>", 7, 64, 128}};
  e.at_seconds = 1.5;
  TuneJournal(dir.path() / "j.jsonl", "a").append(space, e);
  const auto back = TuneJournal(dir.path() / "j.jsonl", "a").read(space, false);
  REQUIRE(back.size() == 1);
  CHECK(back[0].candidate == e.candidate);
  CHECK(back[0].label == e.label);
  CHECK(back[0].outcome.status == Status::faulted);
  CHECK(back[0].outcome.why == e.outcome.why);
  CHECK_FALSE(back[0].reused);  // the same run
  REQUIRE(back[0].outcome.launches.size() == 1);
  CHECK(back[0].outcome.launches[0].grid == 7);
  CHECK(back[0].outcome.launches[0].shared_bytes == 128);
  // Another kernel file: nothing of it is in the journal.
  const Space other = test::metadata_space({test::tune_kernel(test::kTuneKernel2, "other.cu")});
  CHECK(TuneJournal(dir.path() / "j.jsonl", "a").read(other, false).empty());
  // The same file name with other content (an edited kernel): measured again.
  std::string edited = test::kTuneKernel;
  edited += "// edited\n";
  const Space changed = test::metadata_space({test::tune_kernel(edited.c_str(), "k.cu")});
  CHECK(TuneJournal(dir.path() / "j.jsonl", "a").read(changed, false).empty());
}
