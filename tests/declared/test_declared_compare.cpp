// `gpuk compare` on reports of declared kernels: saved reports (tests/declared/reports/) of
// `gpuk run --json` and of a tuning matrix's cells, written by gpuk on the fake driver with host
// memory (tests/api/fake_driver.cpp: every time 0.01 ms), their machine paths made relative.
// A change is made in memory where a test needs one (a kernel 20% slower, a variant faulted).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "report/compare.hpp"
#include "util/regular_file.hpp"

using namespace gpuk;
using json = nlohmann::json;

namespace {

std::filesystem::path report(const std::string& name) { return test::source_dir() / "tests/declared/reports" / name; }

json read(const std::string& name) {
  return json::parse(read_regular_file_or_throw(report(name), kMaxReportBytes, "the report"));
}

const CompareRow& row(const Comparison& c, const std::string& name) {
  for (const auto& r : c.rows)
    if (r.name == name) return r;
  FAIL("no row " << name);
  return c.rows.front();
}

bool noted(const Comparison& c, const std::string& what) {
  for (const auto& n : c.notes)
    if (n.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("compare: a declared kernel's run reports, its kernel and baseline kernel rows") {
  const Comparison same = compare_reports(report("run_scale2d.json"), report("run_scale2d.json"), 0.05);
  CHECK(same.passed());
  CHECK(same.notes.empty());
  CHECK(row(same, "kernel").verdict == CompareRow::Verdict::same);
  CHECK(row(same, "baseline: kernel scale2d_naive").verdict == CompareRow::Verdict::same);
  CHECK(row(same, "baseline: kernel scale2d_naive").gates);

  // The kernel 20% slower (every sample), its baseline as it was: the kernel row fails.
  json slower = read("run_scale2d.json");
  for (const char* key : {"median_ms", "q1_ms", "q3_ms", "min_ms", "max_ms"})
    slower["kernel"][key] = slower["kernel"][key].get<double>() * 1.2;
  const Comparison c = compare_report_texts(read("run_scale2d.json").dump(), slower.dump(), 0.05);
  CHECK(row(c, "kernel").verdict == CompareRow::Verdict::slower);
  CHECK(row(c, "kernel").ratio == doctest::Approx(1.2));
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures().front()->name == "kernel");
}

TEST_CASE("compare: a declared kernel's sizes are its options; other sizes of the same n are said") {
  // nx=1000 ny=300 against nx=300 ny=1000: the same n (300000), the same operation.
  const Comparison c = compare_reports(report("run_scale2d.json"), report("run_scale2d_300x1000.json"), 0.05);
  CAPTURE(c.notes.size());
  CHECK(noted(c, R"(options differ: {"nx":"1000","ny":"300"} in )"));
  CHECK(noted(c, R"({"nx":"300","ny":"1000"} in )"));
  CHECK(!noted(c, "size differs"));
  std::ostringstream text;
  print_comparison(text, c, "a.json", "b.json", false);
  CHECK(text.str().find("note: options differ") != std::string::npos);
  // The same sizes and another input's data: said too.
  json other = read("run_matmul.json");
  other["data"]["arrays"][1]["seed"] = 9;
  other["data"]["text"] = "A: uniform in [-1, 1), seed 1; B: uniform in [-1, 1), seed 9";
  const Comparison d = compare_report_texts(read("run_matmul.json").dump(), other.dump(), 0.05);
  CHECK(noted(d, "the data differ: A: uniform in [-1, 1), seed 1; B: uniform in [-1, 1), seed 2 in A, "));
  CHECK(d.passed());
}

TEST_CASE("compare: two declared kernels, or a run against a tune report, are refused") {
  CHECK_THROWS_WITH_AS(compare_reports(report("run_scale2d.json"), report("run_matmul.json"), 0.05),
                       doctest::Contains("the reports are of different operations"), ConfigError);
  CHECK_THROWS_WITH_AS(compare_reports(report("run_scale2d.json"), report("tune_scale2d.json"), 0.05),
                       doctest::Contains("is a run report and"), ConfigError);
}

TEST_CASE("compare: a declared kernel's tune reports, variant by variant; one faulted in B fails") {
  const Comparison c = compare_reports(report("tune_scale2d.json"), report("tune_scale2d_300x1000.json"), 0.05);
  CHECK(c.kind == "tune");
  CHECK(c.rows.size() == 4);
  CHECK(row(c, "scale2d block_size_x=64 block_size_y=8").verdict == CompareRow::Verdict::same);
  CHECK(noted(c, "options differ"));
  CHECK(c.passed());

  json faulted = read("tune_scale2d.json");
  for (auto& v : faulted["variants"])
    if (v["variant"] == "scale2d block_size_x=16 block_size_y=8") {
      v["status"] = "faulted";
      v["why"] = "illegal address";
      v.erase("time");
    }
  const Comparison f = compare_report_texts(read("tune_scale2d.json").dump(), faulted.dump(), 0.05);
  const CompareRow& r = row(f, "scale2d block_size_x=16 block_size_y=8");
  CHECK(r.verdict == CompareRow::Verdict::failed_b);
  CHECK(r.why == "faulted (illegal address)");
  CHECK(!f.passed());
}

TEST_CASE("gpuk compare of declared reports through the command line") {
  const auto ok = test::run_command(std::string(GPUK_EXE) + " compare " + report("run_scale2d.json").string() + " " +
                                    report("run_scale2d_300x1000.json").string());
  CAPTURE(ok.output);
  CHECK(ok.status == 0);
  CHECK(ok.output.find("note: options differ") != std::string::npos);
  CHECK(ok.output.find("baseline: kernel scale2d_naive") != std::string::npos);
  const auto refused = test::run_command(std::string(GPUK_EXE) + " compare " + report("run_scale2d.json").string() +
                                         " " + report("run_matmul.json").string());
  CHECK(refused.status == 2);
}
