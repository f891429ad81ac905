// The tuning matrix's results: one JSON file per cell, written atomically as soon as the cell is
// measured, so a run killed at any point loses at most the cell it was measuring, and a second
// run measures only what is missing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuk/dtype.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "tuning/entry_json.hpp"
#include "tune/matrix/matrix.hpp"
#include "util/atomic_file.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

constexpr const char* kCellFormat = "gpuk-tune-matrix-cell";
constexpr int kCellVersion = 1;

CellResult::Status cell_status_of(const std::string& name) {
  if (name == "ok") return CellResult::Status::ok;
  if (name == "no winner") return CellResult::Status::no_winner;
  if (name == "failed") return CellResult::Status::failed;
  throw ConfigError("\"status\" must be \"ok\", \"no winner\" or \"failed\", not \"" + name + "\"");
}

nlohmann::json cell_to_json(const CellResult& r) {
  nlohmann::ordered_json j;
  j["format"] = kCellFormat;
  j["version"] = kCellVersion;
  j["cell"] = r.cell;
  j["fingerprint"] = r.fingerprint;
  j["status"] = cell_status_name(r.status);
  j["family"] = r.family;
  j["operation"] = r.operation;
  j["options"] = r.options;
  j["dtype"] = r.dtype;
  j["size"] = r.size;
  j["gpu"] = r.gpu;
  j["arch"] = r.arch;
  j["winner"] = r.winner ? nlohmann::ordered_json::parse(tuning_entry_to_json(*r.winner).dump()) : nlohmann::ordered_json();
  j["winner_label"] = r.winner_label;
  j["winner_ms"] = r.winner ? r.winner->median_ms : 0.0;
  j["variants"] = nlohmann::ordered_json::array();
  for (const auto& v : r.variants)
    j["variants"].push_back({{"kernel", v.kernel}, {"label", v.label}, {"params", v.params}, {"median_ms", v.median_ms}});
  // Only variants that matched the CPU reference win; a result read as unverified stays so.
  j["verified"] = r.winner.has_value() && r.verified;
  j["baseline"] = r.baseline;
  j["baseline_ms"] = r.baseline_ms;
  j["baseline_note"] = r.baseline_note;
  j["speedup"] = r.speedup();
  j["counts"] = r.counts;
  j["message"] = r.message;
  j["seconds"] = r.seconds;
  return nlohmann::json::parse(j.dump());
}

