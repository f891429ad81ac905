// Where a sweep's time goes (SweepTimes): what tune() counts itself, what a measurer that keeps
// its own times adds, and how the report shows it (text and JSON). No GPU: the fake measurer.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "helpers.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

// The fake measurer, a millisecond per measure() and per recheck batch.
class SlowMeasurer : public test::FakeMeasurer {
 public:
  Outcome measure(const Space& space, const Candidate& c) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return test::FakeMeasurer::measure(space, c);
  }
  std::vector<double> time(const Space& space, const Candidate& c, int repeats) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return test::FakeMeasurer::time(space, c, repeats);
  }
};

// A measurer that keeps its own times, as the GPU one does.
class TimedMeasurer : public SlowMeasurer {
 public:
  SweepTimes times() const override {
    SweepTimes t;
    t.compile_wall = 3;
    t.compile_sum = 5;
    t.compile_wait = 0.5;
    t.measure = 0.25;
    t.verify = 0.125;
    return t;
  }
};

TuneOptions two_round_options() {
  TuneOptions o;
  o.recheck_top = 3;
  o.recheck_repeats = 6;
  o.recheck_rounds = 2;
  return o;
}

}  // namespace

TEST_CASE("tune() counts the time inside measure() and the recheck when the measurer keeps no times") {
  const Space space = test::metadata_space({test::tune_kernel()});
  SlowMeasurer m;
  const TuneResult r = tune(space, m, two_round_options());
  const std::size_t measured = r.evaluations.size() - r.count(Status::pruned);
  REQUIRE(measured == 19);
  CHECK(r.times.measure >= 0.001 * static_cast<double>(measured));
  CHECK(r.times.recheck >= 0.001 * 3 * 2);  // 3 leaders x 2 rounds
  CHECK(r.times.verify == 0);
  CHECK(r.times.total == doctest::Approx(r.seconds));
  CHECK(r.times.total >= r.times.measure + r.times.recheck);
  CHECK(r.times.other() >= 0);
  CHECK(r.times.other() < r.times.total);
}

TEST_CASE("a measurer's own times replace tune()'s count of measure(); the recheck and total stay tune()'s") {
  const Space space = test::metadata_space({test::tune_kernel()});
  TimedMeasurer m;
  const TuneResult r = tune(space, m, two_round_options());
  CHECK(r.times.compile_wall == 3);
  CHECK(r.times.compile_sum == 5);
  CHECK(r.times.compile_wait == 0.5);
  CHECK(r.times.measure == 0.25);
  CHECK(r.times.verify == 0.125);
  CHECK(r.times.recheck >= 0.006);
  CHECK(r.times.total == doctest::Approx(r.seconds));
}

TEST_CASE("the report shows the breakdown, a line per worker, and the JSON has every part") {
  SweepTimes t;
  t.start = 0.5, t.data = 1.25, t.reference = 3, t.compile_wall = 28.75, t.compile_sum = 45,
  t.compile_wait = 2, t.measure = 5.5, t.verify = 12, t.recheck = 1, t.save = 0.25, t.total = 30;
  t.scratch = 0.5, t.idle = 1;
  CHECK(t.other() == doctest::Approx(30 - (0.5 + 1.25 + 3 + 2 + 5.5 + 12 + 1 + 0.25 + 0.5 + 1)));
  TuneReport report;
  report.config = "t.yaml";
  report.times = t;
  report.worker_times = {{"GPU 0", t}, {"GPU 1", SweepTimes{}}};
  std::ostringstream out;
  print_tune_report(out, report, 3);
  const std::string text = out.str();
  CHECK(text.find("  time     30.0 s: start 0.50, data 1.25, CPU reference 3.00, compile 28.8 wall / 45.0 summed "
                  "(waited 2.00), measure 5.50, verify 12.0, scratch 0.50, recheck 1.00, save 0.25, idle 1.00, "
                  "other 3.00\n") !=
        std::string::npos);
  CHECK(text.find("    GPU 0: start 0.50, data 1.25,") != std::string::npos);
  CHECK(text.find("    GPU 1: start 0.00,") != std::string::npos);
  CHECK(text.find("save 0.00, other 0.00\n") != std::string::npos);  // no idle part where there was none

  const test::TempDir dir;
  write_tune_json(dir.path() / "t.json", report);
  std::ifstream in(dir.path() / "t.json");
  const auto j = nlohmann::json::parse(in);
  const auto& times = j.at("times");
  for (const char* key : {"start_s", "data_s", "reference_s", "compile_wall_s", "compile_summed_s", "compile_wait_s",
                          "measure_s", "verify_s", "scratch_s", "recheck_s", "save_s", "idle_s", "other_s", "total_s"})
    CHECK_MESSAGE(times.contains(key), key);
  CHECK(times.at("verify_s") == 12.0);
  CHECK(times.at("other_s").get<double>() == doctest::Approx(3.0));
  CHECK(times.at("idle_s") == 1.0);
  REQUIRE(j.at("worker_times").size() == 2);
  CHECK(j.at("worker_times")[0].at("worker") == "GPU 0");
  CHECK(j.at("worker_times")[0].at("compile_wall_s") == 28.75);
  CHECK(j.at("worker_times")[1].at("total_s") == 0.0);
}
