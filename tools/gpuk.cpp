// The gpuk command line: parses arguments and calls core. Nothing here knows a family.
#include <CLI/CLI.hpp>

#include <execinfo.h>
#include <unistd.h>

#include <sys/wait.h>

#include <cerrno>
#include <csignal>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "gpuk/config.hpp"
#include "gpuk/device.hpp"
#include "gpuk/error.hpp"
#include "gpuk/jit.hpp"
#include "gpuk/kernel_file.hpp"
#include "gpuk/plugin.hpp"
#include "gpuk/prepare.hpp"
#include "gpuk/runner.hpp"
#include "gpuk/text.hpp"
#include "gpuk/tune.hpp"
#include "gpuk/tune_journal.hpp"

namespace fs = std::filesystem;
using namespace gpuk;

namespace {

struct Global {
  std::vector<fs::path> kernels, plugins;
  std::optional<fs::path> cache_dir;
  std::optional<fs::path> tuning_db;
  bool no_cache = false;
};

fs::path tuning_db_path(const Global& g) { return g.tuning_db ? *g.tuning_db : TuningDb::default_path(); }

std::optional<fs::path> cache_dir(const Global& g) {
  if (g.no_cache) return std::nullopt;
  return g.cache_dir ? *g.cache_dir : CompileCache::default_dir();
}

void print_load_problems(const PluginRegistry& plugins, const KernelLibrary& kernels) {
  for (const auto& e : plugins.errors()) std::cerr << "gpuk: warning: " << e << "\n";
  for (const auto& e : kernels.errors()) std::cerr << "gpuk: warning: " << e << "\n";
}

// Runs a command; an error is one line on stderr and the exit status: 2 a bad config, 4 a variant
// that faulted or ran past its time limit, 1 anything else (no GPU, compile error, CUDA error).
template <class Body>
int with_errors(Body&& body) {
  try {
    return body();
  } catch (const FaultError& e) {
    std::cerr << "gpuk: " << e.what() << "\n";
    return 4;
  } catch (const TimeLimitError& e) {
    std::cerr << "gpuk: " << e.what() << "\n";
    return 4;
  } catch (const NoDeviceError& e) {
    std::cerr << "gpuk: " << e.what() << ".\n";
    return 1;
  } catch (const ConfigError& e) {
    std::cerr << "gpuk: " << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "gpuk: " << e.what() << "\n";
    return 1;
  }
}

int cmd_list(const Global& g) {
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  std::cout << "Families (plugins):\n";
  if (plugins.all().empty()) std::cout << "  (none found)\n";
  for (const FamilyPlugin* p : plugins.all()) {
    std::vector<std::string> dtypes;
    for (DType t : p->dtypes()) dtypes.emplace_back(dtype_name(t));
    std::cout << "  " << p->name() << "  " << p->description() << "\n"
              << "    plugin      " << plugins.path_of(p->name()).string() << "\n"
              << "    operations  " << join(p->operations()) << "\n"
              << "    dtypes      " << join(dtypes) << "\n";
    for (const auto& o : p->options())
      std::cout << "    option      " << o.name << " (default " << o.default_value << "): " << o.help << "\n";
    std::cout << "    default kernel  " << p->default_kernel() << "\n";
  }
  std::cout << "\nKernel files (from " << kernels.dirs().size() << " director"
            << (kernels.dirs().size() == 1 ? "y" : "ies") << "):\n";
  std::set<std::string> families;
  for (const auto& f : kernels.files()) families.insert(f->family);
  for (const auto& family : families) {
    std::cout << "  " << family << (plugins.find(family) ? "" : "  (no plugin loaded for this family)") << "\n";
    for (const auto& f : kernels.family(family)) {
      std::cout << "    " << f->name << "  " << f->path.string() << "\n";
      if (!f->summary.empty()) std::cout << "      " << f->summary << "\n";
      std::cout << "      operations: " << join(f->operations) << "\n";
      for (const auto& p : f->params) {
        std::vector<std::string> values;
        for (auto v : p.values) values.push_back(std::to_string(v));
        std::cout << "      param " << p.name << " = " << p.default_value << "  (allowed: " << join(values) << ")\n";
      }
      for (const auto& c : f->constraints) std::cout << "      constraint " << c.expr.text() << "\n";
    }
  }
  if (!kernels.errors().empty() || !plugins.errors().empty()) {
    std::cout << "\nProblems:\n";
    for (const auto& e : plugins.errors()) std::cout << "  " << e << "\n";
    for (const auto& e : kernels.errors()) std::cout << "  " << e << "\n";
  }
  return 0;
}

// The GPU's description when there is one (`check` then compiles for it and plans for it).
std::optional<DeviceInfo> gpu_info() {
  std::string why;
  if (device_count(&why) > 0) {
    try {
      return Device(0).info();
    } catch (const Error&) {
    }
  }
  return std::nullopt;
}

int cmd_check(const Global& g, const std::vector<std::string>& targets, const std::string& arch_option) {
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  const CompileCache cache(cache_dir(g));
  const std::optional<DeviceInfo> gpu = gpu_info();
  JitOptions options;
  options.arch = !arch_option.empty() ? arch_option : gpu ? gpu->arch() : "sm_90";
  options.include_dirs = kernels.include_dirs();
  const Jit jit(options, &cache);

  int failures = 0;
  const auto check_file = [&](const KernelFile& file, const std::vector<std::vector<std::string>>& arg_sets,
                              const std::map<std::string, std::int64_t>& params) {
    std::vector<std::string> names;
    const auto shared = std::make_shared<const KernelFile>(file);
    for (const auto& args : arg_sets)
      for (const auto& name : kernel_names(Variant(shared, args, params))) names.push_back(name);
    const CompiledVariant c = compile_variant(file, names, jit);
    std::cout << "ok    " << file.path.string() << ": " << names.size() << " kernels for " << options.arch << " ("
              << (c.from_cache ? "cached" : std::to_string(static_cast<int>(c.ms)) + " ms") << ")\n";
    if (!c.kernels->log.empty()) std::cout << c.kernels->log << "\n";
  };
  const auto guarded = [&](const std::string& what, auto&& body) {
    try {
      body();
    } catch (const Error& e) {
      ++failures;
      std::cout << "FAIL  " << what << "\n" << e.what() << "\n";
    }
  };

  std::vector<std::string> todo = targets;
  if (todo.empty()) {
    for (const auto& f : kernels.files()) todo.push_back(f->path.string());
    for (const auto& e : kernels.errors()) {
      ++failures;
      std::cout << "FAIL  " << e << "\n";
    }
  }
  for (const auto& target : todo) {
    guarded(target, [&] {
      const fs::path path(target);
      if (path.extension() == ".yaml" || path.extension() == ".yml") {
        // The variant a run would choose: on this GPU, or (no GPU) by the architecture alone.
        const RunSpec spec = load_run_spec(path, plugins, kernels);
        const FamilyPlugin& plugin = plugins.get(spec.family);
        const Problem problem = problem_of(spec);
        const DeviceInfo info = gpu && gpu->arch() == options.arch ? *gpu : device_of_arch(options.arch);
        const TuningSources tuning = tuning_sources(spec, kernels, g.tuning_db, options.arch);
        const Choice choice = choose_variant(problem, variant_request(spec), plugin, kernels, info, tuning,
                                             /*check_plans=*/info.sm_count > 0);
        for (const auto& w : tuning.warnings) std::cerr << "gpuk: warning: " << w << "\n";
        for (const auto& w : choice.warnings) std::cerr << "gpuk: warning: " << w << "\n";
        check_file(*choice.file, {plugin.template_args(problem)}, choice.params);
      } else {
        const KernelFile file = KernelFile::load(path);
        const FamilyPlugin& plugin = plugins.get(file.family);
        check_file(file, plugin.all_template_args(file), {});
      }
    });
  }
  std::cout << (failures ? std::to_string(failures) + " failed" : "all passed") << "\n";
  return failures ? 1 : 0;
}

int cmd_run(const Global& g, const fs::path& config, const std::optional<fs::path>& json,
            const std::optional<fs::path>& csv, int device_ordinal, int repeats,
            const std::optional<fs::path>& tuning, double time_limit) {
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  print_load_problems(plugins, kernels);
  RunSpec spec = load_run_spec(config, plugins, kernels);
  if (repeats > 0) spec.repeats = repeats;
  if (tuning) {
    if (spec.pick != RunSpec::Pick::lookup)
      throw ConfigError(config.string() + ": --tuning FILE replaces the tuning database that chooses the variant of "
                                          "a config naming none; this config names its variant");
    spec.tuning_file = *tuning;
  }
  const CompileCache cache(cache_dir(g));
  Device device(device_ordinal);
  const RunReport report = run(spec, {plugins, kernels, &cache, time_limit, g.tuning_db}, device);
  for (const auto& w : report.warnings) std::cerr << "gpuk: warning: " << w << "\n";
  print_report(std::cout, report);
  if (json) write_json(*json, report);
  if (csv) write_csv(*csv, report);
  return report.verified && !report.verification.passed ? 3 : 0;
}

struct TuneArgs {
  std::optional<fs::path> config, json, csv, export_file;
  int device = 0, threads = 0, show = 0;
  std::string strategy, family, objective;
  std::optional<int> budget;
  std::optional<double> seconds;
  std::optional<std::uint64_t> seed;
  bool no_save = false, fresh = false, energy = false, auto_repeats = false;
  double time_limit = 0;
  std::string run_id;        // the journal's: one per `gpuk tune`, shared by its processes
  fs::path journal_dir;      // <cache>/tune-journal, or a temporary one with --no-cache
};

// A one-line progress bar on stderr, redrawn in place; only when stderr is a terminal.
class ProgressBar {
 public:
  ProgressBar() : enabled_(::isatty(STDERR_FILENO) != 0) {}
  ~ProgressBar() { finish(); }
  void operator()(const Progress& p) {
    if (!enabled_) return;
    const std::size_t planned = std::max<std::size_t>(p.planned, p.done);
    const int width = 30;
    const int filled = planned ? static_cast<int>(width * p.done / planned) : 0;
    std::ostringstream line;
    line << "\r  tune [" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << p.done << "/"
         << planned << "  " << std::fixed << std::setprecision(1) << p.elapsed << " s";
    if (p.done > 0 && planned > p.done)
      line << "  ETA " << p.elapsed / static_cast<double>(p.done) * static_cast<double>(planned - p.done) << " s";
    if (!p.current.empty()) line << "  " << p.current.substr(0, 40);
    std::string text = line.str();
    if (text.size() < last_) text += std::string(last_ - text.size(), ' ');
    last_ = text.size();
    std::cerr << text << std::flush;
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::cerr << "\r" << std::string(last_, ' ') << "\r" << std::flush;
    drawn_ = false;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::size_t last_ = 0;
};

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

// The exit status of a sweep's process that lost its CUDA context: go on in a fresh one.
constexpr int kGoOn = 75;

// One process's part of a sweep: from what the journal has (earlier sweeps', and this sweep's
// earlier processes') on, until the sweep ends (then the report) or a variant takes the CUDA
// context down (then kGoOn: the journal has every point measured so far).
int tune_sweep(const Global& g, const TuneArgs& a, int restarts, std::chrono::steady_clock::time_point wall_start) {
  const fs::path db_path = tuning_db_path(g);
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  if (restarts == 0) print_load_problems(plugins, kernels);
  TuneSpec t = load_tune_spec(*a.config, plugins, kernels);
  if (!a.strategy.empty()) {
    const auto s = parse_strategy(a.strategy);
    if (!s) throw ConfigError("--strategy must be exhaustive, random, anneal or bayes, not '" + a.strategy + "'");
    t.strategy = *s;
  }
  if (!a.objective.empty()) {
    const auto o = parse_objective(a.objective);
    if (!o) throw ConfigError("--objective must be time, energy or edp, not '" + a.objective + "'");
    t.objective = *o;
  }
  if (a.energy) t.energy = true;
  if (a.auto_repeats) t.auto_repeats = true;
  if (a.budget) t.budget_evaluations = *a.budget;
  if (a.seconds) t.budget_seconds = *a.seconds;
  if (a.seed) t.seed = *a.seed;
  if (a.show > 0) t.show = a.show;
  if (a.no_save) t.save = false;
  const Space space = Space::from_spec(t, kernels);
  for (const auto& f : restarts > 0 ? std::vector<SpaceFile>{} : space.files())
    for (const auto& w : f.widened)
      std::cerr << "gpuk: note: " << w << " is not in " << f.file->name
                << "'s metadata list; it is swept anyway (constraints still apply)\n";

  const CompileCache cache(cache_dir(g));
  Device device(a.device);
  SweepOptions options;
  options.threads = a.threads;
  options.time_limit_s = a.time_limit;
  options.journal_dir = a.journal_dir;
  options.run_id = a.run_id;
  options.fresh = a.fresh;
  ProgressBar bar;
  options.progress = [&](const Progress& p) { bar(p); };
  TuneReport report = sweep_on_gpu(t, space, {plugins, kernels, &cache, 0, g.tuning_db}, device, options);
  bar.finish();
  if (report.result.context_lost) {
    // Nothing more can run in this process: the next one goes on from the journal.
    std::cerr << "gpuk: " << report.result.stopped << "; the sweep goes on in a fresh process\n";
    return kGoOn;
  }

  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  print_tune_report(std::cout, report, t.show);
  if (a.json) write_tune_json(*a.json, report);
  if (a.csv) write_tune_csv(*a.csv, report);

  const auto winner = winner_entry(report, space);
  if (winner && t.save) {
    TuningDb::merge_into(db_path, {*winner});
    std::cout << "  saved    the best to " << db_path.string() << " (" << winner->key.family << " "
              << winner->key.operation << " " << winner->key.dtype << ", n in [2^" << winner->key.bucket << ", 2^"
              << winner->key.bucket + 1 << "))\n";
  }
  if (a.export_file) export_db(db_path, *a.export_file, t.run.family, t.run.operation, report.gpu);
  if (report.result.aborted) {
    std::cerr << "gpuk: " << report.result.stopped << "\n";
    return 1;
  }
  return report.result.winner() ? 0 : 3;
}

// `gpuk tune`: the sweep runs in a child process, forked before this one touches CUDA. A
// variant that faults or hangs leaves the child's CUDA context unusable for good; the child then
// writes what it measured and exits with kGoOn, and a fresh child goes on with the sweep from
// there (the faulted variant recorded, never measured again).
int cmd_tune(const Global& g, const TuneArgs& a) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (!a.config) {
    if (!a.export_file) throw ConfigError("gpuk tune needs a CONFIG to sweep, or --export FILE to write the database");
    export_db(tuning_db_path(g), *a.export_file, a.family, "", "");
    return 0;
  }
  // The journal: in the cache directory, so that a sweep run again or cut short goes on; with
  // --no-cache, a temporary one that lasts this sweep (its processes still share it).
  TuneArgs args = a;
  args.run_id = make_run_id();
  struct Remove {
    fs::path path;
    ~Remove() {
      std::error_code ec;
      if (!path.empty()) fs::remove_all(path, ec);
    }
  } remove_journal;
  if (const auto dir = cache_dir(g)) {
    args.journal_dir = *dir / "tune-journal";
  } else {
    char name[] = "/tmp/gpuk-tune-journal-XXXXXX";
    if (!::mkdtemp(name)) throw Error("cannot create a temporary directory for the journal of the sweep");
    args.journal_dir = remove_journal.path = name;
  }
  constexpr int kMostRestarts = 1000;
  for (int restarts = 0;; ++restarts) {
    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = ::fork();
    if (pid < 0) throw Error("cannot start the process of the sweep (fork failed)");
    if (pid == 0) {
      const int status = with_errors([&] { return tune_sweep(g, args, restarts, wall_start); });
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(status);  // a kernel may still run: no exit handlers that would wait for it
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == kGoOn) {
      if (restarts + 1 < kMostRestarts) continue;
      std::cerr << "gpuk: the sweep lost its CUDA context " << kMostRestarts << " times; it stops here\n";
      return 1;
    }
    if (WIFSIGNALED(status)) {
      std::cerr << "gpuk: the sweep's process died of signal " << WTERMSIG(status) << "\n";
      return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
}

// A crash of gpuk itself (not of a kernel): say so on stderr with the stack, then die of the signal.
extern "C" void crash_handler(int signal) {
  static const char message[] = "gpuk: crashed; the stack:\n";
  (void)!::write(STDERR_FILENO, message, sizeof message - 1);
  void* frames[64];
  ::backtrace_symbols_fd(frames, ::backtrace(frames, 64), STDERR_FILENO);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGSEGV, crash_handler);
  std::signal(SIGBUS, crash_handler);
  CLI::App app{"gpuk: GPU kernels compiled at run time, verified, timed and compared with CUB"};
  app.set_version_flag("--version", std::string("gpuk ") + GPUK_VERSION);
  app.require_subcommand(1);
  Global g;
  app.add_option("--kernels", g.kernels, "extra kernel directory (repeatable; also $GPUK_KERNELS)")->type_name("DIR");
  app.add_option("--plugins", g.plugins, "extra plugin directory (repeatable; also $GPUK_PLUGINS)")->type_name("DIR");
  app.add_option("--cache-dir", g.cache_dir, "compile cache directory (default: $GPUK_CACHE_DIR or ~/.cache/gpuk)")
      ->type_name("DIR");
  app.add_flag("--no-cache", g.no_cache, "compile without the on-disk cache");
  app.add_option("--tuning-db", g.tuning_db,
                 "tuning database (default: $GPUK_TUNING_DB or tuning/tuning.json in the cache directory)")
      ->type_name("FILE");
  bool allow_unsafe_dirs = false;
  app.add_flag("--allow-unsafe-dirs", allow_unsafe_dirs,
               "use plugin, kernel and cache directories that other users can write (also $GPUK_ALLOW_UNSAFE_DIRS=1)");

  auto* run = app.add_subcommand("run", "run one config: upload, JIT, launch, verify, report");
  fs::path config;
  std::optional<fs::path> json, csv;
  int device_ordinal = 0, repeats = 0;
  run->add_option("CONFIG", config, "YAML config (see README.md)")->required()->check(CLI::ExistingFile);
  run->add_option("--json", json, "also write the report as JSON")->type_name("FILE");
  run->add_option("--csv", csv, "also write the report as CSV")->type_name("FILE");
  run->add_option("--device", device_ordinal, "GPU ordinal")->check(CLI::NonNegativeNumber);
  run->add_option("--repeats", repeats, "timed repeats (overrides the config)")->check(CLI::PositiveNumber);
  std::optional<fs::path> tuning;
  run->add_option("--tuning", tuning, "choose the variant from this tuning file instead of the database (a config naming no kernel)")
      ->type_name("FILE");
  double run_time_limit = 0;
  const std::string time_limit_help = "seconds one run of a variant may take before it is abandoned (default " +
                                      std::to_string(static_cast<int>(kDefaultTimeLimitSeconds)) +
                                      ", plus 1 per GB the workload moves)";
  run->add_option("--time-limit", run_time_limit, time_limit_help)->check(CLI::PositiveNumber)->type_name("SECONDS");

  auto* tune_cmd = app.add_subcommand("tune", "sweep kernel parameters: verify, time, rank, keep the best (docs/tuning.md)");
  TuneArgs ta;
  tune_cmd->add_option("CONFIG", ta.config, "tune config (YAML; see docs/tuning.md)")->check(CLI::ExistingFile);
  tune_cmd->add_option("--json", ta.json, "write every variant's result as JSON")->type_name("FILE");
  tune_cmd->add_option("--csv", ta.csv, "write every variant's result as CSV")->type_name("FILE");
  tune_cmd->add_option("--device", ta.device, "GPU ordinal")->check(CLI::NonNegativeNumber);
  tune_cmd->add_option("--strategy", ta.strategy, "exhaustive, random, anneal or bayes (overrides the config)");
  tune_cmd->add_option("--objective", ta.objective,
                       "rank by time, energy (per call) or edp (energy x delay); energy needs NVML (overrides the config)");
  tune_cmd->add_flag("--energy", ta.energy, "measure energy, power and SM clock (NVML) whatever the objective");
  tune_cmd->add_flag("--auto-repeats", ta.auto_repeats,
                     "time each variant until its median is known within 1% (repeats: auto)");
  tune_cmd->add_flag("--fresh", ta.fresh, "measure every point again, ignoring the journal of earlier sweeps");
  tune_cmd->add_option("--budget", ta.budget, "most variants to measure (overrides the config)")
      ->check(CLI::PositiveNumber);
  tune_cmd->add_option("--seconds", ta.seconds, "time budget of the sweep (overrides the config)")
      ->check(CLI::PositiveNumber);
  tune_cmd->add_option("--seed", ta.seed, "seed of random and anneal (overrides the config)");
  tune_cmd->add_option("--threads", ta.threads, "compile threads (default: every core)")->check(CLI::PositiveNumber);
  tune_cmd->add_option("--show", ta.show, "rows of the ranked table (overrides the config)")->check(CLI::PositiveNumber);
  tune_cmd->add_flag("--no-save", ta.no_save, "do not write the best variant to the tuning database");
  tune_cmd->add_option("--time-limit", ta.time_limit, time_limit_help)->check(CLI::PositiveNumber)->type_name("SECONDS");
  tune_cmd->add_option("--export", ta.export_file,
                       "write the tuning database as JSON (with CONFIG: its family and operation on this GPU)")
      ->type_name("FILE");
  tune_cmd->add_option("--family", ta.family, "with --export and no CONFIG: only this family");

  app.add_subcommand("list", "list families, plugins, kernel files and their parameters");

  auto* check = app.add_subcommand("check", "compile kernel files or configs with NVRTC (no GPU needed)");
  std::vector<std::string> targets;
  std::string arch;
  check->add_option("TARGETS", targets, "configs (.yaml) or kernel files (.cu); default: every kernel file");
  check->add_option("--arch", arch, "GPU architecture, e.g. sm_90 (default: this GPU's, or sm_90)")
      ->type_name("sm_XX");

  CLI11_PARSE(app, argc, argv);
  if (allow_unsafe_dirs) ::setenv("GPUK_ALLOW_UNSAFE_DIRS", "1", 1);  // core reads it (gpuk/safe_dirs.hpp)
  const int status = with_errors([&] {
    if (run->parsed()) return cmd_run(g, config, json, csv, device_ordinal, repeats, tuning, run_time_limit);
    if (tune_cmd->parsed()) return cmd_tune(g, ta);
    if (check->parsed()) return cmd_check(g, targets, arch);
    return cmd_list(g);
  });
  if (device_hung()) {
    // A kernel abandoned past its time limit may still run: leave at once, without the driver's
    // exit handlers, which would wait for it; the kernel dies with the process.
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(status);
  }
  return status;
}
