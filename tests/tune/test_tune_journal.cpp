// The journal of `gpuk tune` (resume): points appended as measured, a sweep run again or cut
// short measures only what is missing and counts what it reused, --fresh ignores it, a torn last
// line is skipped (no GPU: the fake measurer of tune_helpers.hpp).
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "builtins.hpp"
#include "device/device.hpp"
#include "helpers.hpp"
#include "tune/report/journal.hpp"
#include "tune_helpers.hpp"

using namespace gpuk;

namespace {

std::size_t lines_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

// One `gpuk tune` of `space`: the journal's points first, each new one appended as measured.
TuneResult sweep(const Space& space, test::FakeMeasurer& m, const std::filesystem::path& path, const std::string& run,
                 bool fresh, TuneOptions o = {}) {
  TuneJournal journal(path, run);
  o.prior = journal.read(space, fresh);
  o.on_measured = [&](const Evaluation& e) { journal.append(space, e); };
  return tune(space, m, o);
}

using test::onepass_tune_spec;

}  // namespace

TEST_CASE("a sweep run again measures nothing and says it reused every point; --fresh measures all again") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const test::TempDir dir;
  const auto path = dir.path() / "j.jsonl";
  test::FakeMeasurer first;
  const TuneResult a = sweep(space, first, path, "run-1", false);
  CHECK(first.measured.size() == 19);
  CHECK(a.reused == 0);
  CHECK(lines_of(path) == 19);  // one line per measured point (the pruned one is not measured)

  test::FakeMeasurer second;
  const TuneResult b = sweep(space, second, path, "run-2", false);
  CHECK(second.measured.empty());
  CHECK(b.reused == 19);
  REQUIRE(b.winner());
  CHECK(b.winner()->label == a.winner()->label);
  CHECK(b.winner()->reused);
  CHECK(second.timed > 0);  // the recheck of the leaders runs every time: it ranks
  CHECK(lines_of(path) == 19);

  // The report says how many were reused.
  TuneReport report;
  report.result = b;
  report.journal = path.string();
  std::ostringstream out;
  print_tune_report(out, report, 3);
  CAPTURE(out.str());
  CHECK(out.str().find("19 variants reused from earlier sweeps, 0 measured now") != std::string::npos);

  test::FakeMeasurer third;
  const TuneResult c = sweep(space, third, path, "run-3", true);
  CHECK(third.measured.size() == 19);
  CHECK(c.reused == 0);
  CHECK(lines_of(path) == 38);
}

TEST_CASE("a sweep cut short goes on where it stopped: only the missing points are measured") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const test::TempDir dir;
  const auto path = dir.path() / "j.jsonl";
  // Killed after 7 points (as `timeout -s KILL` would: the journal has what was measured).
  struct Killed : test::FakeMeasurer {
    int left = 7;
    Outcome measure(const Space& space, const Candidate& c) override {
      if (left-- == 0) throw SweepAborted("killed");
      return FakeMeasurer::measure(space, c);
    }
  } killed;
  sweep(space, killed, path, "run-1", false);
  CHECK(killed.measured.size() == 7);
  CHECK(lines_of(path) == 7);  // the point it was stopped on was not measured: not journaled

  test::FakeMeasurer again;
  const TuneResult r = sweep(space, again, path, "run-2", false);
  CHECK(r.reused == 7);
  std::set<std::string> before(killed.measured.begin(), killed.measured.end());
  for (const auto& label : again.measured) CHECK(before.count(label) == 0);
  CHECK(again.measured.size() == 19 - 7);
  CHECK(r.count(Status::launch_error) == 0);
  REQUIRE(r.winner());
  CHECK(r.winner()->label == "k BLOCK=256 UNROLL=4");
}

