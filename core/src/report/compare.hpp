// `gpuk compare A.json B.json`: two run reports (or two tune reports) as written by --json, row
// by row: the times, their ratio, and whether the difference is larger than the noise of the two
// measurements; a slowdown past a threshold fails, so that a CI job on a GPU runner can gate on it.
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gpuk {

// One measured time of a report: the median and the interquartile range (q1..q3; min..max in a
// report written before quartiles were recorded).
struct MeasuredTime {
  double median = 0, low = 0, high = 0;
  std::size_t runs = 0;
  double half_spread() const { return median > 0 ? (high - low) / (2 * median) : 0; }  // relative
};

struct CompareRow {
  // failed_b: timed in A; in B a tune variant that faulted, timed out, answered wrong or did not
  // compile, or missing from B altogether, or a time that is missing or not a time (zero,
  // negative, NaN, past a day). invalid_a: A's time
  // is damaged. Both fail a gating row: a gate must not pass what it cannot judge.
  enum class Verdict { same, faster, slower, only_a, only_b, failed_b, invalid_a };
  std::string name;  // "kernel: onepass BLOCK=256", "baseline: cub::DeviceReduce::ArgMax", a tune variant
  std::optional<MeasuredTime> a, b;
  double ratio = 0;  // b / a of the medians
  // The relative difference below which the two count as the same: each one's half spread,
  // added (their interquartile ranges overlap); the threshold itself for single measurements.
  double noise = 0;
  Verdict verdict = Verdict::same;
  bool gates = true;  // a slowdown of this row past the threshold fails (not CPU rows or copies)
  std::string why;    // what a report has instead of a time ("faulted (illegal address)")
};

struct Comparison {
  std::string kind;                // "run" or "tune"
  std::vector<std::string> notes;  // what differs between the two besides the times
  std::vector<CompareRow> rows;
  double threshold = 0.05;         // a gating row slower by more than this fails
  // Rows that fail the comparison, all gating: slower with a ratio above 1 + threshold, failed_b
  // (missing from B too) and invalid_a.
  std::vector<const CompareRow*> failures() const;
  // Whether any gating row was timed in both: a comparison that judged nothing passes nothing.
  bool judged() const;
  bool passed() const { return judged() && failures().empty(); }
};

// Reads both files. Throws ConfigError for a file that is not a gpuk JSON report, a run report
// compared with a tune report, reports of different families or operations, or a threshold that
// is negative or not finite.
Comparison compare_reports(const std::filesystem::path& a, const std::filesystem::path& b, double threshold);
// The same, from the reports' JSON text (for tests).
Comparison compare_report_texts(const std::string& a, const std::string& b, double threshold);

void print_comparison(std::ostream& out, const Comparison& c, const std::string& a_name, const std::string& b_name,
                      bool markdown);

std::string_view verdict_name(CompareRow::Verdict v);

}  // namespace gpuk