// A cell file, field by field: a wrong type, a missing field or an impossible number (a time
// that is not positive: the kinds' ratios divide by it) is a ConfigError naming the field.
CellResult cell_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("format") || j["format"] != kCellFormat) throw ConfigError("not a gpuk tuning matrix cell");
  if (!j.contains("version") || !j["version"].is_number_integer()) throw ConfigError("\"version\" must be an integer");
  if (j["version"].get<std::int64_t>() > kCellVersion) throw ConfigError("a newer format than this gpuk reads");
  const auto field = [&](const nlohmann::json& o, const char* name, bool required) -> const nlohmann::json* {
    const auto it = o.find(name);
    if (it == o.end() && required) throw ConfigError(std::string("it has no \"") + name + "\"");
    return it == o.end() ? nullptr : &*it;
  };
  const auto text = [&](const nlohmann::json& o, const char* name, bool required) {
    const nlohmann::json* v = field(o, name, required);
    if (!v) return std::string();
    if (!v->is_string()) throw ConfigError(std::string("\"") + name + "\" must be a string");
    return v->get<std::string>();
  };
  // A finite number of at least 0 (above 0 with `positive`); 0 when absent and not required.
  const auto number = [&](const nlohmann::json& o, const char* name, bool required, bool positive) {
    const nlohmann::json* v = field(o, name, required);
    if (!v) return 0.0;
    const double x = v->is_number() ? v->get<double>() : -1;
    if (!std::isfinite(x) || x < 0 || (positive && x == 0))
      throw ConfigError(std::string("\"") + name + "\" must be a number " + (positive ? "above 0" : "of at least 0"));
    return x;
  };
  const auto integers = [&](const nlohmann::json& o, const char* name) {
    const nlohmann::json* v = field(o, name, true);
    if (!v->is_object()) throw ConfigError(std::string("\"") + name + "\" must be an object of integers");
    std::map<std::string, std::int64_t> out;
    for (const auto& [key, value] : v->items()) {
      if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<std::uint64_t>() > INT64_MAX))
        throw ConfigError(std::string("\"") + name + "\": " + printable(key, 80) + " must be an integer");
      out[key] = value.get<std::int64_t>();
    }
    return out;
  };
  CellResult r;
  r.cell = text(j, "cell", true);
  r.fingerprint = text(j, "fingerprint", true);
  r.status = cell_status_of(text(j, "status", true));
  r.family = text(j, "family", true);
  r.operation = text(j, "operation", true);
  r.options = text(j, "options", true);
  r.dtype = text(j, "dtype", true);
  const nlohmann::json* size = field(j, "size", true);
  if (!size->is_number_unsigned()) throw ConfigError("\"size\" must be an integer of at least 0");
  r.size = size->get<std::uint64_t>();
  r.gpu = text(j, "gpu", false);
  r.arch = text(j, "arch", false);
  if (const nlohmann::json* w = field(j, "winner", false); w && !w->is_null()) {
    try {
      r.winner = tuning_entry_from_json(*w);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string("\"winner\": ") + e.what());
    }
    if (!(r.winner->median_ms > 0)) throw ConfigError("\"winner\": \"median_ms\" must be a number above 0");
  }
  // Anything but true (false, "true", 1) is not a verdict of gpuk's.
  if (const nlohmann::json* v = field(j, "verified", false)) {
    if (!v->is_boolean()) throw ConfigError("\"verified\" must be true or false");
    r.verified = v->get<bool>();
  }
  if (r.status == CellResult::Status::ok && !r.winner) throw ConfigError("status ok without a winner");
  if (const nlohmann::json* variants = field(j, "variants", false)) {
    if (!variants->is_array()) throw ConfigError("\"variants\" must be a list");
    for (const auto& v : *variants) {
      if (!v.is_object()) throw ConfigError("\"variants\" must be a list of objects");
      CellResult::Variant x;
      x.kernel = text(v, "kernel", true);
      x.label = text(v, "label", false);
      x.params = integers(v, "params");
      x.median_ms = number(v, "median_ms", true, true);
      r.variants.push_back(std::move(x));
    }
  }
  r.winner_label = text(j, "winner_label", false);
  r.baseline = text(j, "baseline", false);
  r.baseline_ms = number(j, "baseline_ms", false, false);
  r.baseline_note = text(j, "baseline_note", false);
  if (const nlohmann::json* counts = field(j, "counts", false)) {
    if (!counts->is_object()) throw ConfigError("\"counts\" must be an object of integers");
    for (const auto& [key, value] : counts->items()) {
      if (!value.is_number_integer() || value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > INT32_MAX)
        throw ConfigError("\"counts\": " + printable(key, 80) + " must be an integer from 0 to " + std::to_string(INT32_MAX));
      r.counts[key] = static_cast<int>(value.get<std::int64_t>());
    }
  }
  r.message = text(j, "message", false);
  r.seconds = number(j, "seconds", false, false);
  return r;
}

// FNV-1a, 64 bits: enough to tell two settings apart, printed as 16 hex digits.
std::string fnv1a(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

CellResult blank(const MatrixCell& cell) {
  CellResult r;
  r.cell = cell.id;
  r.fingerprint = cell_fingerprint(cell);
  const RunSpec& s = cell.spec.run;
  r.family = s.family;
  r.operation = s.operation;
  r.options = options_key(s.options);
  r.dtype = std::string(dtype_name(s.dtype));
  r.size = s.size;
  return r;
}

}  // namespace

double CellResult::speedup() const {
  return winner && winner->median_ms > 0 && baseline_ms > 0 ? baseline_ms / winner->median_ms : 0;
}

const char* cell_status_name(CellResult::Status s) {
  return s == CellResult::Status::ok ? "ok" : s == CellResult::Status::no_winner ? "no winner" : "failed";
}

std::string cell_fingerprint(const MatrixCell& cell) {
  const TuneSpec& t = cell.spec;
  std::ostringstream what;
  what << cell.settings << "\n# strategy " << strategy_name(t.strategy) << " budget "
       << (t.budget_evaluations ? std::to_string(*t.budget_evaluations) : "-") << " seconds "
       << (t.budget_seconds ? std::to_string(*t.budget_seconds) : "-") << " seed " << t.seed << "\n";
  return fnv1a(what.str());
}

CellResult cell_result(const MatrixCell& cell, const TuneReport& report, const Space& space) {
  CellResult r = blank(cell);
  r.gpu = report.gpu;
  r.arch = report.arch;
  r.seconds = report.wall_seconds;
  for (const auto& e : report.result.evaluations) ++r.counts[std::string(status_name(e.outcome.status))];
  if (report.baseline) {
    r.baseline = report.baseline->name;
    r.baseline_ms = Spread::of(report.baseline->ms).median;
    r.baseline_note = report.baseline->note;
  }
  if (report.result.aborted) {
    r.status = CellResult::Status::failed;
    r.message = report.result.stopped;
    return r;
  }
  for (const auto& e : report.result.evaluations)
    if (e.outcome.status == Status::ok && e.time.median > 0)
      r.variants.push_back({space.files()[e.candidate.file].file->name, e.label, e.params, e.time.median});
  r.winner = winner_entry(report, space);
  if (r.winner) {
    r.status = CellResult::Status::ok;
    r.winner_label = report.result.winner()->label;
  } else {
    r.status = CellResult::Status::no_winner;
    r.message = "no variant ran and matched the CPU reference";
  }
  return r;
}

