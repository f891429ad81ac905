// Two JSON reports compared row by row (report/compare.hpp).
#include "report/compare.hpp"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/error.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

using json = nlohmann::json;

constexpr double kLongestMs = 86400e3;  // a day

// A time, or why the report's entry is not one: a gate must not read a zero, negative, NaN or
// missing median as "faster".
struct TimeOrWhy {
  std::optional<MeasuredTime> time;
  std::string why;
};

TimeOrWhy time_of(const json& t) {
  if (!t.is_object()) return {std::nullopt, "no time"};
  if (!t.contains("median_ms") || !t["median_ms"].is_number()) return {std::nullopt, "no median_ms"};
  MeasuredTime m;
  m.median = t["median_ms"].get<double>();
  // Past a day (1e308 in a hand-edited report) no kernel or baseline row is a time either.
  if (!std::isfinite(m.median) || m.median <= 0 || m.median > kLongestMs)
    return {std::nullopt, "median_ms " + t["median_ms"].dump() + " is not a time"};
  const auto number = [&](const char* key, double fallback) {
    return t.contains(key) && t[key].is_number() ? t[key].get<double>() : fallback;
  };
  const bool quartiles = t.contains("q1_ms") && t.contains("q3_ms");
  m.low = quartiles ? number("q1_ms", m.median) : number("min_ms", m.median);
  m.high = quartiles ? number("q3_ms", m.median) : number("max_ms", m.median);
  if (!std::isfinite(m.low) || !std::isfinite(m.high) || m.low < 0 || m.high < m.low || m.high > kLongestMs)
    return {std::nullopt, "its spread is not a time range"};
  m.runs = t.contains("runs") && t["runs"].is_number_unsigned() ? t["runs"].get<std::size_t>() : 1;
  return {m, ""};
}

MeasuredTime once(double ms) { return {ms, ms, ms, 1}; }

// A row of one report: its time, or what it has instead (a tune variant's status, a malformed
// time).
struct Entry {
  std::optional<MeasuredTime> time;
  bool gates = true;
  std::string problem;     // "" when timed
  bool malformed = false;  // the report is damaged here (not a variant's own failure)
};

struct Rows {
  std::vector<std::string> order;
  std::map<std::string, Entry> rows;
  void add(const std::string& name, Entry e) {
    if (!rows.count(name)) order.push_back(name);
    rows[name] = std::move(e);
  }
  void add(const std::string& name, const TimeOrWhy& t, bool gates) {
    add(name, Entry{t.time, gates, t.why, !t.time});
  }
  void add(const std::string& name, const MeasuredTime& t, bool gates) { add(name, Entry{t, gates, "", false}); }
};

std::string string_or(const json& j, const char* key, const std::string& fallback) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

std::string kind_of(const json& j) {
  if (j.is_object() && j.contains("variants") && j["variants"].is_array()) return "tune";
  if (j.is_object() && j.contains("kernel") && j["kernel"].is_object()) return "run";
  return "";
}

Rows rows_of(const json& j, const std::string& kind) {
  Rows r;
  if (kind == "run") {
    if (j.contains("upload_ms") && j["upload_ms"].is_number()) r.add("upload", once(j["upload_ms"].get<double>()), false);
    r.add("kernel", time_of(j["kernel"]), true);
    if (j.contains("download_ms") && j["download_ms"].is_number())
      r.add("download", once(j["download_ms"].get<double>()), false);
    if (j.contains("baseline") && j["baseline"].is_object())
      r.add("baseline: " + string_or(j["baseline"], "name", "?"),
            time_of(j["baseline"].contains("time") ? j["baseline"]["time"] : json()), true);
    if (j.contains("cpu") && j["cpu"].is_array())
      for (const auto& c : j["cpu"])
        if (c.is_object())
          if (auto t = time_of(c.contains("time") ? c["time"] : json()); t.time)
            r.add("CPU: " + string_or(c, "name", "?"), *t.time, false);
  } else {
    for (const auto& v : j["variants"]) {
      if (!v.is_object()) continue;
      const std::string name = string_or(v, "variant", "?");
      const std::string status = string_or(v, "status", "no status");
      if (status == "ok") {
        r.add(name, time_of(v.contains("time") ? v["time"] : json()), true);
      } else if (status != "pruned") {
        // Faulted, timed out, a wrong answer, a compile or launch error: no time, and a
        // regression when the other report timed it.
        const std::string why = string_or(v, "why", "");
        r.add(name, Entry{std::nullopt, true, status + (why.empty() ? "" : " (" + printable(why) + ")"), false});
      }
    }
  }
  return r;
}

json read_json(const std::string& text, const std::string& what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw ConfigError(what + ": not a JSON report (" + e.what() + ")");
  }
}

std::string text_of(const std::filesystem::path& path) {
  return read_regular_file_or_throw(path, kMaxReportBytes, "the report");
}

