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

constexpr const char* kFormat = "gpuk-tune-matrix-cell";
constexpr int kVersion = 1;

CellResult::Status status_of(const std::string& name) {
  if (name == "ok") return CellResult::Status::ok;
  if (name == "no winner") return CellResult::Status::no_winner;
  if (name == "failed") return CellResult::Status::failed;
  throw ConfigError("\"status\" must be \"ok\", \"no winner\" or \"failed\", not \"" + name + "\"");
}

nlohmann::json to_json(const CellResult& r) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
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
  j["verified"] = r.winner.has_value();  // only variants that matched the CPU reference win
  j["baseline"] = r.baseline;
  j["baseline_ms"] = r.baseline_ms;
  j["baseline_note"] = r.baseline_note;
  j["speedup"] = r.speedup();
  j["counts"] = r.counts;
  j["message"] = r.message;
  j["seconds"] = r.seconds;
  return nlohmann::json::parse(j.dump());
}

CellResult from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != kFormat) throw ConfigError("not a gpuk tuning matrix cell");
  if (j.value("version", 0) > kVersion) throw ConfigError("a newer format than this gpuk reads");
  CellResult r;
  r.cell = j.at("cell").get<std::string>();
  r.fingerprint = j.at("fingerprint").get<std::string>();
  r.status = status_of(j.at("status").get<std::string>());
  r.family = j.at("family").get<std::string>();
  r.operation = j.at("operation").get<std::string>();
  r.options = j.at("options").get<std::string>();
  r.dtype = j.at("dtype").get<std::string>();
  r.size = j.at("size").get<std::uint64_t>();
  r.gpu = j.value("gpu", "");
  r.arch = j.value("arch", "");
  if (j.contains("winner") && !j["winner"].is_null()) r.winner = tuning_entry_from_json(j["winner"]);
  r.verified = !j.contains("verified") || j["verified"] == true;
  if (r.status == CellResult::Status::ok && !r.winner) throw ConfigError("status ok without a winner");
  if (j.contains("variants"))
    for (const auto& v : j.at("variants")) {
      CellResult::Variant x;
      x.kernel = v.at("kernel").get<std::string>();
      x.label = v.value("label", "");
      x.params = v.at("params").get<std::map<std::string, std::int64_t>>();
      x.median_ms = v.at("median_ms").get<double>();
      r.variants.push_back(std::move(x));
    }
  r.winner_label = j.value("winner_label", "");
  r.baseline = j.value("baseline", "");
  r.baseline_ms = j.value("baseline_ms", 0.0);
  r.baseline_note = j.value("baseline_note", "");
  if (j.contains("counts")) r.counts = j["counts"].get<std::map<std::string, int>>();
  r.message = j.value("message", "");
  r.seconds = j.value("seconds", 0.0);
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

std::optional<CellResult> MatrixResults::read(const MatrixCell& cell) const {
  // Not a regular file (a FIFO would block) or damaged by hand: measured again.
  const RegularFile file = read_regular_file(cell_path(cell), kMaxReportBytes);
  if (file.status != RegularFile::Status::ok) return std::nullopt;
  try {
    CellResult r = from_json(nlohmann::json::parse(file.text));
    if (r.cell != cell.id) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // damaged by hand: measured again (gpuk writes atomically)
  }
}

void MatrixResults::write(const MatrixCell& cell, const CellResult& result) const {
  write_file_atomically(cell_path(cell), to_json(result).dump(2) + "\n", "the tuning matrix's result of " + cell.id);
}

