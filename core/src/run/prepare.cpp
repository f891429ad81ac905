// The road from a problem to kernels ready to launch (run/prepare.hpp): plan, compile, load
// (with the process-wide module cache), check against the device, bind.
#include "run/prepare.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string_view>

#include "config/config.hpp"
#include "device/host_memory.hpp"
#include "gpuk/error.hpp"
#include "kernel/constants.hpp"
#include "plugin/edge.hpp"
#include "plugin/plugin.hpp"
#include "run/host_side.hpp"
#include "run/runtime.hpp"

namespace gpuk {

// --- compile ---------------------------------------------------------------------------------

std::vector<std::string> kernel_names(const LaunchPlan& plan) {
  std::vector<std::string> names;
  for (const auto& l : plan.launches)
    if (std::find(names.begin(), names.end(), l.name_expression) == names.end()) names.push_back(l.name_expression);
  return names;
}

std::vector<std::string> kernel_names(const Variant& variant) {
  std::vector<std::string> names;
  for (const auto& l : variant.file().launches)
    if (const std::string name = variant.name_expression(l); std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  return names;
}

CompiledVariant compile_variant(const KernelFile& file, const std::vector<std::string>& names, const Jit& jit,
                                const CompiledKernels* precompiled) {
  const auto start = std::chrono::steady_clock::now();
  CompiledVariant out;
  const bool reuse = precompiled && std::all_of(names.begin(), names.end(), [&](const std::string& name) {
                       const auto& have = precompiled->name_expressions;
                       return std::find(have.begin(), have.end(), name) != have.end();
                     });
  if (reuse) {
    // Shares the caller's object without owning it: it outlives the run that uses it.
    out.kernels = std::shared_ptr<const CompiledKernels>(precompiled, [](const CompiledKernels*) {});
    out.from_cache = true;
  } else {
    out.from_cache = true;
    for (const auto& program : programs_by_defines(names)) {
      out.programs.push_back(std::make_shared<const CompiledKernels>(jit.compile(file, program)));
      out.from_cache = out.from_cache && out.programs.back()->from_cache;
    }
    out.kernels = out.programs.front();
  }
  if (out.programs.empty()) out.programs.push_back(out.kernels);
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

// --- load: the process-wide module cache -----------------------------------------------------

namespace {

// A CUBIN is known by its size and a hash of its bytes; two different CUBINs of one size that
// hash alike (2^-64) would share a module, so the whole image is compared too.
// A module with constants written into it is known by them too (their hash, and the values).
struct ModuleKey {
  CUcontext context;
  std::size_t size;
  std::size_t hash;
  std::size_t constants;
  auto operator<=>(const ModuleKey&) const = default;
};

struct CachedModule {
  std::weak_ptr<const Module> module;
  std::vector<char> image;  // to tell a hash collision from a hit
  std::shared_ptr<const ConstantValues> constants;
};

struct ModuleCache {
  std::mutex mutex;
  std::map<ModuleKey, CachedModule> modules;
};

ModuleCache& module_cache() {
  static ModuleCache* cache = new ModuleCache;  // never destroyed: modules may outlive static destruction
  return *cache;
}

CUcontext current_context() {
  CUcontext context = nullptr;
  GPUK_CU(driver().cuCtxGetCurrent(&context));
  if (!context) throw DeviceError("no CUDA context is current on this thread: open a gpuk::Device first");
  return context;
}

std::shared_ptr<const Module> load_module(const std::vector<char>& image, const std::string& what,
                                          const ConstantValues* constants) {
  if (constants && constants->empty()) constants = nullptr;
  const ModuleKey key{current_context(), image.size(), std::hash<std::string_view>{}({image.data(), image.size()}),
                      constants_hash(constants)};
  ModuleCache& cache = module_cache();
  std::lock_guard lock(cache.mutex);
  // Forget modules no one uses any more (their Module unloaded them).
  std::erase_if(cache.modules, [](const auto& entry) { return entry.second.module.expired(); });
  if (const auto it = cache.modules.find(key);
      it != cache.modules.end() && it->second.image == image && same_constants(it->second.constants.get(), constants))
    if (auto module = it->second.module.lock()) return module;
  auto module = std::make_shared<const Module>(image, what);
  if (constants)
    for (const auto& [name, value] : *constants) module->write_global(name, value->data(), value->bytes());
  cache.modules[key] = {module, image, constants ? std::make_shared<const ConstantValues>(*constants) : nullptr};
  return module;
}

int attribute(CUfunction f, CUfunction_attribute a, const std::string& what) {
  int value = 0;
  GPUK_CU(driver().cuFuncGetAttribute(&value, a, f), what);
  return value;
}

}  // namespace

std::size_t loaded_module_count() {
  ModuleCache& cache = module_cache();
  std::lock_guard lock(cache.mutex);
  return static_cast<std::size_t>(std::count_if(cache.modules.begin(), cache.modules.end(),
                                                [](const auto& entry) { return !entry.second.module.expired(); }));
}

const LoadedFunction& LoadedKernels::get(const std::string& name_expression) const {
  for (const auto& f : functions_)
    if (f.name_expression == name_expression) return f;
  throw Error("no loaded kernel for " + name_expression);
}

LoadedKernels load_kernels(const std::vector<std::string>& names, const std::vector<const CompiledKernels*>& compiled,
                           const std::string& what, const ConstantValues* constants) {
  if (names.size() != compiled.size()) throw Error("load_kernels: " + std::to_string(names.size()) + " names, " +
                                                   std::to_string(compiled.size()) + " compiled programs");
  LoadedKernels out;
  std::map<const CompiledKernels*, std::shared_ptr<const Module>> modules;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto& module = modules[compiled[i]];
    if (!module) {
      module = load_module(compiled[i]->cubin, what, constants);
      out.modules_.push_back(module);
    }
    LoadedFunction f;
    f.name_expression = names[i];
    f.function = module->function(compiled[i]->lowered(names[i]));
    const std::string context = names[i] + " of " + what;
    f.attributes.registers = attribute(f.function, CU_FUNC_ATTRIBUTE_NUM_REGS, context);
    f.attributes.max_threads = attribute(f.function, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, context);
    f.attributes.static_shared = attribute(f.function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, context);
    f.attributes.local_bytes = attribute(f.function, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, context);
    out.functions_.push_back(std::move(f));
  }
  return out;
}

LoadedKernels load_kernels(const CompiledKernels& compiled, const std::vector<std::string>& names,
                           const std::string& what, const ConstantValues* constants) {
  return load_kernels(names, std::vector<const CompiledKernels*>(names.size(), &compiled), what, constants);
}

// --- check, bind -----------------------------------------------------------------------------

std::optional<Misfit> check_fit(const LaunchPlan& plan, const LoadedKernels& kernels, const LaunchLimits& limits,
                                const DeviceInfo& info, const std::string& label) {
  for (const auto& l : plan.launches) {
    const KernelAttributes& a = kernels.get(l.name_expression).attributes;
    if (static_cast<std::int64_t>(l.threads()) > a.max_threads)
      return Misfit{"too many registers for the block size",
                    label + ": " + l.name_expression + " uses " + std::to_string(a.registers) +
                        " registers per thread, so at most " + std::to_string(a.max_threads) +
                        " threads per block; its block is " + std::to_string(l.threads())};
    if (a.static_shared + static_cast<std::int64_t>(l.shared_bytes) > limits.max_shared_bytes)
      return Misfit{"more shared memory than a block may use",
                    label + ": " + l.name_expression + " needs " + std::to_string(a.static_shared) +
                        " bytes of static and " + std::to_string(l.shared_bytes) + " of dynamic shared memory; " +
                        info.name + " gives a block at most " + std::to_string(limits.max_shared_bytes) +
                        " (with opt-in)"};
  }
  return std::nullopt;
}

std::vector<CUfunction> bind(const LaunchPlan& plan, const LoadedKernels& kernels) {
  std::vector<CUfunction> functions;
  functions.reserve(plan.launches.size());
  for (const auto& l : plan.launches) functions.push_back(kernels.get(l.name_expression).function);
  return functions;
}

// --- fit -------------------------------------------------------------------------------------

namespace {

// Throws DeviceError when `bytes` (every buffer of the run: the input, the family's other
// buffers, scratch, a flush buffer) exceed the device's free memory. The message names the
// input's share and the whole, and who needs it ("the sort run").
void refuse_if_does_not_fit(std::uint64_t input_bytes, std::uint64_t bytes, const std::string& who, Device& device) {
  bytes = std::max(bytes, input_bytes);
  const std::uint64_t free = device.free_memory();
  if (bytes <= free) return;
  std::string what = "the input needs " + std::to_string(input_bytes) + " bytes of device memory";
  if (bytes > input_bytes) what += " (" + std::to_string(bytes) + " with " + who + "'s other buffers)";
  throw DeviceError(what + "; " + device.info().name + " has " + std::to_string(free) + " bytes free");
}

}  // namespace

// Everything a run allocates on the device, counted before any data exists. The library
// baseline's buffers are checked when they are allocated (DeviceBuffer's error names the bytes
// asked for and free).
std::uint64_t run_device_bytes(const RunSpec&, const Launcher& launcher) {
  std::uint64_t bytes = 0;
  for (const ArraySlot& a : launcher.arrays()) bytes = add_bytes(bytes, a.bytes);
  return bytes;
}

std::uint64_t run_device_bytes(const RunSpec& spec, const FamilyPlugin& plugin) {
  return run_device_bytes(spec, *plugin.make_launcher(problem_of(spec)));
}

void refuse_if_run_does_not_fit(const RunSpec& spec, const Launcher& launcher, std::uint64_t host_bytes,
                                std::uint64_t scratch_bytes, bool flush_l2, Device& device) {
  std::uint64_t bytes = add_bytes(run_device_bytes(spec, launcher), scratch_bytes);
  if (flush_l2) bytes = add_bytes(bytes, static_cast<std::uint64_t>(2 * device.info().l2_bytes));
  // A declared kernel's input is its declared arrays (their lengths x dtype sizes), not the
  // product of its sizes, which counts no array.
  const std::uint64_t input_bytes =
      spec.declared ? run_device_bytes(spec, launcher) : bytes_for(spec.size, dtype_size(spec.dtype));
  refuse_if_does_not_fit(input_bytes, bytes, "the " + spec.family + " run", device);
  // The host arrays too: a size too large for the machine is refused here, not by the OOM killer.
  refuse_if_host_memory_short(spec, host_bytes);
}

void refuse_if_run_does_not_fit(const RunSpec& spec, const FamilyPlugin& plugin, std::uint64_t scratch_bytes,
                                bool flush_l2, Device& device) {
  const FamilyParts family = family_parts(plugin, problem_of(spec));
  refuse_if_run_does_not_fit(spec, *family.launcher, family.host_bytes, scratch_bytes, flush_l2, device);
}

// --- the whole road --------------------------------------------------------------------------

ReadyVariant ready_variant(const PlannedVariant& planned, const Jit& jit, const DeviceInfo& info,
                           const CompiledKernels* precompiled, const std::vector<std::string>& names) {
  ReadyVariant r;
  const std::vector<std::string> wanted = names.empty() ? kernel_names(planned.plan) : names;
  r.compiled = compile_variant(planned.variant->file(), wanted, jit, precompiled);
  const std::string what = planned.variant->file().path.string() + " " + planned.variant->label();
  std::vector<const CompiledKernels*> programs;  // per name, the program that holds it
  for (const auto& name : wanted) {
    const auto it = std::find_if(r.compiled.programs.begin(), r.compiled.programs.end(), [&](const auto& p) {
      return std::find(p->name_expressions.begin(), p->name_expressions.end(), name) != p->name_expressions.end();
    });
    programs.push_back(it == r.compiled.programs.end() ? r.compiled.kernels.get() : it->get());
  }
  r.kernels = load_kernels(wanted, programs, what, planned.constants.get());
  if (const auto misfit = check_fit(planned.plan, r.kernels, planned.limits, info, planned.where)) throw ConfigError(misfit->detail);
  r.functions = bind(planned.plan, r.kernels);
  return r;
}

VariantRequest variant_request(const RunSpec& spec) {
  VariantRequest r;
  r.mode = spec.pick == RunSpec::Pick::named      ? VariantRequest::Mode::named
           : spec.pick == RunSpec::Pick::defaults ? VariantRequest::Mode::defaults
                                                  : VariantRequest::Mode::lookup;
  r.kernel = spec.kernel;
  r.params = spec.params;
  return r;
}

void refuse_what_no_gpu_runs(const RunSpec& spec, const Runtime& runtime) {
  const Problem problem = problem_of(spec);
  if (problem.declaration)
    check_declared_before_gpu(problem, variant_request(spec), runtime.plugins().get(spec.family), runtime.kernels());
}

PreparedRun::PreparedRun() = default;
PreparedRun::PreparedRun(PreparedRun&&) noexcept = default;
PreparedRun& PreparedRun::operator=(PreparedRun&&) noexcept = default;
PreparedRun::~PreparedRun() = default;

PreparedRun prepare_run(const RunSpec& spec, const FamilyPlugin& plugin, const TuningSources& tuning,
                        const Runtime& runtime, Device& device, const CompiledKernels* precompiled) {
  const Problem problem = problem_of(spec);
  const DeviceInfo& info = device.info();
  FamilyParts family = family_parts(plugin, problem);
  PreparedRun r;
  try {
    r.planned = plan_variant(problem, variant_request(spec), plugin, runtime.kernels(), info, tuning);
  } catch (const ConfigError&) {
    refuse_if_run_does_not_fit(spec, *family.launcher, family.host_bytes, 0, false, device);
    throw;
  }
  refuse_if_run_does_not_fit(spec, *family.launcher, family.host_bytes, family.launcher->scratch_bytes(r.planned.plan),
                             false, device);
  r.ready = ready_variant(r.planned, runtime.jit(info.arch()), info, precompiled);
  r.launcher = std::move(family.launcher);
  return r;
}

}  // namespace gpuk
