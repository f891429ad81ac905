// `gpuk list`: the families (plugins), the kernel files and their parameters, and what did not load.
#include <iostream>
#include <set>

#include "cli.hpp"
#include "kernel/declaration.hpp"
#include "util/text.hpp"

namespace gpuk::cli {

namespace {

std::string dtype_list(const std::vector<DType>& types) {
  std::vector<std::string> names;
  for (DType t : types) names.emplace_back(dtype_name(t));
  return join(names);
}

void print_plugins(const PluginRegistry& plugins) {
  std::cout << "Families (plugins):\n";
  if (plugins.all().empty()) std::cout << "  (none found)\n";
  for (const FamilyPlugin* p : plugins.all()) {
    std::cout << "  " << p->name() << "  " << p->description() << "\n"
              << "    plugin      " << plugins.path_of(p->name()).string() << "\n"
              << "    operations  "
              << (p->operations().empty() ? "declared by each kernel file (its sizes, arguments and launches: below)"
                                          : join(p->operations()))
              << "\n"
              << "    dtypes      " << dtype_list(p->dtypes()) << "\n";
    for (const auto& o : p->options())
      std::cout << "    option      " << o.name
                << (o.default_value.empty() ? std::string(" (none unless given)") : " (default " + o.default_value + ")")
                << ": " << o.help << "\n";
    if (!p->default_kernel().empty()) std::cout << "    default kernel  " << p->default_kernel() << "\n";
  }
}

// A kernel file's words are its author's, not gpuk's: a terminal escape in its summary, its
// name or its path would reach the terminal as a command, so each is printed escaped.
void print_kernel_file(const KernelFile& f) {
  std::cout << "    " << terminal_text(f.name, 200) << "  " << terminal_text(f.path.string(), 4096) << "\n";
  if (!f.summary.empty()) std::cout << "      " << terminal_text(f.summary, 4096) << "\n";
  if (f.plain) {
    std::cout << "      plain CUDA, no declaration: a config's declare: runs it (docs/declared.md)\n";
    return;
  }
  if (f.declaration) {
    // A declared kernel: its sizes and arguments in place of operations and dtypes.
    const Declaration& d = *f.declaration;
    std::cout << "      sizes: " << terminal_text(join(d.sizes), 4096) << "   params as "
              << (f.params_as == ParamsAs::defines ? "-D definitions" : "template arguments") << "\n";
    std::vector<std::string> args;
    for (const auto& a : d.args)
      args.push_back(a.name + " " + std::string(dtype_name(a.dtype)) +
                     (a.array ? std::string(a.role == ArgRole::in ? " in" : a.role == ArgRole::out ? " out" : " inout") +
                                    "[" + a.length.text() + "]"
                              : ""));
    std::cout << "      args: " << terminal_text(join(args), 4096) << "\n";
  } else {
    std::cout << "      operations: " << terminal_text(join(f.operations), 4096) << "\n";
    std::cout << "      dtypes: " << dtype_list(f.dtypes) << "\n";
  }
  for (const auto& p : f.params) {
    std::vector<std::string> values;
    for (auto v : p.values) values.push_back(std::to_string(v));
    std::cout << "      param " << p.name << " = " << p.default_value << "  (allowed: " << join(values) << ")\n";
  }
  for (const auto& c : f.constraints) std::cout << "      constraint " << c.expr.text() << "\n";
}

}  // namespace

int cmd_list(const RuntimeOptions& g) {
  const Runtime runtime(g);
  const PluginRegistry& plugins = runtime.plugins();
  const KernelLibrary& kernels = runtime.kernels();
  print_plugins(plugins);
  std::cout << "\nKernel files (from " << kernels.dirs().size() << " director"
            << (kernels.dirs().size() == 1 ? "y" : "ies") << "):\n";
  std::set<std::string> families;
  for (const auto& f : kernels.files()) families.insert(f->family);
  std::vector<std::string> problems = runtime.load_problems();
  for (const auto& family : families) {
    const FamilyPlugin* plugin = plugins.find(family);
    std::cout << "  " << terminal_text(family, 200) << (plugin ? "" : "  (no plugin loaded for this family)") << "\n";
    for (const auto& f : kernels.family(family)) {
      // A file its family's configs refuse (a declared kernel whose `family:` names a family of
      // operations) is listed as the problem it is, not among the family's kernels.
      try {
        if (plugin) check_operations(*f, plugin->operations());
        print_kernel_file(*f);
      } catch (const ConfigError& e) {
        problems.push_back(e.what());
      }
    }
  }
  if (!problems.empty()) {
    std::cout << "\nProblems:\n";
    for (const auto& e : problems) std::cout << "  " << terminal_text(e, 4096) << "\n";
  }
  if (plugins.all().empty()) {
    std::vector<std::string> dirs;
    for (const auto& d : plugin_dirs(g.plugin_dirs)) dirs.push_back(d.string());
    print_error("no family plugin loaded, so nothing can run (the plugin directories: " + join(dirs) +
                "; add one with --plugins DIR)");
    return kError;
  }
  return kOk;
}

}  // namespace gpuk::cli