TEST_CASE("a torn last line (a writer killed mid-line) is ignored, and the next line starts on its own") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const test::TempDir dir;
  const auto path = dir.path() / "j.jsonl";
  test::FakeMeasurer m;
  TuneOptions o;
  o.evaluations = 3;
  sweep(space, m, path, "run-1", false, o);
  REQUIRE(lines_of(path) == 3);
  {
    std::ofstream out(path, std::ios::app);
    out << R"({"run": "run-1", "kernel": "k", "source": "0123", "params": {"BLOCK": 2)";  // no newline
  }
  TuneJournal journal(path, "run-2");
  CHECK(journal.read(space, false).size() == 3);
  CHECK(journal.damaged() == 1);

  // The next sweep appends after a newline of its own: its lines read back whole.
  test::FakeMeasurer next;
  o.evaluations = 6;
  const TuneResult r = sweep(space, next, path, "run-2", false, o);
  CHECK(r.reused == 3);
  CHECK(next.measured.size() == 3);
  TuneJournal after(path, "run-3");
  CHECK(after.read(space, false).size() == 6);
  CHECK(after.damaged() == 1);  // still the torn one only
}

TEST_CASE("another writer of the journal torn mid-line after this one began costs no line of this one's") {
  // Two sweeps of one problem share the journal; one is killed mid-line after the other's first
  // append. The survivor's next line once joined the torn one and was lost with it (its tail was
  // checked once, at its first append).
  const Space space = test::metadata_space({test::tune_kernel()});
  const test::TempDir dir;
  const auto path = dir.path() / "j.jsonl";
  test::FakeMeasurer m;
  TuneOptions o;
  o.evaluations = 2;
  const TuneResult first = sweep(space, m, path, "run-1", false, o);
  REQUIRE(lines_of(path) == 2);
  TuneJournal survivor(path, "run-2");
  survivor.append(space, first.evaluations.at(0));  // its first append: the file ends in a newline
  {
    std::ofstream out(path, std::ios::app);
    out << R"({"run": "killed", "kernel": "k", "source": "0123", "params": {"BLOCK": 2)";  // no newline
  }
  survivor.append(space, first.evaluations.at(1));
  TuneJournal reader(path, "run-3");
  const auto read = reader.read(space, false);
  CHECK(reader.damaged() == 1);  // the torn line only
  std::size_t of_survivor = 0;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) of_survivor += line.find("\"run-2\"") != std::string::npos && line.front() == '{';
  CHECK(of_survivor == 2);
  CHECK(read.size() == 2);
}

TEST_CASE("a missing journal is empty; energy missing from a journaled point is measured, not the point") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const test::TempDir dir;
  TuneJournal none(dir.path() / "none" / "j.jsonl", "r");
  CHECK(none.read(space, false).empty());

  const auto path = dir.path() / "j.jsonl";
  test::FakeMeasurer timed;
  sweep(space, timed, path, "run-1", false);  // objective time: no energy
  test::FakeMeasurer energetic;
  energetic.joules = [](const auto& p) { return 1e-3 * test::smooth_cost(p); };
  TuneOptions o;
  o.objective = TuneObjective::energy;
  const TuneResult r = sweep(space, energetic, path, "run-2", false, o);
  CHECK(energetic.measured.empty());  // times came from the journal
  CHECK(r.reused == 19);
  CHECK(energetic.energies >= 19);   // each got its energy (and the leaders more in the recheck)
  REQUIRE(r.winner());
  CHECK(r.winner()->energy.count > 0);
  // The energy went into the journal: a third sweep by energy measures nothing at all.
  test::FakeMeasurer third;
  third.joules = energetic.joules;
  o.recheck_top = 0;
  const TuneResult s = sweep(space, third, path, "run-3", false, o);
  CHECK(third.measured.empty());
  CHECK(third.energies == 0);
  CHECK(s.winner()->label == r.winner()->label);
}

