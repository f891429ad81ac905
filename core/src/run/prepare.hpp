// One road from a problem to kernels ready to launch, taken by every caller: `gpuk run`,
// `gpuk tune`, `gpuk check` and the library API (gpuk/gpuk.hpp). Each step is a function of its
// own, so that a caller that does one step its own way (the tuner compiles in bulk, on a thread
// pool) still shares the others:
//
//   choose   the variant: the one asked for, else the lookup (run/choose.hpp)
//   plan     its launches for n on this device (plan_launches, kernel/kernel_file.hpp)
//   fit      every device buffer against the device's free memory, and the host arrays against
//            the host's (a run's: refuse_if_run_does_not_fit)
//   compile  with NVRTC or the on-disk cache, or take CUBIN compiled already (compile_variant)
//   load     the CUBIN, once per process and context (load_kernels)
//   check    registers, threads per block and shared memory against the device (check_fit)
//   bind     the plan's launches to their functions (bind)
//
// plan_variant() (run/choose.hpp: choose, then plan) and ready_variant() (compile, load, check,
// bind) chain them for the callers that take every step; prepare_run() is a run's whole chain,
// the fit included, with the family asked once for its Launcher and host memory.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/problem.hpp"
#include "run/choose.hpp"

namespace gpuk {

class FamilyPlugin;
class Launcher;
class Runtime;
struct RunSpec;

// --- compile ---------------------------------------------------------------------------------

// The distinct name expressions of the plan's launches, in order.
std::vector<std::string> kernel_names(const LaunchPlan& plan);
// Every launch entry of the variant, whether or not a plan for some n runs it: what `gpuk check`
// compiles, and what the library API loads (it may run any of them for some n of its bucket).
std::vector<std::string> kernel_names(const Variant& variant);

struct CompiledVariant {
  std::shared_ptr<const CompiledKernels> kernels;  // the first program (its log, its cache state)
  // Every program: one, unless a launch's own -D definitions (LaunchSpec::params of a params_as:
  // defines file) make another (jit.hpp: programs_by_defines).
  std::vector<std::shared_ptr<const CompiledKernels>> programs;
  double ms = 0;            // compile (or cache read) time
  bool from_cache = false;  // from the on-disk cache, or precompiled
};

// Compiles `names` of `file` in one NVRTC program per set of -D definitions (one, but for a
// launch with its own definitions), or takes them from `precompiled` when it holds every one of
// them (tests compile a whole file's variants at once).
CompiledVariant compile_variant(const KernelFile& file, const std::vector<std::string>& names, const Jit& jit,
                                const CompiledKernels* precompiled = nullptr);

// --- load ------------------------------------------------------------------------------------

// What the compiled function asks of the device (cuFuncGetAttribute).
struct KernelAttributes {
  int registers = 0;      // per thread
  int max_threads = 0;    // per block, as the registers allow
  int static_shared = 0;  // bytes per block
  int local_bytes = 0;    // per thread: spills
};

struct LoadedFunction {
  std::string name_expression;
  CUfunction function = nullptr;
  KernelAttributes attributes;
};

// A variant's functions, loaded in the current context. The modules they live in are shared with
// every other load of the same CUBIN in the same context, process-wide (load_kernels).
class LoadedKernels {
 public:
  // Throws Error when `name_expression` was not loaded.
  const LoadedFunction& get(const std::string& name_expression) const;
  const std::vector<LoadedFunction>& functions() const { return functions_; }
  const std::vector<std::shared_ptr<const Module>>& modules() const { return modules_; }
  bool empty() const { return functions_.empty(); }