CellResult failed_cell(const MatrixCell& cell, const std::string& message) {
  CellResult r = blank(cell);
  r.status = CellResult::Status::failed;
  r.message = message;
  return r;
}

MatrixResults::MatrixResults(fs::path dir) : dir_(std::move(dir)) {}

fs::path MatrixResults::cell_path(const MatrixCell& cell) const { return dir_ / "cells" / cell.file; }
fs::path MatrixResults::report_path(const MatrixCell& cell) const { return dir_ / "reports" / cell.file; }

CellResult parse_cell_result(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(std::string("not JSON (damaged or cut short): ") + e.what());
  }
  try {
    return cell_from_json(j);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(e.what());  // a type cell_from_json did not foresee: still the file's fault
  }
}

CellFile MatrixResults::load(const MatrixCell& cell) const {
  CellFile out;
  // Not a regular file (a FIFO would block), too large, or damaged: unusable, and said so by
  // whoever reads it (gpuk itself writes atomically).
  RegularFile file = read_regular_file(cell_path(cell), kMaxReportBytes);
  out.state = CellFile::State::unusable;
  if (file.status == RegularFile::Status::missing) {
    out.state = CellFile::State::absent;
    return out;
  }
  if (file.status != RegularFile::Status::ok) {
    out.why = file.why;
    return out;
  }
  try {
    CellResult r = parse_cell_result(file.text);
    if (r.cell != cell.id) {
      out.why = "it is the file of cell '" + printable(r.cell, 200) + "'";
      return out;
    }
    out.state = CellFile::State::ok;
    out.result = std::move(r);
    out.text = std::move(file.text);
  } catch (const ConfigError& e) {
    out.why = printable(e.what(), 400);
  }
  return out;
}

std::optional<CellResult> MatrixResults::read(const MatrixCell& cell) const { return load(cell).result; }

void MatrixResults::write(const MatrixCell& cell, const CellResult& result) const {
  write_file_atomically(cell_path(cell), cell_to_json(result).dump(2) + "\n", "the tuning matrix's result of " + cell.id);
}

MatrixPlan plan_matrix(const TuneMatrix& matrix, const MatrixResults& results) {
  MatrixPlan p;
  for (const auto& cell : matrix.cells) {
    const CellFile file = results.load(cell);
    const auto& r = file.result;
    std::error_code ec;
    if (file.state == CellFile::State::unusable) {
      ++p.unusable;  // damaged, cut short, not a regular file: measured over
    } else if (!r) {
      ++p.missing;
    } else if (r->fingerprint != cell_fingerprint(cell) || !winner_mismatch(matrix, cell, *r).empty()) {
      ++p.stale;  // of other settings, or not this cell's (damaged or edited): measured again
      fs::remove(results.cell_path(cell), ec);
    } else if (r->status == CellResult::Status::failed) {
      ++p.failed_before;
      fs::remove(results.cell_path(cell), ec);
    } else {
      ++p.reused;
    }
  }
  return p;
}

MatrixSummary run_matrix(const TuneMatrix& matrix, const MatrixResults& results, const CellSweep& sweep,
                         const std::function<void(const MatrixProgress&)>& progress,
                         const std::function<bool()>& stop) {
  MatrixSummary s;
  // A shard's cells keep their matrix index; the progress counts them within the shard.
  const std::size_t total = matrix.cells.size();
  std::size_t position = 0;
  for (const auto& cell : matrix.cells) {
    ++position;
    // A result of these settings that may stand for the cell (winner_mismatch) is kept; any
    // other file is measured over.
    if (const auto r = results.read(cell);
        r && r->fingerprint == cell_fingerprint(cell) && winner_mismatch(matrix, cell, *r).empty()) {
      ++s.skipped;
      continue;
    }
    if (s.left > 0 || (stop && stop())) {
      ++s.left;
      continue;
    }
    if (progress) progress({position, total, &cell, nullptr});
    CellResult r;
    try {
      r = sweep(cell);
    } catch (const ContextLost&) {
      throw;  // a fresh process goes on with this cell
    } catch (const Error& e) {
      r = failed_cell(cell, e.what());
    }
    r.cell = cell.id;
    r.fingerprint = cell_fingerprint(cell);
    results.write(cell, r);
    ++s.measured;
    if (r.status == CellResult::Status::failed) ++s.failed;
    if (progress) progress({position, total, &cell, &r});
  }
  return s;
}

}  // namespace gpuk
