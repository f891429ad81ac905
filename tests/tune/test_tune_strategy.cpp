// The strategies and the failure bookkeeping of tune(), with a fake Measurer (no GPU).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "helpers.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

std::vector<std::string> labels(const TuneResult& r, bool measured_only = true) {
  std::vector<std::string> out;
  for (const auto& e : r.evaluations)
    if (!measured_only || e.outcome.status != Status::pruned) out.push_back(e.label);
  return out;
}

}  // namespace

TEST_CASE("exhaustive measures every point that is not pruned, in order, and ranks them") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;
  TuneOptions o;
  const TuneResult r = tune(space, m, o);
  CHECK(r.count(Status::pruned) == 1);  // BLOCK=1024 UNROLL=8 breaks BLOCK * UNROLL <= 4096
  CHECK(r.count(Status::ok) == 19);
  CHECK(m.measured.size() == 19);
  CHECK(m.batches.front() == 19);  // compiled in one go
  REQUIRE(r.winner());
  CHECK(r.winner()->label == "k BLOCK=256 UNROLL=4");
  CHECK(r.winner()->rechecked);
  CHECK(m.timed == 5 * 4);  // the best 5, in 4 interleaved rounds
  for (std::size_t k = 1; k < r.ranking.size(); ++k)
    CHECK(r.evaluations[r.ranking[k - 1]].time.median <= r.evaluations[r.ranking[k]].time.median);
  CHECK(r.ties.empty());
  CHECK(r.stopped.empty());
}

TEST_CASE("an evaluation budget caps exhaustive; random samples without replacement, reproducibly by seed") {
  const Space space = test::metadata_space({test::tune_kernel(), test::tune_kernel(test::kTuneKernel2, "o.cu")});
  {
    test::FakeMeasurer m;
    TuneOptions o;
    o.evaluations = 4;
    const TuneResult r = tune(space, m, o);
    CHECK(labels(r) == std::vector<std::string>{"k BLOCK=64 UNROLL=1", "k BLOCK=64 UNROLL=2", "k BLOCK=64 UNROLL=4",
                                                "k BLOCK=64 UNROLL=8"});
  }
  const auto sample = [&](std::uint64_t seed) {
    test::FakeMeasurer m;
    TuneOptions o;
    o.strategy = TuneStrategy::random;
    o.evaluations = 10;
    o.seed = seed;
    return labels(tune(space, m, o));
  };
  const auto a = sample(1), b = sample(1), c = sample(2);
  CHECK(a.size() == 10);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(std::set<std::string>(a.begin(), a.end()).size() == 10);
  // A budget above the space's size measures every runnable point once.
  test::FakeMeasurer m;
  TuneOptions o;
  o.strategy = TuneStrategy::random;
  o.evaluations = 1000;
  const TuneResult all = tune(space, m, o);
  CHECK(all.count(Status::ok) == 19 + 4);
  CHECK(all.count(Status::pruned) == 1);
}

TEST_CASE("anneal stays within its budget, is reproducible by seed, and finds the optimum of a smooth space") {
  const Space space = test::metadata_space({test::tune_kernel(), test::tune_kernel(test::kTuneKernel2, "o.cu")});
  const auto anneal = [&](std::uint64_t seed, int budget) {
    test::FakeMeasurer m;
    TuneOptions o;
    o.strategy = TuneStrategy::anneal;
    o.evaluations = budget;
    o.seed = seed;
    return tune(space, m, o);
  };
  const TuneResult a = anneal(5, 12), b = anneal(5, 12);
  CHECK(labels(a) == labels(b));
  CHECK(labels(a).size() == 12);
  // It starts from each file's defaults.
  CHECK(labels(a)[0] == "k BLOCK=256 UNROLL=2");
  CHECK(labels(a)[1] == "o BLOCK=128");
  REQUIRE(a.winner());
  CHECK(a.winner()->label == "k BLOCK=256 UNROLL=4");  // one step from the defaults
  // Different seeds walk differently.
  bool differs = false;
  for (std::uint64_t s = 6; s < 12 && !differs; ++s) differs = labels(anneal(s, 12)) != labels(a);
  CHECK(differs);
  // A budget larger than the space ends when every point was seen.
  const TuneResult all = anneal(1, 1000);
  CHECK(all.count(Status::ok) == 23);
}

