// `gpuk tune` after its command line (tune/tune_command.hpp): one sweep in a child process, a
// fresh one after a variant takes the CUDA context down (tune/workers/isolate.hpp), a sweep over
// several GPUs (tune/sweep_on_workers.hpp, the library's tuning call's road), a tuning matrix's
// cells or shard (tune/matrix/matrix.hpp), the merge of shards; reports printed, written and saved.
#include "tune/tune_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "run/host_side.hpp"
#include "run/runner.hpp"
#include "tune/matrix/matrix.hpp"
#include "tune/report/journal.hpp"
#include "tune/report/progress_bar.hpp"
#include "tune/sweep/sweep.hpp"
#include "tune/sweep_on_gpu.hpp"
#include "tune/sweep_on_workers.hpp"
#include "tune/workers/isolate.hpp"
#include "tune/workers/pool.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

// The Runtime of a `gpuk tune` process: the global options the CLI copied into the command.
RuntimeOptions runtime_options_of(const TuneCommand& a) {
  RuntimeOptions o;
  o.kernel_dirs = a.kernel_dirs;
  o.plugin_dirs = a.plugin_dirs;
  o.cache_dir = a.cache_dir;
  o.no_cache = !a.cache_dir;
  o.tuning_db = a.tuning_db_option;
  return o;
}

// The prologue of each part of the command: the Runtime of the global options, and the CLI's
// warnings about what did not load, said once per command (`warn`: not again in a fresh process).
struct Loaded {
  Runtime runtime;
  const PluginRegistry& plugins;
  const KernelLibrary& kernels;
  Loaded(const TuneCommand& a, bool warn)
      : runtime(runtime_options_of(a)), plugins(runtime.plugins()), kernels(runtime.kernels()) {
    if (warn && a.warn_load) a.warn_load(plugins, kernels);
  }
};

// One process's sweep options from the command line (a single sweep's, each matrix cell's).
SweepOptions sweep_options_of(const TuneCommand& a) {
  SweepOptions o;
  o.threads = a.threads;
  o.time_limit_s = a.time_limit;
  o.journal_dir = a.journal_dir;
  o.run_id = a.run_id;
  o.fresh = a.fresh;
  return o;
}

void export_db(const fs::path& db_path, const fs::path& out, const std::string& family, const std::string& operation,
               const std::string& gpu) {
  const TuningDb db = TuningDb::read(db_path);
  TuningDb part;
  for (const auto& e : db.entries())
    if ((family.empty() || e.key.family == family) && (operation.empty() || e.key.operation == operation) &&
        (gpu.empty() || e.key.gpu == gpu))
      part.put(e);
  part.write(out);
  std::cout << "exported " << part.entries().size() << " of " << db.entries().size() << " entr"
            << (db.entries().size() == 1 ? "y" : "ies") << " of " << db_path.string() << " to " << out.string()
            << "\n";
}

// Prints a sweep's report, writes its JSON and CSV (`suffix` before their extension: one report
// per GPU model), keeps the winner in the database; the exit status.
int finish_sweep(const TuneCommand& a, const TuneSpec& t, const Space& space, TuneReport& report,
                 const std::string& suffix, std::chrono::steady_clock::time_point wall_start) {
  const fs::path db_path = a.tuning_db;
  const auto with_suffix = [&](const fs::path& p) {
    return suffix.empty() ? p : p.parent_path() / (p.stem().string() + suffix + p.extension().string());
  };
  const auto winner = winner_entry(report, space);
  const auto save_start = std::chrono::steady_clock::now();
  if (winner && t.save) TuningDb::merge_into(db_path, {*winner});
  report.times.save = std::chrono::duration<double>(std::chrono::steady_clock::now() - save_start).count();
  report.wall_seconds = report.times.total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  print_tune_report(std::cout, report, t.show);
  if (a.json) write_tune_json(with_suffix(*a.json), report);
  if (a.csv) write_tune_csv(with_suffix(*a.csv), report);
  if (winner && t.save)
    std::cout << "  saved    the best to " << db_path.string() << " (" << winner->key.family << " "
              << winner->key.operation << " " << winner->key.dtype << ", n in [2^" << winner->key.bucket << ", 2^"
              << winner->key.bucket + 1 << "))\n";
  if (a.export_file) export_db(db_path, with_suffix(*a.export_file), t.run.family, t.run.operation, report.gpu);
  if (report.result.aborted) {
    std::cerr << "gpuk: " << report.result.stopped << "\n";
    return 1;
  }
  return report.result.winner() ? 0 : 3;
}

