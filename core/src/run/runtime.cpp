#include "run/runtime.hpp"

#include "tuning/tuning_db.hpp"

namespace gpuk {

std::optional<std::filesystem::path> cache_dir_of(const RuntimeOptions& o) {
  if (o.no_cache) return std::nullopt;
  return o.cache_dir ? *o.cache_dir : CompileCache::default_dir();
}

std::filesystem::path tuning_db_path_of(const RuntimeOptions& o) {
  return o.tuning_db ? *o.tuning_db : TuningDb::default_path();
}

Runtime::Runtime(const RuntimeOptions& options)
    : plugins_(plugin_dirs(options.plugin_dirs)),
      kernels_(kernel_dirs(options.kernel_dirs)),
      cache_dir_(cache_dir_of(options)),
      tuning_db_(options.tuning_db) {}

const CompileCache& Runtime::cache() const {
  std::call_once(cache_once_, [&] { cache_ = std::make_unique<const CompileCache>(cache_dir_); });
  return *cache_;
}

std::filesystem::path Runtime::tuning_db_path() const { return tuning_db_ ? *tuning_db_ : TuningDb::default_path(); }

std::vector<std::string> Runtime::load_problems() const {
  std::vector<std::string> problems = plugins_.errors();
  problems.insert(problems.end(), kernels_.errors().begin(), kernels_.errors().end());
  return problems;
}

const Jit& Runtime::jit(const std::string& arch) const {
  std::lock_guard lock(jit_mutex_);
  auto& jit = jits_[arch];
  if (!jit) {
    const CompileCache& compile_cache = cache();
    jit = std::make_unique<const Jit>(jit_options(arch, kernels_), compile_cache.enabled() ? &compile_cache : nullptr);
  }
  return *jit;
}

}  // namespace gpuk
