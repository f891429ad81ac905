// The door between core and the algorithm families. A family is a shared library that exports
// one C function, gpuk_plugin_info(); core loads it at run time and checks its ABI version.
// Core never names a family: it asks the plugin for everything family-specific.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/data.hpp"
#include "device/device.hpp"
#include "gpuk/dtype.hpp"
#include "gpuk/gpuk.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/problem.hpp"

#define GPUK_PLUGIN_ABI_VERSION 12

namespace gpuk {

// A family-specific option (`abs: true` for reduce, `value:` for search, ...).
struct OptionSpec {
  enum class Kind { boolean, integer, number, choice };
  std::string name;
  Kind kind = Kind::boolean;
  std::string default_value;         // as written in YAML; "": none, the option is absent unless given
  std::vector<std::string> choices;  // for Kind::choice
  std::string help;
  // Left out of a problem's options (and so of its tuning key and report) while at its default:
  // an option added to a family after its tuning files were written keeps their keys matching.
  bool omitted_at_default = false;
};

struct CpuTiming {
  std::string name;  // "std::max_element (sequential)"
  std::vector<double> ms;
};

struct BaselineTiming {
  std::string name;  // "cub::DeviceReduce::ArgMax"
  std::vector<double> ms;
  std::string note;  // e.g. "its answer differs from the reference: ..."; empty when it agrees
};

struct Verification {
  bool passed = false;
  std::string detail;  // "value 0.999998 at index 12345" or the first mismatch
};

// One call of a prepared operation, on device memory: the arrays in Launcher::arrays() order,
// the element count, the scratch the Launcher asked for, and the scalar (or nullptr).
struct DeviceCall {
  const CUdeviceptr* arrays = nullptr;
  std::uint64_t n = 0;
  CUdeviceptr scratch = 0;
  std::uint64_t scratch_bytes = 0;  // all of it: at least Launcher::scratch_bytes(target.plan)
  const void* scalar = nullptr;     // ScalarSlot's value: its dtype's bytes
};

// What a Launcher needs to enqueue a variant once: the plan, one function per planned launch,
// the stream, and words naming the variant for error messages.
struct LaunchTarget {
  const LaunchPlan& plan;
  const CUfunction* functions;  // functions[i] runs plan.launches[i]
  CUstream stream;
  const std::string& where;  // "variant onepass BLOCK=256 of kernels_src/reduce/onepass.cu"
};

// Launches one planned kernel with `args`, checked; the error names the kernel and `where`.
void launch_kernel(CUfunction function, const ResolvedLaunch& launch, void** args, CUstream stream,
                   const std::string& where);
// Launches every planned launch, each `repeat` times, all with the same `args`: the whole launch
// sequence of a family whose kernels all take the same arguments.
void launch_plan(const LaunchTarget& target, void** args);

// The device side of one operation: the arrays it takes, the scratch it needs, and the launch
// sequence on device pointers. `gpuk run` (through its Workload's buffers), `gpuk tune` and the
// library API (on the caller's pointers and stream) all launch through it.
class Launcher {
 public:
  virtual ~Launcher() = default;
  // The arrays of a call, in order, sized for the Problem's n.
  virtual std::vector<ArraySlot> arrays() const = 0;
  // The value a call passes besides its arrays, if any.
  virtual std::optional<ScalarSlot> scalar() const { return std::nullopt; }
  // Scratch bytes the variant needs with `plan` for any n up to the Problem's max_n: the kernel's
  // scratch slots and what the family keeps between launches (a counter, spare buffers). One
  // scratch serves every call; it is initialised once (init_scratch), never between calls.
  virtual std::uint64_t scratch_bytes(const LaunchPlan& plan) const = 0;
  // Writes scratch's initial contents (all `bytes` of it), asynchronously on `stream`.
  virtual void init_scratch(CUdeviceptr scratch, std::uint64_t bytes, CUstream stream) const = 0;
  // Enqueues the plan's launches for call.n, asynchronously on target.stream.
  virtual void launch(const LaunchTarget& target, const DeviceCall& call) const = 0;
};

// The byte that Workload::poison() fills every output with.
inline constexpr unsigned char kPoisonByte = 0xA5;

// An output that verify() compares element by element (Workload::expected_outputs).
struct ExpectedOutput {
  std::size_t array = 0;  // its index in device_arrays()
  std::string name;
  DType dtype = DType::float32;
  std::uint64_t length = 0;
  const void* expected = nullptr;  // `length` elements of dtype
  CompareRule rule;                // never `sum` (not element by element) nor `skip`
};

// One family's part of one run, on the host: its data on the device, its outputs, its CPU
// reference, its library baseline. The runner owns the timing, the scratch and the launches (by
// the family's Launcher, on device_arrays()) and calls these in order: upload, (poison,
// launch)..., download, verify.
class Workload {
 public:
  virtual ~Workload() = default;
  // The fewest bytes the kernel must move through device memory: the basis of GB/s.
  virtual std::uint64_t bytes_moved() const = 0;
  virtual void upload(const Stream& stream) = 0;
  // The device arrays, in the order of the family Launcher's arrays(); valid after upload.
  virtual std::vector<CUdeviceptr> device_arrays() const = 0;
  // The Launcher's scalar argument (its ScalarSlot's dtype), or nullptr.
  virtual const void* scalar() const { return nullptr; }
  // Overwrites every output with a poison pattern, so that an unwritten output cannot pass.
  virtual void poison(const Stream& stream) = 0;
  virtual void download(const Stream& stream) = 0;
  // Runs the CPU reference(s) `repeats` times each, keeping the answer for verify().
  virtual std::vector<CpuTiming> cpu_reference(int repeats) = 0;
  virtual Verification verify() const = 0;
  // The library's own algorithm (CUB, Thrust) on the same device input, in this run.
  virtual std::optional<BaselineTiming> library_baseline(int warmup, int repeats, const Stream& stream) = 0;
  // The answer, as name/value pairs for the report ("value", "index").
  virtual std::vector<std::pair<std::string, std::string>> result() const = 0;
  // Writes the downloaded result as .npy.
  virtual void write_result(const std::filesystem::path& path) const = 0;
  // A reference kernel's answer (a declared kernel's `reference: {kernel: ...}`): core has just
  // run the reference variant on device_arrays() and downloaded; the workload keeps what it
  // downloaded as the expected outputs. The default keeps nothing (the three families compute
  // their answer on the CPU).
  virtual void keep_as_reference() {}
  // The arrays (device_arrays() order) whose bytes a sweep has just found on the device to equal
  // an answer that passed verification: the next download() and verify() may leave them out (a
  // large output the variant left as the first one did is not copied back). Empty: none. The
  // default downloads and compares every output.
  virtual void known_good(const std::vector<bool>& arrays) { (void)arrays; }
  // When verify() is compare_arrays(got, expected, rule) for each output it compares, and nothing
  // else: those outputs with their expected values (host memory, valid while the workload lives)
  // and rules, so that a sweep can apply the same rule on the device instead of downloading. The
  // default, nullopt: verify() decides alone (a family's own rule, or an output without an
  // expected value).
  virtual std::optional<std::vector<ExpectedOutput>> expected_outputs() const { return std::nullopt; }
  // Per array (device_arrays() order): the device copy of an in-out array's input that poison()
  // restores it from, or 0 (not in-out). Empty, the default: poison() restores nothing that a
  // sweep could skip.
  virtual std::vector<CUdeviceptr> restore_sources() const { return {}; }
  // The in-out arrays (device_arrays() order) that poison() may leave as they are, until called
  // again: a sweep found that the variant about to be timed leaves them with their input's bytes
  // (reduction's 3.2 GB input, declared in-out but only read, is not copied before every timed
  // run). Empty: restore every one.
  virtual void leave_unrestored(const std::vector<bool>& arrays) { (void)arrays; }
};

// A family's own pick of a kernel for a problem, by size (the third source of the lookup,
// run/choose.hpp).
struct KernelChoice {
  std::string kernel;
  std::map<std::string, std::int64_t> params;  // the others at the metadata's defaults
  std::string why;                             // "for n <= 16384": the report quotes it
};

class FamilyPlugin {
 public:
  virtual ~FamilyPlugin() = default;
  virtual std::string name() const = 0;  // "reduce": the config's family and kernels_src/<name>/
  virtual std::string description() const = 0;
  virtual std::vector<std::string> operations() const = 0;
  virtual std::vector<DType> dtypes() const = 0;
  virtual std::vector<OptionSpec> options() const = 0;
  virtual std::string default_kernel() const = 0;
  // Throws ConfigError (without a file name: the caller adds it) when the options do not go
  // together or do not fit the dtype and n. The default accepts everything.
  virtual void check(const Problem& problem) const;
  // Leading template arguments of every kernel of this family for a problem ("gpuk::Reduce<...>").
  virtual std::vector<std::string> template_args(const Problem& problem) const = 0;
  // Every leading-argument list a kernel file supports (its operations x dtypes x options): what
  // `gpuk check` compiles.
  virtual std::vector<std::vector<std::string>> all_template_args(const KernelFile& file) const = 0;
  // The family's pick for a problem no tuning file covers; nullopt: the default kernel's
  // defaults. Its kernel must serve every n up to problem.max_n.
  virtual std::optional<KernelChoice> choose_kernel(const Problem& problem) const;
  // The device side of an operation (arrays, scratch, launches).
  virtual std::unique_ptr<Launcher> make_launcher(const Problem& problem) const = 0;
  // The host side of a run of `problem` on `input` (which the caller holds while the workload
  // lives): data on the device, CPU reference, baseline. A ConfigError's words are about the
  // problem; the caller adds the config's name.
  virtual std::unique_ptr<Workload> make_workload(const Problem& problem, InputView input) const = 0;
  // The host memory a run of `problem` holds at its peak (input, CPU reference, downloaded
  // outputs, the baseline's copies): a run that needs more than the machine has available is
  // refused before any data is generated (run/host_side.hpp). The default is twice the input.
  virtual std::uint64_t host_bytes(const Problem& problem) const;
  // The family's own interface named `name` (its CPU semantics for the tests: Reducer, Searcher,
  // Sorter), or nullptr: asked for by name, so that no dynamic_cast crosses dlopen (interface_of).
  virtual const void* interface(std::string_view name) const;
};

// The interface I of a loaded plugin (I::kInterface names it), or nullptr when it has none.
template <class I> const I* interface_of(const FamilyPlugin& plugin) {
  return static_cast<const I*>(plugin.interface(I::kInterface));
}

// The C entry points of a plugin (GPUK_PLUGIN defines them): an exception stops here, at the
// edge, and crosses as an error value. create makes the family's plugin, or returns nullptr and
// writes why into `error` (NUL-terminated, cut to `error_size` bytes).
template <class Plugin> FamilyPlugin* create_plugin(char* error, std::size_t error_size) noexcept {
  const auto say = [&](const char* why) {
    if (error_size == 0) return;
    std::strncpy(error, why, error_size - 1);
    error[error_size - 1] = '\0';
  };
  try {
    return new Plugin();
  } catch (const std::exception& e) {
    say(e.what());
  } catch (...) {
    say("an exception that is not a std::exception");
  }
  return nullptr;
}
inline void destroy_plugin(FamilyPlugin* plugin) noexcept { delete plugin; }

}  // namespace gpuk

