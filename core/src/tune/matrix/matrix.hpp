// The tuning matrix: `gpuk tune` of a config that lists `operations:` sweeps one family over
// every operation x option values x dtype x size (a cell), one ordinary sweep per cell, and keeps
// each cell's result in its own file, so a second run measures only the cells missing. The
// winners export as a tuning file in the database's format: the shipped per-architecture
// defaults, kernels_src/tuned/<arch>.json (docs/tuning.md, "Tuning matrix and shipped defaults").
//
// The pieces, each testable without a GPU:
//   TuneMatrix     - the config read into cells, each a TuneSpec as `gpuk tune` reads one;
//   MatrixResults  - the results directory: one JSON file per cell, written atomically;
//   run_matrix()   - the cells not measured yet, each through an injected CellSweep (the CLI's
//                    sweeps on the GPU in a child process; tests inject a fake);
//   winner_mismatch - whether a cell file may stand for its cell: the one check that a run's plan,
//                    the merge and the export make of every cell file they read;
//   matrix_entries / export_matrix - the measured winners as tuning database entries (--export).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "tune/sweep/sweep.hpp"

namespace gpuk {

class PluginRegistry;
class KernelLibrary;

// One sweep of the matrix.
struct MatrixCell {
  std::size_t index = 0;  // in the matrix's order
  TuneSpec spec;          // as `gpuk tune` reads a plain config (family, operation, options, dtype, size)
  std::string id;         // "sort order=descending values=uint32 float32 2^20": names it everywhere
  std::string file;       // its results file's name, "sort.order-descending.values-uint32.float32.n1048576.json"
  std::string settings;   // the cell's config as YAML: what it sweeps and how (part of its fingerprint)
  int line = 0;           // the line of its entry under `operations:`
  // Input kinds (an entry's `kinds:`, a name for each data: uniform, d16, labels, ...): the
  // cell's kind, "" without; `group` is the id without it, the same for every kind of one
  // operation, options, dtype and size. A group's kinds export as one entry (matrix_entries).
  std::string kind;
  std::string group;
};

struct TuneMatrix {
  std::filesystem::path path;
  std::string family;
  std::vector<MatrixCell> cells;
  // `kind_tolerance:` the export's rule over input kinds (kind_choices): worst-case ratios within
  // this fraction of the best one count as equal, and the better mean ratio decides among them.
  double kind_tolerance = 0.01;
  // The kernel library the cells were read with (load_tune_matrix's): what winner_mismatch checks
  // a cell file's winner against (its kernel, parameters and constraints). It outlives the matrix.
  const KernelLibrary* kernels = nullptr;
};

// True when the YAML text is a tuning matrix (it has `operations:`), not a plain tune config.
bool is_tune_matrix(const std::string& yaml_text);
bool is_tune_matrix_file(const std::filesystem::path& path);

// Reads a matrix config. Every cell is checked as a plain tune config would be, so an error
// ("kernel radix does not support dtype int64") stops the matrix before anything runs and names
// the file:line:column of the entry, dtype or size at fault (a ConfigError).
TuneMatrix load_tune_matrix(const std::filesystem::path& path, const PluginRegistry& plugins,
                            const KernelLibrary& kernels);
TuneMatrix parse_tune_matrix(const std::string& yaml_text, const std::filesystem::path& path,
                             const PluginRegistry& plugins, const KernelLibrary& kernels);

// What a cell's results file holds: its sweep's winner (verified against the CPU reference when
// it was measured: only Status::ok variants win), the library baseline timed on the same input in
// the same process, and enough to say what happened.
struct CellResult {
  enum class Status { ok, no_winner, failed };
  Status status = Status::failed;
  std::string cell, fingerprint;
  std::string family, operation, options, dtype;  // options: options_key()
  std::uint64_t size = 0;
  std::string gpu, arch;
  std::optional<TuningEntry> winner;
  // Every variant that ran and matched the CPU reference, with its median: what the export
  // compares across a group's input kinds.
  struct Variant {
    std::string kernel, label;
    std::map<std::string, std::int64_t> params;
    double median_ms = 0;
  };
  std::vector<Variant> variants;
  bool verified = true;      // the file's "verified": false (a hand edit) makes its winner unusable
  std::string winner_label;  // "radix BLOCK=256 ITEMS=16 ..."
  std::string baseline;      // the library call, "" when the family has none
  double baseline_ms = 0;    // median
  std::string baseline_note;
  std::map<std::string, int> counts;  // variants per status name ("ok", "wrong answer", ...)
  std::string message;       // why no winner, or what failed
  double seconds = 0;        // wall time of the cell's sweep (the winner's tuned_at says when)
  // baseline median / winner median: above 1, gpuk's best is faster; 0 when either is missing.
  double speedup() const;
};
const char* cell_status_name(CellResult::Status s);  // "ok", "no winner", "failed"

// A cell's fingerprint: its settings and its spec's strategy, budget and seed (which the command
// line may override). A results file of another fingerprint is stale (the config changed since)
// and the cell is measured again.
std::string cell_fingerprint(const MatrixCell& cell);

// A cell's result from its sweep's report (the CLI's GPU sweep; `space` names the winner's file).
CellResult cell_result(const MatrixCell& cell, const TuneReport& report, const Space& space);
// A cell that could not be swept (a DeviceError: it does not fit, ...).
CellResult failed_cell(const MatrixCell& cell, const std::string& message);

// A cell's results file as read: its result, or why it cannot be used (absent: no file).
struct CellFile {
  enum class State { absent, unusable, ok };
  State state = State::absent;
  std::optional<CellResult> result;  // State::ok
  std::string why;                   // State::unusable: "not JSON: ...", "\"size\" must be ...", "a FIFO"
  std::string text;                  // the file's bytes (State::ok): what the merge copies
};

// A cell file's text read field by field (a wrong type, a missing field, a time that is not a
// positive number, a truncated file: a ConfigError naming the field); the fuzzer's entry too.
CellResult parse_cell_result(const std::string& text);

// The results directory, DIR/cells/<cell.file>; DIR/reports/ holds each cell's full tune report
// (write_tune_json) and DIR/state/ the sweep of a cell that lost its CUDA context midway.
class MatrixResults {
 public:
  explicit MatrixResults(std::filesystem::path dir);
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path cell_path(const MatrixCell& cell) const;
  std::filesystem::path report_path(const MatrixCell& cell) const;
  // The cell's result when its file is there, readable and of the cell (any fingerprint).
  std::optional<CellResult> read(const MatrixCell& cell) const;
  // The same, saying why a file that is there cannot be used.
  CellFile load(const MatrixCell& cell) const;
  void write(const MatrixCell& cell, const CellResult& result) const;  // atomically

