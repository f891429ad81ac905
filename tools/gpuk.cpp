// The gpuk command line: parses arguments and calls core. Nothing here knows a family.
#include <CLI/CLI.hpp>

#include <execinfo.h>
#include <unistd.h>

#include <sys/wait.h>

#include <cerrno>
#include <csignal>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "run/compare.hpp"
#include "run/device.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "run/side_by_side.hpp"
#include "tune/journal.hpp"
#include "tune/matrix.hpp"
#include "tune/pool.hpp"
#include "tune/sweep.hpp"
#include "util/text.hpp"

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
  for (const auto& e : plugins.errors()) std::cerr << "gpuk: warning: " << terminal_text(e, 4096) << "\n";
  for (const auto& e : kernels.errors()) std::cerr << "gpuk: warning: " << terminal_text(e, 4096) << "\n";
}

// The exit status of every command (README.md, "Exit status").
enum Exit : int {
  kOk = 0,
  kError = 1,         // anything below does not cover: a compile error, a CUDA error, a file not written
  kBadInput = 2,      // a bad config, kernel file metadata, argument or command line
  kWrongAnswer = 3,   // run: verification failed; tune: no variant verified
  kFaulted = 4,       // a variant faulted or ran past its time limit
  kNoGpu = 5,         // no NVIDIA driver or no GPU: nothing could run
  kSlower = 6,        // compare: a row slower than the threshold, or timed in A and not in B
};

// One line on stderr, "gpuk: " before it unless the message names gpuk itself. A message may
// quote what the user gave: control bytes are escaped and it stops after 4 KB (a compile log's
// first errors are the ones that matter).
void print_error(const std::string& what, const char* end = "\n") {
  const bool named = what.rfind("gpuk ", 0) == 0 || what.rfind("gpuk: ", 0) == 0;
  std::cerr << (named ? "" : "gpuk: ") << terminal_text(what, 4096) << end;
}

