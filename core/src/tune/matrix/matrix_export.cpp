// The tuning matrix's export (--export): each cell's verified winner, or one entry per group of
// input kinds, as tuning database entries; and for every cell without one, why. Every cell file
// is read and checked (winner_mismatch) before its winner goes anywhere.
#include <algorithm>
#include <cmath>
#include <set>

#include "gpuk/error.hpp"
#include "tune/matrix/matrix.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {

// The cell's result when it is the cell's own to export: measured with these settings, ok, its
// winner verified and of the cell; else why not.
std::optional<CellResult> exportable(const TuneMatrix& matrix, const MatrixCell& cell, const MatrixResults& results,
                                     const KernelLibrary* kernels, SkippedCell& skipped) {
  skipped = {cell.id, SkippedCell::Why::not_measured, ""};
  CellFile file = results.load(cell);
  if (file.state == CellFile::State::absent) return std::nullopt;
  if (file.state == CellFile::State::unusable) {
    skipped.why = SkippedCell::Why::unusable;
    skipped.detail = file.why;
    return std::nullopt;
  }
  const CellResult& r = *file.result;
  if (r.fingerprint != cell_fingerprint(cell)) {
    skipped.why = SkippedCell::Why::other_settings;
    return std::nullopt;
  }
  if (const std::string why = winner_mismatch(matrix, cell, r, kernels); !why.empty()) {
    skipped.why = SkippedCell::Why::refused;
    skipped.detail = why;
    return std::nullopt;
  }
  if (r.status != CellResult::Status::ok) {
    skipped.why = r.status == CellResult::Status::failed ? SkippedCell::Why::failed : SkippedCell::Why::no_winner;
    skipped.detail = printable(r.message, 400);
    return std::nullopt;
  }
  return std::move(file.result);
}

std::string variant_key(const CellResult::Variant& v) {
  std::string key = v.kernel;
  for (const auto& [name, value] : v.params) key += " " + name + "=" + std::to_string(value);
  return key;
}

// A group's choice over its kinds, and why a kind's cell has none (its SkippedCell).
struct GroupChoice {
  KindChoice choice;
  std::optional<SkippedCell> skipped;
};

