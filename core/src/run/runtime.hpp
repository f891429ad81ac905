// What every `gpuk` command and every library Engine start from: the family plugins, the kernel
// files, the compile cache, the user's tuning database, and one JIT per GPU architecture. Made
// once per process (or Engine) from the directories the user gave; everything after it takes it.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

namespace gpuk {

struct RuntimeOptions {
  std::vector<std::filesystem::path> kernel_dirs;  // after the built-in one and $GPUK_KERNELS
  std::vector<std::filesystem::path> plugin_dirs;  // after the built-in one and $GPUK_PLUGINS
  std::optional<std::filesystem::path> cache_dir;  // default CompileCache::default_dir()
  bool no_cache = false;                           // compile without the on-disk cache
  std::optional<std::filesystem::path> tuning_db;  // default TuningDb::default_path()
};

// The compile cache's directory (nullopt: no cache) and the tuning database's path, as a Runtime
// made from `options` has them (for what runs before, or without, a Runtime: `gpuk tune`).
std::optional<std::filesystem::path> cache_dir_of(const RuntimeOptions& options);
std::filesystem::path tuning_db_path_of(const RuntimeOptions& options);

class Runtime {
 public:
  // Loads the plugins and reads the kernel files; opens no GPU.
  explicit Runtime(const RuntimeOptions& options);
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const PluginRegistry& plugins() const { return plugins_; }
  const KernelLibrary& kernels() const { return kernels_; }
  // The compile cache, opened on first use (opening creates its directory and clears what killed
  // writers left), so that a command that compiles nothing leaves it alone.
  const CompileCache& cache() const;
  // The user's tuning database as given (nullopt: TuningDb::default_path()), and its path.
  const std::optional<std::filesystem::path>& tuning_db() const { return tuning_db_; }
  std::filesystem::path tuning_db_path() const;
  // The plugins and kernel files that did not load, one sentence each.
  std::vector<std::string> load_problems() const;

  // The JIT for `arch` ("sm_90"): the kernel files' include directories, the cache when it is
  // on. Made on first use and kept; any thread may use it.
  const Jit& jit(const std::string& arch) const;

 private:
  PluginRegistry plugins_;
  KernelLibrary kernels_;
  std::optional<std::filesystem::path> cache_dir_;  // nullopt: no cache
  mutable std::once_flag cache_once_;
  mutable std::unique_ptr<const CompileCache> cache_;
  std::optional<std::filesystem::path> tuning_db_;
  mutable std::mutex jit_mutex_;
  mutable std::map<std::string, std::unique_ptr<const Jit>> jits_;
};

}  // namespace gpuk
