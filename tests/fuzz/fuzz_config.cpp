// libFuzzer: the config loader. Any input must end in a parsed RunSpec or a gpuk::Error (a
// ConfigError naming file, line and column); anything else that escapes is a bug, and so is a
// crash, a sanitizer report, a hang or a giant allocation (tools/dev/fuzz.sh sets the limits).
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"
#include "util/install_dirs.hpp"

namespace {
struct World {
  gpuk::PluginRegistry plugins{{gpuk::builtin_plugin_dir()}};
  gpuk::KernelLibrary kernels{{gpuk::builtin_kernel_dir()}};
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const World world;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)gpuk::parse_run_spec(text, "fuzz.yaml", world.plugins, world.kernels);
  } catch (const gpuk::Error&) {
    // The clear error the loader promises.
  }
  return 0;
}