Comparison compare_json(const json& a, const json& b, const std::string& a_name, const std::string& b_name,
                        double threshold) {
  const std::string ka = kind_of(a), kb = kind_of(b);
  for (const auto& [kind, name] : {std::pair{ka, a_name}, std::pair{kb, b_name}})
    if (kind.empty())
      throw ConfigError(name + ": not a gpuk run or tune report (write one with gpuk run --json or gpuk tune --json)");
  if (ka != kb)
    throw ConfigError(a_name + " is a " + ka + " report and " + b_name + " a " + kb +
                      " report; compare two run reports or two tune reports");
  if (!std::isfinite(threshold) || threshold < 0)
    throw ConfigError("the threshold must be a finite percentage of 0 or more (it was " + fixed(100 * threshold, 1) +
                      "%)");
  // Times of different work say nothing about a change: refused.
  for (const auto& [key, plural] : {std::pair{"family", "families"}, std::pair{"operation", "operations"}})
    if (a.contains(key) != b.contains(key) || (a.contains(key) && a[key] != b[key]))
      throw ConfigError(std::string("the reports are of different ") + plural + ": " +
                        printable(a.contains(key) ? a[key].dump() : "none") + " in " + a_name + ", " +
                        printable(b.contains(key) ? b[key].dump() : "none") + " in " + b_name +
                        "; compare reports of the same work");
  Comparison c;
  c.kind = ka;
  c.threshold = threshold;
  // What differs besides the times: said, not refused (comparing two variants is a use).
  // The options too: a declared kernel's named sizes are its options (nx=1000 ny=300 against
  // nx=300 ny=1000 is the same n); and the data each input was made from.
  for (const char* key : {"dtype", "size", "options", "variant"}) {
    if (!a.contains(key) || !b.contains(key) || a[key] == b[key]) continue;
    c.notes.push_back(std::string(key) + " differ" + (std::string_view(key) == "options" ? "" : "s") + ": " +
                      printable(a[key].dump()) + " in " + a_name + ", " + printable(b[key].dump()) + " in " + b_name);
  }
  const auto data = [](const json& j) {
    return j.contains("data") && j["data"].is_object() ? string_or(j["data"], "text", "") : std::string();
  };
  if (!data(a).empty() && !data(b).empty() && data(a) != data(b))
    c.notes.push_back("the data differ: " + printable(data(a)) + " in " + a_name + ", " + printable(data(b)) + " in " +
                      b_name);
  const json none = json::object();
  const auto device = [&](const json& j) {
    return j.contains("device") && j["device"].is_object() ? printable(string_or(j["device"], "name", "")) : "";
  };
  if (device(a) != device(b))
    c.notes.push_back("the GPUs differ: " + device(a) + " in " + a_name + ", " + device(b) + " in " + b_name);

  const Rows ra = rows_of(a, ka), rb = rows_of(b, kb);
  std::vector<std::string> order = ra.order;
  for (const auto& name : rb.order)
    if (!ra.rows.count(name)) order.push_back(name);
  for (const auto& name : order) {
    CompareRow row;
    const auto ia = ra.rows.find(name), ib = rb.rows.find(name);
    const Entry* ea = ia != ra.rows.end() ? &ia->second : nullptr;
    const Entry* eb = ib != rb.rows.end() ? &ib->second : nullptr;
    if (ea) row.a = ea->time, row.gates = ea->gates;
    if (eb) row.b = eb->time, row.gates = row.gates && eb->gates;
    row.name = printable(name, 200);
    if (!row.a || !row.b) {
      if (ea && eb && !row.a && !row.b && !ea->malformed && !eb->malformed) continue;  // failed in both: nothing to say
      if (row.a && eb) {
        // Timed in A, not in B: B faulted, timed out, answered wrong, or its report is damaged.
        row.verdict = CompareRow::Verdict::failed_b;
        row.why = eb->problem;
      } else if (ea && ea->malformed) {
        // A's time is damaged: the gate has nothing to measure B against.
        row.verdict = CompareRow::Verdict::invalid_a;
        row.why = ea->problem;
      } else if (row.a && !eb && ea->gates) {
        // Timed in A and missing from B altogether (a variant left out, a B with no variants):
        // the gate cannot judge it, so it fails.
        row.verdict = CompareRow::Verdict::failed_b;
        row.why = "not in B";
      } else {
        row.verdict = row.a || (ea && !eb) ? CompareRow::Verdict::only_a : CompareRow::Verdict::only_b;
        row.why = ea && !row.a ? ea->problem : eb && !row.b ? eb->problem : "";
        row.gates = false;
      }
      c.rows.push_back(row);
      continue;
    }
    row.ratio = row.b->median / row.a->median;
    // A single measurement has no spread to judge by: the threshold stands in for it (it gates
    // all the same: a row of one run slower past the threshold fails).
    const bool single = row.a->runs <= 1 || row.b->runs <= 1;
    row.noise = single ? threshold : row.a->half_spread() + row.b->half_spread();
    const double change = row.ratio - 1;
    row.verdict = std::abs(change) <= row.noise ? CompareRow::Verdict::same
                  : change > 0                  ? CompareRow::Verdict::slower
                                                : CompareRow::Verdict::faster;
    c.rows.push_back(row);
  }
  return c;
}

std::string ms(const std::optional<MeasuredTime>& t) { return t ? ms_text(t->median) : "-"; }