// Runs a command; an error is one line on stderr and its exit status (enum Exit).
template <class Body>
int with_errors(Body&& body) {
  try {
    return body();
  } catch (const FaultError& e) {
    print_error(e.what());
    return kFaulted;
  } catch (const TimeLimitError& e) {
    print_error(e.what());
    return kFaulted;
  } catch (const NoDeviceError& e) {
    print_error(e.what(), ".\n");
    return kNoGpu;
  } catch (const ConfigError& e) {
    print_error(e.what());
    return kBadInput;
  } catch (const Error& e) {
    print_error(e.what());
    return kError;
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
      std::vector<std::string> dtypes;
      for (DType t : f->dtypes) dtypes.emplace_back(dtype_name(t));
      std::cout << "      dtypes: " << join(dtypes) << "\n";
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
    for (const auto& e : plugins.errors()) std::cout << "  " << terminal_text(e, 4096) << "\n";
    for (const auto& e : kernels.errors()) std::cout << "  " << terminal_text(e, 4096) << "\n";
  }
  if (plugins.all().empty()) {
    print_error("no family plugin loaded, so nothing can run (the plugin directories: " +
                join([&] {
                  std::vector<std::string> dirs;
                  for (const auto& d : plugin_dirs(g.plugins)) dirs.push_back(d.string());
                  return dirs;
                }()) +
                "; add one with --plugins DIR)");
    return kError;
  }
  return kOk;
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

  int failures = 0, bad_input = 0;
  const auto check_file = [&](const KernelFile& file, const std::vector<std::vector<std::string>>& arg_sets,
                              const std::map<std::string, std::int64_t>& params) {
    std::vector<std::string> names;
    const auto shared = std::make_shared<const KernelFile>(file);
    for (const auto& args : arg_sets)
      for (const auto& name : kernel_names(Variant(shared, args, params))) names.push_back(name);
    const CompiledVariant c = compile_variant(file, names, jit);
    std::cout << "ok    " << file.path.string() << ": " << names.size() << (names.size() == 1 ? " kernel" : " kernels")
              << " for " << options.arch << " ("
              << (c.from_cache ? "cached" : std::to_string(static_cast<int>(c.ms)) + " ms") << ")\n";
    if (!c.kernels->log.empty()) std::cout << c.kernels->log << "\n";
  };
  const auto guarded = [&](const std::string& what, auto&& body) {
    try {
      body();
    } catch (const ConfigError& e) {
      ++failures, ++bad_input;
      std::cout.flush();  // failures go to stderr, in order with the ok lines
      std::cerr << "FAIL  " << terminal_text(what, 400) << "\n" << terminal_text(e.what(), 4096) << "\n";
    } catch (const Error& e) {
      ++failures;
      std::cout.flush();  // failures go to stderr, in order with the ok lines
      std::cerr << "FAIL  " << terminal_text(what, 400) << "\n" << terminal_text(e.what(), 4096) << "\n";
    }
  };

  std::vector<std::string> todo = targets;
  if (todo.empty()) {
    for (const auto& f : kernels.files()) todo.push_back(f->path.string());
    for (const auto& e : kernels.errors()) {
      ++failures, ++bad_input;
      std::cerr << "FAIL  " << terminal_text(e, 4096) << "\n";
    }
  }
  for (const auto& target : todo) {
    guarded(target, [&] {
      const fs::path path(target);
      if (path.extension() == ".yaml" || path.extension() == ".yml") {
        const ConfigKind kind = config_kind_of_file(path);
        if (kind != ConfigKind::run) {
          // A tune config or tuning matrix: read as `gpuk tune` reads it, each space's points
          // counted (and, on a GPU of this architecture, planned); `gpuk tune` compiles them.
          std::vector<TuneSpec> specs;
          if (kind == ConfigKind::matrix)
            for (auto& cell : load_tune_matrix(path, plugins, kernels).cells) specs.push_back(std::move(cell.spec));
          else
            specs.push_back(load_tune_spec(path, plugins, kernels));
          std::uint64_t points = 0, runnable = 0;
          const bool plan = gpu && gpu->arch() == options.arch;
          for (const auto& spec : specs) {
            const Space space = Space::from_spec(spec, kernels);
            const Problem problem = problem_of(spec.run);
            const std::vector<std::string> args = plugins.get(spec.run.family).template_args(problem);
            std::uint64_t here = 0;
            for (std::uint64_t i = 0; i < space.size(); ++i)
              here += !plan || !space.prune(space.at(i), args, launch_limits(problem, *gpu));
            if (here == 0)
              throw ConfigError(path.string() + ": no point of the space" +
                                (specs.size() > 1 ? " of cell " + std::to_string(&spec - specs.data() + 1) : "") +
                                " can run on this " + options.arch + " GPU (every one breaks a constraint or limit)");
            points += space.size();
            runnable += here;
          }
          std::cout << "ok    " << path.string() << ": "
                    << (kind == ConfigKind::matrix ? "tuning matrix of " + std::to_string(specs.size()) + " cells, "
                                                   : std::string("tune config, "))
                    << points << " points" << (plan ? " (" + std::to_string(runnable) + " run on this GPU)" : "")
                    << "; gpuk tune compiles them\n";
          return;
        }
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
        check_operations(file, plugin.operations());
        check_file(file, plugin.all_template_args(file), {});
      }
    });
  }
  std::cout << (failures ? std::to_string(failures) + " failed" : "all passed") << "\n";
  // A bad config or kernel file is 2, as `run` says of it; a compile error 1.
  return bad_input ? kBadInput : failures ? kError : kOk;
}

struct RunArgs {
  fs::path config;
  std::optional<fs::path> json, csv, markdown, tuning, input, output;
  int device = 0, repeats = 0;
  double time_limit = 0;
  bool no_pin = false;
  std::string devices;  // --devices all|0,1,...
};

