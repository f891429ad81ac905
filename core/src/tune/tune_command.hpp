// `gpuk tune` after its command line is parsed: a sweep in a child process (a fresh one after a
// variant takes the CUDA context down), a pooled sweep over several GPUs, a tuning matrix's cells
// (or one shard of them), the merge of shards, the export; the reports printed, written and
// saved (docs/tuning.md). The CLI (tools/cli/gpuk.cpp) fills a TuneCommand and calls
// run_tune_command.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuk {

class PluginRegistry;
class KernelLibrary;
struct RunSpec;
struct RunContext;

struct TuneCommand {
  // The command line (docs/tuning.md, "Command line").
  std::optional<std::filesystem::path> config, json, csv, export_file, out;
  int device = 0, threads = 0, show = 0;
  std::string strategy, family, objective;
  std::optional<int> budget;
  std::optional<double> seconds, stop_after;
  std::optional<std::uint64_t> seed;
  bool no_save = false, fresh = false, energy = false, auto_repeats = false;
  bool allow_missing = false;  // --allow-missing: a matrix's cells without a usable result do not fail the command
  double time_limit = 0;
  std::string devices;                      // --devices all|0,1,...
  std::string shard;                        // --shard K/N: a tuning matrix's share
  std::vector<std::filesystem::path> merge;  // --merge DIR...: the shards' results directories
  // Where things are: the global options.
  std::vector<std::filesystem::path> kernel_dirs, plugin_dirs;  // besides the built-in ones
  std::optional<std::filesystem::path> cache_dir;               // none: --no-cache
  std::filesystem::path tuning_db;                              // the database written
  std::optional<std::filesystem::path> tuning_db_option;        // --tuning-db, as RunContext takes it
  // Says what the plugins and kernel files that did not load are (the CLI's warnings).
  std::function<void(const PluginRegistry&, const KernelLibrary&)> warn_load;
  // Filled by run_tune_command for its processes.
  std::string run_id;                 // the journal's: one per `gpuk tune`, shared by its processes
  std::filesystem::path journal_dir;  // <cache>/tune-journal, the shard's DIR/journal, or a temporary one
};

// Runs a part of the command (in a child process) and turns its errors into the command's exit
// status (the CLI's with_errors).
using ErrorGuard = std::function<int(const std::function<int()>&)>;

// The exit status of `gpuk tune` (README.md, "Exit status"); errors before any process starts
// are thrown (ConfigError, ...).
int run_tune_command(const TuneCommand& command, const ErrorGuard& guard);

// `gpuk run --devices all|0,1,...`: the config on each GPU, one after another, and a row per GPU
// side by side (report/side_by_side.hpp); with `json`/`csv`, a file per GPU (NAME-gpuN.json).
// False when a GPU's run failed or gave a wrong answer (its row says which); a ConfigError,
// the same on every GPU, is thrown.
bool run_on_devices(const RunSpec& spec, const RunContext& context, const std::string& devices,
                    const std::optional<std::filesystem::path>& json, const std::optional<std::filesystem::path>& csv,
                    const std::string& config);

}  // namespace gpuk