 private:
  friend LoadedKernels load_kernels(const std::vector<std::string>&, const std::vector<const CompiledKernels*>&,
                                    const std::string&, const ConstantValues*);
  std::vector<std::shared_ptr<const Module>> modules_;
  std::vector<LoadedFunction> functions_;
};

// Loads names[i] from compiled[i] in the calling thread's current context. A CUBIN already
// loaded in this context (by any caller, any thread) is not loaded again: modules are cached
// process-wide by content, context and constants, and unloaded when the last user lets go of
// them. `constants` (a declared kernel's __constant__ symbols: PlannedVariant::constants) are
// written into each module when it is loaded (cuModuleGetGlobal + cuMemcpyHtoD, each checked
// against its symbol's size), and are part of the cache's key: a module is never shared by two
// loads with different constants, so no Operation or run sees another's, and none is written
// while another uses it. `what` names the variant for error messages.
LoadedKernels load_kernels(const std::vector<std::string>& names, const std::vector<const CompiledKernels*>& compiled,
                           const std::string& what, const ConstantValues* constants = nullptr);
LoadedKernels load_kernels(const CompiledKernels& compiled, const std::vector<std::string>& names,
                           const std::string& what, const ConstantValues* constants = nullptr);

// Modules loaded now, over every context (for tests of the cache).
std::size_t loaded_module_count();

// --- check -----------------------------------------------------------------------------------

struct Misfit {
  std::string why;     // short, groups alike failures: "too many registers for the block size"
  std::string detail;  // the whole sentence, with the numbers
};

// Why a launch of the plan cannot run with its compiled function on this device: more threads
// per block than its registers allow, or more static plus dynamic shared memory than a block may
// have; nullopt when every launch fits. `label` names the variant.
std::optional<Misfit> check_fit(const LaunchPlan& plan, const LoadedKernels& kernels, const LaunchLimits& limits,
                                const DeviceInfo& info, const std::string& label);

// --- bind ------------------------------------------------------------------------------------

// The plan's functions, in the plan's order (LaunchTarget::functions).
std::vector<CUfunction> bind(const LaunchPlan& plan, const LoadedKernels& kernels);

// --- fit -------------------------------------------------------------------------------------

// The device arrays a run of `spec` allocates (its Launcher's arrays, without scratch), saturating.
std::uint64_t run_device_bytes(const RunSpec& spec, const Launcher& launcher);
std::uint64_t run_device_bytes(const RunSpec& spec, const FamilyPlugin& plugin);

// Throws DeviceError with the bytes needed and free when a run of `spec` does not fit in the
// device's free memory: the family's arrays (its `launcher`'s), `scratch_bytes`, and with
// flush_l2 the buffer that flushes the L2; then Error when its host arrays (`host_bytes`, the
// family's) do not fit in the host's (refuse_if_host_memory_short, run/host_side.hpp). Called
// before any data is generated, so that a run that cannot fit stops in a second instead of after
// minutes of generating data.
void refuse_if_run_does_not_fit(const RunSpec& spec, const Launcher& launcher, std::uint64_t host_bytes,
                                std::uint64_t scratch_bytes, bool flush_l2, Device& device);
// The same, the family asked for its Launcher and host bytes here.
void refuse_if_run_does_not_fit(const RunSpec& spec, const FamilyPlugin& plugin, std::uint64_t scratch_bytes,
                                bool flush_l2, Device& device);

// --- the whole road --------------------------------------------------------------------------

// The planned variant (plan_variant, run/choose.hpp) is the chain's first stage.

// A planned variant compiled, loaded, checked and bound: ready to launch.
struct ReadyVariant {
  CompiledVariant compiled;
  LoadedKernels kernels;
  std::vector<CUfunction> functions;  // for the plan's launches, in order
};

// compile + load + check + bind, in the current context. `names` (default: the plan's) are
// compiled and loaded. Throws ConfigError when a launch does not fit its compiled function
// (check_fit's sentence), CompileError, DeviceError.
ReadyVariant ready_variant(const PlannedVariant& planned, const Jit& jit, const DeviceInfo& info,
                           const CompiledKernels* precompiled = nullptr, const std::vector<std::string>& names = {});

// How a run config asks for its variant (run/choose.hpp).
VariantRequest variant_request(const RunSpec& spec);

// What no GPU runs of `spec`, refused before a device is opened, so that `gpuk run` without a GPU
// says what is wrong with the config rather than "no GPU": a declared kernel's plan at the
// config's sizes (check_declared_before_gpu, as Engine::prepare asks it).
void refuse_what_no_gpu_runs(const RunSpec& spec, const Runtime& runtime);

// A run's variant made ready (prepare_run): the family's Launcher, the run's only one, handed on
// to the run's Bench; the planned variant; its kernels compiled, loaded, checked and bound.
struct PreparedRun {
  std::unique_ptr<Launcher> launcher;  // the family's, behind the edge (plugin/edge.hpp)
  PlannedVariant planned;
  ReadyVariant ready;
  PreparedRun();
  PreparedRun(PreparedRun&&) noexcept;
  PreparedRun& operator=(PreparedRun&&) noexcept;
  ~PreparedRun();
};

// A run's whole chain on `device`: the family asked once (its Launcher and host bytes), the
// variant planned (plan_variant, reading `tuning`), the run checked to fit the device and the host
// (a run too big for the device says so first, whatever else is wrong with it), then
// ready_variant with the Runtime's JIT for the device's architecture.
PreparedRun prepare_run(const RunSpec& spec, const FamilyPlugin& plugin, const TuningSources& tuning,
                        const Runtime& runtime, Device& device, const CompiledKernels* precompiled = nullptr);

}  // namespace gpuk