TEST_CASE("the journal file is per GPU, problem and answer; the objective and the space do not change it") {
  const std::filesystem::path dir = "journals";
  const std::string gpu = "NVIDIA H100 80GB HBM3 00000000:65:00.0";
  const auto base = journal_path(dir, onepass_tune_spec(""), gpu, false);
  CHECK(base.parent_path() == dir);
  CHECK(base.extension() == ".jsonl");
  CHECK(journal_path(dir, onepass_tune_spec("objective: energy\n"), gpu, false) == base);
  CHECK(journal_path(dir, onepass_tune_spec("strategy: random\nparams: {BLOCK: [256]}\n"), gpu, false) == base);
  CHECK(journal_path(dir, onepass_tune_spec(""), "NVIDIA H100 80GB HBM3 00000000:66:00.0", false) != base);  // another GPU
  CHECK(journal_path(dir, onepass_tune_spec(""), gpu, true) != base);                                         // L2 flushed
  CHECK(journal_path(dir, onepass_tune_spec("repeats: 50\n"), gpu, false) != base);
  CHECK(journal_path(dir, onepass_tune_spec("repeats: auto\n"), gpu, false) != base);
  CHECK(journal_path(dir, onepass_tune_spec("data: {generator: normal}\n"), gpu, false) != base);
  CHECK(journal_path(dir, onepass_tune_spec("abs: true\n"), gpu, false) != base);
  auto other = onepass_tune_spec("");
  other.run.size = 1000001;
  CHECK(journal_path(dir, other, gpu, false) != base);
  CHECK(content_hash("a") != content_hash("b"));
  CHECK(content_hash("ab").size() == 32);
  // A declared kernel's sizes (at the same product), data, reference and compare rules: each
  // verdict was made against them.
  auto declared = onepass_tune_spec("");
  declared.run.sizes = {{"n", 4096}, {"m", 1001}};
  const auto with_sizes = journal_path(dir, declared, gpu, false);
  CHECK(with_sizes != base);
  auto swapped = declared;
  swapped.run.sizes = {{"n", 1001}, {"m", 4096}};
  CHECK(journal_path(dir, swapped, gpu, false) != with_sizes);
  auto compared = declared;
  compared.run.compare["sums"].sum = true;
  CHECK(journal_path(dir, compared, gpu, false) != with_sizes);
  auto tolerant = declared;
  tolerant.run.compare["sums"].atol = 1e-3;
  CHECK(journal_path(dir, tolerant, gpu, false) != journal_path(dir, compared, gpu, false));
  auto referenced = declared;
  referenced.run.reference_kernel = "column_sums_ref";
  CHECK(journal_path(dir, referenced, gpu, false) != with_sizes);
  auto seeded = declared;
  seeded.run.arg_data["x"].seed = 12;
  CHECK(journal_path(dir, seeded, gpu, false) != with_sizes);
}

TEST_CASE("a leader that takes the context down in the recheck is journaled as faulted: the next process goes on") {
  const Space space = test::metadata_space({test::tune_kernel()});
  const test::TempDir dir;
  const auto path = dir.path() / "j.jsonl";
  struct FaultsWhenRechecked : test::FakeMeasurer {
    std::vector<double> time(const Space& space, const Candidate& c, int repeats) override {
      if (space.label(c) == "k BLOCK=256 UNROLL=4") {
        Outcome o;
        o.status = Status::faulted;
        o.why = "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)";
        o.detail = "variant k BLOCK=256 UNROLL=4 of k.cu faulted: " + o.why;
        throw ContextLost(o.detail, o);
      }
      return FakeMeasurer::time(space, c, repeats);
    }
  };
  FaultsWhenRechecked first;
  const TuneResult a = sweep(space, first, path, "run-1", false);
  CHECK(a.context_lost);
  FaultsWhenRechecked second;  // the fresh process of the same sweep
  const TuneResult b = sweep(space, second, path, "run-1", false);
  CHECK_FALSE(b.context_lost);
  CHECK(second.measured.empty());
  REQUIRE(b.winner());
  CHECK(b.winner()->label != "k BLOCK=256 UNROLL=4");
  CHECK(b.count(Status::faulted) == 1);
}
