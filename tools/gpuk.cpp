// The gpuk command line: parses arguments and calls core. Nothing here knows a family.
#include <CLI/CLI.hpp>

#include <execinfo.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "run/compare.hpp"
#include "run/device.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "run/runtime.hpp"
#include "tune/matrix.hpp"
#include "tune/sweep.hpp"
#include "tune/tune_command.hpp"
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

RuntimeOptions runtime_options(const Global& g) {
  RuntimeOptions r;
  r.kernel_dirs = g.kernels;
  r.plugin_dirs = g.plugins;
  r.cache_dir = g.cache_dir;
  r.no_cache = g.no_cache;
  r.tuning_db = g.tuning_db;
  return r;
}

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
  const Runtime runtime(runtime_options(g));
  const PluginRegistry& plugins = runtime.plugins();
  const KernelLibrary& kernels = runtime.kernels();
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
  const Runtime runtime(runtime_options(g));
  const PluginRegistry& plugins = runtime.plugins();
  const KernelLibrary& kernels = runtime.kernels();
  const std::optional<DeviceInfo> gpu = gpu_info();
  const Jit& jit = runtime.jit(!arch_option.empty() ? arch_option : gpu ? gpu->arch() : "sm_90");
  const JitOptions& options = jit.options();

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
        if (path.extension() != ".cu")
          throw ConfigError(path.string() + ": gpuk check takes configs (.yaml, .yml) and kernel files (.cu), not " +
                            (path.extension().empty() ? std::string("a file without an extension")
                                                      : "a " + printable(path.extension().string()) + " file"));
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
  const Runtime runtime(runtime_options(g));
  const PluginRegistry& plugins = runtime.plugins();
  const KernelLibrary& kernels = runtime.kernels();
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
  const CompileCache& cache = runtime.cache();
  if (!a.devices.empty())  // the same config on each GPU, one after another, side by side
    return run_on_devices(spec, {plugins, kernels, &cache, a.time_limit, g.tuning_db}, a.devices, a.json, a.csv,
                          config.string())
               ? kOk
               : kWrongAnswer;
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
  TuneCommand ta;
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
      "5 no GPU, 6 compare found a slowdown or a row B has no valid time for (README.md, \"Exit status\").");

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
    if (tune_cmd->parsed()) {
      ta.kernel_dirs = g.kernels;
      ta.plugin_dirs = g.plugins;
      ta.cache_dir = cache_dir(g);
      ta.tuning_db = tuning_db_path(g);
      ta.tuning_db_option = g.tuning_db;
      ta.warn_load = print_load_problems;
      return run_tune_command(ta, [](const std::function<int()>& part) { return with_errors(part); });
    }
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