// "a, b or c": the names a command-line value may take.
std::string one_of(const std::vector<std::string>& names) {
  if (names.size() < 2) return join(names);
  return join(std::vector<std::string>(names.begin(), names.end() - 1)) + " or " + names.back();
}

// The command line's overrides of a tune config.
void apply_tune_args(TuneSpec& t, const TuneCommand& a) {
  if (!a.strategy.empty()) {
    const auto s = parse_strategy(a.strategy);
    if (!s) throw ConfigError("--strategy must be " + one_of(strategy_names()) + ", not '" + a.strategy + "'");
    t.strategy = *s;
  }
  if (!a.objective.empty()) {
    const auto o = parse_objective(a.objective);
    if (!o) throw ConfigError("--objective must be " + one_of(objective_names()) + ", not '" + a.objective + "'");
    t.objective = *o;
  }
  if (a.energy) t.energy = true;
  if (a.auto_repeats) t.auto_repeats = true;
  if (a.budget) t.budget_evaluations = *a.budget;
  if (a.seconds) t.budget_seconds = *a.seconds;
  if (a.seed) t.seed = *a.seed;
  if (a.show > 0) t.show = a.show;
  if (a.no_save) t.save = false;
}

// The tune config with the command line's overrides.
TuneSpec tune_spec_of(const TuneCommand& a, const PluginRegistry& plugins, const KernelLibrary& kernels) {
  TuneSpec t = load_tune_spec(*a.config, plugins, kernels);
  apply_tune_args(t, a);
  return t;
}

void print_widened(const Space& space) {
  for (const auto& f : space.files())
    for (const auto& w : f.widened)
      std::cerr << "gpuk: note: " << w << " is not in " << f.file->name
                << "'s metadata list; it is swept anyway (constraints still apply)\n";
}

// One process's part of a sweep: from what the journal has (earlier sweeps', and this sweep's
// earlier processes') on, until the sweep ends (then the report) or a variant takes the CUDA
// context down (then kGoOnExit: the journal has every point measured so far).
int tune_sweep(const TuneCommand& a, int restarts, std::chrono::steady_clock::time_point wall_start) {
  const Loaded loaded(a, restarts == 0);
  const TuneSpec t = tune_spec_of(a, loaded.plugins, loaded.kernels);
  const Space space = Space::from_spec(t, loaded.kernels);
  if (restarts == 0) print_widened(space);

  // A space no GPU runs (every point past a dtype or a limit at these sizes) fails every point:
  // said before a GPU is opened, as `gpuk check` says it.
  const Problem problem = problem_of(t.run);
  if (const auto why = space.why_no_gpu_runs(loaded.plugins.get(t.run.family).template_args(problem), problem))
    throw ConfigError((a.config ? a.config->string() + ": " : std::string()) + "no point of the space can run on any GPU: " + *why);
  Device device(a.device);
  SweepOptions options = sweep_options_of(a);
  ProgressBar bar;
  options.progress = [&](const Progress& p) { bar(p); };
  const auto sweep_start = std::chrono::steady_clock::now();
  TuneReport report = sweep_on_gpu(t, space, {loaded.runtime}, device, options);
  report.times.start = std::chrono::duration<double>(sweep_start - wall_start).count();
  bar.finish();
  if (report.result.context_lost) {
    // Nothing more can run in this process: the next one goes on from the journal.
    std::cerr << "gpuk: " << report.result.stopped << "; the sweep goes on in a fresh process\n";
    return kGoOnExit;
  }
  return finish_sweep(a, t, space, report, "", wall_start);
}