 private:
  std::filesystem::path dir_;
};

// Before a run: which cells are done (reused), which failed last time or are stale (their files
// are removed, so they run again: of other settings, or refused by winner_mismatch), which are
// missing, and which files cannot be read as a cell's (measured over).
struct MatrixPlan {
  std::size_t reused = 0, failed_before = 0, stale = 0, missing = 0, unusable = 0;
  std::size_t to_run() const { return failed_before + stale + missing + unusable; }
};
MatrixPlan plan_matrix(const TuneMatrix& matrix, const MatrixResults& results);

// Measures one cell; throws ContextLost when the cell's sweep cannot go on in this process (the
// caller goes on in a fresh one: run_matrix then continues with this cell). Any other gpuk::Error
// fails the cell, and the matrix goes on.
using CellSweep = std::function<CellResult(const MatrixCell& cell)>;

struct MatrixProgress {
  std::size_t position = 0, total = 0;  // this cell is cell `position` of `total` (1-based; of a shard's cells in a shard)
  const MatrixCell* cell = nullptr;
  const CellResult* result = nullptr;   // null: the cell starts; else it is done
};

struct MatrixSummary {
  std::size_t measured = 0, skipped = 0, failed = 0;
  std::size_t left = 0;  // cells not started because `stop` said so
};

// Every cell without a results file (any status: a failed cell is tried once per run; see
// plan_matrix), in order, through `sweep`; each result is written as soon as it is known. Before
// each cell, `stop` (when given) may end the run there (`--stop-after`): the rest is left for
// the next run.
MatrixSummary run_matrix(const TuneMatrix& matrix, const MatrixResults& results, const CellSweep& sweep,
                         const std::function<void(const MatrixProgress&)>& progress = {},
                         const std::function<bool()>& stop = {});

// --- Shards: the cells split across independent jobs (a Slurm job array), merged after ---------

// Shard `index` of `count` (0-based, as $SLURM_ARRAY_TASK_ID counts).
struct Shard {
  int index = 0, count = 1;
};
// "2/3": shard 2 of 3, shards 0 to 2: digits only (no space, sign or other character), at most
// 9 of them each. Throws ConfigError naming what is wrong.
Shard parse_shard(const std::string& text);
// Cells are dealt out round-robin in the matrix's order: every cell is in exactly one of the
// `count` shards, the shares differ by at most one cell, and the same matrix gives the same
// shares on every run and host.
bool in_shard(const MatrixCell& cell, Shard shard);
// The matrix with only the shard's cells (each keeps its index, id and file).
TuneMatrix shard_of(const TuneMatrix& matrix, Shard shard);

struct MergeSummary {
  std::size_t cells = 0;       // cells with a result of the matrix's settings, now in the merged directory
  std::size_t duplicates = 0;  // cells with such a result in more than one directory
  std::size_t stale = 0;       // cell files of other settings (another fingerprint): not merged
  std::size_t reports = 0;     // cell reports copied
  std::size_t journal_lines = 0;  // distinct journal lines in the merged journal files
  std::vector<std::string> missing;  // ids of the cells without a result anywhere
  std::vector<std::string> gpus;     // the GPU models the merged cells were measured on
  // Cell files not merged because they cannot be used (unreadable, damaged, truncated) or are not
  // their cell's (winner_mismatch: "verified": false, another kernel, parameters outside the
  // cell's space, ...), each with its path and why. Any makes `gpuk tune --merge` fail unless
  // --allow-missing.
  struct Refused {
    std::string cell;
    std::filesystem::path file;
    std::string why;
  };
  std::vector<Refused> refused;
};

// Merges the results directories of a matrix's shards (or of any runs of it) into `into`, as one
// unsharded run would have left it: for each cell, the result of the matrix's current settings
// (its fingerprint) from the directories, preferring ok, then no winner, then failed, and among
// alike the one whose winner was tuned last (else the first directory named); its report with
// it. The journals (DIR/journal/*.jsonl, where `gpuk tune --shard` keeps them) are joined file by
// file, each line once. `into` may be one of `dirs`. Every cell file is checked as the export
// checks it (winner_mismatch, with the matrix's kernel library); one that fails is not merged and
// is listed in `refused`. A merged cell file is copied byte for byte. Throws ConfigError for a
// directory that is not there.
MergeSummary merge_matrix_results(const TuneMatrix& matrix, const std::vector<std::filesystem::path>& dirs,
                                  const MatrixResults& into);

// Why a cell file's result may not stand for this cell, or "" when it may: "verified": false, a
// status that disagrees with its winner, a family, operation, options, dtype, size or objective
// (of the file or of its winner's key) other than the matrix cell's, or a winner that entry_mismatch
// refuses. A damaged or hand-edited cell file once put a sort entry into a reduce matrix's export,
// argmin abs=true for argmax abs=false, and a declared cell of `scale` exported `stencil2d`.
// `kernels`: the library to check the winner's parameters against (default: the matrix's).
// The run's plan, the merge and the export all ask this one function.
std::string winner_mismatch(const TuneMatrix& matrix, const MatrixCell& cell, const CellResult& result,
                            const KernelLibrary* kernels = nullptr);
// Why an entry (a cell's winner, or a group's choice over its kinds) may not be exported for this
// cell, or "": its kernel must be one the cell swept (the entry's operation or one of its
// `kernels:`), its parameters every parameter of that kernel with a value the cell swept and the
// kernel's metadata allows, and the kernel's constraints must hold for every n of its size
// bucket (a declared kernel's: at the cell's named sizes).
std::string entry_mismatch(const MatrixCell& cell, const TuningEntry& entry, const KernelLibrary& kernels);

// A group of cells that differ only in their input kind (MatrixCell::kind), measured ok in every
// kind: among the variants verified in every kind, those whose worst-case ratio to the library
// baseline over the kinds (each kind's baseline median over the variant's; without a baseline,
// over the kind's fastest variant) is within TuneMatrix::kind_tolerance of the best worst ratio,
// and of those the one with the best mean ratio (the geometric mean over the kinds); where some
// variant is at least as fast as the baseline in every kind, only those are. A 1% difference of
// worst ratios is within a median's noise; a kind's 1.6x gain is not.
struct KindChoice {
  std::string group;
  const MatrixCell* first = nullptr;  // the group's first cell (its first kind)
  CellResult::Variant chosen;
  double worst = 0;                   // the chosen variant's worst ratio over the kinds
  std::string worst_kind;
  double best_worst = 0;              // the best worst ratio of any variant (>= worst, within the tolerance)
  struct Kind {
    std::string name;
    double ratio = 0;         // the chosen variant's
    double winner_ratio = 0;  // the kind's own winner's (the best any variant did in that kind)
    std::string winner_label;
  };
  std::vector<Kind> kinds;
  std::string why_not;  // "" when chosen; else why the group has no choice (a kind not measured ok, no variant in all)
};
std::vector<KindChoice> kind_choices(const TuneMatrix& matrix, const MatrixResults& results);

// The winners of the matrix's cells measured ok, as tuning database entries (the shipped files'
// format); `missing` receives the ids of the cells without one. Cells of input kinds export one
// entry per group, its kind_choices() variant (the first kind's cell's entry with that variant's
// kernel, parameters and time), or none, the group's cells then missing. A winner that is not the cell's
// (winner_mismatch) is left out with its cell id and why; with `kernels`, so is one that breaks
// one of its kernel's constraints for some n of its size bucket (rank_bucket tuned at 2^12
// cannot sort 8,191 keys).
std::vector<TuningEntry> matrix_entries(const TuneMatrix& matrix, const MatrixResults& results,
                                        std::vector<std::string>* missing = nullptr,
                                        const KernelLibrary* kernels = nullptr);

// Why each cell (or group of kinds) has no entry in an export, and whether that fails the command.
struct SkippedCell {
  enum class Why { not_measured, other_settings, failed, no_winner, unusable, refused };
  std::string cell;    // its id (a group's, for kinds)
  Why why = Why::not_measured;
  std::string detail;  // a failed cell's message, why a file is unusable or refused
  // Everything but "no winner" (measured, and no variant matched the reference) fails the command
  // unless --allow-missing.
  bool fails() const { return why != Why::no_winner; }
};
const char* skipped_name(SkippedCell::Why why);  // "missing" (no file), "measured with other settings", ...
struct MatrixExport {
  std::vector<TuningEntry> entries;
  std::size_t keys = 0;  // distinct keys among them (cells whose winners share a key count once)
  std::vector<SkippedCell> skipped;
  std::size_t failing() const;  // skipped cells that fail the command unless --allow-missing
};
// The export's entries and, for every cell without one, why (each cell file read and checked by
// winner_mismatch and entry_mismatch). Writes nothing.
MatrixExport export_matrix(const TuneMatrix& matrix, const MatrixResults& results);
// "exported 5 verified winners to FILE; 2 cells skipped: 1 missing, 1 refused" and a line
// per skipped cell with its reason, as `gpuk tune --export` prints them.
std::string describe_export(const MatrixExport& e, const std::string& file);
// The matrix's cells by what their files say, as the export reads them: "ok", "no winner",
// "failed", "missing" (no file), "unusable file", "refused", "measured with other settings".
std::map<std::string, int> matrix_tally(const TuneMatrix& matrix, const MatrixResults& results);
// The cells of a tally that fail `gpuk tune` unless --allow-missing: all but "ok" and "no winner".
std::size_t failing_cells(const std::map<std::string, int>& tally);
// "gpuk: not merged: PATH: why", a line per cell file the merge refused.
std::string describe_refused(const MergeSummary& m);

}  // namespace gpuk
