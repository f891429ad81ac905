// `gpuk compare`: two JSON reports, row by row, judged against the noise of the measurements.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "gpuk/error.hpp"
#include "helpers.hpp"
#include "report/compare.hpp"

using namespace gpuk;

namespace {

// A run report as `gpuk run --json` writes it, with only what compare reads.
std::string run_report(double median, double q1, double q3, double baseline = 0.5) {
  std::ostringstream s;
  s << R"({"family": "reduce", "operation": "argmax", "dtype": "float32", "size": 1000, "variant": "onepass BLOCK=256",)"
    << R"( "device": {"name": "NVIDIA H100"}, "upload_ms": 1.0, "download_ms": 0.01,)"
    << R"( "kernel": {"median_ms": )" << median << R"(, "q1_ms": )" << q1 << R"(, "q3_ms": )" << q3
    << R"(, "min_ms": )" << q1 * 0.9 << R"(, "max_ms": )" << q3 * 1.5 << R"(, "runs": 100},)"
    << R"( "baseline": {"name": "cub::DeviceReduce::ArgMax", "time": {"median_ms": )" << baseline
    << R"(, "q1_ms": 0.49, "q3_ms": 0.51, "min_ms": 0.4, "max_ms": 0.6, "runs": 100}},)"
    << R"( "cpu": [{"name": "std::max_element", "time": {"median_ms": 3.0, "min_ms": 2.0, "max_ms": 9.0, "runs": 5}}]})";
  return s.str();
}

std::string tune_report(double a_median, double b_median) {
  std::ostringstream s;
  s << R"({"family": "reduce", "operation": "argmax", "variants": [)"
    << R"({"variant": "onepass BLOCK=128", "status": "ok", "time": {"median_ms": )" << a_median
    << R"(, "q1_ms": )" << a_median * 0.99 << R"(, "q3_ms": )" << a_median * 1.01 << R"(, "runs": 30}},)"
    << R"({"variant": "onepass BLOCK=256", "status": "ok", "time": {"median_ms": )" << b_median
    << R"(, "q1_ms": )" << b_median * 0.99 << R"(, "q3_ms": )" << b_median * 1.01 << R"(, "runs": 30}},)"
    << R"({"variant": "onepass BLOCK=1024", "status": "faulted", "why": "illegal address"}]})";
  return s.str();
}

const CompareRow& row(const Comparison& c, const std::string& name) {
  for (const auto& r : c.rows)
    if (r.name == name) return r;
  FAIL("no row " << name);
  return c.rows.front();
}

}  // namespace

TEST_CASE("a kernel 20% slower, beyond the noise, is flagged slower and fails the comparison") {
  const Comparison c = compare_report_texts(run_report(1.00, 0.99, 1.01), run_report(1.20, 1.19, 1.21), 0.05);
  const CompareRow& kernel = row(c, "kernel");
  CHECK(kernel.ratio == doctest::Approx(1.2));
  CHECK(kernel.verdict == CompareRow::Verdict::slower);
  CHECK(kernel.noise == doctest::Approx(0.01 + 0.01 * 1.0 / 1.2).epsilon(0.01));
  REQUIRE(c.failures().size() == 1);
  CHECK(c.failures().front()->name == "kernel");
  std::ostringstream text;
  print_comparison(text, c, "a.json", "b.json", false);
  CHECK(text.str().find("slower (past 5%)") != std::string::npos);
  CHECK(text.str().find("1 slowdown past 5%") != std::string::npos);
}

TEST_CASE("two runs whose difference is within their spread say same and pass") {
  // 2% apart, but each with an interquartile range of +-3%: noise, not a change.
  const Comparison c = compare_report_texts(run_report(1.00, 0.97, 1.03), run_report(1.02, 0.99, 1.05), 0.05);
  CHECK(row(c, "kernel").verdict == CompareRow::Verdict::same);
  CHECK(row(c, "baseline: cub::DeviceReduce::ArgMax").verdict == CompareRow::Verdict::same);
  CHECK(c.failures().empty());
  CHECK(c.notes.empty());
}

TEST_CASE("a slowdown beyond the noise but under the threshold is reported and does not fail") {
  const Comparison c = compare_report_texts(run_report(1.00, 0.999, 1.001), run_report(1.03, 1.029, 1.031), 0.05);
  CHECK(row(c, "kernel").verdict == CompareRow::Verdict::slower);
  CHECK(c.failures().empty());
  // --threshold 2: now it fails.
  CHECK(compare_report_texts(run_report(1.00, 0.999, 1.001), run_report(1.03, 1.029, 1.031), 0.02).failures().size() == 1);
}