TEST_CASE("failures are recorded with their reasons, never chosen, and the sweep goes on") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;
  const auto good = m.outcome;
  m.outcome = [good](const std::map<std::string, std::int64_t>& p) {
    Outcome o = good(p);
    if (p.at("BLOCK") == 256 && p.at("UNROLL") == 4) {  // the fastest gives a wrong answer
      o.status = Status::invalid;
      o.why = "wrong answer";
      o.detail = "mismatch: expected value 1 at index 3, got value 0 at index 0";
      o.samples.clear();
    } else if (p.at("UNROLL") == 8) {
      o.status = Status::compile_error;
      o.why = "error: too many unrolls";
      o.samples.clear();
    } else if (p.at("BLOCK") == 1024) {
      o.status = Status::launch_error;
      o.why = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested for launch)";
      o.samples.clear();
    }
    return o;
  };
  TuneOptions o;
  const TuneResult r = tune(space, m, o);
  CHECK(r.count(Status::invalid) == 1);
  CHECK(r.count(Status::compile_error) == 4);  // UNROLL=8 for BLOCK 64..512 (1024 x 8 is pruned)
  CHECK(r.count(Status::launch_error) == 3);
  CHECK(r.count(Status::pruned) == 1);
  CHECK(r.count(Status::ok) == 20 - 1 - 4 - 3 - 1);
  REQUIRE(r.winner());
  CHECK(r.winner()->label != "k BLOCK=256 UNROLL=4");
  for (auto i : r.ranking) CHECK(r.evaluations[i].outcome.status == Status::ok);

  TuneReport report;
  report.config = "t.yaml";
  report.bytes_moved = 4 << 20;
  report.result = r;
  report.data = summarize_data(DataSpec{}, DType::int32, 1000);
  std::ostringstream out;
  print_tune_report(out, report, 3);
  const std::string text = out.str();
  CHECK(text.find("  data     uniform in [-2147483648, 2147483647], seed 1, at most 1000 distinct values\n") !=
        std::string::npos);
  CHECK(text.find("wrong answer: 1") != std::string::npos);
  CHECK(text.find("4 x error: too many unrolls") != std::string::npos);
  CHECK(text.find("3 x CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") != std::string::npos);
  CHECK(text.find("1 x constraint 'BLOCK * UNROLL <= 4096'") != std::string::npos);
  CHECK(text.find("more (--json / --csv have all)") != std::string::npos);

  const test::TempDir dir;
  write_tune_json(dir.path() / "t.json", report);
  write_tune_csv(dir.path() / "t.csv", report);
  std::ifstream csv(dir.path() / "t.csv");
  std::string header;
  std::getline(csv, header);
  CHECK(header.find("rank,kernel,variant,param_BLOCK,param_UNROLL,status,median_ms") == 0);
  CHECK(header.find(",objective,device,data") != std::string::npos);
  int rows = 0;
  for (std::string line; std::getline(csv, line);) {
    ++rows;
    CHECK(line.find(",\"uniform in [-2147483648, 2147483647], seed 1, at most 1000 distinct values\"") !=
          std::string::npos);
  }
  CHECK(rows == 20);
  std::ifstream json_in(dir.path() / "t.json");
  CHECK(nlohmann::json::parse(json_in)["data"]["range"] == "[-2147483648, 2147483647]");
}

TEST_CASE("a dead CUDA context stops the sweep with its message; the results so far are kept") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;
  const auto good = m.outcome;
  int calls = 0;
  m.outcome = [&](const std::map<std::string, std::int64_t>& p) {
    if (++calls == 4) throw SweepAborted("variant k BLOCK=64 UNROLL=8 left the CUDA context unusable");
    return good(p);
  };
  TuneOptions o;
  const TuneResult r = tune(space, m, o);
  CHECK(r.count(Status::ok) == 3);
  CHECK(r.count(Status::launch_error) == 1);
  CHECK(r.stopped.find("left the CUDA context unusable") != std::string::npos);
  CHECK(m.timed == 0);  // no recheck on a dead context
  REQUIRE(r.winner());
}

TEST_CASE("a time budget stops the sweep and says how much was left") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;
  TuneOptions o;
  o.seconds = 1e-9;
  const TuneResult r = tune(space, m, o);
  CHECK(r.count(Status::ok) == 0);
  CHECK(r.stopped.find("time budget") != std::string::npos);
}

TEST_CASE("a winner within the noise of the runner-up is reported as a tie") {
  const Space space = test::metadata_space({test::tune_kernel()});
  test::FakeMeasurer m;
  m.outcome = [](const std::map<std::string, std::int64_t>& p) {
    Outcome o;
    const double base = p.at("BLOCK") == 256 && p.at("UNROLL") == 4 ? 1.0
                        : p.at("BLOCK") == 512 && p.at("UNROLL") == 4 ? 1.001
                                                                       : 2.0;
    o.samples = {base * 0.99, base, base * 1.01, base * 1.02, base * 0.98};
    return o;
  };
  TuneOptions o;
  const TuneResult r = tune(space, m, o);
  REQUIRE(r.winner());
  CHECK(r.winner()->label == "k BLOCK=256 UNROLL=4");
  REQUIRE(r.ties.size() == 1);
  CHECK(r.evaluations[r.ties[0]].label == "k BLOCK=512 UNROLL=4");
}

TEST_CASE("Spread: median and quartiles as NumPy computes them") {
  const Spread s = Spread::of({4, 1, 3, 2});
  CHECK(s.median == doctest::Approx(2.5));
  CHECK(s.q1 == doctest::Approx(1.75));
  CHECK(s.q3 == doctest::Approx(3.25));
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.count == 4);
}