int cmd_run(const Global& g, const RunArgs& a) {
  const fs::path& config = a.config;
  const std::optional<fs::path>& tuning = a.tuning;
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  print_load_problems(plugins, kernels);
  RunSpec spec = load_run_spec(config, plugins, kernels, a.input);
  if (a.output) spec.output = *a.output;
  if (a.no_pin) ::setenv("GPUK_NO_PIN", "1", 1);  // core reads it (HostArray::pin)
  if (a.repeats > 0) spec.repeats = a.repeats;
  if (tuning) {
    if (spec.pick != RunSpec::Pick::lookup)
      throw ConfigError(config.string() + ": --tuning FILE replaces the tuning database that chooses the variant of "
                                          "a config naming none; this config names its variant");
    spec.tuning_file = *tuning;
  }
  const CompileCache cache(cache_dir(g));
  if (!a.devices.empty()) {
    // The same config on each GPU, one after another, side by side.
    std::string why;
    const int count = device_count(&why);
    if (count == 0) throw NoDeviceError(why);
    std::vector<DeviceRun> runs;
    bool wrong = false;
    const std::vector<int> ordinals = parse_device_list(a.devices, count);
    if (std::set<int>(ordinals.begin(), ordinals.end()).size() < ordinals.size())
      throw ConfigError("--a.devices " + a.devices + " names a GPU more than once");
    for (int ordinal : ordinals) {
      DeviceRun r;
      r.ordinal = ordinal;
      try {
        Device device(ordinal);
        r.report = run(spec, {plugins, kernels, &cache, a.time_limit, g.tuning_db}, device);
        for (const auto& w : r.report->warnings) std::cerr << "gpuk: warning: GPU " << ordinal << ": " << w << "\n";
        const std::string suffix = "-gpu" + std::to_string(ordinal);
        const auto with_suffix = [&](const fs::path& p) {
          return p.parent_path() / (p.stem().string() + suffix + p.extension().string());
        };
        if (a.json) write_json(with_suffix(*a.json), *r.report);
        if (a.csv) write_csv(with_suffix(*a.csv), *r.report);
        wrong = wrong || (r.report->verified && !r.report->verification.passed);
      } catch (const ConfigError&) {
        throw;  // the same on every GPU
      } catch (const Error& e) {
        r.error = e.what();
        wrong = true;
      }
      runs.push_back(std::move(r));
    }
    print_side_by_side(std::cout, config.string(), runs);
    return wrong ? kWrongAnswer : kOk;
  }
  Device device(a.device);
  const RunReport report = run(spec, {plugins, kernels, &cache, a.time_limit, g.tuning_db}, device);
  for (const auto& w : report.warnings) std::cerr << "gpuk: warning: " << w << "\n";
  print_report(std::cout, report);
  if (a.json) write_json(*a.json, report);
  if (a.csv) write_csv(*a.csv, report);
  if (a.markdown) write_markdown(*a.markdown, report);
  return report.verified && !report.verification.passed ? kWrongAnswer : kOk;
}

int cmd_compare(const fs::path& a, const fs::path& b, double threshold_percent, bool markdown) {
  const Comparison c = compare_reports(a, b, threshold_percent / 100);
  print_comparison(std::cout, c, a.string(), b.string(), markdown);
  return c.failures().empty() ? kOk : kSlower;
}

