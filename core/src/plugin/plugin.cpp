#include "plugin/plugin.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "device/host_memory.hpp"
#include "gpuk/error.hpp"
#include "plugin/edge.hpp"
#include "util/install_dirs.hpp"
#include "util/safe_dirs.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

std::string gpuk_version() { return GPUK_VERSION; }

void launch_kernel(CUfunction function, const ResolvedLaunch& l, void** args, CUstream stream,
                   const std::string& where) {
  // Above 48 KiB of shared memory, static and dynamic together, a function must opt in to its
  // dynamic share (the plan was checked against the device's opt-in limit). Host-side calls,
  // idempotent and cheap; none for a launch without dynamic shared memory.
  if (l.shared_bytes > 0) {
    int static_bytes = 0;
    if (l.shared_bytes <= kSharedWithoutOptIn)
      GPUK_CU(driver().cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
              "reading the static shared memory of " + l.name_expression + " of " + where);
    if (static_cast<std::uint64_t>(static_bytes) + l.shared_bytes > kSharedWithoutOptIn)
      GPUK_CU(driver().cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          static_cast<int>(l.shared_bytes)),
              "opting " + l.name_expression + " of " + where + " in to " + std::to_string(l.shared_bytes) +
                  " bytes of dynamic shared memory (" + std::to_string(static_bytes) + " static)");
  }
  GPUK_CU(driver().cuLaunchKernel(function, l.grid, l.grid_y, l.grid_z, l.block, l.block_y, l.block_z, l.shared_bytes, stream, args, nullptr),
          "launching " + l.name_expression + " of " + where);
}

void launch_plan(const LaunchTarget& target, void** args) {
  for (std::size_t i = 0; i < target.plan.launches.size(); ++i)
    for (std::uint32_t r = 0; r < target.plan.launches[i].repeat; ++r)
      launch_kernel(target.functions[i], target.plan.launches[i], args, target.stream, target.where);
}

std::uint64_t FamilyPlugin::host_bytes(const Problem& problem) const {
  return bytes_for(problem.n, 2 * dtype_size(problem.dtype));
}

void FamilyPlugin::check(const Problem&) const {}

const void* FamilyPlugin::interface(std::string_view) const { return nullptr; }

std::optional<KernelChoice> FamilyPlugin::choose_kernel(const Problem&) const { return std::nullopt; }

struct PluginRegistry::Loaded {
  void* handle = nullptr;
  const GpukPluginInfo* info = nullptr;
  FamilyPlugin* made = nullptr;          // the plugin's own object: core calls it only through `plugin`
  std::unique_ptr<FamilyPlugin> plugin;  // `made` behind the edge (plugin/edge.hpp)
  fs::path path;
  ~Loaded() {
    plugin.reset();
    if (made) info->destroy(made);
    // The library stays mapped: objects it created (exceptions, strings) may outlive the registry.
  }
};

PluginRegistry::PluginRegistry(std::vector<fs::path> dirs) : dirs_(std::move(dirs)) {
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      // A directory the user named (--plugins, $GPUK_PLUGINS) and mistyped is said, as for kernels.
      if (dir != builtin_plugin_dir())
        errors_.push_back(dir.string() + (fs::exists(dir, ec) ? ": not a directory; --plugins and $GPUK_PLUGINS name directories"
                                                              : ": plugin directory does not exist"));
      continue;
    }
    const DirOrigin origin = origin_of(dir, builtin_plugin_dir());
    refuse_if_writable_by_others(dir, "plugin directory", true, origin);  // a plugin runs as you
    std::vector<fs::path> paths;
    // increment(ec), not a range-for: a directory that fails while being read is reported, not thrown.
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.rfind("libgpuk_family_", 0) == 0 && it->path().extension() == ".so") paths.push_back(it->path());
    }
    if (ec) errors_.push_back(dir.string() + ": cannot read the plugin directory: " + ec.message());
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) {
      refuse_if_writable_by_others(path, "plugin", false, origin);
      refuse_link_target_if_writable_by_others(path, "plugin", origin);
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        errors_.push_back(path.string() + ": cannot load plugin: " + dlerror());
        continue;
      }
      using InfoFn = const GpukPluginInfo* (*)();
      auto fn = reinterpret_cast<InfoFn>(dlsym(handle, "gpuk_plugin_info"));
      if (!fn) {
        errors_.push_back(path.string() + ": not a gpuk plugin (no gpuk_plugin_info symbol)");
        continue;
      }
      const GpukPluginInfo* info = fn();
      if (!info || info->abi_version != GPUK_PLUGIN_ABI_VERSION) {
        errors_.push_back(path.string() + ": plugin ABI version " + std::to_string(info ? info->abi_version : -1) +
                          " does not match this gpuk's " + std::to_string(GPUK_PLUGIN_ABI_VERSION) +
                          "; rebuild the plugin against this gpuk");
        continue;
      }
      // A later directory's plugin for the same family replaces an earlier one.
      std::erase_if(plugins_, [&](const auto& p) { return p->info->family == std::string(info->family); });
      auto loaded = std::make_unique<Loaded>();
      loaded->handle = handle;
      loaded->info = info;
      loaded->path = path;
      char why[512] = "";
      loaded->made = info->create(why, sizeof why);
      if (!loaded->made) {
        errors_.push_back(path.string() + ": plugin failed to start: " + (why[0] ? why : "its create() made nothing"));
        continue;
      }
      loaded->plugin = guard_plugin(*loaded->made, info->family);
      plugins_.push_back(std::move(loaded));
    }
  }
}

PluginRegistry::~PluginRegistry() = default;

const FamilyPlugin* PluginRegistry::find(const std::string& family) const {
  for (const auto& p : plugins_)
    if (p->plugin->name() == family) return p->plugin.get();
  return nullptr;
}

const FamilyPlugin& PluginRegistry::get(const std::string& family) const {
  if (const FamilyPlugin* p = find(family)) return *p;
  std::vector<std::string> dirs;
  for (const auto& d : dirs_) dirs.push_back(d.string());
  std::string message = "no plugin for family '" + family + "'" + did_you_mean(family, names()) +
                        "; families found: " + (plugins_.empty() ? "(none)" : join(names())) +
                        "; plugin directories searched: " + join(dirs);
  for (const auto& e : errors_) message += "\n  " + e;
  throw ConfigError(message);
}

std::vector<const FamilyPlugin*> PluginRegistry::all() const {
  std::vector<const FamilyPlugin*> out;
  for (const auto& p : plugins_) out.push_back(p->plugin.get());
  return out;
}

std::vector<std::string> PluginRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& p : plugins_) out.push_back(p->plugin->name());
  return out;
}

fs::path PluginRegistry::path_of(const std::string& family) const {
  for (const auto& p : plugins_)
    if (p->plugin->name() == family) return p->path;
  return {};
}

std::vector<fs::path> plugin_dirs(const std::vector<fs::path>& extra) {
  return search_dirs(builtin_plugin_dir(), "GPUK_PLUGINS", extra);
}

}  // namespace gpuk