extern "C" {
struct GpukPluginInfo {
  int abi_version;  // GPUK_PLUGIN_ABI_VERSION of the core the plugin was built against
  const char* family;
  const char* version;  // the gpuk version it was built from
  gpuk::FamilyPlugin* (*create)(char* error, std::size_t error_size);  // never throws (create_plugin)
  void (*destroy)(gpuk::FamilyPlugin*);
};
// Every plugin defines this (see docs/plugins.md), with GPUK_PLUGIN.
const GpukPluginInfo* gpuk_plugin_info();
}

// Defines gpuk_plugin_info() for the family FAMILY ("sort") whose FamilyPlugin is TYPE.
#define GPUK_PLUGIN(FAMILY, TYPE)                                                                         \
  extern "C" const GpukPluginInfo* gpuk_plugin_info() {                                                   \
    static const GpukPluginInfo info = {GPUK_PLUGIN_ABI_VERSION, FAMILY, GPUK_VERSION,                    \
                                        &gpuk::create_plugin<TYPE>, &gpuk::destroy_plugin};              \
    return &info;                                                                                         \
  }

namespace gpuk {

// The loaded family plugins. Searches each directory for libgpuk_family_*.so. Throws ConfigError
// when others can write to a directory or plugin (util/safe_dirs.hpp).
class PluginRegistry {
 public:
  explicit PluginRegistry(std::vector<std::filesystem::path> dirs);
  ~PluginRegistry();
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  // Throws ConfigError naming the families that are there when `family` is not.
  const FamilyPlugin& get(const std::string& family) const;
  const FamilyPlugin* find(const std::string& family) const;
  std::vector<const FamilyPlugin*> all() const;
  std::vector<std::string> names() const;
  const std::vector<std::string>& errors() const { return errors_; }  // plugins that failed to load
  std::filesystem::path path_of(const std::string& family) const;

 private:
  struct Loaded;
  std::vector<std::filesystem::path> dirs_;
  std::vector<std::unique_ptr<Loaded>> plugins_;
  std::vector<std::string> errors_;
};

// The built-in plugin directory, then $GPUK_PLUGINS (':'-separated), then `extra`.
std::vector<std::filesystem::path> plugin_dirs(const std::vector<std::filesystem::path>& extra);

std::string gpuk_version();

}  // namespace gpuk