MatrixPlan plan_matrix(const TuneMatrix& matrix, const MatrixResults& results) {
  MatrixPlan p;
  for (const auto& cell : matrix.cells) {
    const auto r = results.read(cell);
    std::error_code ec;
    if (!r) {
      ++p.missing;
    } else if (r->fingerprint != cell_fingerprint(cell) || !winner_mismatch(cell, *r).empty()) {
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
    if (const auto r = results.read(cell); r && r->fingerprint == cell_fingerprint(cell)) {
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

namespace {

// Why `e`'s variant cannot serve every n of its size bucket (the lookup offers an entry tuned at
// 2^12 for 4,096..8,191), or "" when it can. Constraints are checked at the bucket's ends and
// middle; those naming sm_count are left to the lookup, which knows the GPU. A declared kernel's
// entry serves only the named sizes of its key (`run`'s): its constraints are checked there.
std::string outside_its_bucket(const TuningEntry& e, const RunSpec& run, const KernelLibrary& kernels) {
  try {
    const auto file = kernels.find(e.key.family, e.kernel);
    const Variant variant(file, {}, e.params);
    const auto dtype = parse_dtype(e.key.dtype);
    const std::int64_t low = std::int64_t{1} << e.key.bucket, high = 2 * low - 1;
    std::vector<std::int64_t> ns = {low, low + low / 2, high};
    if (!run.sizes.empty()) ns = {static_cast<std::int64_t>(run.size)};
    for (const std::int64_t n : ns) {
      LaunchLimits limits;
      limits.n = n;
      limits.elem_bytes = dtype ? static_cast<int>(dtype_size(*dtype)) : 0;
      limits.sizes = run.sizes;
      if (const Constraint* c = broken_constraint(variant, limits))
        return variant.label() + " breaks '" + c->expr.text() + "' for " +
               (run.sizes.empty() ? "n = " + std::to_string(n) : options_key(run.options));
    }
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

std::string winner_mismatch(const MatrixCell& cell, const CellResult& r) {
  if (r.winner && !r.verified) return "its file says \"verified\": false";
  const RunSpec& s = cell.spec.run;
  const std::string options = options_key(s.options), dtype(dtype_name(s.dtype));
  const auto problem = [](const std::string& family, const std::string& operation, const std::string& opts,
                          const std::string& type) {
    return printable(family + " " + operation + (opts.empty() ? "" : " " + opts) + " " + type, 200);
  };
  const std::string cell_is = problem(s.family, s.operation, options, dtype) + " at n = " + std::to_string(s.size);
  if (r.family != s.family || r.operation != s.operation || r.options != options || r.dtype != dtype || r.size != s.size)
    return "its file is of " + problem(r.family, r.operation, r.options, r.dtype) + " at n = " + std::to_string(r.size) +
           ", the cell " + cell_is;
  if (!r.winner) return "";
  const TuningKey& k = r.winner->key;
  if (k.family != s.family || k.operation != s.operation || k.options != options || k.dtype != dtype ||
      k.bucket != size_bucket(s.size))
    return "its winner is an entry of " + problem(k.family, k.operation, k.options, k.dtype) + " at 2^" +
           std::to_string(k.bucket) + ", the cell " + cell_is;
  if (k.objective != objective_name(cell.spec.objective))
    return "its winner is ranked by " + printable(k.objective, 40) + ", the cell by " + objective_name(cell.spec.objective);
  return "";
}

namespace {

// The cell's result when it is the cell's own to export: measured with these settings, ok, its
// winner verified and of the cell; else why not ("-": not measured ok).
std::optional<CellResult> exportable(const MatrixCell& cell, const MatrixResults& results, std::string& why) {
  const auto r = results.read(cell);
  why.clear();
  if (!(r && r->fingerprint == cell_fingerprint(cell) && r->status == CellResult::Status::ok && r->winner))
    why = "-";
  else
    why = winner_mismatch(cell, *r);
  return why.empty() ? r : std::nullopt;
}

std::string variant_key(const CellResult::Variant& v) {
  std::string key = v.kernel;
  for (const auto& [name, value] : v.params) key += " " + name + "=" + std::to_string(value);
  return key;
}

}  // namespace

std::vector<KindChoice> kind_choices(const TuneMatrix& matrix, const MatrixResults& results) {
  std::vector<KindChoice> out;
  std::map<std::string, std::vector<const MatrixCell*>> groups;
  for (const auto& cell : matrix.cells)
    if (!cell.kind.empty()) {
      auto& cells = groups[cell.group];
      if (cells.empty()) {
        KindChoice choice;
        choice.group = cell.group;
        choice.first = &cell;
        out.push_back(choice);
      }
      cells.push_back(&cell);
    }
  for (auto& choice : out) {
    // Per variant (kernel and parameters): its ratio in each kind, where it was verified.
    std::map<std::string, std::vector<double>> ratios;
    std::map<std::string, CellResult::Variant> first_kind;
    const auto& cells = groups[choice.group];
    for (const MatrixCell* cell : cells) {
      std::string why;
      const auto r = exportable(*cell, results, why);
      if (!r) {
        choice.why_not = "kind " + cell->kind + (why == "-" ? " not measured ok" : ": " + why);
        break;
      }
      const double reference = r->baseline_ms > 0 ? r->baseline_ms : r->winner->median_ms;
      choice.kinds.push_back({cell->kind, 0, reference / r->winner->median_ms, r->winner_label});
      for (const auto& v : r->variants) {
        auto& list = ratios[variant_key(v)];
        if (list.size() + 1 != choice.kinds.size()) continue;  // missing in an earlier kind
        list.push_back(reference / v.median_ms);
        if (cell == cells.front()) first_kind[variant_key(v)] = v;
      }
    }
    if (!choice.why_not.empty()) continue;
    // Each variant verified in every kind: its worst ratio, where, and its geometric mean.
    struct Candidate {
      std::string key;
      const std::vector<double>* ratios;
      double worst, mean;
      std::size_t worst_at;
    };
    std::vector<Candidate> candidates;
    for (const auto& [key, list] : ratios) {
      if (list.size() != cells.size()) continue;  // not verified in every kind
      const auto worst = std::min_element(list.begin(), list.end());
      double log_sum = 0;
      for (double x : list) log_sum += std::log(x);
      candidates.push_back({key, &list, *worst, std::exp(log_sum / static_cast<double>(list.size())),
                            static_cast<std::size_t>(worst - list.begin())});
    }
    for (const auto& c : candidates) choice.best_worst = std::max(choice.best_worst, c.worst);
    // Within the tolerance; but a variant that loses to the baseline in no kind is never traded
    // for one that loses in some kind (a 1.004x worst against a 0.995x one).
    double floor = choice.best_worst * (1 - matrix.kind_tolerance);
    if (choice.best_worst >= 1) floor = std::max(floor, 1.0);
    const Candidate* pick = nullptr;
    for (const auto& c : candidates)
      if (c.worst >= floor && (!pick || c.mean > pick->mean || (c.mean == pick->mean && c.worst > pick->worst)))
        pick = &c;
    if (pick) {
      choice.worst = pick->worst;
      choice.worst_kind = choice.kinds[pick->worst_at].name;
      choice.chosen = first_kind.at(pick->key);
      for (std::size_t i = 0; i < pick->ratios->size(); ++i) choice.kinds[i].ratio = (*pick->ratios)[i];
    }
    if (choice.worst == 0) choice.why_not = "no variant verified in every kind";
  }
  return out;
}

std::vector<TuningEntry> matrix_entries(const TuneMatrix& matrix, const MatrixResults& results,
                                        std::vector<std::string>* missing, const KernelLibrary* kernels) {
  std::vector<TuningEntry> out;
  const auto choices = kind_choices(matrix, results);
  const auto refuse = [&](const std::string& id, const std::string& why) {
    if (missing) missing->push_back(why == "-" ? id : id + " (" + why + ")");
  };
  for (const auto& cell : matrix.cells) {
    std::string why;
    std::optional<TuningEntry> entry;
    if (cell.kind.empty()) {
      // Only a cell measured with these settings, whose winner passed verification, is the
      // cell's own, and serves every size its entry is offered for.
      if (const auto r = exportable(cell, results, why)) entry = r->winner;
    } else {
      const auto c = std::find_if(choices.begin(), choices.end(), [&](const KindChoice& k) { return k.group == cell.group; });
      if (c->first != &cell) continue;  // the group exports once, at its first kind
      if (!c->why_not.empty()) {  // a kind not measured yet is missing, as a cell would be
        refuse(cell.group, c->why_not.ends_with(" not measured ok") ? "-" : c->why_not);
        continue;
      }
      entry = *results.read(cell)->winner;
      entry->kernel = c->chosen.kernel;
      entry->params = c->chosen.params;
      entry->gbs *= entry->median_ms / c->chosen.median_ms;
      entry->median_ms = c->chosen.median_ms;
      entry->ties.clear();
    }
    if (entry && kernels) why = outside_its_bucket(*entry, cell.spec.run, *kernels);
    if (entry && why.empty())
      out.push_back(*entry);
    else
      refuse(cell.kind.empty() ? cell.id : cell.group, why.empty() ? "-" : why);
  }
  return out;
}

}  // namespace gpuk
