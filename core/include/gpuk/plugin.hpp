// The door between core and the algorithm families. A family is a shared library that exports
// one C function, gpuk_plugin_info(); core loads it at run time and checks its ABI version.
// Core never names a family: it asks the plugin for everything family-specific.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuk/data.hpp"
#include "gpuk/device.hpp"
#include "gpuk/dtype.hpp"
#include "gpuk/kernel_file.hpp"

#define GPUK_PLUGIN_ABI_VERSION 4

namespace gpuk {

struct RunSpec;

// A family-specific config key (`abs: true` for reduce, `value:` for search, ...).
struct OptionSpec {
  enum class Kind { boolean, integer, number, choice };
  std::string name;
  Kind kind = Kind::boolean;
  std::string default_value;         // as it would be written in YAML
  std::vector<std::string> choices;  // for Kind::choice
  std::string help;
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

// What Workload::launch needs to run a variant once: the plan, one function per planned launch,
// the stream, and words naming the variant for error messages.
struct LaunchTarget {
  const LaunchPlan& plan;
  const std::vector<CUfunction>& functions;  // functions[i] runs plan.launches[i]
  const Stream& stream;
  std::string where;  // "variant onepass BLOCK=256 of kernels_src/reduce/onepass.cu"
};

// Launches one planned kernel with `args`, checked; the error names the kernel and `where`.
void launch_kernel(CUfunction function, const ResolvedLaunch& launch, void** args, const Stream& stream,
                   const std::string& where);

// One family's part of one run: its device buffers, its outputs, its CPU reference. The runner
// owns the timing and calls these in order: upload, bind, (poison, launch)..., download, verify.
class Workload {
 public:
  virtual ~Workload() = default;
  // The fewest bytes the kernel must move through device memory: the basis of GB/s.
  virtual std::uint64_t bytes_moved() const = 0;
  virtual void upload(const Stream& stream) = 0;
  // Allocates what the variant's launch plan asks for (scratch).
  virtual void bind(const LaunchPlan& plan) = 0;
  // cuLaunchKernel arguments, the same for every launch of the plan; valid until the next bind.
  virtual std::vector<void*> kernel_args() = 0;
  // Runs the variant once, asynchronously on target.stream. The default launches the plan's
  // launches in order, each with kernel_args(). A family whose launches need other arguments
  // (a sort's digit passes, ping-pong buffers) overrides it; the runner times whatever it enqueues.
  virtual void launch(const LaunchTarget& target);
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
  // Leading template arguments of every kernel of this family for one run ("gpuk::Reduce<...>").
  virtual std::vector<std::string> template_args(const RunSpec& spec) const = 0;
  // Every leading-argument list a kernel file supports (its operations x dtypes x options): what
  // `gpuk check` compiles.
  virtual std::vector<std::vector<std::string>> all_template_args(const KernelFile& file) const = 0;
  virtual std::unique_ptr<Workload> make_workload(const RunSpec& spec, HostArray input) const = 0;
  // The device memory a run of `spec` allocates at most, without scratch: the runner refuses a
  // run that needs more than the device has free before it generates any data. The default is
  // the input alone.
  virtual std::uint64_t device_bytes(const RunSpec& spec) const;
  // The host memory a run of `spec` holds at its peak (input, CPU reference, downloaded outputs,
  // the baseline's copies): a run that needs more than the machine has available is refused
  // before any data is generated (gpuk/host_memory.hpp). The default is twice the input.
  virtual std::uint64_t host_bytes(const RunSpec& spec) const;
};

}  // namespace gpuk

extern "C" {
struct GpukPluginInfo {
  int abi_version;  // GPUK_PLUGIN_ABI_VERSION of the core the plugin was built against
  const char* family;
  const char* version;  // the gpuk version it was built from
  gpuk::FamilyPlugin* (*create)();
  void (*destroy)(gpuk::FamilyPlugin*);
};
// Every plugin defines this (see docs/plugins.md).
const GpukPluginInfo* gpuk_plugin_info();
}

namespace gpuk {

// The loaded family plugins. Searches each directory for libgpuk_family_*.so. Throws ConfigError
// when others can write to a directory or plugin (gpuk/safe_dirs.hpp).
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
