// Calls installed gpuk without a GPU: its version, and the plugins and kernel files it finds by
// itself, relative to the installed libgpuk_core. Prints them; tests/install/install.sh checks
// that they are the prefix's own.
#include <iostream>

#include "gpuk/install_dirs.hpp"
#include "gpuk/kernel_file.hpp"
#include "gpuk/plugin.hpp"

int main() {
  const gpuk::PluginRegistry plugins(gpuk::plugin_dirs({}));
  const gpuk::KernelLibrary kernels(gpuk::kernel_dirs({}));
  std::cout << "gpuk " << gpuk::gpuk_version() << "\n"
            << "library " << gpuk::core_library_dir().string() << "\n";
  for (const std::string& family : plugins.names())
    std::cout << "plugin " << plugins.path_of(family).string() << "\n";
  for (const auto& file : kernels.files()) std::cout << "kernel " << file->path.string() << "\n";
  const bool complete = plugins.find("reduce") && !kernels.family("reduce").empty() &&
                        plugins.errors().empty() && kernels.errors().empty();
  if (!complete) std::cerr << "consumer: installed gpuk is missing its reduce plugin or kernels, or has errors\n";
  return complete ? 0 : 1;
}
