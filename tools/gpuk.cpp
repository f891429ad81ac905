// The gpuk command line: parses arguments and calls core. Nothing here knows a family.
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>

#include "gpuk/config.hpp"
#include "gpuk/device.hpp"
#include "gpuk/error.hpp"
#include "gpuk/jit.hpp"
#include "gpuk/kernel_file.hpp"
#include "gpuk/plugin.hpp"
#include "gpuk/runner.hpp"
#include "gpuk/text.hpp"

namespace fs = std::filesystem;
using namespace gpuk;

namespace {

struct Global {
  std::vector<fs::path> kernels, plugins;
  std::optional<fs::path> cache_dir;
  bool no_cache = false;
};

std::optional<fs::path> cache_dir(const Global& g) {
  if (g.no_cache) return std::nullopt;
  return g.cache_dir ? *g.cache_dir : CompileCache::default_dir();
}

void print_load_problems(const PluginRegistry& plugins, const KernelLibrary& kernels) {
  for (const auto& e : plugins.errors()) std::cerr << "gpuk: warning: " << e << "\n";
  for (const auto& e : kernels.errors()) std::cerr << "gpuk: warning: " << e << "\n";
}

int cmd_list(const Global& g) {
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  std::cout << "Families (plugins):\n";
  if (plugins.all().empty()) std::cout << "  (none found)\n";
  for (const FamilyPlugin* p : plugins.all()) {
    std::vector<std::string> dtypes;
    for (DType t : p->dtypes()) dtypes.emplace_back(dtype_name(t));
    std::cout << "  " << p->name() << "  " << p->description() << "\n"
              << "    plugin      " << plugins.path_of(p->name()).string() << "\n"
              << "    operations  " << join(p->operations()) << "\n"
              << "    dtypes      " << join(dtypes) << "\n";
    for (const auto& o : p->options())
      std::cout << "    option      " << o.name << " (default " << o.default_value << "): " << o.help << "\n";
    std::cout << "    default kernel  " << p->default_kernel() << "\n";
  }
  std::cout << "\nKernel files (from " << kernels.dirs().size() << " director"
            << (kernels.dirs().size() == 1 ? "y" : "ies") << "):\n";
  std::set<std::string> families;
  for (const auto& f : kernels.files()) families.insert(f->family);
  for (const auto& family : families) {
    std::cout << "  " << family << (plugins.find(family) ? "" : "  (no plugin loaded for this family)") << "\n";
    for (const auto& f : kernels.family(family)) {
      std::cout << "    " << f->name << "  " << f->path.string() << "\n";
      if (!f->summary.empty()) std::cout << "      " << f->summary << "\n";
      std::cout << "      operations: " << join(f->operations) << "\n";
      for (const auto& p : f->params) {
        std::vector<std::string> values;
        for (auto v : p.values) values.push_back(std::to_string(v));
        std::cout << "      param " << p.name << " = " << p.default_value << "  (allowed: " << join(values) << ")\n";
      }
      for (const auto& c : f->constraints) std::cout << "      constraint " << c.expr.text() << "\n";
    }
  }
  if (!kernels.errors().empty() || !plugins.errors().empty()) {
    std::cout << "\nProblems:\n";
    for (const auto& e : plugins.errors()) std::cout << "  " << e << "\n";
    for (const auto& e : kernels.errors()) std::cout << "  " << e << "\n";
  }
  return 0;
}

std::string default_arch(const std::string& requested) {
  if (!requested.empty()) return requested;
  std::string why;
  if (device_count(&why) > 0) {
    try {
      return Device(0).info().arch();
    } catch (const Error&) {
    }
  }
  return "sm_90";
}

int cmd_check(const Global& g, const std::vector<std::string>& targets, const std::string& arch_option) {
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  const CompileCache cache(cache_dir(g));
  JitOptions options;
  options.arch = default_arch(arch_option);
  options.include_dirs = kernels.include_dirs();
  const Jit jit(options, &cache);

  int failures = 0;
  const auto check_file = [&](const KernelFile& file, const std::vector<std::vector<std::string>>& arg_sets,
                              const std::map<std::string, std::int64_t>& params) {
    std::vector<std::string> names;
    for (const auto& args : arg_sets) {
      const Variant v(std::make_shared<const KernelFile>(file), args, params);
      for (const auto& l : file.launches) names.push_back(v.name_expression(l));
    }
    const auto start = std::chrono::steady_clock::now();
    const CompiledKernels c = jit.compile(file, names);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::cout << "ok    " << file.path.string() << ": " << names.size() << " kernels for " << options.arch << " ("
              << (c.from_cache ? "cached" : std::to_string(static_cast<int>(ms)) + " ms") << ")\n";
    if (!c.log.empty()) std::cout << c.log << "\n";
  };
  const auto guarded = [&](const std::string& what, auto&& body) {
    try {
      body();
    } catch (const Error& e) {
      ++failures;
      std::cout << "FAIL  " << what << "\n" << e.what() << "\n";
    }
  };

  std::vector<std::string> todo = targets;
  if (todo.empty()) {
    for (const auto& f : kernels.files()) todo.push_back(f->path.string());
    for (const auto& e : kernels.errors()) {
      ++failures;
      std::cout << "FAIL  " << e << "\n";
    }
  }
  for (const auto& target : todo) {
    guarded(target, [&] {
      const fs::path path(target);
      if (path.extension() == ".yaml" || path.extension() == ".yml") {
        const RunSpec spec = load_run_spec(path, plugins, kernels);
        const FamilyPlugin& plugin = plugins.get(spec.family);
        const auto file = kernels.find(spec.family, spec.kernel);
        check_file(*file, {plugin.template_args(spec)}, spec.params);
      } else {
        const KernelFile file = KernelFile::load(path);
        const FamilyPlugin& plugin = plugins.get(file.family);
        check_file(file, plugin.all_template_args(file), {});
      }
    });
  }
  std::cout << (failures ? std::to_string(failures) + " failed" : "all passed") << "\n";
  return failures ? 1 : 0;
}

int cmd_run(const Global& g, const fs::path& config, const std::optional<fs::path>& json,
            const std::optional<fs::path>& csv, int device_ordinal, int repeats) {
  const PluginRegistry plugins(plugin_dirs(g.plugins));
  const KernelLibrary kernels(kernel_dirs(g.kernels));
  print_load_problems(plugins, kernels);
  RunSpec spec = load_run_spec(config, plugins, kernels);
  if (repeats > 0) spec.repeats = repeats;
  const CompileCache cache(cache_dir(g));
  Device device(device_ordinal);
  const RunReport report = run(spec, {plugins, kernels, &cache}, device);
  print_report(std::cout, report);
  if (json) write_json(*json, report);
  if (csv) write_csv(*csv, report);
  return report.verified && !report.verification.passed ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuk: GPU kernels compiled at run time, verified, timed and compared with CUB"};
  app.set_version_flag("--version", std::string("gpuk ") + GPUK_VERSION);
  app.require_subcommand(1);
  Global g;
  app.add_option("--kernels", g.kernels, "extra kernel directory (repeatable; also $GPUK_KERNELS)")->type_name("DIR");
  app.add_option("--plugins", g.plugins, "extra plugin directory (repeatable; also $GPUK_PLUGINS)")->type_name("DIR");
  app.add_option("--cache-dir", g.cache_dir, "compile cache directory (default: $GPUK_CACHE_DIR or ~/.cache/gpuk)")
      ->type_name("DIR");
  app.add_flag("--no-cache", g.no_cache, "compile without the on-disk cache");

  auto* run = app.add_subcommand("run", "run one config: upload, JIT, launch, verify, report");
  fs::path config;
  std::optional<fs::path> json, csv;
  int device_ordinal = 0, repeats = 0;
  run->add_option("CONFIG", config, "YAML config (see README.md)")->required()->check(CLI::ExistingFile);
  run->add_option("--json", json, "also write the report as JSON")->type_name("FILE");
  run->add_option("--csv", csv, "also write the report as CSV")->type_name("FILE");
  run->add_option("--device", device_ordinal, "GPU ordinal")->check(CLI::NonNegativeNumber);
  run->add_option("--repeats", repeats, "timed repeats (overrides the config)")->check(CLI::PositiveNumber);

  app.add_subcommand("list", "list families, plugins, kernel files and their parameters");

  auto* check = app.add_subcommand("check", "compile kernel files or configs with NVRTC (no GPU needed)");
  std::vector<std::string> targets;
  std::string arch;
  check->add_option("TARGETS", targets, "configs (.yaml) or kernel files (.cu); default: every kernel file");
  check->add_option("--arch", arch, "GPU architecture, e.g. sm_90 (default: this GPU's, or sm_90)")
      ->type_name("sm_XX");

  CLI11_PARSE(app, argc, argv);
  try {
    if (run->parsed()) return cmd_run(g, config, json, csv, device_ordinal, repeats);
    if (check->parsed()) return cmd_check(g, targets, arch);
    return cmd_list(g);
  } catch (const NoDeviceError& e) {
    std::cerr << "gpuk: " << e.what() << ".\n";
    return 1;
  } catch (const ConfigError& e) {
    std::cerr << "gpuk: " << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "gpuk: " << e.what() << "\n";
    return 1;
  }
}
