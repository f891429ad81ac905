// A run's YAML config, read into a typed spec (README.md, "Config reference").
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/data.hpp"
#include "gpuk/dtype.hpp"
#include "kernel/expr.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/problem.hpp"

namespace gpuk {

class PluginRegistry;
class KernelLibrary;

// A caller's own check of a declared kernel's outputs (the library's tuning call, gpuk/tuning.hpp),
// in place of the element-wise comparison: the expected outputs (the given answers, or the
// reference's) and the outputs just downloaded, by argument name. Returns whether they pass; the
// message says why not (or what passed).
using OutputCheck = std::function<bool(const std::map<std::string, const HostArray*>& expected,
                                       const std::map<std::string, const HostArray*>& got, std::string& message)>;

struct RunSpec {
  std::filesystem::path path;  // the config file
  std::string family;
  std::string operation;
  std::string kernel;                           // kernel file name (stem)
  std::map<std::string, std::int64_t> params;   // values for the kernel's template parameters
  DType dtype = DType::float32;
  std::uint64_t size = 0;
  DataSpec data;
  int warmup = 10;
  int repeats = 100;
  int cpu_repeats = 5;
  bool verify = true;
  bool baseline = true;
  std::optional<std::filesystem::path> output;  // write the result as .npy
  std::map<std::string, std::string> options;   // family options, every one filled (defaults too)
  // How the variant is chosen (run/choose.hpp). `lookup`: the config names no kernel (or says
  // `variant: auto`), so the fastest known runs; kernel/params then hold the default kernel.
  // `named`: `kernel:` or `params:` given, run exactly. `defaults` (`variant: default`): the
  // default kernel with its metadata's defaults.
  enum class Pick { lookup, named, defaults };
  Pick pick = Pick::named;
  std::optional<std::filesystem::path> tuning_file;  // `tuning: FILE`: the lookup reads it instead of the database

  // A declared kernel's run (config/declared_config.cpp, docs/declared.md): its named sizes, the
  // kernel as declared (the config's `declare:` over the file's own declaration), the data of each
  // input array, the reference (another kernel of the family, or .npy files of the outputs), the
  // comparison per output and a baseline kernel timed on the same inputs.
  std::map<std::string, std::int64_t> sizes;
  std::shared_ptr<const KernelFile> declared;
  std::map<std::string, DataSpec> arg_data;
  std::string reference_kernel;
  std::map<std::string, std::int64_t> reference_params;
  // Further params of reference_kernel, each tried in order when the one before does not compile
  // (tune_kernel without an answer: the space's next points, as its first may use too much
  // shared memory).
  std::vector<std::map<std::string, std::int64_t>> reference_fallbacks;
  std::map<std::string, std::filesystem::path> expected;  // reference: npy: {output: file}
  std::map<std::string, CompareRule> compare;
  std::string baseline_kernel;
  // Its constant memory (kernel/constants.hpp): the config's data: of each constant, and the
  // values, made from the declaration and that data by the config reader. A caller with the
  // bytes in memory (the C++ and Python tuning calls) sets `constants` to
  // constant_values(*declared->declaration, sizes, {}, given) instead.
  std::map<std::string, DataSpec> constant_data;
  std::shared_ptr<const ConstantValues> constants;
  // From memory instead of the config (the library's tuning call): input arrays by argument name
  // (over `data:`), expected outputs by name (over `reference:`), and a check of the outputs in
  // place of `compare:` (run/output_check.hpp).
  std::map<std::string, std::shared_ptr<const HostArray>> input_arrays, expected_arrays;
  OutputCheck output_check;