struct TuneArgs {
  std::optional<fs::path> config, json, csv, export_file, out;
  int device = 0, threads = 0, show = 0;
  std::string strategy, family, objective;
  std::optional<int> budget;
  std::optional<double> seconds, stop_after;
  std::optional<std::uint64_t> seed;
  bool no_save = false, fresh = false, energy = false, auto_repeats = false;
  double time_limit = 0;
  std::string devices;        // --devices all|0,1,...
  std::string shard;          // --shard K/N: a tuning matrix's share
  std::vector<fs::path> merge;  // --merge DIR...: the shards' results directories
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

// Prints a sweep's report, writes its JSON and CSV (`suffix` before their extension: one report
// per GPU model), keeps the winner in the database; the exit status.
int finish_sweep(const Global& g, const TuneArgs& a, const TuneSpec& t, const Space& space, TuneReport& report,
                 const std::string& suffix, std::chrono::steady_clock::time_point wall_start) {
  const fs::path db_path = tuning_db_path(g);
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

// The exit status of a sweep's process that lost its CUDA context: go on in a fresh one.
constexpr int kGoOn = 75;

// The command line's overrides of a tune config.
void apply_tune_args(TuneSpec& t, const TuneArgs& a) {
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
}

// The tune config with the command line's overrides.
TuneSpec tune_spec_of(const TuneArgs& a, const PluginRegistry& plugins, const KernelLibrary& kernels) {
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
// context down (then kGoOn: the journal has every point measured so far).
int tune_sweep(const Global& g, const TuneArgs& a, int restarts, std::chrono::steady_clock::time_point wall_start) {
  const fs::path db_path = tuning_db_path(g);
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  if (restarts == 0) print_load_problems(plugins, kernels);
  const TuneSpec t = tune_spec_of(a, plugins, kernels);
  const Space space = Space::from_spec(t, kernels);
  if (restarts == 0) print_widened(space);

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
  const auto sweep_start = std::chrono::steady_clock::now();
  TuneReport report = sweep_on_gpu(t, space, {plugins, kernels, &cache, 0, g.tuning_db}, device, options);
  report.times.start = std::chrono::duration<double>(sweep_start - wall_start).count();
  bar.finish();
  if (report.result.context_lost) {
    // Nothing more can run in this process: the next one goes on from the journal.
    std::cerr << "gpuk: " << report.result.stopped << "; the sweep goes on in a fresh process\n";
    return kGoOn;
  }
  return finish_sweep(g, a, t, space, report, "", wall_start);
}

// `gpuk tune --devices`: one worker process per GPU measures the points (tune/pool.hpp);
// this process runs the strategy and never touches CUDA. GPUs of one model share one ranking;
// each model gets its own report and database entry.
int tune_pooled(const Global& g, const TuneArgs& a, std::chrono::steady_clock::time_point wall_start) {
  std::string why;
  const int count = count_devices_in_child(&why);
  if (count == 0) throw NoDeviceError(why);
  const std::vector<int> ordinals = parse_device_list(a.devices, count);
  if (std::set<int>(ordinals.begin(), ordinals.end()).size() < ordinals.size())
    std::cerr << "gpuk: note: --devices " << a.devices << " names a GPU more than once: its workers share it and "
              << "disturb each other's timings (a test of the pool, not a way to tune)\n";
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  print_load_problems(plugins, kernels);
  const TuneSpec t = tune_spec_of(a, plugins, kernels);
  if (t.objective != TuneObjective::time || t.energy)
    throw ConfigError("--devices measures time only; energy and edp sweeps run on one GPU (--device N)");
  const Space space = Space::from_spec(t, kernels);
  print_widened(space);
  const CompileCache cache(cache_dir(g));
  const RunContext context{plugins, kernels, &cache, 0, g.tuning_db};
  SweepOptions sweep;
  // The workers compile side by side: the cores are shared among them.
  sweep.threads = a.threads > 0 ? a.threads
                                : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                                  static_cast<int>(ordinals.size()));
  sweep.time_limit_s = a.time_limit;
  WorkerPool pool(space, ordinals, [&](int ordinal) { return make_gpu_worker(t, context, ordinal, sweep); });
  const double pool_start = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const auto groups = pool.group_by_model();
  if (groups.size() > 1) {
    std::cerr << "gpuk: note: these GPUs are of " << groups.size() << " models; each model is swept and ranked on "
              << "its own GPUs:";
    for (const auto& group : groups) {
      std::cerr << " " << pool.workers()[group.front()].device.name << " (GPU";
      for (std::size_t w : group) std::cerr << " " << pool.workers()[w].ordinal;
      std::cerr << ")";
    }
    std::cerr << "\n";
  }
  int status = 0;
  for (const auto& group : groups) {
    ProgressBar bar;
    TuneOptions options = tune_options(t, sweep);
    options.progress = [&](const Progress& p) {
      Progress shown = p;
      shown.current = pool.progress_text() + (p.current.empty() ? "" : "  " + p.current);
      bar(shown);
    };
    const WorkerInfo& first = pool.workers()[group.front()];
    // The journal of this model's GPUs: a sweep cut short or run again goes on from it.
    const auto journal =
        attach_journal(a.journal_dir, a.run_id, a.fresh, t, first.device, first.flushed, space, options);
    const auto measurer = pool.measurer(group);
    TuneResult result = tune(space, *measurer, options);
    // A leader that faulted in the recheck took its worker's context down: the worker was
    // replaced; the sweep goes on from what it measured, without that leader.
    for (int again = 0; result.context_lost && again < 100; ++again) {
      options.prior = result.evaluations;
      result = tune(space, *measurer, options);
    }
    bar.finish();
    TuneReport report = make_tune_report(t, options, std::move(result), first.device, first.bytes_moved,
                                         first.flushed, pool.compile_stats());
    for (std::size_t w : group) {
      const WorkerInfo& info = pool.workers()[w];
      report.devices.push_back("GPU " + std::to_string(info.ordinal) +
                               (info.restarts ? " (" + std::to_string(info.restarts) + " fresh process" +
                                                    (info.restarts == 1 ? "" : "es") + " after faults)"
                                              : ""));
    }
    if (journal) report.journal = journal->path().string();
    report.times.start = pool_start;  // the workers' processes, devices, data and references
    const auto worker_times = pool.worker_times();
    for (std::size_t w : group)
      report.worker_times.emplace_back("GPU " + std::to_string(pool.workers()[w].ordinal), worker_times[w]);
    const std::string suffix = groups.size() > 1 ? "-gpu" + std::to_string(first.ordinal) : "";
    status = std::max(status, finish_sweep(g, a, t, space, report, suffix, wall_start));
  }
  return status;
}

fs::path matrix_out(const TuneArgs& a);
std::map<std::string, int> finish_matrix(const TuneArgs& a, const TuneMatrix& matrix, const MatrixResults& results,
                                         const KernelLibrary& kernels);

// One process's part of a tuning matrix (tune/matrix.hpp): every cell without a result,
// in order, swept on the GPU as tune_sweep sweeps one config, with the library baseline timed
// after it. A variant that takes the CUDA context down ends the process (kGoOn); the next one
// goes on with that cell from the journal.
int tune_matrix_process(const Global& g, const TuneArgs& a, int restarts,
                        std::chrono::steady_clock::time_point wall_start) {
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  if (restarts == 0) print_load_problems(plugins, kernels);
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
    std::cout << "; results in " << results.dir().string() << "\n";
  }

  std::size_t missing = 0, left = 0;
  for (const auto& cell : matrix.cells) missing += results.read(cell) ? 0 : 1;
  if (missing > 0) {
    const fs::path db_path = tuning_db_path(g);
    const CompileCache cache(cache_dir(g));
    Device device(a.device);
    const RunContext context{plugins, kernels, &cache, 0, g.tuning_db};
    const CellSweep sweep = [&](const MatrixCell& cell) {
      const auto start = std::chrono::steady_clock::now();
      const Space space = Space::from_spec(cell.spec, kernels);
      SweepOptions options;
      options.threads = a.threads;
      options.time_limit_s = a.time_limit;
      options.baseline = true;
      // A cell whose sweep a fault cut short goes on from the journal in the next process.
      options.journal_dir = a.journal_dir;
      options.run_id = a.run_id;
      options.fresh = a.fresh;
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
      return kGoOn;
    }
    if (left > 0)
      std::cout << "gpuk tune: --stop-after " << *a.stop_after << " s reached: " << left
                << " cells left; the same command measures them\n";
  }

  const auto tally = finish_matrix(a, matrix, results, kernels);
  return tally.count("failed") || tally.at("missing") > static_cast<int>(left) ? 1 : 0;
}

// `gpuk tune MATRIX --merge DIR...`: the shards' results directories into --out, then the tally
// and --export as after a run. No GPU.
int tune_merge(const Global& g, const TuneArgs& a) {
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  print_load_problems(plugins, kernels);
  TuneMatrix matrix = load_tune_matrix(*a.config, plugins, kernels);
  for (auto& cell : matrix.cells) apply_tune_args(cell.spec, a);  // the fingerprints the shards ran with
  const MatrixResults results(matrix_out(a));
  const MergeSummary m = merge_matrix_results(matrix, a.merge, results);
  std::cout << "gpuk tune: merged " << a.merge.size() << " director" << (a.merge.size() == 1 ? "y" : "ies") << " into "
            << results.dir().string() << ": " << m.cells << " of " << matrix.cells.size() << " cells";
  if (m.duplicates) std::cout << " (" << m.duplicates << " found more than once: the best kept)";
  if (m.stale) std::cout << "; " << m.stale << " cell files of other settings ignored";
  std::cout << "; " << m.reports << " reports, " << m.journal_lines << " journal lines\n";
  if (m.gpus.size() > 1) std::cout << "gpuk tune: note: the cells were measured on " << m.gpus.size() << " GPU models: " << join(m.gpus) << "\n";
  if (!m.missing.empty())
    std::cerr << "gpuk: " << m.missing.size() << " cell" << (m.missing.size() == 1 ? "" : "s")
              << " without a result in any directory, e.g. " << m.missing.front() << "\n";
  const auto tally = finish_matrix(a, matrix, results, kernels);
  return tally.count("failed") || tally.at("missing") > 0 ? 1 : 0;
}

// A matrix's results directory: --out, or with --shard K/N CONFIG-results/shard-K-of-N, else
// CONFIG-results (CONFIG's name without its extension).
fs::path matrix_out(const TuneArgs& a) {
  if (a.out) return *a.out;
  const fs::path base(a.config->stem().string() + "-results");
  if (a.shard.empty()) return base;
  const Shard s = parse_shard(a.shard);
  return base / ("shard-" + std::to_string(s.index) + "-of-" + std::to_string(s.count));
}

// The tally of a matrix's cells (by status, and "missing"), printed; --export of the winners.
std::map<std::string, int> finish_matrix(const TuneArgs& a, const TuneMatrix& matrix, const MatrixResults& results,
                                         const KernelLibrary& kernels) {
  std::map<std::string, int> tally{{"missing", 0}};
  for (const auto& cell : matrix.cells) {
    const auto r = results.read(cell);
    ++tally[r ? cell_status_name(r->status) : "missing"];
  }
  std::cout << "gpuk tune: matrix done:";
  for (const auto& [status, count] : tally)
    if (count > 0 || status != "missing") std::cout << " " << count << " " << status << ";";
  std::cout << " results in " << results.dir().string() << "\n";
  if (a.export_file) {
    std::vector<std::string> without;
    const auto entries = matrix_entries(matrix, results, &without, &kernels);
    TuningDb::merge_into(*a.export_file, entries);
    std::cout << "exported " << entries.size() << " verified winner" << (entries.size() == 1 ? "" : "s") << " to "
              << a.export_file->string();
    if (!without.empty()) std::cout << " (" << without.size() << " cells without one, e.g. " << without.front() << ")";
    std::cout << "\n";
  }
  return tally;
}

// `gpuk tune`: the sweep runs in a child process, forked before this one touches CUDA. A
// variant that faults or hangs leaves the child's CUDA context unusable for good; the child then
// writes what it measured and exits with kGoOn, and a fresh child goes on with the sweep from
// there (the faulted variant recorded, never measured again).
int cmd_tune(const Global& g, const TuneArgs& a) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (!a.config) {
    if (!a.merge.empty()) throw ConfigError("--merge needs the tuning matrix's CONFIG: gpuk tune MATRIX --merge DIR...");
    if (!a.export_file) throw ConfigError("gpuk tune needs a CONFIG to sweep, or --export FILE to write the database");
    export_db(tuning_db_path(g), *a.export_file, a.family, "", "");
    return 0;
  }
  const bool matrix = is_tune_matrix_file(*a.config);  // a tuning matrix: `operations:` lists its cells
  if ((!a.shard.empty() || !a.merge.empty()) && !matrix)
    throw ConfigError(a.config->string() + ": --shard and --merge split and join a tuning matrix's cells; this is a "
                      "single sweep (spread it over GPUs with --devices)");
  if (!a.shard.empty() && !a.merge.empty()) throw ConfigError("--shard runs a share of the cells and --merge joins the shares: one at a time");
  if (!a.merge.empty()) return tune_merge(g, a);
  if (!a.shard.empty()) (void)parse_shard(a.shard);  // a mistake is said before anything runs
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
  if (!a.shard.empty()) {
    args.journal_dir = matrix_out(a) / "journal";  // travels with the shard's results (--merge joins them)
  } else if (const auto dir = cache_dir(g)) {
    args.journal_dir = *dir / "tune-journal";
  } else {
    char name[] = "/tmp/gpuk-tune-journal-XXXXXX";
    if (!::mkdtemp(name)) throw Error("cannot create a temporary directory for the journal of the sweep");
    args.journal_dir = remove_journal.path = name;
  }
  if (!a.devices.empty()) {
    if (matrix) throw ConfigError(a.config->string() + ": --devices sweeps one tune config, not a tuning matrix");
    return tune_pooled(g, args, wall_start);
  }
  constexpr int kMostRestarts = 1000;
  for (int restarts = 0;; ++restarts) {
    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = ::fork();
    if (pid < 0) throw Error("cannot start the process of the sweep (fork failed)");
    if (pid == 0) {
      const int status = with_errors([&] {
        return matrix ? tune_matrix_process(g, args, restarts, wall_start) : tune_sweep(g, args, restarts, wall_start);
      });
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

// The first argument that is not an option or a global option's value: the command's name.
std::string first_word(int argc, char** argv) {
  const std::set<std::string> with_value = {"--kernels", "--plugins", "--cache-dir", "--tuning-db"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (with_value.count(a)) {
      ++i;
      continue;
    }
    if (a.rfind("-", 0) == 0) continue;
    return a;
  }
  return "";
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
  RunArgs ra;
  run->add_option("CONFIG", ra.config, "YAML config (see README.md)")->required()->check(CLI::ExistingFile);
  run->add_option("--json", ra.json, "also write the report as JSON")->type_name("FILE");
  run->add_option("--csv", ra.csv, "also write the report as CSV")->type_name("FILE");
  run->add_option("--markdown", ra.markdown, "also write the report as Markdown")->type_name("FILE");
  run->add_option("--input", ra.input, "run on this NumPy array instead of the config's data (its size and dtype too)")
      ->type_name("FILE.npy")
      ->check(CLI::ExistingFile);
  run->add_option("--output", ra.output, "write the result as .npy (overrides the config's output)")
      ->type_name("FILE.npy");
  run->add_flag("--no-pin", ra.no_pin, "upload from pageable memory, not page-locked (also $GPUK_NO_PIN=1)");
  auto* run_device = run->add_option("--device", ra.device, "GPU ordinal")->check(CLI::NonNegativeNumber);
  run->add_option("--devices", ra.devices,
                  "run on several GPUs, one after another, and report them side by side: 'all' or ordinals (0,1)")
      ->type_name("all|0,1,...")
      ->excludes(run_device);
  run->add_option("--repeats", ra.repeats, "timed repeats (overrides the config)")->check(CLI::PositiveNumber);
  run->add_option("--tuning", ra.tuning, "choose the variant from this tuning file instead of the database (a config naming no kernel)")
      ->type_name("FILE");
  const std::string time_limit_help = "seconds one run of a variant may take before it is abandoned (default " +
                                      std::to_string(static_cast<int>(kDefaultTimeLimitSeconds)) +
                                      ", plus 1 per GB the workload moves)";
  run->add_option("--time-limit", ra.time_limit, time_limit_help)->check(CLI::PositiveNumber)->type_name("SECONDS");

  auto* tune_cmd = app.add_subcommand("tune", "sweep kernel parameters: verify, time, rank, keep the best (docs/tuning.md)");
  TuneArgs ta;
  tune_cmd->add_option("CONFIG", ta.config, "tune config (YAML; see docs/tuning.md)")->check(CLI::ExistingFile);
  tune_cmd->add_option("--json", ta.json, "write every variant's result as JSON")->type_name("FILE");
  tune_cmd->add_option("--csv", ta.csv, "write every variant's result as CSV")->type_name("FILE");
  auto* tune_device = tune_cmd->add_option("--device", ta.device, "GPU ordinal")->check(CLI::NonNegativeNumber);
  tune_cmd->add_option("--devices", ta.devices,
                       "sweep on several GPUs, one worker process each: 'all' or ordinals (0,1); GPUs of one "
                       "model share a ranking")
      ->type_name("all|0,1,...")
      ->excludes(tune_device);
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
                       "write the tuning database as JSON (with CONFIG: its family and operation on this GPU; with a "
                       "tuning matrix: merge its cells' verified winners into FILE, the shipped tuned/<arch>.json format)")
      ->type_name("FILE");
  tune_cmd->add_option("--family", ta.family, "with --export and no CONFIG: only this family");
  tune_cmd->add_option("--out", ta.out,
                       "a tuning matrix's results directory: one file per cell; a second run measures only the cells "
                       "missing (default: CONFIG's name with -results, in the current directory)")
      ->type_name("DIR");
  tune_cmd->add_option("--shard", ta.shard,
                       "a tuning matrix: measure only shard K of N (0/3, 1/3, 2/3; cells dealt round-robin), e.g. "
                       "one Slurm array task each (docs/tuning.md); default --out CONFIG-results/shard-K-of-N")
      ->type_name("K/N");
  tune_cmd->add_option("--merge", ta.merge,
                       "a tuning matrix: merge the results directories of its shards into --out (default "
                       "CONFIG-results), then --export reads them as one run's")
      ->type_name("DIR...")
      ->check(CLI::ExistingDirectory);
  tune_cmd->add_option("--stop-after", ta.stop_after,
                       "a tuning matrix: start no cell after SECONDS (the next run measures the rest)")
      ->check(CLI::PositiveNumber)
      ->type_name("SECONDS");

  app.add_subcommand("list", "list families, plugins, kernel files and their parameters");

  auto* check = app.add_subcommand("check", "compile kernel files or configs with NVRTC (no GPU needed)");
  std::vector<std::string> targets;
  std::string arch;
  check->add_option("TARGETS", targets, "configs (.yaml) or kernel files (.cu); default: every kernel file");
  check->add_option("--arch", arch, "GPU architecture, e.g. sm_90 (default: this GPU's, or sm_90)")
      ->type_name("sm_XX");

  auto* compare = app.add_subcommand("compare", "compare two JSON reports (run or tune): times, ratio, same/faster/slower");
  fs::path report_a, report_b;
  double threshold = 5;
  bool compare_markdown = false;
  compare->add_option("A", report_a, "the report before (gpuk run --json or gpuk tune --json)")
      ->required()
      ->check(CLI::ExistingFile);
  compare->add_option("B", report_b, "the report after")->required()->check(CLI::ExistingFile);
  compare->add_option("--threshold", threshold, "exit 6 when a kernel or baseline row is slower by more than this (default 5)")
      ->type_name("PERCENT")
      ->check(CLI::NonNegativeNumber);
  compare->add_flag("--markdown", compare_markdown, "print a Markdown table (for a pull request)");

  app.footer(
      "Examples:\n"
      "  gpuk run configs/argmax.yaml --json before.json      run, verify and time one config\n"
      "  gpuk run configs/argmax.yaml --input mine.npy        the same on your NumPy array\n"
      "  gpuk tune configs/tune_argmax.yaml                   sweep parameters, keep the fastest\n"
      "  gpuk list                                            families, kernel files, parameters\n"
      "  gpuk check path/to/mine.cu                           compile with NVRTC (no GPU needed)\n"
      "  gpuk compare before.json after.json --markdown       same / faster / slower, exit 6 past 5%\n"
      "Exit status: 0 ok, 1 error, 2 bad config or arguments, 3 wrong answer, 4 variant faulted or hung,\n"
      "5 no GPU, 6 compare found a slowdown (README.md, \"Exit status\").");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (105, 106, ...) would leak out: every mistake on the command line is 2.
    std::vector<std::string> commands;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) commands.push_back(sub->get_name());
    const std::string word = first_word(argc, argv);
    if (word.empty() && app.get_subcommands().empty()) {
      print_error("give a command: " + join(commands) + " (gpuk --help)");
    } else if (!word.empty() && std::find(commands.begin(), commands.end(), word) == commands.end()) {
      print_error("unknown command '" + printable(word) + "'" + did_you_mean(word, commands) + "; the commands: " +
                  join(commands) + " (gpuk --help)");
    } else {
      print_error(printable(e.what(), 400) + std::string(" (") + (app.get_subcommands().empty() ? "gpuk" : "gpuk " + app.get_subcommands().front()->get_name()) + " --help)");
    }
    return kBadInput;
  }
  if (allow_unsafe_dirs) ::setenv("GPUK_ALLOW_UNSAFE_DIRS", "1", 1);  // core reads it (util/safe_dirs.hpp)
  const int status = with_errors([&] {
    if (run->parsed()) return cmd_run(g, ra);
    if (compare->parsed()) return cmd_compare(report_a, report_b, threshold, compare_markdown);
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
