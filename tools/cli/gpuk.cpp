// The gpuk command line: parses arguments and calls core. Nothing here knows a family.
#include <CLI/CLI.hpp>

#include <execinfo.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include "cli.hpp"
#include "config/config.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "plugin/plugin.hpp"
#include "report/compare.hpp"
#include "report/run_report.hpp"
#include "run/prepare.hpp"
#include "run/runner.hpp"
#include "run/runtime.hpp"
#include "tune/tune_command.hpp"
#include "util/text.hpp"

namespace fs = std::filesystem;
using namespace gpuk;
using namespace gpuk::cli;

void gpuk::cli::print_error(const std::string& what, const char* end) {
  const bool named = what.rfind("gpuk ", 0) == 0 || what.rfind("gpuk: ", 0) == 0;
  std::cerr << (named ? "" : "gpuk: ") << terminal_text(what, 4096) << end;
}

namespace {

void print_load_problems(const PluginRegistry& plugins, const KernelLibrary& kernels) {
  for (const auto& e : plugins.errors()) std::cerr << "gpuk: warning: " << terminal_text(e, 4096) << "\n";
  for (const auto& e : kernels.errors()) std::cerr << "gpuk: warning: " << terminal_text(e, 4096) << "\n";
}

// The exit status of an error (enum Exit).
int exit_status(const Error& e) {
  if (dynamic_cast<const FaultError*>(&e) || dynamic_cast<const TimeLimitError*>(&e)) return kFaulted;
  if (dynamic_cast<const NoDeviceError*>(&e)) return kNoGpu;
  if (dynamic_cast<const ConfigError*>(&e)) return kBadInput;
  return kError;
}

// Runs a command; an error is one line on stderr and its exit status.
template <class Body>
int with_errors(Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    const int status = exit_status(e);
    print_error(e.what(), status == kNoGpu ? ".\n" : "\n");
    return status;
  }
}

struct RunArgs {
  fs::path config;
  std::optional<fs::path> json, csv, markdown, tuning, input, output;
  int device = 0, repeats = 0;
  double time_limit = 0;
  bool no_pin = false;
  std::string devices;  // --devices all|0,1,...
};

int cmd_run(const RuntimeOptions& g, const RunArgs& a) {
  const fs::path& config = a.config;
  const std::optional<fs::path>& tuning = a.tuning;
  const Runtime runtime(g);
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
  refuse_what_no_gpu_runs(spec, runtime);  // the config's own errors, with a GPU or without
  if (!a.devices.empty())  // the same config on each GPU, one after another, side by side
    return run_on_devices(spec, {runtime, a.time_limit}, a.devices, a.json, a.csv,
                          config.string())
               ? kOk
               : kWrongAnswer;
  Device device(a.device);
  const RunReport report = run(spec, {runtime, a.time_limit}, device);
  for (const auto& w : report.warnings) std::cerr << "gpuk: warning: " << terminal_text(w, 4096) << "\n";
  print_report(std::cout, report);
  if (a.json) write_json(*a.json, report);
  if (a.csv) write_csv(*a.csv, report);
  if (a.markdown) write_markdown(*a.markdown, report);
  return report.verified && !report.verification.passed ? kWrongAnswer : kOk;
}

int cmd_tune(const RuntimeOptions& g, TuneCommand ta) {
  ta.kernel_dirs = g.kernel_dirs;
  ta.plugin_dirs = g.plugin_dirs;
  ta.cache_dir = cache_dir_of(g);
  ta.tuning_db = tuning_db_path_of(g);
  ta.tuning_db_option = g.tuning_db;
  ta.warn_load = print_load_problems;
  return run_tune_command(ta, [](const std::function<int()>& part) { return with_errors(part); });
}

struct CompareArgs {
  fs::path a, b;
  double threshold = 5;  // percent
  bool markdown = false;
};

int cmd_compare(const CompareArgs& args) {
  const Comparison c = compare_reports(args.a, args.b, args.threshold / 100);
  print_comparison(std::cout, c, args.a.string(), args.b.string(), args.markdown);
  return c.passed() ? kOk : kSlower;
}

struct CheckArgs {
  std::vector<std::string> targets;
  std::string arch;
};

// The global options that take a value.
const std::set<std::string> kGlobalWithValue = {"--kernels", "--plugins", "--cache-dir", "--tuning-db"};