// `gpuk tune --devices`: the sweep on worker processes, one per GPU (tune/sweep_on_workers.hpp,
// the road of the library's tune_kernel); this process runs the strategy and prints, and never
// touches CUDA. GPUs of one model share one ranking; each model gets its own report and database
// entry.
int tune_on_workers(const TuneCommand& a, std::chrono::steady_clock::time_point wall_start) {
  const Loaded loaded(a, true);
  const TuneSpec t = tune_spec_of(a, loaded.plugins, loaded.kernels);
  const Space space = Space::from_spec(t, loaded.kernels);
  print_widened(space);
  ProgressBar bar;
  const SweepOptions sweep = sweep_options_of(a);
  WorkerSweepOptions how;
  how.devices = a.devices;
  how.threads = sweep.threads;
  how.time_limit_s = sweep.time_limit_s;
  how.journal_dir = sweep.journal_dir;
  how.run_id = sweep.run_id;
  how.fresh = sweep.fresh;
  how.progress = [&](const Progress& p) { bar(p); };
  how.note = [](const std::string& note) { std::cerr << "gpuk: note: " << note << "\n"; };
  std::vector<ModelSweep> sweeps = sweep_on_workers(loaded.runtime, t, space, how, wall_start);
  bar.finish();
  int status = 0;
  for (ModelSweep& m : sweeps) {
    const std::string suffix = sweeps.size() > 1 ? "-gpu" + std::to_string(m.first_ordinal) : "";
    status = std::max(status, finish_sweep(a, t, space, m.report, suffix, wall_start));
  }
  return status;
}

fs::path matrix_out(const TuneCommand& a);
int finish_matrix(const TuneCommand& a, const TuneMatrix& matrix, const MatrixResults& results, std::size_t left);