  bool option_bool(const std::string& name) const;
  const std::string& option(const std::string& name) const;
};

// The problem a run config describes (max_n = n).
inline Problem problem_of(const RunSpec& spec) {
  Problem p;
  p.family = spec.family;
  p.operation = spec.operation;
  p.dtype = spec.dtype;
  p.options = spec.options;
  p.n = p.max_n = spec.size;
  p.sizes = spec.sizes;
  p.compare = spec.compare;
  if (spec.declared) p.declaration = spec.declared->declaration;
  p.constants = spec.constants;
  return p;
}

// Reads and checks a config against the plugins and kernel files that are there. Every error
// is a ConfigError "file:line:column: what". A data file is opened and its header read: a .npy
// file gives the size and dtype a config leaves out. `input` (`gpuk run --input FILE.npy`)
// replaces the config's data, size and dtype with that file's.
RunSpec load_run_spec(const std::filesystem::path& path, const PluginRegistry& plugins,
                      const KernelLibrary& kernels, const std::optional<std::filesystem::path>& input = {});
RunSpec parse_run_spec(const std::string& yaml_text, const std::filesystem::path& path,
                       const PluginRegistry& plugins, const KernelLibrary& kernels,
                       const std::optional<std::filesystem::path>& input = {});

// A `gpuk tune` config: the workload of a run config (family, operation, options, dtype, size,
// data, warmup, repeats, verify) plus the space to sweep and how (docs/tuning.md).
struct TuneConstraint {
  Expr expr;
  int line = 0;
};

// How a sweep picks its points, and what it ranks them by: kernel time, energy per call, or
// energy x delay (docs/tuning.md). Their names, one table each (config.cpp), are what configs,
// the command line, reports and the tuning database say.
enum class TuneStrategy { exhaustive, random, anneal, bayes };
const char* strategy_name(TuneStrategy s);  // "exhaustive", "random", "anneal", "bayes"
std::optional<TuneStrategy> parse_strategy(std::string_view name);
const std::vector<std::string>& strategy_names();
enum class TuneObjective { time, energy, edp };
const char* objective_name(TuneObjective o);  // "time", "energy", "edp"
std::optional<TuneObjective> parse_objective(std::string_view name);
const std::vector<std::string>& objective_names();
enum class FlushL2 { automatic, on, off };

struct TuneSpec {
  RunSpec run;                       // run.kernel/params: the first kernel and its defaults
  std::vector<std::string> kernels;  // kernel files to sweep (`kernels: all` lists every one that fits)
  bool all_kernels = false;
  // Values to sweep per parameter name, replacing the metadata's list; a parameter not named
  // sweeps the metadata's allowed values.
  std::map<std::string, std::vector<std::int64_t>> params;
  std::vector<TuneConstraint> constraints;  // extra constraints between parameters
  // `points:` the only points allowed (each a mapping of every parameter of a kernel being
  // tuned), still filtered by the constraints; empty: every point of the value lists.
  std::vector<std::map<std::string, std::int64_t>> points;
  TuneStrategy strategy = TuneStrategy::exhaustive;
  std::optional<int> budget_evaluations;
  std::optional<double> budget_seconds;
  std::uint64_t seed = 1;
  int recheck_top = 5;      // the best N are measured again, interleaved
  int recheck_repeats = 0;  // 0: 2 x repeats (with recheck_auto false)
  TuneObjective objective = TuneObjective::time;
  // `objective: {metric: NAME, higher_is_better: BOOL}` (declared kernels): one of the kernel's
  // metrics ranks the variants instead, evaluated at each one's times. The tuning database keeps
  // winners by time, energy or edp only, so such a sweep saves none.
  struct MetricObjective {
    std::string name, expression;
    bool higher_is_better = true;
  };
  std::optional<MetricObjective> metric_objective;
  bool energy = false;        // `energy: true`: measure energy and power under any objective
  bool auto_repeats = false;  // `repeats: auto`: each variant timed until its median is known well
  bool recheck_auto = true;   // the recheck times until the median is known well, unless
                              // `recheck.repeats` is a number
  double auto_bound = 0.01;   // `auto_repeats.bound`: the median's 95% CI half-width, relative
  double auto_seconds = 1.0;  // `auto_repeats.seconds`: most time spent timing one variant
  FlushL2 flush_l2 = FlushL2::automatic;
  int show = 10;            // rows in the ranked table
  bool save = true;         // write the winner to the tuning database
};

TuneSpec load_tune_spec(const std::filesystem::path& path, const PluginRegistry& plugins, const KernelLibrary& kernels);
TuneSpec parse_tune_spec(const std::string& yaml_text, const std::filesystem::path& path,
                         const PluginRegistry& plugins, const KernelLibrary& kernels);

// What a YAML config is for, read from its keys: a tuning matrix lists `operations:`; a tune
// config has a key only tuning reads (kernels, strategy, budget, constraints, recheck); anything
// else is a run config. A file that is not a YAML mapping counts as a run config (whose parser
// says what is wrong with it).
enum class ConfigKind { run, tune, matrix };
ConfigKind config_kind(const std::string& yaml_text);
ConfigKind config_kind_of_file(const std::filesystem::path& path);  // throws ConfigError when unreadable

// The value-list grammar of kernel metadata (docs/kernels.md), for tune configs: a list
// [1, 2, 4], a single value, or a mapping with any of values: [...], range: [lo, hi(, step)],
// pow2: [lo, hi]. Returns the values sorted, without duplicates.
std::vector<std::int64_t> parse_value_list(const std::string& yaml_text, const std::string& what);

}  // namespace gpuk