TEST_CASE("faster is flagged; copies and CPU rows never fail the comparison") {
  const Comparison c = compare_report_texts(run_report(1.00, 0.99, 1.01, 0.5), run_report(0.50, 0.49, 0.51, 0.5), 0.05);
  CHECK(row(c, "kernel").verdict == CompareRow::Verdict::faster);
  CHECK_FALSE(row(c, "upload").gates);
  CHECK_FALSE(row(c, "CPU: std::max_element").gates);
  CHECK(c.failures().empty());
}

TEST_CASE("tune reports are compared variant by variant; rows in one report only are listed") {
  const Comparison c = compare_report_texts(tune_report(1.0, 2.0), tune_report(1.0, 2.5), 0.05);
  CHECK(c.kind == "tune");
  CHECK(row(c, "onepass BLOCK=128").verdict == CompareRow::Verdict::same);
  CHECK(row(c, "onepass BLOCK=256").verdict == CompareRow::Verdict::slower);
  CHECK(c.failures().size() == 1);
  CHECK(c.rows.size() == 2);  // the faulted variant has no time
  std::ostringstream md;
  print_comparison(md, c, "a.json", "b.json", true);
  CHECK(md.str().find("| onepass BLOCK=256 | 2.000 | 2.500 | 1.250x |") != std::string::npos);
}

TEST_CASE("what differs besides the times is noted; a run report against a tune report is refused") {
  std::string other = run_report(1.0, 0.99, 1.01);
  other.replace(other.find("\"size\": 1000"), 12, "\"size\": 2000");
  const Comparison c = compare_report_texts(run_report(1.0, 0.99, 1.01), other, 0.05);
  REQUIRE(c.notes.size() == 1);
  CHECK(c.notes.front() == "size differs: 1000 in A, 2000 in B");
  CHECK_THROWS_AS(compare_report_texts(run_report(1, 1, 1), tune_report(1, 1), 0.05), ConfigError);
  CHECK_THROWS_AS(compare_report_texts("{\"x\": 1}", tune_report(1, 1), 0.05), ConfigError);
  CHECK_THROWS_AS(compare_report_texts("not json", tune_report(1, 1), 0.05), ConfigError);
}

TEST_CASE("as a gate: a kernel row missing, damaged or not a time in B fails; in A it fails too") {
  const std::string a = run_report(1.0, 0.99, 1.01);
  for (const std::string& kernel : {std::string(R"("kernel": {},)"), std::string(R"("kernel": {"median_ms": "fast"},)"),
                                    std::string(R"("kernel": {"median_ms": 0, "runs": 100},)"),
                                    std::string(R"("kernel": {"median_ms": -1.0, "runs": 100},)")}) {
    CAPTURE(kernel);
    std::string b = a;
    const auto at = b.find("\"kernel\"");
    b.replace(at, b.find("},", at) + 2 - at, kernel);
    const Comparison c = compare_report_texts(a, b, 0.05);
    CHECK(row(c, "kernel").verdict == CompareRow::Verdict::failed_b);
    REQUIRE(c.failures().size() == 1);
    CHECK(c.failures().front()->name == "kernel");
    const Comparison reversed = compare_report_texts(b, a, 0.05);
    CHECK(row(reversed, "kernel").verdict == CompareRow::Verdict::invalid_a);
    CHECK(reversed.failures().size() == 1);
    std::ostringstream text;
    print_comparison(text, c, "a.json", "b.json", false);
    CHECK(text.str().find("failed in B") != std::string::npos);
    CHECK(text.str().find("1 row without a valid time") != std::string::npos);
  }
}

TEST_CASE("as a gate: a tune variant timed in A that faulted in B fails; one faulted in both says nothing") {
  std::string b = tune_report(1.0, 2.0);
  b.replace(b.find(R"("status": "ok")"), 14, R"("status": "faulted", "why": "illegal address")");
  const Comparison c = compare_report_texts(tune_report(1.0, 2.0), b, 0.05);
  const CompareRow& r = row(c, "onepass BLOCK=128");
  CHECK(r.verdict == CompareRow::Verdict::failed_b);
  CHECK(r.why == "faulted (illegal address)");
  REQUIRE(c.failures().size() == 1);
  // The other way round it is a variant that works now: no failure.
  const Comparison fixed_now = compare_report_texts(b, tune_report(1.0, 2.0), 0.05);
  CHECK(row(fixed_now, "onepass BLOCK=128").verdict == CompareRow::Verdict::only_b);
  CHECK(fixed_now.failures().empty());
}