// One process's part of a tuning matrix (tune/matrix/matrix.hpp): every cell without a result,
// in order, swept on the GPU as tune_sweep sweeps one config, with the library baseline timed
// after it. A variant that takes the CUDA context down ends the process (kGoOnExit); the next one
// goes on with that cell from the journal.
int tune_matrix_process(const TuneCommand& a, int restarts,
                        std::chrono::steady_clock::time_point wall_start) {
  const Loaded loaded(a, restarts == 0);
  const PluginRegistry& plugins = loaded.plugins;
  const KernelLibrary& kernels = loaded.kernels;
  if (a.json || a.csv)
    throw ConfigError("a tuning matrix writes one report per cell under --out DIR (reports/); --json and --csv are "
                      "for a single sweep");
  TuneMatrix matrix = load_tune_matrix(*a.config, plugins, kernels);
  for (auto& cell : matrix.cells) apply_tune_args(cell.spec, a);
  const std::size_t all_cells = matrix.cells.size();
  if (!a.shard.empty()) matrix = shard_of(matrix, parse_shard(a.shard));
  const MatrixResults results(matrix_out(a));
  if (restarts == 0) {
    const MatrixPlan plan = plan_matrix(matrix, results);
    std::cout << "gpuk tune: matrix " << a.config->string() << ": ";
    if (!a.shard.empty()) std::cout << "shard " << a.shard << ", " << matrix.cells.size() << " of " << all_cells << " cells";
    else std::cout << matrix.cells.size() << " cells";
    std::cout << " of " << matrix.family
              << "; " << plan.reused << " measured before and reused, " << plan.to_run() << " to measure";
    if (plan.stale) std::cout << " (" << plan.stale << " measured with other settings)";
    if (plan.failed_before) std::cout << " (" << plan.failed_before << " failed before, tried again)";
    if (plan.unusable) std::cout << " (" << plan.unusable << " cell files unusable, measured over)";
    std::cout << "; results in " << results.dir().string() << "\n";
  }

  std::size_t missing = 0, left = 0;
  for (const auto& cell : matrix.cells) missing += results.read(cell) ? 0 : 1;
  if (missing > 0) {
    const fs::path db_path = a.tuning_db;
    Device device(a.device);
    const RunContext context{loaded.runtime};
    const CellSweep sweep = [&](const MatrixCell& cell) {
      const auto start = std::chrono::steady_clock::now();
      const Space space = Space::from_spec(cell.spec, kernels);
      // A cell whose sweep a fault cut short goes on from the journal in the next process.
      SweepOptions options = sweep_options_of(a);
      options.baseline = true;
      ProgressBar bar;
      options.progress = [&](const Progress& p) { bar(p); };
      TuneReport report;
      try {
        report = sweep_on_gpu(cell.spec, space, context, device, options);
      } catch (const ConfigError&) {
        throw;  // the cell fails; the GPU is fine
      } catch (const Error& e) {
        // A CUDA error outside a variant (the data did not fit, the baseline failed): the cell
        // fails, and the matrix goes on in a fresh process in case the context went with it.
        bar.finish();
        results.write(cell, failed_cell(cell, e.what()));
        std::cerr << "gpuk: " << cell.id << ": " << e.what() << "; the matrix goes on in a fresh process\n";
        throw ContextLost(e.what(), {});
      }
      bar.finish();
      if (report.result.context_lost || report.result.aborted) {
        // Nothing more can run in this process: the next one goes on from here (an aborted
        // cell is recorded as failed and not tried again in this run).
        if (!report.result.context_lost) results.write(cell, failed_cell(cell, report.result.stopped));
        std::cerr << "gpuk: " << cell.id << ": " << report.result.stopped << "; the matrix goes on in a fresh process\n";
        throw ContextLost(report.result.stopped, {});
      }
      report.wall_seconds = report.times.total =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      fs::create_directories(results.report_path(cell).parent_path());
      write_tune_json(results.report_path(cell), report);
      CellResult r = cell_result(cell, report, space);
      if (r.winner && cell.spec.save) TuningDb::merge_into(db_path, {*r.winner});
      return r;
    };
    const auto progress = [](const MatrixProgress& p) {
      if (!p.result) return;
      const CellResult& r = *p.result;
      std::cout << "  cell " << p.position << "/" << p.total << "  " << p.cell->id << ": ";
      if (r.winner)
        std::cout << r.winner_label << " " << ms_text(r.winner->median_ms);
      else
        std::cout << cell_status_name(r.status) << " (" << r.message << ")";
      if (!r.baseline.empty()) std::cout << "; " << r.baseline << " " << ms_text(r.baseline_ms);
      if (r.speedup() > 0) std::cout << "; " << fixed(r.speedup(), 2) << "x";
      std::cout << "  (" << fixed(r.seconds, 1) << " s)\n" << std::flush;
    };
    const auto stop = [&] {
      return a.stop_after &&
             std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count() >= *a.stop_after;
    };
    try {
      left = run_matrix(matrix, results, sweep, progress, stop).left;
    } catch (const ContextLost&) {
      return kGoOnExit;
    }
    if (left > 0)
      std::cout << "gpuk tune: --stop-after " << *a.stop_after << " s reached: " << left
                << " cells left; the same command measures them\n";
  }

  return finish_matrix(a, matrix, results, left);
}