std::vector<GroupChoice> group_choices(const TuneMatrix& matrix, const MatrixResults& results,
                                       const KernelLibrary* kernels) {
  std::vector<GroupChoice> out;
  std::map<std::string, std::vector<const MatrixCell*>> groups;
  for (const auto& cell : matrix.cells)
    if (!cell.kind.empty()) {
      auto& cells = groups[cell.group];
      if (cells.empty()) {
        GroupChoice g;
        g.choice.group = cell.group;
        g.choice.first = &cell;
        out.push_back(g);
      }
      cells.push_back(&cell);
    }
  for (auto& g : out) {
    KindChoice& choice = g.choice;
    // Per variant (kernel and parameters): its ratio in each kind, where it was verified.
    std::map<std::string, std::vector<double>> ratios;
    std::map<std::string, CellResult::Variant> first_kind;
    const auto& cells = groups[choice.group];
    for (const MatrixCell* cell : cells) {
      SkippedCell skipped;
      const auto r = exportable(matrix, *cell, results, kernels, skipped);
      if (!r) {
        const bool measured_not_ok = skipped.why == SkippedCell::Why::not_measured ||
                                     skipped.why == SkippedCell::Why::other_settings ||
                                     skipped.why == SkippedCell::Why::failed || skipped.why == SkippedCell::Why::no_winner;
        choice.why_not = "kind " + cell->kind + (measured_not_ok ? " not measured ok" : ": " + skipped.detail);
        skipped.cell = choice.group;
        skipped.detail = "kind " + cell->kind + (skipped.detail.empty() ? "" : ": " + skipped.detail);
        g.skipped = skipped;
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
    if (choice.worst == 0) {
      choice.why_not = "no variant verified in every kind";
      g.skipped = SkippedCell{choice.group, SkippedCell::Why::no_winner, choice.why_not};
    }
  }
  return out;
}

}  // namespace

std::vector<KindChoice> kind_choices(const TuneMatrix& matrix, const MatrixResults& results) {
  std::vector<KindChoice> out;
  for (auto& g : group_choices(matrix, results, nullptr)) out.push_back(std::move(g.choice));
  return out;
}

const char* skipped_name(SkippedCell::Why why) {
  switch (why) {
    case SkippedCell::Why::not_measured: return "missing";
    case SkippedCell::Why::other_settings: return "measured with other settings";
    case SkippedCell::Why::failed: return "failed";
    case SkippedCell::Why::no_winner: return "no winner";
    case SkippedCell::Why::unusable: return "unusable file";
    case SkippedCell::Why::refused: return "refused";
  }
  return "?";
}

std::size_t MatrixExport::failing() const {
  return static_cast<std::size_t>(std::count_if(skipped.begin(), skipped.end(), [](const SkippedCell& s) { return s.fails(); }));
}

namespace {

MatrixExport export_with(const TuneMatrix& matrix, const MatrixResults& results, const KernelLibrary* kernels) {
  MatrixExport out;
  const auto groups = group_choices(matrix, results, kernels);
  if (!kernels) kernels = matrix.kernels;
  for (const auto& cell : matrix.cells) {
    SkippedCell skipped;
    std::optional<TuningEntry> entry;
    if (cell.kind.empty()) {
      // Only a cell measured with these settings, whose winner passed verification, is the
      // cell's own, and serves every size its entry is offered for.
      if (const auto r = exportable(matrix, cell, results, kernels, skipped)) entry = r->winner;
    } else {
      const auto g = std::find_if(groups.begin(), groups.end(), [&](const GroupChoice& k) { return k.choice.group == cell.group; });
      if (g->choice.first != &cell) continue;  // the group exports once, at its first kind
      if (g->skipped) {
        out.skipped.push_back(*g->skipped);
        continue;
      }
      const KindChoice& c = g->choice;
      entry = *results.read(cell)->winner;
      entry->kernel = c.chosen.kernel;
      entry->params = c.chosen.params;
      entry->gbs *= entry->median_ms / c.chosen.median_ms;
      entry->median_ms = c.chosen.median_ms;
      entry->ties.clear();
      // The choice is one of the cells' variants: checked as a winner is.
      skipped = {cell.group, SkippedCell::Why::refused, ""};
      if (kernels) skipped.detail = entry_mismatch(cell, *entry, *kernels);
      if (!skipped.detail.empty()) entry.reset();
    }
    if (entry)
      out.entries.push_back(*entry);
    else
      out.skipped.push_back(skipped);
  }
  std::set<TuningKey> keys;
  for (const auto& e : out.entries) keys.insert(e.key);
  out.keys = keys.size();
  return out;
}

}  // namespace

MatrixExport export_matrix(const TuneMatrix& matrix, const MatrixResults& results) {
  return export_with(matrix, results, nullptr);
}

std::vector<TuningEntry> matrix_entries(const TuneMatrix& matrix, const MatrixResults& results,
                                        std::vector<std::string>* missing, const KernelLibrary* kernels) {
  MatrixExport e = export_with(matrix, results, kernels);
  if (missing)
    for (const auto& s : e.skipped) {
      const bool refused = s.why == SkippedCell::Why::refused || s.why == SkippedCell::Why::unusable;
      missing->push_back(refused ? s.cell + " (" + s.detail + ")" : s.cell);
    }
  return std::move(e.entries);
}

std::map<std::string, int> matrix_tally(const TuneMatrix& matrix, const MatrixResults& results) {
  std::map<std::string, int> tally{{"missing", 0}};
  for (const auto& cell : matrix.cells) {
    SkippedCell skipped;
    const auto r = exportable(matrix, cell, results, nullptr, skipped);
    if (r) ++tally["ok"];
    else ++tally[skipped_name(skipped.why)];
  }
  return tally;
}

std::size_t failing_cells(const std::map<std::string, int>& tally) {
  std::size_t n = 0;
  for (const auto& [status, count] : tally)
    if (status != "ok" && status != "no winner") n += static_cast<std::size_t>(count);
  return n;
}

std::string describe_refused(const MergeSummary& m) {
  std::string out;
  for (const auto& r : m.refused)
    out += "gpuk: not merged: " + printable(r.file.string(), 4096) + ": " + printable(r.why, 400) + "\n";
  return out;
}

std::string describe_export(const MatrixExport& e, const std::string& file) {
  std::string out = "exported " + std::to_string(e.keys) + " verified winner" + (e.keys == 1 ? "" : "s") + " to " +
                    printable(file, 4096);
  if (e.keys != e.entries.size()) out += " (" + std::to_string(e.entries.size()) + " cells; some share a key)";
  if (!e.skipped.empty()) {
    std::map<std::string, std::size_t> by_reason;
    for (const auto& s : e.skipped) ++by_reason[skipped_name(s.why)];
    std::vector<std::string> counts;
    for (const auto& [reason, n] : by_reason) counts.push_back(std::to_string(n) + " " + reason);
    out += "; " + std::to_string(e.skipped.size()) + " cell" + (e.skipped.size() == 1 ? "" : "s") + " skipped: " +
           join(counts);
  }
  out += "\n";
  for (const auto& s : e.skipped)
    out += "  skipped " + printable(s.cell, 400) + ": " + skipped_name(s.why) +
           (s.detail.empty() ? "" : " (" + printable(s.detail, 400) + ")") + "\n";
  return out;
}

}  // namespace gpuk