// A cell of the Markdown table: a '|' in a name (a variant's, a baseline's) would split it.
std::string cell(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace

std::string_view verdict_name(CompareRow::Verdict v) {
  switch (v) {
    case CompareRow::Verdict::same: return "same";
    case CompareRow::Verdict::faster: return "faster";
    case CompareRow::Verdict::slower: return "slower";
    case CompareRow::Verdict::only_a: return "only in A";
    case CompareRow::Verdict::only_b: return "only in B";
    case CompareRow::Verdict::failed_b: return "failed in B";
    case CompareRow::Verdict::invalid_a: return "no valid time in A";
  }
  return "?";
}

bool Comparison::judged() const {
  for (const auto& r : rows)
    if (r.gates && r.a && r.b) return true;
  return false;
}

std::vector<const CompareRow*> Comparison::failures() const {
  std::vector<const CompareRow*> out;
  for (const auto& r : rows)
    if (r.gates && ((r.verdict == CompareRow::Verdict::slower && r.ratio > 1 + threshold) ||
                    r.verdict == CompareRow::Verdict::failed_b || r.verdict == CompareRow::Verdict::invalid_a))
      out.push_back(&r);
  return out;
}

Comparison compare_reports(const std::filesystem::path& a, const std::filesystem::path& b, double threshold) {
  return compare_json(read_json(text_of(a), a.string()), read_json(text_of(b), b.string()), a.string(), b.string(),
                      threshold);
}

Comparison compare_report_texts(const std::string& a, const std::string& b, double threshold) {
  return compare_json(read_json(a, "A"), read_json(b, "B"), "A", "B", threshold);
}

void print_comparison(std::ostream& out, const Comparison& c, const std::string& a_name, const std::string& b_name,
                      bool markdown) {
  const auto failures = c.failures();
  const auto verdict = [&](const CompareRow& r) {
    std::string v(verdict_name(r.verdict));
    if (r.gates && r.verdict == CompareRow::Verdict::slower && r.ratio > 1 + c.threshold)
      v += " (past " + fixed(100 * c.threshold, 0) + "%)";
    if (!r.why.empty()) v += ": " + r.why;
    return v;
  };
  const auto ratio = [](const CompareRow& r) { return r.a && r.b ? fixed(r.ratio, 3) + "x" : std::string("-"); };
  const auto noise = [](const CompareRow& r) { return r.a && r.b ? "±" + fixed(100 * r.noise, 1) + "%" : std::string("-"); };
  std::size_t slowdowns = 0;
  for (const CompareRow* r : failures) slowdowns += r->verdict == CompareRow::Verdict::slower;
  const std::size_t broken = failures.size() - slowdowns;
  std::string summary = slowdowns == 0 ? "no slowdown past " + fixed(100 * c.threshold, 0) + "%"
                                       : std::to_string(slowdowns) + " slowdown" + (slowdowns == 1 ? "" : "s") +
                                             " past " + fixed(100 * c.threshold, 0) + "%";
  if (broken)
    summary += "; " + std::to_string(broken) + " row" + (broken == 1 ? "" : "s") +
               " without a valid time to compare (failed in B, missing from it, or damaged)";
  if (!c.judged()) summary += "; no gating row was timed in both reports, so nothing could be judged";
  if (markdown) {
    out << "### gpuk compare (" << c.kind << " reports)\n\n";
    out << "A: `" << a_name << "`, B: `" << b_name << "`\n\n";
    for (const auto& n : c.notes) out << "- " << n << "\n";
    if (!c.notes.empty()) out << "\n";
    out << "| | A median (ms) | B median (ms) | B/A | noise | verdict |\n| --- | ---: | ---: | ---: | ---: | --- |\n";
    for (const auto& r : c.rows)
      out << "| " << cell(r.name) << " | " << ms(r.a) << " | " << ms(r.b) << " | " << ratio(r) << " | " << noise(r)
          << " | " << cell(verdict(r)) << " |\n";
    out << "\n" << summary << ".\n";
    return;
  }
  out << "gpuk compare  A " << a_name << "\n              B " << b_name << "\n";
  for (const auto& n : c.notes) out << "  note: " << n << "\n";
  std::size_t width = 8;
  for (const auto& r : c.rows) width = std::max(width, r.name.size() + 2);
  out << "  " << std::left << std::setw(static_cast<int>(width)) << c.kind + " row" << std::right << std::setw(12)
      << "A (ms)" << std::setw(12) << "B (ms)" << std::setw(10) << "B/A" << std::setw(9) << "noise" << "  verdict\n";
  for (const auto& r : c.rows)
    out << "  " << std::left << std::setw(static_cast<int>(width)) << r.name << std::right << std::setw(12) << ms(r.a)
        << std::setw(12) << ms(r.b) << std::setw(10) << ratio(r) << std::setw(9) << noise(r) << "  " << verdict(r)
        << "\n";
  out << "  " << summary << " (noise: the two half interquartile ranges added, or the threshold for a row of one "
         "measurement; CPU, upload and download rows never fail)\n";
}

}  // namespace gpuk