// `gpuk tune MATRIX --merge DIR...`: the shards' results directories into --out, then the tally
// and --export as after a run. No GPU.
int tune_merge(const TuneCommand& a) {
  const Loaded loaded(a, true);
  const KernelLibrary& kernels = loaded.kernels;
  TuneMatrix matrix = load_tune_matrix(*a.config, loaded.plugins, kernels);
  for (auto& cell : matrix.cells) apply_tune_args(cell.spec, a);  // the fingerprints the shards ran with
  const MatrixResults results(matrix_out(a));
  const MergeSummary m = merge_matrix_results(matrix, a.merge, results);
  std::cout << "gpuk tune: merged " << a.merge.size() << " director" << (a.merge.size() == 1 ? "y" : "ies") << " into "
            << results.dir().string() << ": " << m.cells << " of " << matrix.cells.size() << " cells";
  if (m.duplicates) std::cout << " (" << m.duplicates << " found more than once: the best kept)";
  if (m.stale) std::cout << "; " << m.stale << " cell files of other settings ignored";
  std::cout << "; " << m.reports << " reports, " << m.journal_lines << " journal lines\n";
  if (m.gpus.size() > 1)
    std::cout << "gpuk tune: note: the cells were measured on " << m.gpus.size()
              << " GPU models: " << terminal_text(join(m.gpus), 4096) << "\n";  // names from the cell files
  if (!m.missing.empty())
    std::cerr << "gpuk: " << m.missing.size() << " cell" << (m.missing.size() == 1 ? "" : "s")
              << " without a result in any directory, e.g. " << m.missing.front() << "\n";
  std::cerr << describe_refused(m);  // a file not merged fails the merge, even where another had the cell
  const int status = finish_matrix(a, matrix, results, 0);
  if (m.refused.empty() || a.allow_missing) return status;
  if (status == 0)
    std::cerr << "gpuk: " << m.refused.size() << " cell file" << (m.refused.size() == 1 ? "" : "s")
              << " not merged (above): the merge fails; --allow-missing accepts them\n";
  return 1;
}

// A matrix's results directory: --out, or with --shard K/N CONFIG-results/shard-K-of-N, else
// CONFIG-results (CONFIG's name without its extension).
fs::path matrix_out(const TuneCommand& a) {
  if (a.out) return *a.out;
  const fs::path base(a.config->stem().string() + "-results");
  if (a.shard.empty()) return base;
  const Shard s = parse_shard(a.shard);
  return base / ("shard-" + std::to_string(s.index) + "-of-" + std::to_string(s.count));
}

// The tally of a matrix's cells (by status, and "missing"), printed; --export of the winners; the
// exit status: 1 when a cell has no usable result (missing beyond the `left` that --stop-after
// left, failed, unusable, refused) or the export refused one, unless --allow-missing.
int finish_matrix(const TuneCommand& a, const TuneMatrix& matrix, const MatrixResults& results, std::size_t left) {
  const auto tally = matrix_tally(matrix, results);
  std::cout << "gpuk tune: matrix done:";
  for (const auto& [status, count] : tally)
    if (count > 0 || status != "missing") std::cout << " " << count << " " << status << ";";
  std::cout << " results in " << results.dir().string() << "\n";
  // Cells of input kinds: each group's choice (the best mean ratio among the variants whose worst
  // ratio over the kinds is within the tolerance of the best), and per kind the choice's ratio
  // beside the kind's own winner's.
  for (const auto& c : kind_choices(matrix, results)) {
    std::cout << "  " << c.group << ": ";
    if (!c.why_not.empty()) {
      std::cout << "no choice (" << c.why_not << ")\n";
      continue;
    }
    std::cout << c.chosen.label << ", worst " << fixed(c.worst, 3) << "x (" << c.worst_kind << ")";
    if (c.worst < c.best_worst) std::cout << ", the best worst " << fixed(c.best_worst, 3) << "x";
    std::cout << ":";
    for (const auto& k : c.kinds)
      std::cout << " " << k.name << " " << fixed(k.ratio, 2) << "x (best " << fixed(k.winner_ratio, 2) << "x)";
    std::cout << "\n";
  }
  bool fails = failing_cells(tally) > left;
  if (a.export_file) {
    const MatrixExport e = export_matrix(matrix, results);
    TuningDb::merge_into(*a.export_file, e.entries);
    std::cout << terminal_text(describe_export(e, a.export_file->string()), 1 << 20);
    for (const auto& s : e.skipped) fails = fails || (s.fails() && s.why != SkippedCell::Why::not_measured);
  }
  if (fails && a.allow_missing)
    std::cerr << "gpuk: warning: cells without a usable result (above); --allow-missing: exit status 0\n";
  else if (fails)
    std::cerr << "gpuk: cells without a usable result (above): the command fails; --allow-missing accepts them\n";
  return fails && !a.allow_missing ? 1 : 0;
}

}  // namespace

