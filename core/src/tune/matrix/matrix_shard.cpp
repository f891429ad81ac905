// A tuning matrix split into shards (one job each, e.g. a Slurm job array) and the shards'
// results directories merged into one, as one unsharded run would have left it.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "gpuk/error.hpp"
#include "tune/matrix/matrix.hpp"
#include "util/atomic_file.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

Shard parse_shard(const std::string& text) {
  const std::string shown = printable(text, 80);
  const std::string usage = "--shard takes K/N, shard K of N counted from 0 (0/3, 1/3, 2/3), not '" + shown + "'";
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw ConfigError(usage + ": it has no '/'");
  // Digits only: std::stoi took " 1/3" (a space from a job script's quoting) and "+1/3".
  const auto number = [&](const std::string& part, const char* which) {
    if (part.empty()) throw ConfigError(usage + ": " + which + " is empty");
    for (const char c : part)
      if (c < '0' || c > '9')
        throw ConfigError(usage + ": " + which + " has '" + printable(std::string(1, c), 8) +
                          "' (digits only: no space, sign or other character)");
    if (part.size() > 9) throw ConfigError(usage + ": " + which + " is too large");
    return std::stoi(part);
  };
  Shard s{number(text.substr(0, slash), "K"), number(text.substr(slash + 1), "N")};
  if (s.count < 1) throw ConfigError(usage + ": N must be at least 1");
  if (s.index >= s.count)
    throw ConfigError("--shard " + shown + ": shards are counted from 0, so shard " + std::to_string(s.index) +
                      " of " + std::to_string(s.count) + " does not exist (the last is " +
                      std::to_string(s.count - 1) + "/" + std::to_string(s.count) + ")");
  return s;
}

bool in_shard(const MatrixCell& cell, Shard shard) {
  return cell.index % static_cast<std::size_t>(shard.count) == static_cast<std::size_t>(shard.index);
}

TuneMatrix shard_of(const TuneMatrix& matrix, Shard shard) {
  TuneMatrix part = matrix;  // its path, family, kind tolerance and kernel library
  part.cells.clear();
  for (const auto& cell : matrix.cells)
    if (in_shard(cell, shard)) part.cells.push_back(cell);
  return part;
}

namespace {

int preference(CellResult::Status s) {
  return s == CellResult::Status::ok ? 2 : s == CellResult::Status::no_winner ? 1 : 0;
}

// A shard's report or journal, as the rest of gpuk reads files: a regular file within the
// reports' limit, or a ConfigError naming it and why (a FIFO hung the merge; a journal that was
// /dev/zero ended in std::bad_alloc; a report that was /dev/zero was copied as 1 GiB).
std::string read_text(const fs::path& path, const std::string& what) {
  RegularFile file = read_regular_file(path, kMaxReportBytes);
  if (file.status != RegularFile::Status::ok)
    throw ConfigError(printable(path.string(), 4096) + ": cannot merge " + what + ": " + file.why);
  return std::move(file.text);
}

// The journal files of a results directory, in name order.
std::vector<fs::path> journal_files(const fs::path& dir) {
  std::vector<fs::path> files;
  const fs::path jdir = dir / "journal";
  std::error_code ec;
  if (!fs::is_directory(jdir, ec)) return files;
  for (const auto& f : fs::directory_iterator(jdir, ec))
    if (f.path().extension() == ".jsonl") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  return files;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

}  // namespace

MergeSummary merge_matrix_results(const TuneMatrix& matrix, const std::vector<fs::path>& dirs,
                                  const MatrixResults& into) {
  for (const auto& dir : dirs)
    if (!fs::is_directory(dir)) throw ConfigError(dir.string() + ": no such results directory to merge");
  // Every report and journal is read (and refused, naming it) before anything is written.
  std::map<fs::path, std::string> texts;
  for (const auto& dir : dirs) {
    for (const auto& cell : matrix.cells) {
      const fs::path report = MatrixResults(dir).report_path(cell);
      std::error_code ec;
      if (fs::exists(fs::symlink_status(report, ec)) || fs::is_symlink(report, ec))
        texts[report] = read_text(report, "the report of " + cell.id);
    }
  }
  for (const auto& dir : dirs)
    for (const auto& f : journal_files(dir)) texts[f] = read_text(f, "the journal");
  for (const auto& f : journal_files(into.dir()))
    if (!texts.count(f)) texts[f] = read_text(f, "the journal");
  MergeSummary summary;
  std::set<std::string> gpus;
  for (const auto& cell : matrix.cells) {
    std::optional<CellFile> best;
    fs::path from;
    int found = 0;
    for (const auto& dir : dirs) {
      const MatrixResults results(dir);
      CellFile file = results.load(cell);
      if (file.state == CellFile::State::absent) continue;
      // Every file is checked as the export checks it: one that cannot be read, or is not its
      // cell's, is named and never copied (a merge wrote "verified": false as true).
      std::string why = file.why;
      if (file.state == CellFile::State::ok) {
        if (file.result->fingerprint != cell_fingerprint(cell)) {
          ++summary.stale;
          continue;
        }
        why = winner_mismatch(matrix, cell, *file.result);
      }
      if (!why.empty()) {
        summary.refused.push_back({cell.id, results.cell_path(cell), why});
        continue;
      }
      ++found;
      const auto tuned = [](const CellFile& c) { return c.result->winner ? c.result->winner->tuned_at : std::string(); };
      if (!best || preference(file.result->status) > preference(best->result->status) ||
          (preference(file.result->status) == preference(best->result->status) && tuned(file) > tuned(*best))) {
        best = std::move(file);
        from = dir;
      }
    }
    if (!best) {
      summary.missing.push_back(cell.id);
      continue;
    }
    if (found > 1) ++summary.duplicates;
    ++summary.cells;
    if (!best->result->gpu.empty()) gpus.insert(best->result->gpu);
    const MatrixResults source(from);
    // The file as it was read and checked, byte for byte: nothing of it rewritten.
    if (!same_file(source.cell_path(cell), into.cell_path(cell)))
      write_file_atomically(into.cell_path(cell), best->text, "the tuning matrix's result of " + cell.id);
    const fs::path report = source.report_path(cell);
    if (texts.count(report) && !same_file(report, into.report_path(cell))) {
      write_file_atomically(into.report_path(cell), texts.at(report), "the report of " + cell.id);
      ++summary.reports;
    }
  }
  // The journals: each file's lines from every directory, once each, in the order first seen.
  std::map<std::string, std::vector<std::string>> journals;
  std::map<std::string, std::set<std::string>> seen;
  const auto take = [&](const fs::path& dir) {
    for (const auto& f : journal_files(dir)) {
      std::istringstream lines(texts.at(f));
      const std::string name = f.filename().string();
      for (std::string line; std::getline(lines, line);)
        if (!line.empty() && seen[name].insert(line).second) journals[name].push_back(line);
    }
  };
  take(into.dir());
  for (const auto& dir : dirs) take(dir);
  for (const auto& [name, lines] : journals) {
    std::string text;
    for (const auto& line : lines) text += line + "\n";
    write_file_atomically(into.dir() / "journal" / name, text, "the merged journal " + name);
    summary.journal_lines += lines.size();
  }
  summary.gpus.assign(gpus.begin(), gpus.end());
  return summary;
}

}  // namespace gpuk