// The first argument that is not an option or a global option's value: the command's name.
std::string first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (kGlobalWithValue.count(a)) {
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

void add_global_options(CLI::App& app, RuntimeOptions& g, bool& allow_unsafe_dirs) {
  app.add_option("--kernels", g.kernel_dirs, "extra kernel directory (repeatable; also $GPUK_KERNELS)")
      ->type_name("DIR");
  app.add_option("--plugins", g.plugin_dirs, "extra plugin directory (repeatable; also $GPUK_PLUGINS)")
      ->type_name("DIR");
  app.add_option("--cache-dir", g.cache_dir, "compile cache directory (default: $GPUK_CACHE_DIR or ~/.cache/gpuk)")
      ->type_name("DIR");
  app.add_flag("--no-cache", g.no_cache, "compile without the on-disk cache");
  app.add_option("--tuning-db", g.tuning_db,
                 "tuning database (default: $GPUK_TUNING_DB or tuning/tuning.json in the cache directory)")
      ->type_name("FILE");
  app.add_flag("--allow-unsafe-dirs", allow_unsafe_dirs,
               "use plugin, kernel and cache directories that other users can write (also $GPUK_ALLOW_UNSAFE_DIRS=1)");
}

// A number of seconds or a percentage: finite. CLI11's PositiveNumber lets NaN through (every
// comparison with it is false), and `--stop-after nan` never stopped; inf is no budget either.
CLI::Validator finite_number(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0 || (v == 0 && !zero_allowed))
          return std::string("must be a finite number ") + (zero_allowed ? "of at least 0" : "above 0") + ", not '" +
                 terminal_text(text, 40) + "'";
        return "";
      },
      zero_allowed ? "NUMBER >= 0" : "NUMBER > 0");
}

// An integer from `lo` to `hi`, said in those words: CLI11's PositiveNumber prints its bound as a
// double (a 309-digit number for --repeats -3), and an unsigned option took "-1" as 2^64 - 1.
CLI::Validator integer_in(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
          return "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not '" +
                 terminal_text(text, 40) + "'";
        return "";
      },
      "INT " + std::to_string(lo) + ".." + std::to_string(hi));
}

// An option whose empty value would mean what leaving it out means: `--shard "$TASK"` with TASK
// unset in a job script ran the whole matrix in every task.
CLI::Validator not_empty(const char* what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        return text.empty() ? std::string("is empty; give ") + what + " (an unset variable in a script?)" : "";
      },
      "");
}

std::string time_limit_help() {
  return "seconds one run of a variant may take before it is abandoned (default " +
         std::to_string(static_cast<int>(kDefaultTimeLimitSeconds)) + ", plus 1 per GB the workload moves)";
}

CLI::App* add_run_command(CLI::App& app, RunArgs& ra) {
  auto* run = app.add_subcommand("run", "run one config: upload, JIT, launch, verify, report");
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
  auto* run_device = run->add_option("--device", ra.device, "GPU ordinal")->check(integer_in(0, 1023));
  run->add_option("--devices", ra.devices,
                  "run on several GPUs, one after another, and report them side by side: 'all' or ordinals (0,1)")
      ->type_name("all|0,1,...")
      ->excludes(run_device);
  run->add_option("--repeats", ra.repeats, "timed repeats (overrides the config)")->check(integer_in(1, 1000000));
  run->add_option("--tuning", ra.tuning, "choose the variant from this tuning file instead of the database (a config naming no kernel)")
      ->type_name("FILE");
  run->add_option("--time-limit", ra.time_limit, time_limit_help())->check(finite_number(false))->type_name("SECONDS");
  return run;
}

// The options of a sweep (what, how, where to write it).
void add_sweep_options(CLI::App* tune_cmd, TuneCommand& ta) {
  tune_cmd->add_option("CONFIG", ta.config, "tune config (YAML; see docs/tuning.md)")->check(CLI::ExistingFile);
  tune_cmd->add_option("--json", ta.json, "write every variant's result as JSON")->type_name("FILE");
  tune_cmd->add_option("--csv", ta.csv, "write every variant's result as CSV")->type_name("FILE");
  auto* tune_device = tune_cmd->add_option("--device", ta.device, "GPU ordinal")->check(integer_in(0, 1023));
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
      ->check(integer_in(1, 1000000000));
  tune_cmd->add_option("--seconds", ta.seconds, "time budget of the sweep (overrides the config)")
      ->check(finite_number(false));
  tune_cmd->add_option("--seed", ta.seed, "seed of random and anneal (overrides the config)")
      ->check(integer_in(0, std::numeric_limits<std::uint64_t>::max()));
  tune_cmd->add_option("--threads", ta.threads, "compile threads (default: every core)")->check(integer_in(1, 4096));
  tune_cmd->add_option("--show", ta.show, "rows of the ranked table (overrides the config)")->check(integer_in(1, 1000000));
  tune_cmd->add_flag("--no-save", ta.no_save, "do not write the best variant to the tuning database");
  tune_cmd->add_option("--time-limit", ta.time_limit, time_limit_help())->check(finite_number(false))->type_name("SECONDS");
}

// The options of the tuning database's export and of a tuning matrix.
void add_matrix_options(CLI::App* tune_cmd, TuneCommand& ta) {
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
      ->check(not_empty("K/N, e.g. 0/3"))
      ->type_name("K/N");
  tune_cmd->add_option("--merge", ta.merge,
                       "a tuning matrix: merge the results directories of its shards into --out (default "
                       "CONFIG-results), then --export reads them as one run's")
      ->type_name("DIR...")
      ->check(CLI::ExistingDirectory);
  tune_cmd->add_flag("--allow-missing", ta.allow_missing,
                     "a tuning matrix: exit 0 although cells have no usable result (not measured, failed, a cell "
                     "file unusable or refused by the merge or the export); each is still named, and left out");
  tune_cmd->add_option("--stop-after", ta.stop_after,
                       "a tuning matrix: start no cell after SECONDS (the next run measures the rest)")
      ->check(finite_number(false))
      ->type_name("SECONDS");
}