// `gpuk tune`: a sweep or a matrix's cells in a child process (a sweep over several GPUs on worker
// processes: tune_on_workers), forked before this one touches CUDA. A variant that faults or hangs leaves its
// process's CUDA context unusable for good; the process then writes what it measured and exits
// with kGoOnExit, and a fresh one goes on from there (the faulted variant recorded, never
// measured again).
int run_tune_command(const TuneCommand& a, const ErrorGuard& guard) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (!a.config) {
    if (!a.merge.empty()) throw ConfigError("--merge needs the tuning matrix's CONFIG: gpuk tune MATRIX --merge DIR...");
    if (!a.export_file) throw ConfigError("gpuk tune needs a CONFIG to sweep, or --export FILE to write the database");
    export_db(a.tuning_db, *a.export_file, a.family, "", "");
    return 0;
  }
  const bool matrix = is_tune_matrix_file(*a.config);  // a tuning matrix: `operations:` lists its cells
  if ((!a.shard.empty() || !a.merge.empty()) && !matrix)
    throw ConfigError(a.config->string() + ": --shard and --merge split and join a tuning matrix's cells; this is a "
                      "single sweep (spread it over GPUs with --devices)");
  if (!a.shard.empty() && !a.merge.empty()) throw ConfigError("--shard runs a share of the cells and --merge joins the shares: one at a time");
  if (a.export_file) TuningDb::check_ours(*a.export_file);  // refused before the sweep, not after it
  if (!a.merge.empty()) return tune_merge(a);
  if (!a.shard.empty()) (void)parse_shard(a.shard);  // a mistake is said before anything runs
  if (!a.devices.empty() && a.devices != "all")       // the list's words, before any GPU is asked
    (void)parse_device_list(a.devices, std::numeric_limits<int>::max());
  // The journal: in the cache directory, so that a sweep run again or cut short goes on; with
  // --no-cache, a temporary one that lasts this sweep (its processes still share it).
  TuneCommand args = a;
  args.run_id = make_run_id();
  struct Remove {
    fs::path path;
    ~Remove() {
      std::error_code ec;
      if (!path.empty()) fs::remove_all(path, ec);
    }
  } remove_journal;
  if (!a.shard.empty()) {
    args.journal_dir = matrix_out(a) / "journal";  // travels with the shard's results (--merge joins them)
  } else if (const auto dir = a.cache_dir) {
    args.journal_dir = *dir / "tune-journal";
  } else {
    char name[] = "/tmp/gpuk-tune-journal-XXXXXX";
    if (!::mkdtemp(name)) throw Error("cannot create a temporary directory for the journal of the sweep");
    args.journal_dir = remove_journal.path = name;
  }
  if (!a.devices.empty()) {
    if (matrix) throw ConfigError(a.config->string() + ": --devices sweeps one tune config, not a tuning matrix");
    return tune_on_workers(args, wall_start);
  }
  // One GPU: the whole sweep in a child process per CUDA context (tune_sweep), where the device's
  // memory is checked before any data is made, energy is measured and a `baseline:` kernel timed.
  return run_isolated([&](int restarts) {
    return guard([&] {
      return matrix ? tune_matrix_process(args, restarts, wall_start) : tune_sweep(args, restarts, wall_start);
    });
  });
}

}  // namespace gpuk
