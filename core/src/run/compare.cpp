// Two JSON reports compared row by row (run/compare.hpp).
#include "run/compare.hpp"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/error.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

using json = nlohmann::json;

std::optional<MeasuredTime> time_of(const json& t) {
  if (!t.is_object() || !t.contains("median_ms") || !t["median_ms"].is_number()) return std::nullopt;
  MeasuredTime m;
  m.median = t["median_ms"].get<double>();
  const auto number = [&](const char* key, double fallback) {
    return t.contains(key) && t[key].is_number() ? t[key].get<double>() : fallback;
  };
  const bool quartiles = t.contains("q1_ms") && t.contains("q3_ms");
  m.low = quartiles ? number("q1_ms", m.median) : number("min_ms", m.median);
  m.high = quartiles ? number("q3_ms", m.median) : number("max_ms", m.median);
  m.runs = t.contains("runs") && t["runs"].is_number() ? t["runs"].get<std::size_t>() : 1;
  return m;
}

MeasuredTime once(double ms) { return {ms, ms, ms, 1}; }

struct Rows {
  std::vector<std::string> order;
  std::map<std::string, std::pair<MeasuredTime, bool>> rows;  // time, gates
  void add(const std::string& name, const MeasuredTime& t, bool gates) {
    if (!rows.count(name)) order.push_back(name);
    rows[name] = {t, gates};
  }
};

std::string kind_of(const json& j) {
  if (j.is_object() && j.contains("variants") && j["variants"].is_array()) return "tune";
  if (j.is_object() && j.contains("kernel") && j["kernel"].is_object()) return "run";
  return "";
}

Rows rows_of(const json& j, const std::string& kind) {
  Rows r;
  if (kind == "run") {
    if (j.contains("upload_ms") && j["upload_ms"].is_number()) r.add("upload", once(j["upload_ms"].get<double>()), false);
    if (auto t = time_of(j["kernel"])) r.add("kernel", *t, true);
    if (j.contains("download_ms") && j["download_ms"].is_number())
      r.add("download", once(j["download_ms"].get<double>()), false);
    if (j.contains("baseline") && j["baseline"].is_object())
      if (auto t = time_of(j["baseline"].value("time", json::object())))
        r.add("baseline: " + j["baseline"].value("name", std::string("?")), *t, true);
    if (j.contains("cpu") && j["cpu"].is_array())
      for (const auto& c : j["cpu"])
        if (auto t = time_of(c.value("time", json::object()))) r.add("CPU: " + c.value("name", std::string("?")), *t, false);
  } else {
    for (const auto& v : j["variants"]) {
      if (!v.is_object() || v.value("status", std::string()) != "ok") continue;
      if (auto t = time_of(v.value("time", json::object()))) r.add(v.value("variant", std::string("?")), *t, true);
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
  std::ifstream in(path);
  if (!in) throw ConfigError(path.string() + ": cannot read the report");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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
  Comparison c;
  c.kind = ka;
  c.threshold = threshold;
  // What differs besides the times: said, not refused (comparing two variants is a use).
  for (const char* key : {"family", "operation", "dtype", "size", "variant"}) {
    if (!a.contains(key) || !b.contains(key) || a[key] == b[key]) continue;
    c.notes.push_back(std::string(key) + " differs: " + a[key].dump() + " in " + a_name + ", " + b[key].dump() +
                      " in " + b_name);
  }
  const json none = json::object();
  const auto device = [&](const json& j) { return j.value("device", none).value("name", std::string()); };
  if (device(a) != device(b))
    c.notes.push_back("the GPUs differ: " + device(a) + " in " + a_name + ", " + device(b) + " in " + b_name);

  const Rows ra = rows_of(a, ka), rb = rows_of(b, kb);
  std::vector<std::string> order = ra.order;
  for (const auto& name : rb.order)
    if (!ra.rows.count(name)) order.push_back(name);
  for (const auto& name : order) {
    CompareRow row;
    row.name = name;
    const auto ia = ra.rows.find(name), ib = rb.rows.find(name);
    if (ia != ra.rows.end()) row.a = ia->second.first, row.gates = ia->second.second;
    if (ib != rb.rows.end()) row.b = ib->second.first, row.gates = ib->second.second;
    if (!row.a || !row.b) {
      row.verdict = row.a ? CompareRow::Verdict::only_a : CompareRow::Verdict::only_b;
      row.gates = false;
      c.rows.push_back(row);
      continue;
    }
    row.ratio = row.a->median > 0 ? row.b->median / row.a->median : 0;
    // A single measurement has no spread to judge by: the threshold stands in for it.
    const bool single = row.a->runs <= 1 || row.b->runs <= 1;
    row.noise = single ? threshold : row.a->half_spread() + row.b->half_spread();
    const double change = row.ratio - 1;
    row.verdict = std::abs(change) <= row.noise ? CompareRow::Verdict::same
                  : change > 0                  ? CompareRow::Verdict::slower
                                                : CompareRow::Verdict::faster;
    if (single) row.gates = false;
    c.rows.push_back(row);
  }
  return c;
}

std::string ms(const std::optional<MeasuredTime>& t) { return t ? ms_text(t->median) : "-"; }

}  // namespace

std::string_view verdict_name(CompareRow::Verdict v) {
  switch (v) {
    case CompareRow::Verdict::same: return "same";
    case CompareRow::Verdict::faster: return "faster";
    case CompareRow::Verdict::slower: return "slower";
    case CompareRow::Verdict::only_a: return "only in A";
    case CompareRow::Verdict::only_b: return "only in B";
  }
  return "?";
}

std::vector<const CompareRow*> Comparison::failures() const {
  std::vector<const CompareRow*> out;
  for (const auto& r : rows)
    if (r.gates && r.verdict == CompareRow::Verdict::slower && r.ratio > 1 + threshold) out.push_back(&r);
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
    return v;
  };
  const auto ratio = [](const CompareRow& r) { return r.a && r.b ? fixed(r.ratio, 3) + "x" : std::string("-"); };
  const auto noise = [](const CompareRow& r) { return r.a && r.b ? "±" + fixed(100 * r.noise, 1) + "%" : std::string("-"); };
  const std::string summary =
      failures.empty() ? "no slowdown past " + fixed(100 * c.threshold, 0) + "%"
                       : std::to_string(failures.size()) + " slowdown" + (failures.size() == 1 ? "" : "s") +
                             " past " + fixed(100 * c.threshold, 0) + "%";
  if (markdown) {
    out << "### gpuk compare (" << c.kind << " reports)\n\n";
    out << "A: `" << a_name << "`, B: `" << b_name << "`\n\n";
    for (const auto& n : c.notes) out << "- " << n << "\n";
    if (!c.notes.empty()) out << "\n";
    out << "| | A median (ms) | B median (ms) | B/A | noise | verdict |\n| --- | ---: | ---: | ---: | ---: | --- |\n";
    for (const auto& r : c.rows)
      out << "| " << r.name << " | " << ms(r.a) << " | " << ms(r.b) << " | " << ratio(r) << " | " << noise(r)
          << " | " << verdict(r) << " |\n";
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
  out << "  " << summary << " (noise: the two half interquartile ranges added; rows of one measurement and CPU rows "
         "never fail)\n";
}

}  // namespace gpuk