CLI::App* add_tune_command(CLI::App& app, TuneCommand& ta) {
  auto* tune_cmd = app.add_subcommand("tune", "sweep kernel parameters: verify, time, rank, keep the best (docs/tuning.md)");
  add_sweep_options(tune_cmd, ta);
  add_matrix_options(tune_cmd, ta);
  return tune_cmd;
}

CLI::App* add_check_command(CLI::App& app, CheckArgs& ca) {
  auto* check = app.add_subcommand("check", "compile kernel files or configs with NVRTC (no GPU needed)");
  check->add_option("TARGETS", ca.targets, "configs (.yaml) or kernel files (.cu); default: every kernel file");
  check->add_option("--arch", ca.arch, "GPU architecture, e.g. sm_90 (default: this GPU's, or sm_90)")
      ->type_name("sm_XX");
  return check;
}

CLI::App* add_compare_command(CLI::App& app, CompareArgs& ca) {
  auto* compare = app.add_subcommand("compare", "compare two JSON reports (run or tune): times, ratio, same/faster/slower");
  compare->add_option("A", ca.a, "the report before (gpuk run --json or gpuk tune --json)")
      ->required()
      ->check(CLI::ExistingFile);
  compare->add_option("B", ca.b, "the report after")->required()->check(CLI::ExistingFile);
  compare->add_option("--threshold", ca.threshold, "exit 6 when a kernel or baseline row is slower by more than this (default 5)")
      ->type_name("PERCENT")
      ->check(finite_number(true));
  compare->add_flag("--markdown", ca.markdown, "print a Markdown table (for a pull request)");
  return compare;
}

const char* const kFooter =
    "Examples:\n"
    "  gpuk run configs/argmax.yaml --json before.json      run, verify and time one config\n"
    "  gpuk run configs/argmax.yaml --input mine.npy        the same on your NumPy array\n"
    "  gpuk tune configs/tune_argmax.yaml                   sweep parameters, keep the fastest\n"
    "  gpuk list                                            families, kernel files, parameters\n"
    "  gpuk check path/to/mine.cu                           compile with NVRTC (no GPU needed)\n"
    "  gpuk compare before.json after.json --markdown       same / faster / slower, exit 6 past 5%\n"
    "Exit status: 0 ok, 1 error, 2 bad config or arguments, 3 wrong answer, 4 variant faulted or hung,\n"
    "5 no GPU, 6 compare found a slowdown, a row B has no valid time for, or nothing to judge (README.md, \"Exit status\").";

// A mistake on the command line: one line that says what to do, and status 2 (CLI11's own codes,
// 105, 106, ..., would leak out).
int parse_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) commands.push_back(sub->get_name());
  // An unknown option before the command (--kernal x list) is said as such, not as the unknown
  // command 'x' that its value looks like.
  std::vector<std::string> options;
  for (const CLI::Option* o : app.get_options())
    for (const auto& name : o->get_lnames()) options.push_back("--" + name);
  for (int i = 1; i < argc && std::string_view(argv[i]).rfind("--", 0) == 0; ++i) {
    const std::string a = argv[i], name = a.substr(0, a.find('='));
    if (std::find(options.begin(), options.end(), name) == options.end()) {
      print_error("unknown option '" + printable(name) + "'" + did_you_mean(name, options) + " (gpuk --help)");
      return kBadInput;
    }
    if (kGlobalWithValue.count(a)) ++i;
  }
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

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGSEGV, crash_handler);
  std::signal(SIGBUS, crash_handler);
  CLI::App app{"gpuk: GPU kernels compiled at run time, verified, timed and compared with CUB"};
  app.set_version_flag("--version", std::string("gpuk ") + GPUK_VERSION);
  app.require_subcommand(1);
  RuntimeOptions g;
  bool allow_unsafe_dirs = false;
  add_global_options(app, g, allow_unsafe_dirs);
  RunArgs ra;
  TuneCommand ta;
  CheckArgs ca;
  CompareArgs cmp;
  const CLI::App* run = add_run_command(app, ra);
  const CLI::App* tune = add_tune_command(app, ta);
  app.add_subcommand("list", "list families, plugins, kernel files and their parameters");
  const CLI::App* check = add_check_command(app, ca);
  const CLI::App* compare = add_compare_command(app, cmp);
  app.footer(kFooter);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e, argc, argv);
  }
  if (allow_unsafe_dirs) ::setenv("GPUK_ALLOW_UNSAFE_DIRS", "1", 1);  // core reads it (util/safe_dirs.hpp)
  const int status = with_errors([&] {
    if (run->parsed()) return cmd_run(g, ra);
    if (compare->parsed()) return cmd_compare(cmp);
    if (tune->parsed()) return cmd_tune(g, ta);
    if (check->parsed()) return cmd_check(g, ca.targets, ca.arch);
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