TEST_CASE("as a gate: a threshold that is NaN, infinite or negative is refused, not a gate switched off") {
  const std::string a = run_report(1.0, 0.99, 1.01), b = run_report(2.0, 1.99, 2.01);
  for (const double t : {std::nan(""), static_cast<double>(INFINITY), -0.05})
    CHECK_THROWS_WITH_AS(compare_report_texts(a, b, t), doctest::Contains("threshold"), ConfigError);
  const test::TempDir dir;
  const std::string fa = dir.write("a.json", a).string(), fb = dir.write("b.json", b).string();
  for (const char* t : {"nan", "inf", "-5"}) {
    CAPTURE(t);
    const auto r = test::run_command(std::string(GPUK_EXE) + " compare --threshold " + t + " " + fa + " " + fb);
    CHECK(r.status == 2);
  }
  CHECK(test::run_command(std::string(GPUK_EXE) + " compare " + fa + " " + fb).status == 6);  // 2x slower
}

TEST_CASE("as a gate: reports of different families or operations are refused") {
  const std::string a = run_report(1.0, 0.99, 1.01);
  std::string b = a;
  b.replace(b.find("\"argmax\""), 8, "\"argmin\"");
  CHECK_THROWS_WITH_AS(compare_report_texts(a, b, 0.05), doctest::Contains("different operations"), ConfigError);
  b = a;
  b.replace(b.find("\"reduce\""), 8, "\"search\"");
  CHECK_THROWS_WITH_AS(compare_report_texts(a, b, 0.05), doctest::Contains("different families"), ConfigError);
}

namespace {

std::string one_run_report(double median) {
  std::ostringstream s;
  s << R"({"family": "reduce", "operation": "argmax", "kernel": {"median_ms": )" << median << R"(, "runs": 1}})";
  return s.str();
}

// A tune report of these variants, each "NAME=MEDIAN" timed with 30 runs.
std::string tune_of(const std::vector<std::pair<std::string, double>>& variants) {
  std::ostringstream s;
  s << R"({"family": "reduce", "operation": "argmax", "variants": [)";
  for (std::size_t i = 0; i < variants.size(); ++i)
    s << (i ? "," : "") << R"({"variant": ")" << variants[i].first << R"(", "status": "ok", "time": {"median_ms": )"
      << variants[i].second << R"(, "q1_ms": )" << variants[i].second * 0.99 << R"(, "q3_ms": )"
      << variants[i].second * 1.01 << R"(, "runs": 30}})";
  return s.str() + "]}";
}

}  // namespace

TEST_CASE("as a gate, by kind: what it cannot judge fails, and every row keeps the table whole") {
  struct Case {
    const char* what;
    std::string a, b;
    bool passes;
  };
  const std::vector<Case> cases = {
      {"a row of one measurement 20% slower", one_run_report(1.0), one_run_report(1.2), false},
      {"a row of one measurement 2% slower", one_run_report(1.0), one_run_report(1.02), true},
      {"a variant of A missing from B", tune_of({{"v BLOCK=128", 1.0}, {"v BLOCK=256", 2.0}}),
       tune_of({{"v BLOCK=128", 1.0}}), false},
      {"B without variants", tune_of({{"v BLOCK=128", 1.0}}), tune_of({}), false},
      {"neither with variants: nothing judged", tune_of({}), tune_of({}), false},
      {"a variant only in B", tune_of({{"v BLOCK=128", 1.0}}), tune_of({{"v BLOCK=128", 1.0}, {"v BLOCK=64", 9.0}}),
       true},
      {"'|' in a variant's name", tune_of({{"v|x", 1.0}}), tune_of({{"v|x", 1.0}}), true},
      {"a median of 1e308 in B", tune_of({{"v", 1.0}}), tune_of({{"v", 1e308}}), false},
      {"a median of 1e308 in A", tune_of({{"v", 1e308}}), tune_of({{"v", 1.0}}), false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Comparison cmp = compare_report_texts(c.a, c.b, 0.05);
    CHECK(cmp.passed() == c.passes);
    std::ostringstream md;
    print_comparison(md, cmp, "a.json", "b.json", true);
    CAPTURE(md.str());
    // Every table line has its six cells (a '|' inside one is escaped) and a bounded width.
    std::istringstream lines(md.str());
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("| ", 0) != 0) continue;
      int bars = 0;
      for (std::size_t i = 0; i < line.size(); ++i) bars += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
      CHECK(bars == 7);
      CHECK(line.size() < 200);
    }
    if (!c.passes) CHECK(md.str().find("slowdown") != std::string::npos);
  }
}
