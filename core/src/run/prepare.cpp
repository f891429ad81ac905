// The road from a problem to kernels ready to launch (run/prepare.hpp): plan, compile, load
// (with the process-wide module cache), check against the device, bind.
#include "run/prepare.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string_view>

#include "gpuk/error.hpp"
#include "plugin/plugin.hpp"

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
    out.kernels = std::make_shared<const CompiledKernels>(jit.compile(file, names));
    out.from_cache = out.kernels->from_cache;
  }
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

// --- load: the process-wide module cache -----------------------------------------------------

namespace {

// A CUBIN is known by its size and a hash of its bytes; two different CUBINs of one size that
// hash alike (2^-64) would share a module, so the whole image is compared too.
struct ModuleKey {
  CUcontext context;
  std::size_t size;
  std::size_t hash;
  auto operator<=>(const ModuleKey&) const = default;
};

struct CachedModule {
  std::weak_ptr<const Module> module;
  std::vector<char> image;  // to tell a hash collision from a hit
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

std::shared_ptr<const Module> load_module(const std::vector<char>& image, const std::string& what) {
  const ModuleKey key{current_context(), image.size(), std::hash<std::string_view>{}({image.data(), image.size()})};
  ModuleCache& cache = module_cache();
  std::lock_guard lock(cache.mutex);
  // Forget modules no one uses any more (their Module unloaded them).
  std::erase_if(cache.modules, [](const auto& entry) { return entry.second.module.expired(); });
  if (const auto it = cache.modules.find(key); it != cache.modules.end() && it->second.image == image)
    if (auto module = it->second.module.lock()) return module;
  auto module = std::make_shared<const Module>(image, what);
  cache.modules[key] = {module, image};
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
                           const std::string& what) {
  if (names.size() != compiled.size()) throw Error("load_kernels: " + std::to_string(names.size()) + " names, " +
                                                   std::to_string(compiled.size()) + " compiled programs");
  LoadedKernels out;
  std::map<const CompiledKernels*, std::shared_ptr<const Module>> modules;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto& module = modules[compiled[i]];
    if (!module) {
      module = load_module(compiled[i]->cubin, what);
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
                           const std::string& what) {
  return load_kernels(names, std::vector<const CompiledKernels*>(names.size(), &compiled), what);
}

// --- check, bind -----------------------------------------------------------------------------

std::optional<Misfit> check_fit(const LaunchPlan& plan, const LoadedKernels& kernels, const LaunchLimits& limits,
                                const DeviceInfo& info, const std::string& label) {
  for (const auto& l : plan.launches) {
    const KernelAttributes& a = kernels.get(l.name_expression).attributes;
    if (static_cast<int>(l.block) > a.max_threads)
      return Misfit{"too many registers for the block size",
                    label + ": " + l.name_expression + " uses " + std::to_string(a.registers) +
                        " registers per thread, so at most " + std::to_string(a.max_threads) +
                        " threads per block; its block is " + std::to_string(l.block)};
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

// --- the whole road --------------------------------------------------------------------------

ReadyVariant ready_variant(const PlannedVariant& planned, const Jit& jit, const DeviceInfo& info,
                           const CompiledKernels* precompiled, const std::vector<std::string>& names) {
  ReadyVariant r;
  const std::vector<std::string> wanted = names.empty() ? kernel_names(planned.plan) : names;
  r.compiled = compile_variant(planned.variant->file(), wanted, jit, precompiled);
  const std::string what = planned.variant->file().path.string() + " " + planned.variant->label();
  r.kernels = load_kernels(*r.compiled.kernels, wanted, what);
  if (const auto misfit = check_fit(planned.plan, r.kernels, planned.limits, info, planned.where)) throw ConfigError(misfit->detail);
  r.functions = bind(planned.plan, r.kernels);
  return r;
}

}  // namespace gpuk
